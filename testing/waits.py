"""Waiting on real things (bot processes, Redis servers, a reader blocked on real time),
which the test's clock (testing/clock.py) does not move: looked at every few milliseconds."""

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any


async def until(
    check: Callable[[], Any],
    within: float,
    what: str,
    *,
    ignoring: tuple[type[Exception], ...] = (),
) -> None:
    """Until ``check()`` holds (awaited if it must be), or fail saying ``what`` after
    ``within`` seconds; an error of ``ignoring`` counts as not yet (Redis away, say)."""
    deadline = time.monotonic() + within
    while True:
        with contextlib.suppress(*ignoring):
            if (await held) if inspect.isawaitable(held := check()) else held:
                return
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


async def side_by_side(**cases: Awaitable[Any]) -> list[Any]:
    """Runs independent cases of one test at once, so that their waits on real timers
    (leases, idle limits, rate limits) overlap rather than add up; what each returns, in
    turn. A failing case stops the others and fails the test; each failure is noted with
    its case's name."""

    async def named(name: str, case: Awaitable[Any]) -> Any:
        try:
            return await case
        except Exception as failure:
            failure.add_note(f"(in the case {name!r})")
            raise

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(named(name, case)) for name, case in cases.items()]
    return [task.result() for task in tasks]
