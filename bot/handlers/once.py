"""Each update is handled once, whatever Telegram or a crash makes of its delivery.

Telegram delivers an update again when a webhook did not acknowledge it in time, several
workers may be handed the same one, and a process that dies mid-update gets it back after
a restart; handled twice, it would answer twice or refuse the second time what the first
did. So every update is *claimed* before any handler runs (:func:`claim`:
``SET ct:upd:<update_id> busy NX PX`` :data:`BUSY_MS`; anyone else drops it), and marked
``done`` for :data:`DONE_S` after the last handler (:func:`done`).

Why two lifetimes: a busy claim that lived as long as a done one would lose for good the
update of a process that died mid-way; one that expired quickly would let a redelivery
join a slow but live handler. :data:`BUSY_MS` outlives a callback query's answerability,
and what a dead process had committed is not done again: the table remembers the tap's
callback query in the same compare-and-set (:func:`bot.service.taps.write`). An hour of
done keys at 50 updates/s is some 15 MB. While Redis does not answer, no claim can be
made: the update gets the "temporarily unavailable" line (:func:`unavailable`).

An update of the webhook's stream (bot.inbox) is the exception: it is not told
"unavailable" but stays pending there, and is handled once Redis is back. Such an update is
claimed in the name of its entry (``busy:<entry id>``, :data:`HELD`): a worker that takes
over an entry a dead one left removes that claim (:func:`release`), and only that one,
never a live worker's claim on the same update sent twice.
"""

from __future__ import annotations

import contextlib
import logging
from contextvars import ContextVar
from dataclasses import dataclass

from telegram import Update
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop, ContextTypes

from bot.core import sender
from bot.core.health import PAUSES
from bot.core.i18n import lang_of, t
from bot.core.keys import KEY_PREFIX
from bot.core.services import services
from bot.core.store import Store

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
    except PAUSES as exc:
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
    except PAUSES as exc:  # the claim runs out by itself; a redelivery is then handled
        svc.health.failed(exc)


async def unavailable(update: object, *, unconfirmed: bool = False) -> None:
    """Tell whoever tapped or sent a command that the bot cannot act now (best effort);
    ``unconfirmed``: that what he did could not be confirmed (bot.core.replicas)."""
    if not isinstance(update, Update):
        return
    user = update.effective_user
    key = "common.unconfirmed" if unconfirmed else "common.unavailable"
    text = t(lang_of(user.language_code if user else None), key)
    with contextlib.suppress(TelegramError):
        if update.callback_query is not None:
            await sender.answer(update.callback_query, text, alert=True)
        elif (message := update.message) is not None and (message.text or "").startswith("/"):
            await sender.reply(message, text, quote=True, html=False)
