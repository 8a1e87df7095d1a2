"""The inbox through faults: a reader that meets an error that is no pause, a cluster's
read that fails beside others that found entries, a dead worker's consumers."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException

from bot import inbox
from bot.core import inbox as stream
from testing.clock import Clock
from testing.fakegram import FakeTelegram
from testing.harness import AppFactory, Harness
from tests.bot.test_inbox import WEBHOOK, _help, _kept, _length_is, _replies, _store, _until


async def test_the_reader_reads_on_after_an_error_that_is_no_pause(
    server: FakeTelegram,
    make_app: AppFactory,
    clock: Clock,
    fake_redis: aioredis.Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = Harness(server)
    h.apps.append(await make_app(fake_redis, **WEBHOOK))
    kept = _kept(h)
    ann = h.user("Ann")
    worker = inbox.worker_of(h.app)
    assert worker is not None and worker.reader is not None
    real_take = worker.inbox.take
    # What redis-py's cluster client raises when the slot map it reads again is not whole.
    failures = [
        RedisClusterException("Redis Cluster cannot be connected"),
        RedisClusterException("All slots are not covered after query all startup_nodes"),
    ]

    async def take(count: int, block_ms: int) -> Any:
        if failures:
            raise failures.pop()
        return await real_take(count, block_ms)

    worker.inbox.take = take  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, logger="bot.inbox"):
        await _store(fake_redis, await _help(h, kept, ann))
        await _until(lambda: _length_is(fake_redis, 0), "the reader stopped")
    assert not failures and not worker.reader.done()
    assert len(_replies(h, ann)) == 1
    told = [r for r in caplog.records if "read failed" in r.getMessage()]
    assert len(told) == 1 and told[0].exc_info is not None  # once, with its traceback
    assert [r for r in caplog.records if "reads again" in r.getMessage()]


async def test_a_clusters_read_that_fails_hands_over_what_the_others_read_first(
    fake_redis: aioredis.Redis,
) -> None:
    box = stream.Inbox(fake_redis, "w1")
    box.one_server = False  # each stream read on its own, as on a cluster
    found = [(stream.ref(3, b"1-0"), b"{}")]

    async def take_one(n: int, count: int, block_ms: int) -> stream.Claimed:
        if n == 3:
            return found, None
        if n == 5:  # its node fails over
            raise RedisConnectionError("node down")
        await asyncio.sleep(10)
        return [], None

    box._take_one = take_one  # type: ignore[method-assign]
    try:
        assert await box.take(16, 250) == found  # not dropped, left pending for others
        with pytest.raises(RedisConnectionError):  # then the failure is told
            await box.take(16, 250)
    finally:
        box.close()


async def test_a_dead_worker_leaves_every_stream_at_one_look_once_it_holds_nothing(
    fake_redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "CLAIM_IDLE_MS", 100)
    live = stream.Inbox(fake_redis, "live")
    await live.make_group()
    await fake_redis.xadd(stream.STREAMS[7], {stream.FIELD: b"{}"})
    everything = dict.fromkeys(stream.STREAMS, ">")
    await fake_redis.xreadgroup(stream.GROUP, "dead", everything, count=1)  # holds stream 7's
    await asyncio.sleep(0.2)  # the dead one idle past the limit
    await fake_redis.xreadgroup(stream.GROUP, "live", everything, count=1)

    async def members() -> dict[int, set[str]]:
        found: dict[int, set[str]] = {}
        for n, key in enumerate(stream.STREAMS):
            consumers = await fake_redis.xinfo_consumers(key, stream.GROUP)
            found[n] = {c["name"].decode() for c in consumers}
        return found

    assert all(names == {"dead", "live"} for names in (await members()).values())
    await live.forget_dead()  # looks at stream 0, where the dead one holds nothing
    left = await members()
    assert left[7] == {"dead", "live"}  # it holds an entry there: kept, for a takeover
    assert all(names == {"live"} for n, names in left.items() if n != 7)
    assert await live.reclaim(10) == [] and await live.reclaim(10) != []  # streams 4-7
    await live.forget_dead()  # stream 1's turn: the dead one is looked for in 7 again
    assert all(names == {"live"} for names in (await members()).values())
