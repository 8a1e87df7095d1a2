"""A seat's hand in the group: an ephemeral message only he sees (docs/ephemeral.md).

The same rules as in his private chat (docs/busy.md), with what Telegram allows of an
ephemeral message: a new one only in answer to his tap (for 15 seconds) or, at any time,
when the bot is an administrator; otherwise his hand is only edited. A new message that
answers his tap goes before everything else of the group, Telegram taking it for a short
while only. His "My cards" (the seat's ``renew``) sends his hand anew, below the newest
messages. Where Telegram counts the calls (:func:`ephemeral_budget`,
:func:`removal_budget`), how the hand is put there (:func:`put_in_group`: edited, else sent
anew) and what the group's refusal of it means are this module's to say too: everything
that happens to a hand in the group is here.
"""

from __future__ import annotations

import logging

from telegram import Bot
from telegram.error import BadRequest

from bot.core import sender
from bot.core.budget import Budget, of_ephemeral
from bot.core.config import Settings
from bot.core.keys import Junk, group_slot, user_slot
from bot.core.limiter import Priority
from bot.core.models import LastTap, Slot, Table
from bot.core.screen import Screen
from bot.service.messages.cleanup import replace
from bot.service.messages.hand import his_turn
from bot.service.messages.message import Decision, How, InGroup, Later, Message, shown
from bot.service.messages.outcome import Outcome
from bot.service.messages.watcher import not_to_act

log = logging.getLogger(__name__)

# An ephemeral message may answer a tap for 15 seconds (docs/ephemeral.md): one second's
# margin for the call's way to Telegram.
TAP_FRESH = 14.0


def removal_budget(settings: Settings, junk: Junk) -> int | Budget:
    """What the removal of a superseded message counts against: an ephemeral one's (a
    hand in the group, ``receiver`` set) where :func:`ephemeral_budget` says, else its chat's."""
    chat_id, _, _, receiver = junk
    return ephemeral_budget(settings, chat_id, receiver) if receiver else chat_id


def ephemeral_budget(settings: Settings, group: int, receiver: int) -> Budget:
    """What an ephemeral call to ``receiver`` in ``group`` counts against: his own limit,
    as a private chat's, and the group's 20 a minute once it learned that Telegram counts
    them there (``EPHEMERAL_GROUP_BUDGET``, bot.core.budget, Telegram publishing no limit
    of its own for them). Every ephemeral call of the delivery (a hand, its edit, its
    deletion) is counted where this says."""
    return of_ephemeral(settings.messages.ephemeral_group_budget, group, receiver)


def group_hand(
    settings: Settings, table: Table, index: int, screen: Screen, slot: Slot | None, now: float
) -> Decision:
    """Seat ``index``'s ephemeral hand: whether, when and how it shows ``screen``."""
    seat = table.seats[index]
    renewed = slot is not None and slot.renew != seat.reach.renew  # he tapped "My cards"
    if not renewed and shown(slot, screen, table.version):
        return None
    query, at = table.delivery.last_taps.get(str(seat.user_id), LastTap("", 0.0))
    fresh_tap = bool(query) and now - at < TAP_FRESH
    may_send = fresh_tap or table.delivery.bot_admin
    message = Message(
        group_slot(seat.user_id),
        table.chat_id,
        table.thread_id,
        screen,
        slot,
        Priority.WATCHER,
        hand=InGroup(seat.user_id, query if fresh_tap else None, may_send, seat.reach.renew),
        counts_against=ephemeral_budget(settings, table.chat_id, seat.user_id),
    )
    answer = Priority.WATCHER
    if table.phase == "lobby" or renewed:  # the answer to his Join, or his "My cards"
        answer = Priority.REPLY
        message.how = How.ANEW if renewed and may_send else How.EDIT
    anew = slot is None or slot.id is None or message.how is How.ANEW
    if fresh_tap and anew:  # a new message answering his tap: before the group's table
        message.priority = Priority.PROMPT
        return message
    if screen.prompt:
        return his_turn(message, seat, settings.messages.ring_after, now, may_send)
    priority = not_to_act(table, slot, settings.messages.table_edit_interval, now, answer)
    if isinstance(priority, Later):
        return priority
    message.priority = priority
    return message


class _Undeliverable(Exception):
    """His hand cannot be shown in the group now: its message is gone, and no new one
    may be sent (no tap of his to answer, and the bot is not an administrator)."""


async def put_in_group(
    bot: Bot, message: Message, hand: InGroup, new: Slot, old_goes_now: bool, done: Outcome
) -> Slot | None:
    """Make his hand in the group show its screen (``new``: what it will remember); None
    when the group refused it, which ``done`` notes: his hand leaves the group (for his
    private chat, or until "My cards"), unless a switch he tapped in his private chat
    brought it back, when it waits for his next tap in the group."""
    new.renew = hand.renew
    try:
        return await _put(bot, message, hand, new, old_goes_now, done)
    except _Undeliverable:
        old = message.slot
        private = done.snap.slots.get(user_slot(hand.receiver))
        switched = private is not None and private.id is not None
        if not switched or old is None or old.renew == hand.renew:
            done.refused[hand.receiver] = False
        return None
    except BadRequest as exc:  # a NetworkError to PTB; for an ephemeral hand, a refusal
        log.info("the group %s refused a hand for %s: %s", message.chat_id, hand.receiver, exc)
        done.refused[hand.receiver] = sender.admin_required(exc)
        if message.slot is not None and message.slot.id is not None:
            # his hand leaves the group: its old message there keeps no buttons (an edit
            # needs no administrator)
            done.discard(message.chat_id, message.slot.id, strip=True, receiver=hand.receiver)
        return None


async def _put(
    bot: Bot, message: Message, hand: InGroup, new: Slot, old_goes_now: bool, done: Outcome
) -> Slot:
    """His hand in the group (docs/ephemeral.md): edited in place, else (a new prompt, his
    "My cards", the old one gone) a new ephemeral message that answers his tap or that
    the bot, an administrator, may send; the old one is deleted when the limiter allows
    it now, else it is kept in the junk for a later pass (a tap on it is stale
    meanwhile), which deletes it or strips its buttons."""
    stale = message.slot.id if message.slot is not None else None
    if stale is not None and message.how is not How.ANEW:
        try:
            await sender.edit_ephemeral(bot, message.chat_id, hand.receiver, stale, message.screen)
        except BadRequest as exc:
            if not sender.gone(exc) and not sender.not_modified(exc):
                raise
            if sender.not_modified(exc):
                new.id = stale
                return new
        else:
            new.id = stale
            return new
    if message.how is How.PARKED:
        return new  # the place his hand has left: its message is gone, nothing to do
    if not hand.may_send and stale is None and new.phase == "lobby":
        # his Join's answer came too late to be sent (the group's limits): he stays
        # seated, and the game's first hand finds no message to edit (then the group
        # asks him to tap My cards, or his private chat gets it)
        return new
    if not hand.may_send:
        raise _Undeliverable
    new.id = await sender.send_ephemeral(
        bot, message.chat_id, message.thread_id, hand.receiver, message.screen, query_id=hand.query
    )
    if stale is not None:
        await replace(bot, Junk(message.chat_id, stale, False, hand.receiver), old_goes_now, done)
    return new


def when_old_stays(message: Message) -> None:
    """A new prompt whose old message may not be removed in the same grant is an edit of
    that message instead (two hands with buttons would show meanwhile); his "My cards"
    still comes anew (the old one waits in the junk, its buttons refused as stale)."""
    hand, old = message.hand, message.slot
    if hand is not None and old is not None and hand.renew == old.renew:
        message.how = How.EDIT
