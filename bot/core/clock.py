"""The bot's time: what it reads the time from, how it waits, and its timers.

Everything in the bot that depends on time passing (the store's deadlines and leases, the
pollers, delivery's wake-ups, the computer's pace and the turn timers, the rate limiter)
goes through one :class:`Clock`, kept in :class:`bot.core.services.Services`. Production runs
on the system's time; the tests give the bot a clock they move forward (testing/clock.py),
so that what takes minutes for a user takes none of the suite's wall time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    """A callback set for later (an :class:`asyncio.TimerHandle` in production)."""

    def cancel(self) -> None: ...

    def cancelled(self) -> bool: ...


class Clock:
    """The system's time, in seconds since the epoch."""

    def __call__(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        """Seconds that only go forward, for measuring a span (an outage's backoff): the
        system's time may step back, and a span read on it would then last that much
        longer."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def call_at(self, when: float, callback: Callable[[], object]) -> Timer:
        """Calls ``callback`` (in the running event loop) once the time is ``when``."""
        loop = asyncio.get_running_loop()
        return loop.call_later(max(0.0, when - self()), callback)
