"""Making a message show what its rule decided: the Bot API calls, and what Telegram's
refusals mean for the table.

Telegram's errors never reach the game: a private chat that refuses us marks the seat
(in a lobby it unseats him), a hand the group refuses leaves the group, a message that
can no longer be edited is sent anew, flood control and network errors put the message
off, and anything else is one log line.
"""

from __future__ import annotations

import logging

from telegram import Bot
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from bot.core import sender
from bot.core.keys import TABLE_SLOT, Junk, user_slot
from bot.core.limiter import retry_after_seconds
from bot.core.models import Slot
from bot.service.messages.cleanup import RETRY_SECONDS, replace
from bot.service.messages.message import How, InGroup, Message
from bot.service.messages.outcome import Outcome

log = logging.getLogger(__name__)

# What a private message showed before a game's first hand: the lobby's confirmation
# (bot.screens.views.hand_screen; "" in a slot saved before it was the delivery's).
_BEFORE = ("", "pick", "lobby")


def _gone(exc: BadRequest) -> bool:
    text = exc.message.lower()
    return "not found" in text or "can't be edited" in text or "message_id_invalid" in text


def _not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


def _admin_required(exc: BadRequest) -> bool:
    """Telegram refused because the bot is not an administrator: its error text exactly
    (``Bad Request: CHAT_ADMIN_REQUIRED``, which PTB passes on without the prefix)."""
    return exc.message.lower().removeprefix("bad request: ") == "chat_admin_required"


class _Undeliverable(Exception):
    """His hand cannot be shown in the group now: its message is gone, and no new one
    may be sent (no tap of his to answer, and the bot is not an administrator)."""


async def show(bot: Bot, message: Message, old_goes_now: bool, done: Outcome) -> None:
    """Make one message show its screen, and record it; Telegram's refusals are noted.
    ``old_goes_now``: the message it replaces may be removed in this pass."""
    try:
        slot = await _put(bot, message, old_goes_now, done)
    except _Undeliverable:
        assert message.hand is not None
        hand, old = message.hand, message.slot
        private = done.snap.slots.get(user_slot(hand.receiver))
        switched = private is not None and private.id is not None
        if not switched or old is None or old.renew == hand.renew:
            done.refused[hand.receiver] = False
        # else the switch, tapped in his private chat, brought it back: it waits for his
        # next tap in the group (his private message says where it went)
        return
    except BadRequest as exc:  # a NetworkError to PTB; for an ephemeral hand, a refusal
        if message.hand is None:
            log.info("message to %s put off: %s", message.chat_id, exc)
            done.later(done.clock() + RETRY_SECONDS)
        else:
            receiver = message.hand.receiver
            log.info("the group %s refused a hand for %s: %s", message.chat_id, receiver, exc)
            done.refused[receiver] = _admin_required(exc)
            if message.slot is not None and message.slot.id is not None:
                # his hand leaves the group: its old message there keeps no buttons (an
                # edit needs no administrator)
                done.discard(message.chat_id, message.slot.id, strip=True, receiver=receiver)
        return
    except Forbidden:
        if message.chat_id > 0:
            done.reach[message.chat_id] = False
        else:
            log.info("the group %s refuses the bot's messages", message.chat_id)
        return
    except ChatMigrated as exc:
        done.migrated = exc.new_chat_id
        return
    except RetryAfter as exc:
        done.later(done.clock() + retry_after_seconds(exc))
        return
    except NetworkError as exc:  # a timeout, a 502 page, no route: try again soon
        log.info("message to %s put off: %s", message.chat_id, exc)
        done.later(done.clock() + RETRY_SECONDS)
        return
    except TelegramError as exc:
        log.warning("message to %s not shown: %s", message.chat_id, exc)
        return
    done.changed[message.slot_name] = slot


def _new_slot(message: Message, done: Outcome) -> Slot:
    """What the message will remember once it shows its screen (its id still to set)."""
    now = done.clock()
    table = done.snap.table
    assert table is not None
    old = message.slot
    quiet = old.quiet if old is not None else 0.0
    if old is not None and old.prompt and not message.screen.prompt:
        quiet = now  # he has just moved
    return Slot(
        hash=message.screen.digest(),
        version=table.version,
        prompt=message.screen.prompt,
        at=now,
        phase=table.phase,
        game=table.game_id if message.slot_name == TABLE_SLOT else "",  # the group's message
        quiet=quiet,
        renew=message.hand.renew if message.hand is not None else 0,
    )


async def _put(bot: Bot, message: Message, old_goes_now: bool, done: Outcome) -> Slot:
    """Edit the message in place when it can be; else send it anew and leave the old one
    to be removed (a new game's group message: only its buttons are taken away)."""
    new = _new_slot(message, done)
    if message.hand is not None:
        return await _put_ephemeral(bot, message, message.hand, new, old_goes_now, done)
    old = message.slot
    stale = old.id if old is not None else None
    # An edit that fails ("not found", "can't be edited") falls through to a new message;
    # the old one is removed all the same, should it still be there with its buttons.
    in_place = stale is not None and message.how in (How.EDIT, How.PARKED)
    if in_place and stale is not None and await _edit(bot, message, stale):
        new.id = stale
    elif message.how is How.PARKED:
        return new  # the place his hand has left: its message is gone, nothing to do
    else:
        new.id = await sender.send_screen(bot, message.chat_id, message.thread_id, message.screen)
        if stale is not None:
            strip = message.how is How.NEW_GAME
            await replace(bot, Junk(message.chat_id, stale, strip, 0), old_goes_now, done)
    if old is None or old.phase in _BEFORE:  # after the hand: it never waits for this
        await _offer_page(bot, message)
    return new


async def _edit(bot: Bot, message: Message, message_id: int) -> bool:
    """Edit in place; False when the message is gone or can no longer be edited."""
    try:
        await sender.edit_screen(bot, message.chat_id, message_id, message.screen)
    except BadRequest as exc:
        if _not_modified(exc):
            return True
        if _gone(exc):
            return False
        raise
    return True


async def _put_ephemeral(
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
            if not _gone(exc) and not _not_modified(exc):
                raise
            if _not_modified(exc):
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


async def _offer_page(bot: Bot, message: Message) -> None:
    """His first hand of a game (his message showed nothing or the lobby) opens the Mini
    App (bot.webapp.links): from now on, so does the menu button of his private chat
    (once a game per player; not a message, so not under the limiter's message budget).
    It keeps opening that table after the game, until his next game's first hand sets it
    anew. A refusal costs only the menu button."""
    page = next((b for row in message.screen.rows for b in row if b.web_app), None)
    if page is None or page.web_app is None:
        return
    try:
        await sender.set_menu_button(bot, message.chat_id, page.text, page.web_app)
    except TelegramError as exc:
        log.info("the menu button of %s not set: %s", message.chat_id, exc)
