"""Shared fixtures: a fake Telegram, Redis (fakeredis or the real one), the running bot.

``harness`` is the bot against fakeredis; ``real_harness`` the bot against the real Redis
at 127.0.0.1:6379 (database :data:`REDIS_TEST_DB`; the test's keys are deleted after it,
and it is skipped when no Redis answers). Both check on teardown that the bot did nothing a real
Telegram would have complained about (see :meth:`Harness.problems`); a test that provokes
such a thing on purpose marks itself ``@pytest.mark.telegram_complaints``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import os
import shutil
import time
from asyncio import FIRST_COMPLETED
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis.asyncio as aioredis

from bot.core import health
from bot.core.clock import Clock as BotClock
from bot.handlers.once import update_key
from tests.fakegram import (
    BOT_TOKEN,
    ErrorCollector,
    FakeRequest,
    FakeTelegram,
    Harness,
    app_tasks,
    start_app,
    stop_app,
)
from tests.ownredis import OwnRedis


def _test_db() -> int:
    """Runs that overlap on one database share the bot's global keys (the due set): give
    each its own with REDIS_TEST_DB=<n>. A parallel run's workers (pytest-xdist: gw0, gw1,
    ...) take <n>, <n>+1, ... in turn."""
    base = int(os.environ.get("REDIS_TEST_DB", "14"))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return base + int(worker.removeprefix("gw")) if worker.startswith("gw") else base


REDIS_TEST_DB = _test_db()
REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_TEST_DB}"

AppFactory = Callable[..., Awaitable[Any]]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "telegram_complaints: the test provokes Bot API errors on purpose"
    )
    config.addinivalue_line("markers", "redis: needs the real Redis on 127.0.0.1:6379")


def settings(**overrides: Any) -> Any:
    from bot.core.config import Settings

    values: dict[str, Any] = {
        "telegram_bot_token": BOT_TOKEN,
        "redis_url": REDIS_URL,
        "table_edit_interval": 0,
        "rate_limit": False,
    }
    return Settings(**{**values, **overrides})


@pytest.fixture
def server(clock: Clock) -> FakeTelegram:
    return FakeTelegram(clock=clock)


@dataclass(order=True)
class _Timer:
    when: float
    seq: int
    callback: Callable[[], object] = field(compare=False)
    handle: asyncio.TimerHandle | None = field(default=None, compare=False)
    done: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.done = True
        if self.handle is not None:
            self.handle.cancel()

    def cancelled(self) -> bool:
        return self.done


class Clock(BotClock):
    """The bot's clock in a test: real time plus an offset that the test moves forward
    instead of sleeping (every app of a test shares it, as processes share real time).

    Its timers (the bot's pollers, wake-ups and waits) fire when real time reaches them,
    or as :meth:`advance` moves the clock past them: it goes from one timer to the next,
    each time letting the bot finish what the timer set off, as if that much time passed
    for it. So a test that advances the clock sees what a user would see after the wait."""

    def __init__(self) -> None:
        self.offset = 0.0
        self.apps: list[Any] = []  # what :meth:`settle` waits for (tests/conftest make_app)
        self._timers: list[_Timer] = []  # a heap
        self._seq = itertools.count()
        self._awake: set[asyncio.Task[Any]] = set()  # woken from sleep, not back yet
        self._changed = asyncio.Event()  # a task was woken, or is asleep again

    def __call__(self) -> float:
        return time.time() + self.offset

    def call_at(self, when: float, callback: Callable[[], object]) -> _Timer:
        timer = _Timer(when, next(self._seq), callback)
        heapq.heappush(self._timers, timer)
        loop = asyncio.get_running_loop()
        timer.handle = loop.call_later(max(0.0, when - self()), self._fire, timer)
        return timer

    def _fire(self, timer: _Timer) -> None:
        if not timer.done:
            timer.cancel()
            timer.callback()

    async def sleep(self, seconds: float) -> None:
        task = asyncio.current_task()
        assert task is not None
        if task in self._awake:
            self._awake.discard(task)
            self._changed.set()
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not woken.done():
                self._awake.add(task)
                self._changed.set()
                woken.set_result(None)

        timer = self.call_at(self() + seconds, wake)
        try:
            await woken
        finally:
            timer.cancel()

    async def advance(self, seconds: float) -> None:
        """``seconds`` pass for the bot: every timer due meanwhile fires in turn."""
        end = self() + seconds
        await self.settle()
        for _ in range(100_000):
            while self._timers and self._timers[0].done:
                heapq.heappop(self._timers)
            if not self._timers or self._timers[0].when > end:
                break
            timer = heapq.heappop(self._timers)
            self.offset += max(0.0, timer.when - self())
            self._fire(timer)
            await self.settle()
        else:
            raise AssertionError("the bot's timers keep firing without time passing")
        self.offset += max(0.0, end - self())

    async def settle(self) -> None:
        """Waits until the bot has done what it was set off to do: every task the apps
        started is done, and every poller woken is asleep again."""
        me = asyncio.current_task()
        while True:
            await asyncio.sleep(0)
            self._changed.clear()
            self._awake = {t for t in self._awake if not t.done() and t is not me}
            pending = [t for app in self.apps for t in app_tasks(app) if t is not me]
            if not self._awake and not pending:
                return
            changed = asyncio.ensure_future(self._changed.wait())
            await asyncio.wait([*pending, *self._awake, changed], return_when=FIRST_COMPLETED)
            changed.cancel()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def fake_redis() -> AsyncIterator[aioredis.Redis]:
    client = fakeredis.FakeAsyncRedis()
    yield client
    await client.aclose()


@pytest.fixture
async def real_redis(server: FakeTelegram) -> AsyncIterator[aioredis.Redis]:
    """The real Redis. Not flushed: several test runs may share the database at once
    (the harness draws random chat and user ids); what this test's chats and users left
    is deleted at the end."""
    client = health.client(REDIS_URL)  # as the bot's: its timeouts and retries
    try:
        await client.ping()
    except (OSError, aioredis.ConnectionError, aioredis.TimeoutError):
        await client.aclose()
        pytest.skip("no Redis answers on 127.0.0.1:6379")
    yield client
    if server.update_ids:
        await client.delete(*(update_key(i) for i in server.update_ids))
    idents = [str(i) for i in (*server.groups, *server.users)]
    for ident in idents:
        async for key in client.scan_iter(match=f"*{ident}*", count=1000):
            await client.delete(key)
    # Shared indexes (e.g. the bot's due set of table keys): drop our members only.
    async for key in client.scan_iter(count=1000, _type="zset"):
        mine = [m async for m, _ in client.zscan_iter(key) if any(i in m.decode() for i in idents)]
        if mine:
            await client.zrem(key, *mine)
    await client.aclose()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    """A redis-server of the test's own (tests/ownredis.py), killed after it."""
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server to run")
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
async def make_app(server: FakeTelegram, clock: Clock) -> AsyncIterator[AppFactory]:
    """Builds and starts bot Applications on ``server``; stops them all at the end."""
    from bot.app import build_application

    apps: list[Any] = []

    async def make(redis: aioredis.Redis, *, latency: float = 0.0, **overrides: Any) -> Any:
        """``latency``: seconds each Bot API call takes (a slow or distant process)."""
        request = FakeRequest(server, latency=latency)
        app = build_application(settings(**overrides), redis, request=request, clock=clock)
        clock.apps.append(app)
        await start_app(app)
        apps.append(app)
        return app

    yield make
    for app in apps:
        await stop_app(app)


async def harness_on(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    redis: Any,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """The bot on ``redis`` (with the settings ``overrides``), checked on teardown (see the
    module docstring)."""
    h = Harness(server)
    collector = ErrorCollector(h.log_errors)
    logging.getLogger().addHandler(collector)
    try:
        h.apps.append(await make_app(redis, **overrides))
        h.redis = redis
        yield h
    finally:
        logging.getLogger().removeHandler(collector)
    if request.node.get_closest_marker("telegram_complaints") is None:
        assert h.problems() == []


@pytest.fixture
async def harness(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    fake_redis: aioredis.Redis,
) -> AsyncIterator[Harness]:
    async for h in harness_on(request, server, make_app, fake_redis):
        yield h


@pytest.fixture
async def real_harness(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    real_redis: aioredis.Redis,
) -> AsyncIterator[Harness]:
    async for h in harness_on(request, server, make_app, real_redis):
        yield h
