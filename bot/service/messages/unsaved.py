"""A pass whose slots were not saved: the messages only it sent anew are removed.

Why: the release (:meth:`bot.core.store.Store.release`) saves what each message shows and
gives the lease back in one script. When a failover or an outage outlasts the lease,
another process may take the table before that release lands: the release finds the
lease another's (:class:`~bot.core.store.LeaseLost`), or gives up once Redis has been
away for longer than it is run again (:func:`bot.core.replicas.again`). What it would
have saved is lost, and with it the only record of each message the pass sent anew (a
new prompt, its buttons live): the next delivery works from the old slots and sends its
own, and the chat would keep two prompts, one of them dead (its taps refused as stale).
So the process that sent them removes them, as it removes a superseded message
(:func:`bot.service.messages.cleanup.remove`: deleted, else stripped of its buttons),
through the shared rate limits at a replaced message's priority.

Only what the table does not name: it is read as a replica holds it (an earlier try of
the release may have landed after all, and then the next delivery edits that message).
An edited message, and the old one a new message replaced, are named by the old slots
already: the next delivery brings them up to date. When the table cannot be read either,
nothing is removed: a message the table may name is never taken from it. A removal that
fails is one log line; nothing is tried again.
"""

from __future__ import annotations

import logging

from telegram import Bot
from telegram.error import TelegramError

from bot.core.health import PAUSES
from bot.core.limiter import priority
from bot.core.replicas import Unconfirmed, again
from bot.core.store import Snapshot, Store
from bot.service.messages.cleanup import REPLACED, remove
from bot.service.messages.outcome import Outcome

log = logging.getLogger(__name__)

UNREAD: tuple[type[Exception], ...] = (*PAUSES, Unconfirmed)  # the table is not read now


async def remove_unsaved(bot: Bot, store: Store, key: str, done: Outcome) -> None:
    """Remove the messages ``done`` sent anew that the table ``key`` does not name (its
    release was lost: see the module docstring)."""
    if not done.sent:
        return
    try:
        stored: Snapshot = await again(lambda: store.confirmed(key))
    except UNREAD as exc:
        log.info("the new messages of %s stay, the table unread: %s", key, exc)
        return
    failed: list[str] = []
    with priority(REPLACED):
        for name, message in done.sent.items():
            slot = stored.slots.get(name)
            if slot is not None and slot.id == message.message_id:
                continue  # saved after all
            try:
                await remove(bot, *message)
            except TelegramError as exc:
                failed.append(f"{message.message_id} in {message.chat_id} ({exc})")
    if failed:
        log.info("new messages of %s not removed: %s", key, "; ".join(failed))
