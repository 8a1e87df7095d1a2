"""Bringing Telegram up to date with the tables, apart from the taps: newest state only.

Why apart: a tap is answered as soon as its change is committed, and neither that answer
nor the next tap may wait for Telegram, a slow and rate-limited peer. Each message's slot
(:class:`bot.core.models.Slot`) says what it shows; a delivery renders the newest
committed state, sends what differs and records it, so that a state overtaken before its
turn came is never sent. What a tap asks to be posted once (the Record button's
document) is the delivery's too, remembered by the table
(:mod:`bot.service.messages.record`).

One process at a time delivers a table (the lease of :mod:`bot.core.store`), in one task
(this module); a commit made meanwhile sends the holder round again, and the table of a
holder that died comes due (its bucket's ``ct:{b<n>}:due``) for every process's poller.
Each round is one pass (:mod:`bot.service.messages.rounds`): within Telegram's limits
(:mod:`bot.core.limiter`, shared by every process) the most urgent calls go first and the
rest is coalesced, in the order docs/busy.md gives. What happens to one message is
decided by the rule of its kind, one small module each in :mod:`bot.service.messages`.
A round whose release is lost (a failover or an outage outlasted its lease) removes the
messages it sent anew that the table does not name (:mod:`bot.service.messages.unsaved`).
"""

from __future__ import annotations

import logging

from telegram.ext import ContextTypes

from bot.core import metrics, polls
from bot.core.health import PAUSES
from bot.core.replicas import Unconfirmed
from bot.core.services import AnyApp, Services, services
from bot.core.store import LEASE_MS, LeaseLost, Snapshot
from bot.service.counting import count_finished
from bot.service.messages.outcome import Outcome
from bot.service.messages.refusals import set_reachable
from bot.service.messages.rounds import deliver_once
from bot.service.messages.unsaved import remove_unsaved

log = logging.getLogger(__name__)


def start(svc: Services, key: str, snap: Snapshot | None = None) -> bool:
    """Deliver ``key`` in this process, in the background: from ``snap``, a commit's
    snapshot, when that commit took the delivery lease (without it another process is
    delivering, and shows this version too: see :mod:`bot.core.store`), or by claiming
    the table (None). A delivery already under way here is told to go round once more
    instead, and a process that is stopping starts nothing (its lease runs out, and the
    table is due for a live process then): False, not started here."""
    if snap is not None and not snap.lease:
        return False
    if not svc.app.running:
        return False
    if key in svc.delivering:
        if svc.delivering[key] is None:  # the oldest commit the next round will show
            svc.delivering[key] = svc.clock()
        return False
    svc.delivering[key] = None
    committed = svc.clock() if snap is not None else None  # snap was committed just now
    svc.app.create_task(_run(svc.app, svc, key, snap, committed), name=f"deliver:{key}")
    return True


async def _run(
    app: AnyApp, svc: Services, key: str, snap: Snapshot | None, committed: float | None
) -> None:
    """Deliver until no commit of this process is left unshown; ``committed``: when the
    commit that this round shows was made (None: not a commit of this process)."""
    current = snap
    unsaved: Outcome | None = None  # a pass whose release is under way or failed
    try:
        if current is None:
            current = await svc.store.claim(key)
        while current is not None:
            current = await count_finished(svc, key, current)
            done = unsaved = await deliver_once(app, svc, key, current)
            version = done.snap.version
            current = await svc.store.release(
                key, version, done.changed, due=done.due, deleted=done.removed, junk=done.junk
            )
            unsaved = None
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
    except LeaseLost:  # a failover outlasted it: the new holder shows the table
        log.info("delivery of %s: its lease was taken meanwhile", key)
    except Unconfirmed as exc:  # shown nothing that no replica has: the lease runs out,
        log.info("delivery of %s paused: %s", key, exc)  # and the table is due then
    except PAUSES as exc:  # an outage (reported once): the lease runs out, the
        svc.health.failed(exc)  # table is due then, and is delivered once Redis is back
    except Exception:
        log.warning("delivery of %s failed; it will be retried", key, exc_info=True)
    finally:
        svc.delivering.pop(key, None)  # its lease is renewed no more
    if unsaved is not None:  # what it sent anew is known to nobody else
        await remove_unsaved(app.bot, svc.store, key, unsaved)


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
    svc = services(app)
    svc.wakes.pop(key, None)
    start(svc, key)


def _follow(app: AnyApp, snap: Snapshot, new_chat: int) -> None:
    """The group became a supergroup: its table follows it (bot.service.migration, through
    :attr:`Services.follow`)."""
    follow = services(app).follow
    assert snap.table is not None and follow is not None
    app.create_task(follow(app, snap.table.chat_id, new_chat))


async def bring_hand(
    app: AnyApp | ContextTypes.DEFAULT_TYPE, key: str, user_id: int, *, again: bool = True
) -> None:
    """He has opened his private chat: show his hand at this table from now on.
    ``again``: deliver even when his chat was not known to be closed (he followed the
    table's link: perhaps he deleted his hand message)."""
    svc = services(app)
    async with svc.lock(key):
        leased = await set_reachable(svc, key, {user_id: True})
    if leased is not None or again:
        start(svc, key, leased)


async def reopen(app: AnyApp | ContextTypes.DEFAULT_TYPE, user_id: int) -> None:
    """He has (re)opened his private chat (/start): his hands at every table where it
    had refused us (a table where that is not so any more just leaves his list)."""
    for key in await services(app).store.closed_to(user_id):
        await bring_hand(app, key, user_id, again=False)


async def due_job(app: AnyApp) -> bool:
    """Tables that are due (polled by every process): messages left for later whose time
    has come, or a delivery whose holder's lease ran out (he may have died). Each is
    brought up to date from the newest state; a table another process is delivering is
    left to it (it stays due at that lease's expiry)."""
    svc = services(app)
    sweep = polls.due_tables(svc.store)  # only the buckets worth a read
    async for key in sweep:
        if not start(svc, key):
            # Under way here already: stay due, in case that delivery hangs (its
            # lease, renewed while it is alive, keeps the others off meanwhile).
            await svc.store.defer(key, svc.clock() + LEASE_MS / 1000)
    return sweep.asked  # False: Redis was not asked (bot.core.services.guarded)


async def renew_job(app: AnyApp) -> bool:
    """Keep the leases of the deliveries under way in this process (it is alive); a
    guarded poller (bot.core.services.guarded): an outage or an error is reported once
    and backed off from. False: none is under way, Redis was not asked."""
    svc = services(app)
    if not svc.delivering:
        return False
    await svc.store.renew(list(svc.delivering))
    return True
