"""Clean-up: removing the messages that newer ones superseded.

docs/busy.md, last rule: a removal waits behind every other call (it is kept in the
table's junk, ``x:`` fields, until a pass may make it), except the removal of the
message that a new one replaces in the same pass (a new prompt, a new game's table):
that one is asked for with it, as urgently as a mover's hand, else his chat would show
two hands for a while. A message too old to delete (48 h) loses its buttons instead,
and so does the old table of a new game (it keeps its result); an ephemeral message
that cannot be deleted loses its buttons too.
"""

from __future__ import annotations

import contextlib
import logging

from telegram import Bot
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

from bot.core import sender
from bot.core.keys import Junk
from bot.core.limiter import Priority, retry_after_seconds
from bot.service.messages.outcome import Outcome

log = logging.getLogger(__name__)

RETRY_SECONDS = 3.0  # after a timeout or a network error
REPLACED = Priority.MOVER  # the removal of a message replaced in the same pass
LEFTOVER = Priority.CLEANUP  # a removal left in the junk


async def remove(bot: Bot, chat_id: int, message_id: int, strip: bool, receiver: int) -> None:
    """Delete a superseded message (``strip``: only take its buttons away; ``receiver``:
    an ephemeral message to him, stripped when it cannot be deleted)."""
    with contextlib.suppress(BadRequest, Forbidden):
        if receiver:
            if not strip:
                with contextlib.suppress(BadRequest):
                    await sender.delete_ephemeral(bot, chat_id, receiver, message_id)
                    return
            await sender.strip_ephemeral(bot, chat_id, receiver, message_id)
            return
        if not strip:
            try:
                await sender.delete(bot, chat_id, message_id)
                return
            except BadRequest as exc:  # too old to delete (48 h): strip its buttons instead
                if "not found" in exc.message.lower():
                    return
        await sender.strip_buttons(bot, chat_id, message_id)


async def clean(bot: Bot, junk: Junk, done: Outcome) -> None:
    """Remove a superseded message; one that cannot be removed now is kept for later."""
    chat_id, message_id, strip, receiver = junk
    try:
        await remove(bot, chat_id, message_id, strip, receiver)
    except TelegramError as exc:
        log.info("message %s in %s not removed yet: %s", message_id, chat_id, exc)
        wait = retry_after_seconds(exc) if isinstance(exc, RetryAfter) else RETRY_SECONDS
        done.junk.append(junk)
        done.later(done.clock() + wait)
        return
    done.removed.append((chat_id, message_id, receiver))


async def replace(bot: Bot, junk: Junk, now: bool, done: Outcome) -> None:
    """The old message of one sent anew: removed at once when its grant came with the
    new one's (``now``), else left to a later pass."""
    if now:
        await clean(bot, junk, done)
    else:
        chat_id, message_id, strip, receiver = junk
        done.discard(chat_id, message_id, strip=strip, receiver=receiver)
