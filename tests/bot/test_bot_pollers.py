"""The bot's pollers (bot.core.services.every) stop with the bot, whatever their jobs do
with a cancellation; the deadline sets' buckets are each read about once a second, and
sooner when an entry falls due (bot.core.polls)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from bot.core import polls
from bot.core.keys import BUCKETS, family, family_of, table_key
from bot.core.services import every, services, stop_polls
from bot.core.store import Store
from testing.harness import Harness


async def test_a_poller_stops_even_when_its_job_lost_the_cancellation(harness: Harness) -> None:
    """Python 3.11's ``asyncio.wait_for`` can drop a cancellation that comes as its inner
    call completes; the bot must still finish stopping."""
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


def on_reads(redis: Any, then: Callable[[list[str]], Awaitable[None]]) -> None:
    """Calls ``then`` with the keys each pipeline of ``redis`` read (ZRANGE), once read."""
    pipeline = redis.pipeline

    def watched(*args: Any, **kwargs: Any) -> Any:
        pipe = pipeline(*args, **kwargs)
        execute = pipe.execute

        async def run(*a: Any, **k: Any) -> Any:
            read = [args[1] for args, _ in pipe.command_stack if args[0] == "ZRANGE"]
            found = await execute(*a, **k)
            await then(read)
            return found

        pipe.execute = run
        return pipe

    redis.pipeline = watched


async def _poll(store: Store) -> list[str]:
    """One round of both pollers (delivery.due_job, turns.turns_job): what came due."""
    due = [key async for key in polls.due_tables(store)]
    return due + [key async for key in polls.turn_tables(store)]


async def test_an_idle_process_reads_each_bucket_about_once_a_second(fake_redis: Any) -> None:
    now = [1000.0]
    store = Store(fake_redis, ttl=100, clock=lambda: now[0])
    reads = trips = 0

    async def counted(keys: list[str]) -> None:
        nonlocal reads, trips
        reads, trips = reads + len(keys), trips + 1

    on_reads(fake_redis, counted)
    for _ in range(200):  # 10 s of polls every 50 ms
        assert await _poll(store) == []
        now[0] += 0.05
    assert 2 * BUCKETS * 10 <= reads <= 2 * BUCKETS * 11  # not 16 reads per poll
    assert trips <= 2 * 11  # a set's buckets read together: one round trip, not 16


async def test_a_bucket_is_read_when_its_next_entry_falls_due_or_this_process_wrote_to_it(
    fake_redis: Any,
) -> None:
    now = [1000.0]
    store = Store(fake_redis, ttl=100, clock=lambda: now[0])
    other = Store(fake_redis, ttl=100, clock=lambda: now[0])  # another process
    key, later = table_key(-5, None), table_key(-6, None)
    n = family_of(key).bucket
    await fake_redis.zadd(family_of(later).due, {later: int((now[0] + 0.4) * 1000)})
    assert await _poll(store) == []  # every bucket read once: none is ready
    assert store.polls.due.ready(now[0] + 0.39) == []
    assert store.polls.due.ready(now[0] + 0.4) == [family_of(later).bucket]  # as its read said
    await store.defer(key, now[0] + 0.3)  # this process's own write wakes its bucket
    assert store.polls.due.ready(now[0] + 0.3) == [n]
    now[0] += 0.3
    assert await _poll(store) == [key]
    await other.defer(key, now[0] + 0.1)  # unknown here: read a second after the last read
    now[0] += 0.1
    assert await _poll(store) == [later]
    assert n not in store.polls.due.ready(now[0] + 0.89)
    now[0] += 0.9
    assert await _poll(store) == [key]


async def test_a_wake_while_its_bucket_is_being_read_is_not_lost(fake_redis: Any) -> None:
    """A bucket woken by a write just after a poller's read of it stays woken: the read's
    answer ("nothing, read me again in a second") does not overwrite the wake."""
    now = [1000.0]
    store = Store(fake_redis, ttl=100, clock=lambda: now[0])
    key = table_key(-5, None)
    n = family_of(key).bucket
    written = False

    async def read_then_a_write(keys: list[str]) -> None:
        nonlocal written  # the read saw an empty bucket ...
        if not written and family_of(key).due in keys:
            written = True
            await store.defer(key, now[0] + 0.05)  # ... and the write comes meanwhile

    on_reads(fake_redis, read_then_a_write)
    assert await _poll(store) == []
    assert written
    assert store.polls.due.ready(now[0] + 0.05) == [n], "woken for its own write"
    now[0] += 0.05
    assert await _poll(store) == [key]


async def test_a_bucket_is_read_a_few_members_at_a_time(fake_redis: Any) -> None:
    """A backlog (after an outage) comes READ keys per read, the bucket read again at
    the next poll while all it read were due."""
    now = [1000.0]
    store = Store(fake_redis, ttl=100, clock=lambda: now[0])
    keys = [f.table for f in (family(-c) for c in range(1, 2000)) if f.bucket == 3]
    backlog = keys[: 2 * polls.READ + 4]
    for key in backlog:
        await store.defer(key, now[0] - 10)
    counts = []
    while taken := await _poll(store):
        counts.append(len(taken))
        if len(taken) == polls.READ:
            assert store.polls.due.ready(now[0]) == [3], "all due: read again at once"
        now[0] += 0.01
    assert counts == [polls.READ, polls.READ, 4]
