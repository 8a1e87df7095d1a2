"""What every handler needs, kept in ``application.bot_data``: settings, store, locks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakValueDictionary

from redis.exceptions import RedisError
from telegram.ext import Application, ContextTypes

from bot.config import Settings
from bot.health import Health
from bot.limiter import Limiter
from bot.store import Store

KEY = "services"
# (the application, the group's old chat id, its new one)
Follow = Callable[[Any, int, int], Coroutine[Any, Any, None]]


@dataclass
class Services:
    settings: Settings
    store: Store
    limiter: Limiter | None = None  # None: no rate limiting (tests)
    bot_username: str = ""
    clock: Callable[[], float] = time.time  # seconds since the epoch (tests move it)
    # One lock per table key in this process: a process serves one table's updates one at
    # a time (the CAS covers other processes); weak, so idle tables cost nothing.
    _locks: WeakValueDictionary[str, asyncio.Lock] = field(default_factory=WeakValueDictionary)
    # Tables this process is delivering (bot.delivery), each with whether a commit made
    # meanwhile asks for one more round.
    delivering: dict[str, bool] = field(default_factory=dict)
    # The one pending wake-up per table of this process's deliveries (bot.delivery).
    wakes: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    # Whether Redis answers (bot.health): an outage is reported once, pollers back off.
    health: Health = field(default_factory=Health)
    # Moves a group's table to its new supergroup (bot.migrate.follow, wired in by bot.app)
    # when delivery learns of the migration from Telegram: delivery sits below migrate.
    follow: Follow | None = None

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


Job = Callable[[ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]


def guarded(job: Job) -> Job:
    """``job`` (a poller of the job queue) made to back off while Redis is down, and to
    report the outage once instead of raising a traceback every tick."""

    async def run(context: ContextTypes.DEFAULT_TYPE) -> None:
        health = services(context).health
        if not health.may_poll():
            return
        try:
            await job(context)
        except RedisError as exc:
            health.failed(exc)
        else:
            health.ok()

    run.__name__ = run.__qualname__ = job.__name__  # the job queue names the job by it
    run.__doc__ = job.__doc__
    return run
