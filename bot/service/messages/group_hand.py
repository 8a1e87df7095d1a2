"""A seat's hand in the group: an ephemeral message only he sees (docs/ephemeral.md).

The same rules as in his private chat (docs/busy.md), with what Telegram allows of an
ephemeral message: a new one only in answer to his tap (for 15 seconds) or, at any time,
when the bot is an administrator; otherwise his hand is only edited. A new message that
answers his tap goes before everything else of the group, Telegram taking it for a short
while only. His "My cards" (the seat's ``renew``) sends his hand anew, below the newest
messages. And where Telegram counts the calls (:func:`ephemeral_budget`) is this
module's to say.
"""

from __future__ import annotations

from bot.core.budget import Budget, of_ephemeral
from bot.core.config import Settings
from bot.core.keys import group_slot
from bot.core.limiter import Priority
from bot.core.models import LastTap, Slot, Table
from bot.core.screen import Screen
from bot.service.messages.hand import his_turn
from bot.service.messages.message import Decision, How, InGroup, Later, Message, shown
from bot.service.messages.watcher import not_to_act

# An ephemeral message may answer a tap for 15 seconds (docs/ephemeral.md): one second's
# margin for the call's way to Telegram.
TAP_FRESH = 14.0


def ephemeral_budget(settings: Settings, group: int, receiver: int) -> Budget:
    """What an ephemeral call to ``receiver`` in ``group`` counts against: his own limit,
    as a private chat's, and the group's 20 a minute once it learned that Telegram counts
    them there (``EPHEMERAL_GROUP_BUDGET``, bot.core.budget, Telegram publishing no limit
    of its own for them). Every ephemeral call of the delivery (a hand, its edit, its
    deletion) is counted where this says."""
    return of_ephemeral(settings.ephemeral_group_budget, group, receiver)


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
        return his_turn(message, seat, settings.ring_after, now, may_send)
    priority = not_to_act(table, slot, settings.table_edit_interval, now, answer)
    if isinstance(priority, Later):
        return priority
    message.priority = priority
    return message


def when_old_stays(message: Message) -> None:
    """A new prompt whose old message may not be removed in the same grant is an edit of
    that message instead (two hands with buttons would show meanwhile); his "My cards"
    still comes anew (the old one waits in the junk, its buttons refused as stale)."""
    hand, old = message.hand, message.slot
    if hand is not None and old is not None and hand.renew == old.renew:
        message.how = How.EDIT
