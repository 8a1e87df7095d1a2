"""Each update is handled once, whatever Telegram or a crash makes of its delivery.

Telegram delivers an update again when a webhook did not acknowledge it in time, several
webhook workers may be handed the same update, and a process that dies after it has
committed a change but before Telegram learnt of it gets its update back after a
restart. Handling one twice would answer twice, reply twice to a command, or refuse the
second time something the first did ("not your turn").

So every update is *claimed* before any handler runs (:func:`claim`, the first handler
group): ``SET ct:upd:<update_id> busy NX PX`` :data:`BUSY_MS`. Whoever sets it handles
the update; anyone else drops it without a word. When the handlers are done
(:func:`done`, the last group) the claim becomes ``done`` for :data:`DONE_S`.

The trade-off is in the two lifetimes. An in-progress claim that lived as long as a done
one would lose for good an update whose process died in the middle (its redelivery would
find it claimed); one that expired quickly would let a slow but alive handler be joined
by a redelivery. :data:`BUSY_MS` is longer than a callback query stays answerable (a
few seconds): a handler that takes longer than that has lost its tap anyway, and once
the claim expires a redelivered update is handled again. What a dead process had
already committed is then not done twice: a tap remembers its callback query in the table
in the same compare-and-set (:func:`bot.service.taps.commit`), and a repeat is answered silently.
:data:`DONE_S` covers Telegram's retries of an unacknowledged webhook and a restart's
redelivery (a getUpdates offset not yet confirmed); a key costs about 80 bytes, so an hour
at 50 updates/s is some 15 MB.

While Redis does not answer, the claim cannot be made: the update is answered with the
"temporarily unavailable" line (:func:`unavailable`) and goes no further (bot.core.health).
An update of the webhook's stream (bot.inbox) is not: it stays pending there and is
handled once Redis is back, so its user is not told "unavailable" and then served.

An update of the stream is claimed in the name of its entry (``busy:<entry id>``, see
:data:`HELD`): a worker that takes over an entry left by a dead one removes that claim
(:func:`release`), and only that one, never a live worker's claim on the same update sent
twice.
"""

from __future__ import annotations

import contextlib
import logging
from contextvars import ContextVar
from dataclasses import dataclass

from redis.exceptions import RedisError
from telegram import Update
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop, ContextTypes

from bot.core import sender
from bot.core.i18n import lang_of, t
from bot.core.services import services
from bot.core.store import KEY_PREFIX, Store

log = logging.getLogger(__name__)

BUSY_MS = 20_000
DONE_S = 3600
BUSY, DONE = b"busy", b"done"


@dataclass
class Held:
    """An update read from the webhook's stream: the entry that holds it (bot.inbox)."""

    entry: bytes
    unclaimed: bool = False  # Redis failed the claim: the entry stays pending


# Set by bot.inbox in the task that handles an entry; None for a polled update.
HELD: ContextVar[Held | None] = ContextVar("held", default=None)


def update_key(update_id: int) -> str:
    return f"{KEY_PREFIX}:upd:{update_id}"


def busy(entry: bytes | None) -> bytes:
    """The value of an in-progress claim: in the name of its stream entry, if any."""
    return BUSY if entry is None else BUSY + b":" + entry


async def release(store: Store, update_id: int, entry: bytes) -> None:
    """Remove the claim that the handler of ``entry`` (a dead worker) made on ``update_id``;
    any other claim stays (a live worker's, or "done")."""
    await store.delete_if(update_key(update_id), busy(entry))


async def claim(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The first handler group: go on only with an update nobody has claimed yet."""
    svc = services(context)
    held = HELD.get()
    key = update_key(update.update_id)
    try:
        fresh = await svc.store.redis.set(
            key, busy(held.entry if held else None), nx=True, px=BUSY_MS
        )
    except RedisError as exc:
        svc.health.failed(exc)
        if held is not None:
            held.unclaimed = True  # handled once Redis is back (see the module docstring)
        else:
            await unavailable(update)
        raise ApplicationHandlerStop from None
    svc.health.ok()
    if not fresh:
        log.debug("update %s is handled elsewhere, or was", update.update_id)
        raise ApplicationHandlerStop


async def done(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The last handler group: the update is handled; a redelivery is dropped.

    Not for a tap, which saves a round trip on every move: a tap comes back only while
    Telegram may still take its answer (the claim covers that), and later a tap that was
    applied is answered silently by its table (:func:`bot.service.taps.commit`), while a refused
    one changed nothing and is refused again (Telegram drops the second answer)."""
    if update.callback_query is not None:
        return
    svc = services(context)
    try:
        await svc.store.redis.set(update_key(update.update_id), DONE, ex=DONE_S)
    except RedisError as exc:  # the claim runs out by itself; a redelivery is then handled
        svc.health.failed(exc)


async def unavailable(update: object) -> None:
    """Tell whoever tapped or sent a command that the bot cannot act now (best effort)."""
    if not isinstance(update, Update):
        return
    user = update.effective_user
    text = t(lang_of(user.language_code if user else None), "common.unavailable")
    with contextlib.suppress(TelegramError):
        if update.callback_query is not None:
            await sender.answer(update.callback_query, text, alert=True)
        elif (message := update.message) is not None and (message.text or "").startswith("/"):
            await sender.reply(message, text, quote=True, html=False)
