"""Bringing Telegram up to date with the tables, apart from the taps: newest state only.

Why apart: a tap is answered as soon as its change is committed, and neither that answer
nor the next tap may wait for Telegram, a slow and rate-limited peer. Each message's slot
(:class:`bot.core.models.Slot`) says what it shows; a delivery renders the newest
committed state, sends what differs and records it, so that a state overtaken before its
turn came is never sent. What a tap asks to be posted once (the Record button's
document) is the delivery's too, remembered by the table (:func:`_post_record`).

One process at a time delivers a table (the lease of :mod:`bot.core.store`), in one task;
a commit made meanwhile sends the holder round again, and the table of a holder that died
comes due (``ct:due``) for every process's poller. Within Telegram's limits
(:mod:`bot.core.limiter`, shared by every process) the most urgent calls go first and the
rest is coalesced, in the order docs/busy.md gives. Telegram's errors never reach the
game: a private chat that refuses us marks the seat (in a lobby it unseats him), a
message that can no longer be edited is sent anew, flood control and network errors put
the message off, and anything else is one log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from redis.exceptions import RedisError
from telegram import Bot
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.ext import Application, ContextTypes

from bot.core import metrics, sender
from bot.core.limiter import Priority, granted, retry_after_seconds
from bot.core.models import Slot, Table
from bot.core.screen import Screen
from bot.core.services import AnyApp, Services, services
from bot.core.store import (
    LEASE_MS,
    TABLE_SLOT,
    Junk,
    Snapshot,
    Write,
    group_slot,
    table_key,
    user_slot,
)
from bot.screens import views
from bot.tables.stats.count import Moved
from bot.tables.stats.finished import record_document
from bot.tables.stats.standings import settle
from bot.webapp import links

log = logging.getLogger(__name__)

# What a private message showed before a game's first hand: the lobby's confirmation
# (bot.screens.views.hand_screen; "" in a slot saved before it was the delivery's).
_BEFORE = ("", "pick", "lobby")
RETRY_SECONDS = 3.0  # after a timeout or a network error
# An ephemeral message may answer a tap for 15 seconds (docs/ephemeral.md): one second's
# margin for the call's way to Telegram.
TAP_FRESH = 14.0
_FALLBACKS = ("hand_private", "hand_wait")  # the events that say where a hand went
# The least a message the limiter refused waits before it is asked for again. The limiter
# says when a call would fit, but while the bot is busy more urgent calls take that room
# first; asking again at once would only cost another round over the whole table.
RETRY_AFTER_REFUSAL = {
    Priority.PROMPT: 0.0,
    Priority.MOVER: 0.25,
    Priority.REPLY: 0.25,
    Priority.TABLE: 1.0,
    Priority.WATCHER: 1.0,
    Priority.CLEANUP: 0.5,
}


def _gone(exc: BadRequest) -> bool:
    text = exc.message.lower()
    return "not found" in text or "can't be edited" in text or "message_id_invalid" in text


def _not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


def _admin_required(exc: BadRequest) -> bool:
    """Telegram refused because the bot is not an administrator: its error text exactly
    (``Bad Request: CHAT_ADMIN_REQUIRED``, which PTB passes on without the prefix)."""
    return exc.message.lower().removeprefix("bad request: ") == "chat_admin_required"


async def _edit(bot: Bot, chat_id: int, message_id: int, screen: Screen) -> bool:
    """Edit in place; False when the message is gone or can no longer be edited."""
    try:
        await sender.edit_screen(bot, chat_id, message_id, screen)
    except BadRequest as exc:
        if _not_modified(exc):
            return True
        if _gone(exc):
            return False
        raise
    return True


async def _remove(bot: Bot, chat_id: int, message_id: int, strip: bool, receiver: int) -> None:
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


@dataclass
class _Job:
    """One message to bring up to date in this pass."""

    slot_name: str
    chat_id: int
    thread_id: int | None
    screen: Screen
    slot: Slot | None
    priority: Priority
    ring: bool = False  # send anew, so that his phone rings
    fresh: bool = False  # a new game: a new group message, the old one keeps its result
    tidy: bool = False  # the old message may be removed at once (the limiter granted it)
    # An ephemeral hand (docs/ephemeral.md): to this user in the group ``chat_id``.
    receiver: int | None = None
    query: str | None = None  # the tap of his it may answer (else: the bot is an admin)
    may_send: bool = True  # a new message may be sent (else it can only be edited)
    renew: int = 0  # the seat's ``renew`` it shows
    budget: int = 0  # the chat whose rate limits the call counts against (0: chat_id)
    parked: bool = False  # the place his hand has left: only its old message is edited

    @property
    def limited(self) -> int:
        return self.budget or self.chat_id


@dataclass
class _Pass:
    """What one pass over a table did and left."""

    snap: Snapshot
    clock: Callable[[], float]
    changed: dict[str, Slot] = field(default_factory=dict)
    due: float | None = None
    removed: list[tuple[int, int, int]] = field(default_factory=list)  # junk deleted
    junk: list[Junk] = field(default_factory=list)  # to remove later
    reach: dict[int, bool] = field(default_factory=dict)
    # Seats whose hand the group refused (user id: whether the refusal said the bot is
    # not an administrator): their hands go to the private chat or wait for "My cards".
    refused: dict[int, bool] = field(default_factory=dict)
    migrated: int | None = None  # the group became this supergroup
    moved: Moved | None = None  # a finished game counted in its group: who moved up

    def later(self, when: float) -> None:
        self.due = when if self.due is None else min(self.due, when)

    def discard(
        self, chat_id: int, message_id: int, *, strip: bool = False, receiver: int = 0
    ) -> None:
        """Leave a superseded message to a later pass (it is saved with the slots), and
        make that pass come at once."""
        self.junk.append((chat_id, message_id, strip, receiver))
        self.later(self.clock())


def _application(app: AnyApp | ContextTypes.DEFAULT_TYPE) -> AnyApp:
    return app if isinstance(app, Application) else app.application


def publish(app: AnyApp | ContextTypes.DEFAULT_TYPE, snap: Snapshot) -> None:
    """Bring a just-committed table's messages up to date, in the background.

    Only the holder of the delivery lease delivers (see :mod:`bot.core.store`); without it
    another process is delivering and will show this version too."""
    if snap.table is not None and snap.lease:
        start(app, table_key(snap.table.chat_id, snap.table.thread_id), snap)


def start(app: AnyApp | ContextTypes.DEFAULT_TYPE, key: str, snap: Snapshot | None) -> bool:
    """Deliver ``key`` in this process: from ``snap`` (leased), or by claiming the table.
    A delivery already under way here is told to go round once more instead, and a
    process that is stopping starts nothing (its lease runs out, and the table is due for
    a live process then): False, not started here."""
    svc = services(app)
    application = _application(app)
    if not application.running:
        return False
    if key in svc.delivering:
        if svc.delivering[key] is None:  # the oldest commit the next round will show
            svc.delivering[key] = svc.clock()
        return False
    svc.delivering[key] = None
    committed = svc.clock() if snap is not None else None  # snap was committed just now
    application.create_task(_run(application, svc, key, snap, committed), name=f"deliver:{key}")
    return True


async def _run(
    app: AnyApp, svc: Services, key: str, snap: Snapshot | None, committed: float | None
) -> None:
    """Deliver until no commit of this process is left unshown; ``committed``: when the
    commit that this round shows was made (None: not a commit of this process)."""
    current = snap
    try:
        if current is None:
            current = await svc.store.claim(key)
        while current is not None:
            done = await _pass(app, svc, key, current)
            version = done.snap.version
            current = await svc.store.release(
                key, version, done.changed, due=done.due, deleted=done.removed, junk=done.junk
            )
            if committed is not None:
                metrics.DELIVERY_LAG.observe(svc.clock() - committed)
                committed = None
            if done.due is not None:
                _wake_at(app, key, done.due)
            if done.migrated is not None:
                _follow(app, done.snap, done.migrated)
            if current is None and (since := svc.delivering.get(key)) is not None:
                svc.delivering[key] = None  # a commit here found our lease: go round
                committed = since
                current = await svc.store.claim(key)
    except RedisError as exc:  # an outage (reported once): the lease runs out, the
        svc.health.failed(exc)  # table is due then, and is delivered once Redis is back
    except Exception:
        log.warning("delivery of %s failed; it will be retried", key, exc_info=True)
    finally:
        svc.delivering.pop(key, None)


def _wake_at(app: AnyApp, key: str, when: float) -> None:
    """This process looks at the table again when what it left is due (the due set in
    Redis does the same for every process, in case this one is gone by then). One wake
    per table: the earliest; a later one would only go round for nothing."""
    svc = services(app)
    pending = svc.wakes.get(key)
    if pending is not None and not pending[1].cancelled():
        if pending[0] <= when:
            return
        pending[1].cancel()
    svc.wakes[key] = (when, svc.clock.call_at(when, lambda: _woken(app, key)))


def _woken(app: AnyApp, key: str) -> None:
    """The timer of :func:`_wake_at`."""
    services(app).wakes.pop(key, None)
    start(app, key, None)


def _follow(app: AnyApp, snap: Snapshot, new_chat: int) -> None:
    """The group became a supergroup: its table follows it (bot.handlers.migrate, through
    :attr:`Services.follow`)."""
    follow = services(app).follow
    assert snap.table is not None and follow is not None
    app.create_task(follow(app, snap.table.chat_id, new_chat))


async def _pass(app: AnyApp, svc: Services, key: str, snap: Snapshot) -> _Pass:
    """One round: plan every message that differs, ask the limiter for the calls in
    priority order (one round trip), make the granted calls side by side, and note
    when the rest is due."""
    done = _Pass(snap, svc.clock)
    if snap.table is None:  # gone, or unreadable: nothing to show
        return done
    done.moved = await settle(svc.store, snap.table)  # counted once (bot.tables.stats)
    jobs, removals = _plan(svc, snap, done)
    # A message sent anew supersedes the old one: its removal is asked for with it, as
    # urgently as a mover's hand (else his chat shows two hands for a while).
    tidy = [j for j in jobs if (j.ring or j.fresh) and j.slot is not None and j.slot.id]
    requests = [(j.limited, j.priority) for j in jobs]
    requests += [(j.limited, Priority.MOVER) for j in tidy]
    requests += [(chat, Priority.CLEANUP) for chat, _, _, _ in removals]
    record = _record_due(snap)
    if record:  # asked for last: the result it belongs to goes first
        requests.append((snap.table.chat_id, Priority.REPLY))
    waits = await _grants(svc, requests)
    if record and (wait := waits.pop()) > 0:
        done.later(svc.clock() + max(wait, RETRY_AFTER_REFUSAL[Priority.REPLY]))
        record = False
    for job, wait in zip(tidy, waits[len(jobs) : len(jobs) + len(tidy)], strict=True):
        job.tidy = wait <= 0
        old = job.slot
        if job.receiver is not None and not job.tidy and old is not None and job.renew == old.renew:
            job.ring = False  # a new prompt whose old one could not go: edit it instead
    now = svc.clock()
    calls: list[Awaitable[None]] = []
    for job, wait in zip(jobs, waits, strict=False):
        if wait > 0:
            done.later(now + max(wait, RETRY_AFTER_REFUSAL[job.priority]))
        else:
            calls.append(_show(app.bot, job, done))
    for junk, wait in zip(removals, waits[len(jobs) + len(tidy) :], strict=True):
        if wait > 0:
            done.later(now + max(wait, RETRY_AFTER_REFUSAL[Priority.CLEANUP]))
        else:
            calls.append(_clean(app.bot, junk, done))
    if record:
        calls.append(_post_record(svc, app.bot, key, done))
    with granted():
        await asyncio.gather(*calls)
    # A table changed here is committed a newer version: the release sends us round again.
    if done.reach:  # the group says who must open his private chat
        await set_reachable(svc, key, done.reach)
    if done.refused:  # their hands leave the group until "My cards"
        await _refused(svc, key, done.refused)
    return done


def _record_due(snap: Snapshot) -> bool:
    """A Record tap asked for this game's record and no pass has begun to post it."""
    table = snap.table
    return table is not None and table.record_asked and not table.record_sent


async def send_record(bot: Bot, table: Table, reply_to: int | None) -> None:
    """Post the table's game record (docs/records.md) as a JSON document in its chat:
    /record's answer (``reply_to`` the command) and the Record button's. Telegram's
    errors are the caller's."""
    name, caption = views.record_names(table)
    await sender.send_document(
        bot,
        table.chat_id,
        record_document(table),
        name,
        thread_id=table.thread_id,
        reply_to=reply_to,
        caption=caption,
    )


async def _post_record(svc: Services, bot: Bot, key: str, done: _Pass) -> None:
    """Post the record the Record button asked for, at most once.

    The table says it is sent (``record_sent``) in a commit before the document goes, so
    that a process that dies, or loses its lease, after sending cannot leave it to be
    sent again. The price: a document whose fate is unknown (that process died, or the
    call timed out) counts as posted and may never arrive; /record still hands it out.
    A doubled document would be worse. Flood control (nothing was sent) leaves it asked
    for; any other refusal gives the button back, and the table says so."""
    table = done.snap.table
    assert table is not None
    mine = await _mark_record(svc, key, table.game_id, sent=True)
    if mine is None:  # another pass began it
        return
    try:
        await send_record(bot, mine, None)
    except RetryAfter as exc:
        done.later(done.clock() + retry_after_seconds(exc))
        await _mark_record(svc, key, table.game_id, sent=False)
    except (BadRequest, Forbidden, ChatMigrated) as exc:  # BadRequest is a NetworkError
        log.info("record for %s refused: %s", table.chat_id, exc)
        await _mark_record(svc, key, table.game_id, sent=False, asked=False)
    except NetworkError as exc:  # a timeout: it may have arrived, so it counts as sent
        log.info("record for %s may not have arrived: %s", table.chat_id, exc)
    except TelegramError as exc:
        log.warning("record for %s not sent: %s", table.chat_id, exc)
        await _mark_record(svc, key, table.game_id, sent=False, asked=False)


async def _mark_record(
    svc: Services, key: str, game_id: str, *, sent: bool, asked: bool = True
) -> Table | None:
    """Commit the record's progress for ``game_id`` (still that game, still asked for):
    ``sent`` True begins the post (None when another pass began it first); False gives
    it back, and without ``asked`` the result says that the button may be tapped again."""

    def decide(snap: Snapshot) -> tuple[Write, Table | None]:
        table = snap.table
        if table is None or table.game_id != game_id or not table.record_asked:
            return Write(None), None
        if table.record_sent == sent:
            return Write(None), None
        table.record_sent, table.record_asked = sent, asked
        if not asked:
            table.notice = "record.refused"
        return Write(table), table

    return (await svc.store.transact(key, decide))[1]


async def _grants(svc: Services, requests: list[tuple[int, Priority]]) -> list[float]:
    if svc.limiter is None or not requests:
        return [0.0] * len(requests)
    waits = await svc.limiter.try_acquire(requests)
    for wait in waits:
        metrics.waited("deferred", wait)
    return waits


def _plan(svc: Services, snap: Snapshot, done: _Pass) -> tuple[list[_Job], list[Junk]]:
    """The messages that differ from what they should show, most urgent first, and the
    superseded messages to remove. Coalesced ones that are not due yet only set ``due``."""
    table = snap.table
    assert table is not None
    now = svc.clock()
    jobs: list[_Job] = []
    for index, seat in enumerate(table.seats):
        if seat.computer is not None:  # a computer seat has no chat
            continue
        screen = views.hand_screen(table, index)
        if screen is None:
            continue
        here = views.in_group(table, index)
        screen = links.hand(
            screen, svc.settings, table, index, in_group=here, bot_username=svc.bot_username
        )
        job = _hand_job(svc, snap, index, screen, here, now, done)
        if job is not None:
            jobs.append(job)
        parked = _parked_job(snap, index, here)  # his hand's other place, if it shows one
        if parked is not None:
            jobs.append(parked)
    group = _group_job(svc, snap, now, done)
    if group is not None:
        jobs.append(group)
    jobs.sort(key=lambda j: j.priority)
    return jobs, list(snap.junk)


def _hand_job(
    svc: Services, snap: Snapshot, index: int, screen: Screen, here: bool, now: float, done: _Pass
) -> _Job | None:
    """Seat ``index``'s hand where it lives (an ephemeral message in the group when
    ``here``, else his private chat), if it differs from what it shows; coalesced like
    the group's table when he is only watching."""
    table = snap.table
    assert table is not None
    seat = table.seats[index]
    if not here and not seat.dm_ok:
        return None  # nowhere to show it: "My cards" does
    name = group_slot(seat.user_id) if here else user_slot(seat.user_id)
    slot = snap.slots.get(name)
    renewed = here and slot is not None and slot.renew != seat.renew
    if not renewed and _shown(slot, screen, table.version):
        return None
    job = _Job(name, seat.user_id, None, screen, slot, Priority.WATCHER)
    if here:
        query, at = table.last_taps.get(str(seat.user_id), ("", 0.0))
        fresh_tap = bool(query) and now - at < TAP_FRESH
        job.chat_id, job.thread_id, job.receiver = table.chat_id, table.thread_id, seat.user_id
        job.query = query if fresh_tap else None
        job.may_send = fresh_tap or table.bot_admin
        job.renew = seat.renew
        job.budget = 0 if svc.settings.ephemeral_group_budget else seat.user_id
    interval = svc.settings.table_edit_interval
    if table.phase == "lobby" or renewed:  # the answer to his Join, or his "My cards"
        job.priority = Priority.REPLY
        job.ring = renewed and job.may_send
    if here and job.query is not None and (slot is None or slot.id is None or job.ring):
        # a new message answering his tap: Telegram takes it for 15 seconds only, so it
        # goes before everything else of the group (its table waits, coalesced)
        job.priority = Priority.PROMPT
    elif screen.prompt:
        job.priority = Priority.PROMPT
        # his phone rings for a new prompt, unless he moved a moment ago (he is looking)
        # or the computer plays for him meanwhile; in the group, only where a new
        # ephemeral message may be sent (else the old one is edited)
        idle = slot is None or now - slot.quiet >= svc.settings.ring_after
        job.ring = not seat.away and idle and (slot is None or not slot.prompt) and job.may_send
    elif slot is not None and (slot.prompt or slot.phase != table.phase):
        job.priority = Priority.MOVER
    elif slot is not None and interval > 0 and slot.at + interval > now:
        done.later(slot.at + interval)
        return None
    return job


def _parked_job(snap: Snapshot, index: int, here: bool) -> _Job | None:
    """The place his hand has left (he switched it, or the group refused it): once, where
    his cards are now, without buttons. A place that never showed his hand is left
    alone, and so is a refused group (it would refuse this too)."""
    table = snap.table
    assert table is not None
    seat = table.seats[index]
    if here:
        name, chat, thread, receiver = user_slot(seat.user_id), seat.user_id, None, None
    elif seat.group_ok and not table.private:
        name, chat, thread = group_slot(seat.user_id), table.chat_id, table.thread_id
        receiver = seat.user_id
    else:
        return None
    slot = snap.slots.get(name)
    if slot is None or slot.id is None or table.phase not in ("playing", "finished", "abandoned"):
        return None
    screen = views.parked_screen(table, index)
    if _shown(slot, screen, table.version) or slot.hash == screen.digest():
        return None
    job = _Job(name, chat, thread, screen, slot, Priority.MOVER, receiver=receiver, parked=True)
    job.renew = slot.renew
    return job


def _shown(slot: Slot | None, screen: Screen, version: int) -> bool:
    """The message shows this screen already, or a newer version than this one."""
    return slot is not None and (slot.version > version or slot.hash == screen.digest())


def _group_job(svc: Services, snap: Snapshot, now: float, done: _Pass) -> _Job | None:
    """The coalescing rule: edit now if the last edit is ``table_edit_interval`` old or
    the table entered a new phase (the lobby, the deal, the result are never late), else
    say when the edit is due. A new game (Play again) gets a new message."""
    table = snap.table
    assert table is not None
    screen = views.group_screen(table, svc.bot_username, done.moved)
    screen = links.group(screen, svc.settings, table, svc.bot_username)
    slot = snap.slots.get(TABLE_SLOT)
    fresh = slot is not None and slot.game not in ("", table.game_id)
    if not fresh and _shown(slot, screen, table.version):
        return None
    job = _Job(
        TABLE_SLOT,
        table.chat_id,
        table.thread_id,
        screen,
        slot,
        Priority.TABLE,
        fresh=fresh,
    )
    interval = svc.settings.table_edit_interval
    if slot is None or fresh or interval <= 0 or slot.phase != table.phase:
        # a new message answers a command or a tap; a new phase is never late
        job.priority = Priority.MOVER if slot is not None else Priority.REPLY
        return job
    if slot.at + interval <= now:
        return job
    done.later(slot.at + interval)
    return None


class _Undeliverable(Exception):
    """His hand cannot be shown in the group now: its message is gone, and no new one
    may be sent (no tap of his to answer, and the bot is not an administrator)."""


async def _show(bot: Bot, job: _Job, done: _Pass) -> None:
    """Make one message show its screen, and record it; Telegram's refusals are noted."""
    try:
        slot = await _put(bot, job, done)
    except _Undeliverable:
        assert job.receiver is not None
        private = done.snap.slots.get(user_slot(job.receiver))
        switched = private is not None and private.id is not None
        if not switched or job.slot is None or job.slot.renew == job.renew:
            done.refused[job.receiver] = False
        # else the switch, tapped in his private chat, brought it back: it waits for his
        # next tap in the group (his private message says where it went)
        return
    except BadRequest as exc:  # a NetworkError to PTB; for an ephemeral hand, a refusal
        if job.receiver is None:
            log.info("message to %s put off: %s", job.chat_id, exc)
            done.later(done.clock() + RETRY_SECONDS)
        else:
            log.info("the group %s refused a hand for %s: %s", job.chat_id, job.receiver, exc)
            done.refused[job.receiver] = _admin_required(exc)
            if job.slot is not None and job.slot.id is not None:
                # his hand leaves the group: its old message there keeps no buttons (an
                # edit needs no administrator)
                done.discard(job.chat_id, job.slot.id, strip=True, receiver=job.receiver)
        return
    except Forbidden:
        if job.chat_id > 0:
            done.reach[job.chat_id] = False
        else:
            log.info("the group %s refuses the bot's messages", job.chat_id)
        return
    except ChatMigrated as exc:
        done.migrated = exc.new_chat_id
        return
    except RetryAfter as exc:
        done.later(done.clock() + retry_after_seconds(exc))
        return
    except NetworkError as exc:  # a timeout, a 502 page, no route: try again soon
        log.info("message to %s put off: %s", job.chat_id, exc)
        done.later(done.clock() + RETRY_SECONDS)
        return
    except TelegramError as exc:
        log.warning("message to %s not shown: %s", job.chat_id, exc)
        return
    done.changed[job.slot_name] = slot


async def _put(bot: Bot, job: _Job, done: _Pass) -> Slot:
    """Edit the message in place when it can be; else send it anew and leave the old one
    to be removed (a new game's group message: only its buttons are taken away)."""
    now = done.clock()
    table = done.snap.table
    assert table is not None
    old = job.slot
    quiet = old.quiet if old is not None else 0.0
    if old is not None and old.prompt and not job.screen.prompt:
        quiet = now  # he has just moved
    new = Slot(
        hash=job.screen.digest(),
        version=table.version,
        prompt=job.screen.prompt,
        at=now,
        phase=table.phase,
        game=table.game_id if job.slot_name == TABLE_SLOT else "",  # the group's message
        quiet=quiet,
    )
    if job.receiver is not None:
        return await _put_ephemeral(bot, job, new, done)
    stale = old.id if old is not None else None
    # An edit that fails ("not found", "can't be edited") falls through to a new message;
    # the old one is removed all the same, should it still be there with its buttons.
    in_place = stale is not None and not job.ring and not job.fresh
    if in_place and stale is not None and await _edit(bot, job.chat_id, stale, job.screen):
        new.id = stale
    elif job.parked:
        return new  # the place his hand has left: its message is gone, nothing to do
    else:
        new.id = await sender.send_screen(bot, job.chat_id, job.thread_id, job.screen)
        if stale is not None:
            if job.tidy:
                await _clean(bot, (job.chat_id, stale, job.fresh, 0), done)
            else:
                done.discard(job.chat_id, stale, strip=job.fresh)
    if old is None or old.phase in _BEFORE:  # after the hand: it never waits for this
        await _offer_page(bot, job)
    return new


async def _put_ephemeral(bot: Bot, job: _Job, new: Slot, done: _Pass) -> Slot:
    """His hand in the group (docs/ephemeral.md): edited in place, else (a new prompt, his
    "My cards", the old one gone) a new ephemeral message that answers his tap or that
    the bot, an administrator, may send; the old one is deleted when the limiter allows
    it now, else it is kept in the junk for a later pass (a tap on it is stale
    meanwhile), which deletes it or strips its buttons."""
    assert job.receiver is not None
    stale = job.slot.id if job.slot is not None else None
    new.renew = job.renew
    if stale is not None and not job.ring:
        try:
            await sender.edit_ephemeral(bot, job.chat_id, job.receiver, stale, job.screen)
        except BadRequest as exc:
            if not _gone(exc) and not _not_modified(exc):
                raise
            if _not_modified(exc):
                new.id = stale
                return new
        else:
            new.id = stale
            return new
    if job.parked:
        return new  # the place his hand has left: its message is gone, nothing to do
    if not job.may_send and stale is None and new.phase == "lobby":
        # his Join's answer came too late to be sent (the group's limits): he stays
        # seated, and the game's first hand finds no message to edit (then the group
        # asks him to tap My cards, or his private chat gets it)
        return new
    if not job.may_send:
        raise _Undeliverable
    new.id = await sender.send_ephemeral(
        bot, job.chat_id, job.thread_id, job.receiver, job.screen, query_id=job.query
    )
    if stale is not None:
        junk = (job.chat_id, stale, False, job.receiver)
        if job.tidy:
            await _clean(bot, junk, done)
        else:
            done.discard(*junk[:2], receiver=job.receiver)
    return new


async def _offer_page(bot: Bot, job: _Job) -> None:
    """His first hand of a game (his message showed nothing or the lobby) opens the Mini
    App (bot.webapp.links): from now on, so does the menu button of his private chat
    (once a game per player; not a message, so not under the limiter's message budget).
    It keeps opening that table after the game, until his next game's first hand sets it
    anew. A refusal costs only the menu button."""
    page = next((b for row in job.screen.rows for b in row if b.web_app), None)
    if page is None or page.web_app is None:
        return
    try:
        await sender.set_menu_button(bot, job.chat_id, page.text, page.web_app)
    except TelegramError as exc:
        log.info("the menu button of %s not set: %s", job.chat_id, exc)


async def _clean(bot: Bot, junk: Junk, done: _Pass) -> None:
    """Remove a superseded message; one that cannot be removed now is kept for later."""
    chat_id, message_id, strip, receiver = junk
    try:
        await _remove(bot, chat_id, message_id, strip, receiver)
    except TelegramError as exc:
        log.info("message %s in %s not removed yet: %s", message_id, chat_id, exc)
        wait = retry_after_seconds(exc) if isinstance(exc, RetryAfter) else RETRY_SECONDS
        done.junk.append(junk)
        done.later(done.clock() + wait)
        return
    done.removed.append((chat_id, message_id, receiver))


async def _refused(svc: Services, key: str, refused: dict[int, bool]) -> None:
    """The group refused these players' hands: they go to the private chat (or wait for
    "My cards"), and the group says so once (an event line). A refusal that said the bot
    is not an administrator tells the table so."""

    def decide(snap: Snapshot) -> tuple[Write, None]:
        table = snap.table
        if table is None:
            return Write(None), None
        changed = False
        for index, seat in enumerate(table.seats):
            if seat.user_id not in refused or not seat.group_ok:
                continue
            seat.group_ok, seat.admin_refused, changed = False, refused[seat.user_id], True
            told = any(k in _FALLBACKS and d.get("seat") == index for k, d in table.events)
            if table.phase != "playing" or told:  # said once (while the log shows it)
                continue
            if seat.dm_ok:
                table.add_events([("hand_private", {"seat": index})])
            else:
                table.add_events([("hand_wait", {"seat": index})])
        if any(refused.values()) and table.bot_admin:
            table.bot_admin, changed = False, True
        return Write(table if changed else None), None

    await svc.store.transact(key, decide)


async def set_reachable(svc: Services, key: str, reach: dict[int, bool]) -> Snapshot | None:
    """Record that private chats refuse (or accept again) us; the committed snapshot."""

    def decide(snap: Snapshot) -> tuple[Write, dict[int, bool]]:
        table = snap.table
        if table is None:
            return Write(None), {}
        changed = {}
        if table.phase == "lobby":  # his confirmation was refused: he is not seated yet
            refused = [s for s in table.seats if reach.get(s.user_id) is False]
            if refused:
                table.seats = [s for s in table.seats if s not in refused]
                table.lobby_link, table.notice = True, "join.need_private"
                changed = {s.user_id: False for s in refused}
            return Write(table if changed else None), changed
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
    if leased is not None:
        publish(app, leased)
    elif again:
        start(app, key, None)


async def reopen(app: AnyApp | ContextTypes.DEFAULT_TYPE, user_id: int) -> None:
    """He has (re)opened his private chat (/start): his hands at every table where it
    had refused us (a table where that is not so any more just leaves his list)."""
    for key in await services(app).store.closed_to(user_id):
        await bring_hand(app, key, user_id, again=False)


async def due_job(app: AnyApp) -> None:
    """Tables that are due (polled by every process): messages left for later whose time
    has come, or a delivery whose holder's lease ran out (he may have died). Each is
    brought up to date from the newest state; a table another process is delivering is
    left to it (it stays due at that lease's expiry)."""
    svc = services(app)
    for key in await svc.store.take_due():
        if not start(app, key, None):
            # Under way here already: stay due, in case that delivery hangs (its lease,
            # renewed while it is alive, keeps the others off meanwhile).
            await svc.store.defer(key, svc.clock() + LEASE_MS / 1000)


async def renew_job(app: AnyApp) -> None:
    """Keep the leases of the deliveries under way in this process (it is alive). While
    Redis is down there is nothing to keep: the deliveries fail, and the outage is
    reported by them and by the pollers."""
    svc = services(app)
    with contextlib.suppress(RedisError):
        await svc.store.renew(list(svc.delivering))
