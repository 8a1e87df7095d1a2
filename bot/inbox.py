"""The webhook's workers: each process handles the updates of the stream of
:mod:`bot.core.inbox`, and takes over what a dead process left.

A worker reads entries as fast as it can handle them (at most :data:`CONCURRENCY` at
once), hands each to the Application (the update guard, then the handlers), and takes it
off the stream once the handlers are done. :data:`TOUCHES` times within the idle limit
(:func:`touch_every`) it touches the entries it holds and takes over those another worker
left idle (bot.core.inbox).

A taken-over update may be claimed "busy" by the dead worker's update guard
(bot.handlers.once), in the name of its entry, which would drop it for the claim's 20 s:
the worker that takes it over removes that claim first (:func:`bot.handlers.once.release`;
a "done" one stays, and so does a live worker's claim on the same update sent twice). A
worker frozen for longer than the idle limit may so see its update handled twice; a tap is
still applied once (its table remembers it).

The worker reads only once the Application runs (:func:`start`, called by bot.runner after
``Application.start``). At a SIGTERM (:func:`drain`) it reads no more and waits for the
updates it holds; when the grace runs out, :func:`stop` cancels what is left, which stays
pending for another worker. A worker that stops with nothing pending leaves the group, and
the poller removes a consumer idle past the idle limit with nothing pending (a process
that died).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field

from telegram import Update

from bot.core import metrics
from bot.core.health import PAUSES, Backoff
from bot.core.inbox import Entry, Inbox, consumer_name, stored_at
from bot.core.replicas import Unconfirmed
from bot.core.services import AnyApp, every, guarded, services
from bot.handlers import once

log = logging.getLogger(__name__)

KEY = "inbox"  # its place in bot_data
CONCURRENCY = 256  # updates one process handles at once (as PTB's concurrent_updates)
BLOCK_MS = 250  # a read waits this long for an update (well under the client's timeout)
TOUCHES = 5  # touches of a worker within the idle limit (the setting CLAIM_IDLE_MS)
RETRY = 0.25  # seconds before reading again after a failure


@dataclass
class Worker:
    """This process's reader of the stream, and the updates it holds."""

    inbox: Inbox
    held: dict[bytes, asyncio.Task[None]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    # Entries read (this worker's, pending) that no replica had confirmed yet: handled
    # once a claim that waits for the replicas confirms them (Inbox.confirm, bot.core.inbox).
    doubtful: set[bytes] = field(default_factory=set)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)


def open_(app: AnyApp) -> None:
    """This process's worker, which the webhook stores updates with (webhook mode); it
    reads none until :func:`start`."""
    svc = services(app)
    idle = svc.settings.process.claim_idle_ms
    inbox = Inbox(svc.store.redis, consumer_name(), svc.store.replicas, idle)
    worker = app.bot_data[KEY] = Worker(inbox)
    svc.inbox = worker.inbox


def start(app: AnyApp) -> None:
    """Start reading (the Application runs: its tasks and pollers do too)."""
    worker = worker_of(app)
    if worker is None or worker.reader is not None:
        return
    worker.reader = asyncio.create_task(_read(app, worker), name="inbox:read")
    every(app, touch_every(worker.inbox.claim_idle_ms), guarded(_touch_and_reclaim))


def touch_every(claim_idle_ms: int) -> float:
    """Seconds between a worker's touches: well under the idle limit, so that a living
    worker's entries never reach it, and in step with it, so that a dead one's are taken
    over a round of the streams (bot.core.inbox) after it, however short it is set."""
    return claim_idle_ms / 1000 / TOUCHES


def worker_of(app: AnyApp) -> Worker | None:
    found = app.bot_data.get(KEY)
    return found if isinstance(found, Worker) else None


async def _read(app: AnyApp, worker: Worker) -> None:
    svc = services(app)
    try:  # else made at a read that finds no group, once Redis answers
        await worker.inbox.make_group()
    except PAUSES:
        pass
    except Exception:
        log.exception("the inbox's groups could not be made; a later read makes them")
    failing: Backoff | None = None  # after a read that failed with an error that is no pause
    while not worker.stopping.is_set():
        room = CONCURRENCY - len(worker.held)
        if room <= 0:
            await asyncio.wait(list(worker.held.values()), return_when=asyncio.FIRST_COMPLETED)
            continue
        try:
            entries = await worker.inbox.take(room, BLOCK_MS)
        except Unconfirmed as exc:  # ours, but not handled until a replica has them
            worker.doubtful.update(entry_id for entry_id, _ in exc.result)
            await svc.clock.sleep(RETRY)
            continue
        except PAUSES as exc:  # a failover cuts a blocking read off with UNBLOCKED too
            svc.health.failed(exc)
            await svc.clock.sleep(RETRY)
            continue
        except Exception:  # e.g. a cluster's slot map read again in vain: read on
            if failing is None:  # told once, with its traceback, until a read succeeds
                log.exception("the inbox's read failed; it tries again meanwhile")
                failing = Backoff()
            await svc.clock.sleep(failing.step())
            continue
        if failing is not None:
            failing = None
            log.info("the inbox reads again")
        svc.health.ok()
        _hold(app, worker, entries, reclaimed=False)


def _hold(app: AnyApp, worker: Worker, entries: list[Entry], *, reclaimed: bool) -> None:
    for entry_id, body in entries:
        if entry_id not in worker.held:
            task = asyncio.create_task(_handle(app, worker, entry_id, body, reclaimed))
            worker.held[entry_id] = task
            task.add_done_callback(functools.partial(_let_go, worker, entry_id))


def _let_go(worker: Worker, entry_id: bytes, _: asyncio.Task[None]) -> None:
    worker.held.pop(entry_id, None)


async def _handle(
    app: AnyApp, worker: Worker, entry_id: bytes, body: bytes, reclaimed: bool
) -> None:
    svc = services(app)
    health = svc.health
    held = once.Held(entry_id)
    once.HELD.set(held)  # this task's context: the update guard claims in its name
    metrics.STORED_AT.set(stored_at(entry_id))
    try:
        update = Update.de_json(json.loads(body), app.bot)
        if reclaimed:
            metrics.RECLAIMED.inc()
            await once.release(svc.store, update.update_id, entry_id)
        await app.process_update(update)
    except PAUSES as exc:  # it stays pending: taken over once Redis is back
        health.failed(exc)
        return
    except Exception:  # a bug: told once, and the entry is not tried again and again
        log.exception("update entry %s failed", entry_id.decode())
    if held.unclaimed:  # Redis failed the update guard: pending still, like the above
        return
    try:
        await worker.inbox.done(entry_id)
    except PAUSES as exc:  # pending still: the update guard drops its second reading
        health.failed(exc)


async def _touch_and_reclaim(app: AnyApp) -> None:
    worker = worker_of(app)
    if worker is None:
        return
    await worker.inbox.touch(list(worker.held))  # while draining too
    await worker.inbox.adopt_old()  # what a process of the previous version stored
    if worker.stopping.is_set():
        return
    if worker.doubtful:
        doubtful = sorted(worker.doubtful)
        worker.doubtful.clear()  # confirmed, or read again (below), or gone from the stream
        try:
            confirmed = await _confirmed(worker, worker.inbox.confirm(doubtful))
        except Exception:  # neither confirmed nor known gone: still doubtful, looked at
            worker.doubtful.update(doubtful)  # again next touch, not after the idle limit
            raise
        _hold(app, worker, confirmed, reclaimed=False)
    room = CONCURRENCY - len(worker.held)
    if room > 0:
        _hold(app, worker, await _confirmed(worker, worker.inbox.reclaim(room)), reclaimed=True)
        worker.inbox.reclaim_failed.tell()  # a claim failed after others: told now they are held
        await worker.inbox.forget_dead()


async def _confirmed(worker: Worker, read: Awaitable[list[Entry]]) -> list[Entry]:
    """The entries of a read that claims them, once a replica confirmed it; those it read
    unconfirmed are left for the next round (:attr:`Worker.doubtful`)."""
    try:
        return await read
    except Unconfirmed as exc:
        worker.doubtful.update(entry_id for entry_id, _ in exc.result)
        return []


async def drain(app: AnyApp) -> None:
    """Read no more, and wait for the updates this worker holds (bot.runner bounds it)."""
    worker = worker_of(app)
    if worker is None:
        return
    worker.stopping.set()
    if worker.reader is not None:
        await worker.reader
    while worker.held:
        await asyncio.wait(list(worker.held.values()))


async def stop(app: AnyApp) -> None:
    """The end: what the worker still holds is cancelled (it stays pending, for another
    worker), and with nothing pending it leaves the group."""
    worker = worker_of(app)
    if worker is None:
        return
    worker.stopping.set()
    left = [*worker.held.values(), *([worker.reader] if worker.reader else [])]
    for task in left:
        task.cancel()
    if left:
        await asyncio.wait(left)
    with contextlib.suppress(*PAUSES):
        await worker.inbox.leave()
