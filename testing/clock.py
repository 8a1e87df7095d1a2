"""The bot's clock in a test, moved forward instead of slept on: no test sleeps, and a
wait of minutes takes none."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from asyncio import FIRST_COMPLETED
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from bot.core.clock import Clock as BotClock
from testing.harness import app_tasks


class ManualClock:
    """Seconds that move only when the test sets ``now``: a plain clock for what takes one
    to call (the limiter, the fake's flood limits, the health of Redis)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


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
    """Real time plus an offset that the test moves forward (every app of a test shares
    it, as processes share real time). Its timers (the bot's pollers, wake-ups and waits)
    fire when real time reaches them, or as :meth:`advance` moves past them one by one,
    letting the bot finish what each set off: the test then sees what a user would see
    after the wait. ``frozen``: real time left out, only the test moves the clock, so what
    the test sees does not depend on how fast the machine is."""

    def __init__(self, *, frozen: bool = False) -> None:
        self.frozen = frozen
        self.start = time.time()
        self.offset = 0.0
        self.apps: list[Any] = []  # what :meth:`settle` waits for (tests/conftest.py make_app)
        self._timers: list[_Timer] = []  # a heap
        self._seq = itertools.count()
        self._awake: set[asyncio.Task[Any]] = set()  # woken from sleep, not back yet
        self._changed = asyncio.Event()  # a task was woken, or is asleep again

    def __call__(self) -> float:
        return (self.start if self.frozen else time.time()) + self.offset

    def monotonic(self) -> float:
        """The test's time, which only goes forward too."""
        return self()

    def call_at(self, when: float, callback: Callable[[], object]) -> _Timer:
        timer = _Timer(when, next(self._seq), callback)
        heapq.heappush(self._timers, timer)
        if not self.frozen or when <= self():
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

    async def asleep(self, tasks: Collection[asyncio.Task[Any]], within: float = 0.5) -> None:
        """Waits until none of ``tasks`` (pollers) is between a wake and its next sleep:
        one cancelled there may lose the cancellation (Python 3.11's ``asyncio.wait_for``,
        in redis-py's send, drops one that comes as its call completes), and its stop then
        waits half a second to cancel it again (bot.core.services.stop_polls). At most
        ``within`` seconds: a job held up by the test is cancelled as before."""
        loop = asyncio.get_running_loop()
        end = loop.time() + within
        while (awake := [t for t in self._awake if t in tasks and not t.done()]) and (
            left := end - loop.time()
        ) > 0:
            self._changed.clear()
            changed = asyncio.ensure_future(self._changed.wait())
            await asyncio.wait([*awake, changed], timeout=left, return_when=FIRST_COMPLETED)
            changed.cancel()

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
