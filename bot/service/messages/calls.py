"""Making a message show what its rule decided: the Bot API calls, and what Telegram's
refusals mean for the table.

Telegram's errors never reach the game: a private chat that refuses us marks the seat
(in a lobby it unseats him), a message that can no longer be edited is sent anew, flood
control and network errors put the message off, and anything else is one log line. A
hand in the group is :mod:`~bot.service.messages.group_hand`'s to show (what the group's
refusal of it means included).
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
from bot.core.keys import TABLE_SLOT, Junk
from bot.core.limiter import retry_after_seconds
from bot.core.models import Slot
from bot.core.screen import Screen
from bot.service.messages.cleanup import RETRY_SECONDS, replace
from bot.service.messages.group_hand import put_in_group
from bot.service.messages.message import How, Message
from bot.service.messages.outcome import Outcome

log = logging.getLogger(__name__)

# What a private message showed before a game's first hand: the lobby's confirmation
# (bot.screens.views.hand_screen; "" in a slot saved before it was the delivery's).
_BEFORE = ("", "pick", "lobby")


async def show(bot: Bot, message: Message, old_goes_now: bool, done: Outcome) -> None:
    """Make one message show its screen, and record it; Telegram's refusals are noted.
    ``old_goes_now``: the message it replaces may be removed in this pass."""
    try:
        if message.hand is not None:  # his hand in the group: its own module says how
            new = _new_slot(message, done)
            slot = await put_in_group(bot, message, message.hand, new, old_goes_now, done)
        else:
            slot = await _put(bot, message, old_goes_now, done)
    except BadRequest as exc:  # a NetworkError to PTB
        log.info("message to %s put off: %s", message.chat_id, exc)
        done.later(done.clock() + RETRY_SECONDS)
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
    if slot is not None:  # None: the group refused his hand (bot.service.messages.group_hand)
        done.changed[message.slot_name] = slot
        old = message.slot.id if message.slot is not None else None
        if slot.id is not None and slot.id != old:  # sent anew: the table knows it once saved
            receiver = message.hand.receiver if message.hand is not None else 0
            done.sent[message.slot_name] = Junk(message.chat_id, slot.id, False, receiver)


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
        hash=message.screen.digest,
        version=table.version,
        prompt=message.screen.prompt,
        at=now,
        phase=table.phase,
        game=table.game_id if message.slot_name == TABLE_SLOT else "",  # the group's message
        quiet=quiet,
    )


async def _put(bot: Bot, message: Message, old_goes_now: bool, done: Outcome) -> Slot:
    """Edit the message in place when it can be; else send it anew and leave the old one
    to be removed (a new game's group message: only its buttons are taken away)."""
    new = _new_slot(message, done)
    if message.inline is not None:  # posted by a person via the bot: only ever edited
        await _edit_inline(bot, message.inline, message.screen)
        return new
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
        if sender.not_modified(exc):
            return True
        if sender.gone(exc):
            return False
        raise
    return True


async def _edit_inline(bot: Bot, inline_message_id: str, screen: Screen) -> None:
    """Edit an inline table's message. One that is gone (deleted in its chat) cannot be
    sent anew by the bot, which is not in that chat: its table goes on without it, its
    players' inline queries still answered."""
    try:
        await sender.edit_inline(bot, inline_message_id, screen)
    except BadRequest as exc:
        if not sender.not_modified(exc) and not sender.gone(exc):
            raise
        if sender.gone(exc):
            log.info("an inline table's message is gone: %s", exc)


async def _offer_page(bot: Bot, message: Message) -> None:
    """His first hand of a game (his message showed nothing or the lobby) opens the Mini
    App (bot.screens.links): from now on, so does the menu button of his private chat
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
