"""Showing tables on Telegram: send or edit, skip what would change nothing, survive errors.

- A hand message (one per seat, in his private chat) is edited as soon as it changes. When
  its new content asks him to act and the old one did not, it is sent anew and the old one
  deleted: Telegram does not notify on edits, and his phone should ring.
- The group message is coalesced: at most one edit per ``table_edit_interval`` seconds per
  table. A change inside the interval marks the table due at the end of the interval (the
  ``ct:due`` set in Redis, written with the slots); every process polls that set, and the
  poll loads the newest state and renders that, so the last edit always shows the newest
  state, even when the process that deferred it has gone.
- One process at a time delivers a table (the delivery lease of :mod:`bot.store`), and it
  goes on until it has shown the newest version: an older render never lands last.
- Every message's slot (:class:`bot.models.Slot`) remembers a digest of what it shows and
  the table version; an identical edit is never sent, an older render never overwrites a
  newer one. Slots are saved in one write after the calls.
- Telegram errors never reach the game: a private chat that refuses us marks the seat
  (the group then says who must open the private chat), a message that can no longer be
  edited is replaced by a new one, flood control postpones the group edit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
import warnings
from typing import Any

from telegram import Bot
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.ext import Application, ContextTypes
from telegram.warnings import PTBDeprecationWarning

from bot import views
from bot.models import Slot
from bot.screen import Screen
from bot.services import Services, services
from bot.store import TABLE_SLOT, Snapshot, Write, table_key, user_slot

log = logging.getLogger(__name__)

AnyApp = Application[Any, Any, Any, Any, Any, Any]
RETRY_SECONDS = 5.0  # after a timeout or a network error


def _gone(exc: BadRequest) -> bool:
    text = exc.message.lower()
    return "not found" in text or "can't be edited" in text or "message_id_invalid" in text


def _not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


async def _call(bot: Bot, method: str, params: dict[str, Any]) -> Any:
    """A Bot API call whose raw JSON result is returned.

    The wrappers (send_message, edit_message_text) turn every returned Message into
    objects, about 1 ms a call and the largest cost of a move, while the bot needs only a
    message id. This is the path every wrapper takes (rate limiter and error mapping
    included); do_api_request would do the same but warns for methods that have wrappers.
    """
    return await bot._post(method, params)


def _params(screen: Screen) -> dict[str, Any]:
    params: dict[str, Any] = {
        "text": screen.text,
        "parse_mode": ParseMode.HTML.value,
        "link_preview_options": {"is_disabled": True},
    }
    markup = screen.markup()
    if markup is not None:
        params["reply_markup"] = markup
    return params


async def _send(bot: Bot, chat_id: int, thread_id: int | None, screen: Screen) -> int:
    params = {"chat_id": chat_id, **_params(screen)}
    if thread_id is not None:
        params["message_thread_id"] = thread_id
    message = await _call(bot, "sendMessage", params)
    return int(message["message_id"])


async def _edit(bot: Bot, chat_id: int, message_id: int, screen: Screen) -> bool:
    """Edit in place; False when the message is gone or can no longer be edited."""
    params = {"chat_id": chat_id, "message_id": message_id, **_params(screen)}
    try:
        await _call(bot, "editMessageText", params)
    except BadRequest as exc:
        if _not_modified(exc):
            return True
        if _gone(exc):
            return False
        raise
    return True


async def _delete(bot: Bot, chat_id: int, message_id: int) -> None:
    try:
        await bot.delete_message(chat_id, message_id)
    except TelegramError:
        # Too old to delete (48 h) or already gone: strip its buttons instead, best effort.
        with contextlib.suppress(TelegramError):
            await bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)


async def show(
    bot: Bot,
    chat_id: int,
    thread_id: int | None,
    screen: Screen,
    slot: Slot | None,
    version: int,
    *,
    ring: bool = False,
) -> Slot | None:
    """Make one message show ``screen``; the new slot, or None when nothing was sent.

    ``ring``: a new prompt for a private hand, sent anew so that it notifies.
    Raises Forbidden (the chat refuses us) and RetryAfter (flood control).
    """
    digest = screen.digest()
    if slot is not None and (slot.version > version or slot.hash == digest):
        return None
    now = time.time()
    if (
        slot is not None
        and slot.id is not None
        and not (ring and screen.prompt and not slot.prompt)
    ) and await _edit(bot, chat_id, slot.id, screen):
        return Slot(id=slot.id, hash=digest, version=version, prompt=screen.prompt, at=now)
    message_id = await _send(bot, chat_id, thread_id, screen)
    if slot is not None and slot.id is not None:
        await _delete(bot, chat_id, slot.id)
    return Slot(id=message_id, hash=digest, version=version, prompt=screen.prompt, at=now)


async def publish(app: AnyApp | ContextTypes.DEFAULT_TYPE, snap: Snapshot) -> None:
    """Bring every message of a just-committed table up to date (caller holds the lock).

    Only the holder of the delivery lease delivers (see :mod:`bot.store`); it goes on
    until it has shown the newest version, then releases the lease. Without the lease
    another process is delivering, and will show this version too.
    """
    if snap.table is None or not snap.lease:
        return
    svc = services(app)
    key = table_key(snap.table.chat_id, snap.table.thread_id)
    current: Snapshot | None = snap
    try:
        while current is not None:
            current, changed, due = await _deliver(app, svc, key, current)
            current = await svc.store.release(key, current.version, changed, due=due)
    except BaseException:
        await svc.store.release(key, snap.version, {}, drop=True)
        raise


async def _deliver(
    app: AnyApp | ContextTypes.DEFAULT_TYPE, svc: Services, key: str, snap: Snapshot
) -> tuple[Snapshot, dict[str, Slot], float | None]:
    """Hands first (they are what the next player waits for), then the group message.
    The snapshot delivered (a refused private chat is recorded on the way), the slots
    that changed, and when the group edit is due if it was left for later."""
    table = snap.table
    assert table is not None
    changed: dict[str, Slot] = {}
    reach: dict[int, bool] = {}
    for index, seat in enumerate(table.seats):
        if not seat.dm_ok or seat.computer is not None:  # a computer seat has no chat
            continue
        screen = views.hand_screen(table, index)
        if screen is None:
            continue
        name = user_slot(seat.user_id)
        ring = not seat.away  # the computer plays for him: his phone need not ring each turn
        try:
            slot = await show(
                app.bot, seat.user_id, None, screen, snap.slots.get(name), table.version, ring=ring
            )
        except Forbidden:
            reach[seat.user_id] = False
            continue
        except (RetryAfter, TimedOut, NetworkError) as exc:
            # Try again later, or a player could wait forever for a prompt that never came.
            _retry_hands(app, svc, key, _wait_after(exc))
            log.info("hand of %s postponed: %s", seat.user_id, exc)
            continue
        except TelegramError as exc:
            log.warning("hand of %s not shown: %s", seat.user_id, exc)
            continue
        if slot is not None:
            changed[name] = snap.slots[name] = slot
    if reach:
        marked = await set_reachable(svc, key, reach)
        if marked is not None:
            marked.slots.update(changed)
            snap = marked
    slot, due = await _group_now_or_later(app, svc, key, snap)
    if slot is not None:
        changed[TABLE_SLOT] = slot
    return snap, changed, due


async def set_reachable(svc: Services, key: str, reach: dict[int, bool]) -> Snapshot | None:
    """Record that private chats refuse (or accept again) us; the committed snapshot."""

    def decide(snap: Snapshot) -> tuple[Write, dict[int, bool]]:
        table = snap.table
        if table is None:
            return Write(None), {}
        changed = {}
        for seat in table.seats:
            if seat.user_id in reach and seat.dm_ok != reach[seat.user_id]:
                seat.dm_ok = changed[seat.user_id] = reach[seat.user_id]
        return Write(table if changed else None), changed

    snap, changed = await svc.store.transact(key, decide)
    await svc.store.note_reach(key, reach)  # also drops a table that is gone
    return snap if changed else None


async def bring_hand(
    app: AnyApp | ContextTypes.DEFAULT_TYPE, key: str, user_id: int, *, again: bool = True
) -> None:
    """He has opened his private chat: show his hand at this table from now on.
    ``again``: deliver even when his chat was not known to be closed (he followed the
    table's link: perhaps he deleted his hand message)."""
    svc = services(app)
    async with svc.lock(key):
        leased = await set_reachable(svc, key, {user_id: True})
        if leased is None and again:
            leased = await svc.store.claim(key)
        if leased is not None:  # else another process is delivering, his hand too
            await publish(app, leased)


async def reopen(app: AnyApp | ContextTypes.DEFAULT_TYPE, user_id: int) -> None:
    """He has (re)opened his private chat (/start): his hands at every table where it
    had refused us (a table where that is not so any more just leaves his list)."""
    for key in await services(app).store.closed_to(user_id):
        await bring_hand(app, key, user_id, again=False)


async def _group_now_or_later(
    app: AnyApp | ContextTypes.DEFAULT_TYPE, svc: Services, key: str, snap: Snapshot
) -> tuple[Slot | None, float | None]:
    """The coalescing rule: edit now if the last edit is ``table_edit_interval`` old or
    the table entered a new phase (the lobby, the deal, the result are never late), else
    say when the edit is due. (The new slot, the due time.)"""
    slot = snap.slots.get(TABLE_SLOT)
    interval = svc.settings.table_edit_interval
    table = snap.table
    if slot is None or interval <= 0 or table is None or slot.phase != table.phase:
        return await _show_group(app, svc, snap)
    due = slot.at + interval
    if due <= time.time():
        return await _show_group(app, svc, snap)
    return None, due


def _wait_after(exc: TelegramError) -> float:
    """Seconds to wait before trying again: flood control says; else a few."""
    if not isinstance(exc, RetryAfter):
        return RETRY_SECONDS
    with warnings.catch_warnings():  # PTB 22 warns that the int will become a timedelta
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = exc.retry_after
    return wait.total_seconds() if isinstance(wait, dt.timedelta) else float(wait)


def _retry_hands(
    app: AnyApp | ContextTypes.DEFAULT_TYPE, svc: Services, key: str, wait: float
) -> None:
    """One pending retry per table in this process (it shows the newest state)."""
    if key in svc.pending_jobs:
        return
    job_queue = app.job_queue
    if job_queue is None:  # no job queue: the next change shows it instead
        return
    svc.pending_jobs.add(key)
    job_queue.run_once(_republish_job, when=wait, data=key, name=f"hands:{key}")


async def due_job(context: ContextTypes.DEFAULT_TYPE) -> None:
    """Tables that are due (polled by every process): a coalesced group edit whose time
    has come, or a delivery whose holder's lease ran out (he may have died). Each is
    brought up to date from the newest state; a table another process is delivering is
    left to it (it stays due at that lease's expiry)."""
    svc = services(context)
    for key in await svc.store.take_due():
        async with svc.lock(key):
            snap = await svc.store.claim(key)
            if snap is not None:
                await publish(context, snap)


async def _republish_job(context: ContextTypes.DEFAULT_TYPE) -> None:
    """A hand that Telegram could not take a moment ago: show the newest state now."""
    svc = services(context)
    job = context.job
    assert job is not None
    key = str(job.data)
    async with svc.lock(key):
        svc.pending_jobs.discard(key)
        snap = await svc.store.claim(key)
        if snap is not None:
            await publish(context, snap)


async def _show_group(
    app: AnyApp | ContextTypes.DEFAULT_TYPE, svc: Services, snap: Snapshot
) -> tuple[Slot | None, float | None]:
    """Edit the group message now: (the new slot, or when to try again).

    A new game (Play again) gets a new message, whoever delivers it: the old one keeps
    the last result and loses its buttons once the new one is there."""
    table = snap.table
    if table is None:
        return None, None
    screen = views.group_screen(table, svc.bot_username)
    old = snap.slots.get(TABLE_SLOT)
    before = old if old is not None and old.game not in ("", table.game_id) else None
    try:
        slot = await show(
            app.bot,
            table.chat_id,
            table.thread_id,
            screen,
            None if before else old,
            table.version,
        )
        if slot is not None and before is not None and before.id is not None:
            with contextlib.suppress(TelegramError):
                await app.bot.edit_message_reply_markup(table.chat_id, before.id, reply_markup=None)
    except (RetryAfter, TimedOut, NetworkError) as exc:
        return None, time.time() + _wait_after(exc)
    except ChatMigrated as exc:  # the group became a supergroup: the table follows it
        from bot import migrate  # bot.migrate -> bot.delivery

        application = app if isinstance(app, Application) else app.application
        application.create_task(migrate.follow(app, table.chat_id, exc.new_chat_id))
        return None, None
    except TelegramError as exc:
        log.warning("table of %s not shown: %s", table.chat_id, exc)
        return None, None
    if slot is not None:
        slot.phase, slot.game = table.phase, table.game_id
        snap.slots[TABLE_SLOT] = slot
    return slot, None
