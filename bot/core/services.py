"""What every handler needs, kept in ``application.bot_data``: settings, store, locks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakValueDictionary

from telegram.ext import Application, ContextTypes

from bot.core.clock import Clock, Timer
from bot.core.config import Settings
from bot.core.health import PAUSES, Backoff, Health
from bot.core.inbox import Inbox
from bot.core.limiter import Limiter
from bot.core.replicas import Unconfirmed
from bot.core.store import Store

log = logging.getLogger(__name__)

KEY = "services"
STOP_CHECK = 0.5  # seconds between two cancellations of a poller that is still running

AnyApp = Application[Any, Any, Any, Any, Any, Any]

# (the application, the group's old chat id, its new one)
Follow = Callable[[Any, int, int], Coroutine[Any, Any, None]]


@dataclass
class Services:
    app: AnyApp  # the application these serve (the deliveries run as its tasks)
    settings: Settings
    store: Store
    limiter: Limiter | None = None  # None: no rate limiting (tests)
    bot_username: str = ""
    clock: Clock = field(default_factory=Clock)  # seconds since the epoch (tests move it)
    # One lock per table key in this process: a process serves one table's updates one at
    # a time (the CAS covers other processes); weak, so idle tables cost nothing.
    _locks: WeakValueDictionary[str, asyncio.Lock] = field(default_factory=WeakValueDictionary)
    # Tables this process is delivering (bot.service.delivery), each with the time of the
    # oldest commit made meanwhile, which asks for one more round (None: none).
    delivering: dict[str, float | None] = field(default_factory=dict)
    # The one pending wake-up per table of this process's deliveries (bot.service.delivery).
    wakes: dict[str, tuple[float, Timer]] = field(default_factory=dict)
    # This process's pollers (:func:`every`), running from start-up until it stops.
    pollers: list[asyncio.Task[None]] = field(default_factory=list)
    # Whether Redis answers (bot.core.health): an outage is reported once, pollers back off.
    health: Health = field(default_factory=Health)
    # Moves a group's table to its new supergroup (bot.service.migration.follow, wired in
    # by bot.app) when delivery learns of the migration from Telegram (migration writes
    # through taps, which starts deliveries: an import would close a cycle).
    follow: Follow | None = None
    # The stream the webhook stores updates in for this process's worker to read
    # (webhook mode: bot.inbox opens it; None: polling, or not open yet). The webhook
    # endpoint finds it here, below both of them.
    inbox: Inbox | None = None

    def lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock


def services(
    context: ContextTypes.DEFAULT_TYPE | Application[Any, Any, Any, Any, Any, Any],
) -> Services:
    data = context.bot_data
    result = data[KEY]
    assert isinstance(result, Services)
    return result


# A poller's job; one that returns False asked Redis nothing this time (bot.core.polls: no
# bucket was worth a read), which says nothing of whether Redis answers.
Job = Callable[[AnyApp], Coroutine[Any, Any, bool | None]]


def guarded(job: Job) -> Job:
    """``job`` (a poller: :func:`every`) made to back off while Redis is down, and to
    report the outage once instead of raising a traceback every tick. An error Redis
    returns (a script's ``CROSSSLOT``, ``NOSCRIPT``, a bug) is logged with its traceback
    once, each distinct one, until the job succeeds again, and the job backs off from it
    as from an outage (without calling Redis down: taps go on)."""
    errors = _Errors()

    async def run(app: AnyApp) -> None:
        health = services(app).health
        if not errors.may_poll(health.clock()) or not health.may_poll():
            return
        try:
            asked = await job(app)
        except PAUSES as exc:
            health.failed(exc)
        except Unconfirmed:  # no outage, and said once (bot.core.replicas): next tick
            pass
        except Exception as exc:
            errors.failed(job.__name__, exc, health.clock())
        else:
            if asked is not False:
                health.ok()
                errors.ok(job.__name__)

    run.__name__ = run.__qualname__ = job.__name__
    run.__doc__ = job.__doc__
    return run


@dataclass
class _Errors:
    """A guarded poller's errors (not outages): which were logged, and its backoff."""

    seen: set[str] = field(default_factory=set)
    next_try: float = 0.0
    backoff: Backoff = field(default_factory=Backoff)

    def may_poll(self, now: float) -> bool:
        return now >= self.next_try

    def failed(self, name: str, exc: Exception, now: float) -> None:
        said = f"{type(exc).__name__}: {exc}"
        if said not in self.seen:
            self.seen.add(said)
            log.error("poller %s failed (logged once until it works again)", name, exc_info=exc)
        self.next_try = now + self.backoff.step()

    def ok(self, name: str) -> None:
        if self.seen:
            log.info("poller %s works again", name)
        self.seen.clear()
        self.next_try = 0.0
        self.backoff.reset()


def every(app: AnyApp, seconds: float, job: Job, *, first: float = 0.0) -> None:
    """Runs ``job`` every ``seconds`` on the bot's clock (the first time after ``first``)
    while ``app`` is running: a poller. Started at start-up, stopped by :func:`stop_polls`."""
    svc = services(app)
    svc.pollers.append(asyncio.create_task(_every(app, svc.clock, seconds, job, first)))


async def _every(app: AnyApp, clock: Clock, seconds: float, job: Job, first: float) -> None:
    await clock.sleep(first)
    while True:
        if app.running:
            try:
                await job(app)
            except Exception:  # a bug: reported, and the poller goes on
                log.exception("poller %s failed", job.__name__)
        await clock.sleep(seconds)


async def stop_polls(app: AnyApp) -> None:
    """Ends the pollers of :func:`every` (the application has stopped). A cancellation can
    be lost inside a job: Python 3.11's ``asyncio.wait_for`` drops one that comes just as
    its inner call completes (fakeredis's client waits that way; so may any library). That
    poller would then sleep on for ever and the stop wait for it, so a poller still
    running after a moment is cancelled again."""
    pollers = services(app).pollers
    while running := [task for task in pollers if not task.done()]:
        for task in running:
            task.cancel()
        await asyncio.wait(running, timeout=STOP_CHECK)
    pollers.clear()
