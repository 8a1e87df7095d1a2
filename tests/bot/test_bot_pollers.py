"""The bot's pollers (bot.core.services.every) stop with the bot, whatever their jobs do
with a cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.core.services import every, services, stop_polls
from testing.harness import Harness


async def test_a_poller_stops_even_when_its_job_lost_the_cancellation(harness: Harness) -> None:
    """Python 3.11's ``asyncio.wait_for`` can drop a cancellation that comes just as its
    inner call completes; the job then returns as if nothing happened. The poller must
    still end, or the bot would never finish stopping."""
    app = harness.app
    started = asyncio.Event()
    lost = 0

    async def job(_: Any) -> None:
        nonlocal lost
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if lost:
                raise
            lost += 1  # dropped, once

    every(app, 0.01, job)
    await started.wait()
    async with asyncio.timeout(5):
        await stop_polls(app)
    assert lost == 1 and not services(app).pollers
