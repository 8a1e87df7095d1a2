"""When each bucket of the deadline sets is next worth reading: polling 16 + 16 buckets at
the cost of about one read of each a second.

The due deliveries and the turn deadlines are spread over :data:`bot.core.keys.BUCKETS`
sorted sets each (one per slot, so that a cluster shares them out). Reading every bucket
at every poll would cost 16 reads where one did (720 commands a second per idle process,
measured). Instead one read of a bucket returns what is due *and* when its next entry falls
due (bot.core.deadlines.Deadlines.take_due: a ZRANGE of its lowest scores), and the bucket is not
read again until then, and at most :data:`MOST` seconds later whatever it said (another
process may have written an earlier deadline there meanwhile: a new table, or a delivery
whose holder died). This process's own writes to a bucket wake it for the time they wrote
(the store calls :meth:`Bucket.wake`), so what it schedules itself is polled on time, to
the poller's own period. An idle process so reads each bucket once a second: 32 reads a
second for both sets, besides the inbox's reads.

A read returns at most :data:`READ` members: when all of them are due, the bucket is read
again at the next poll (a backlog, after an outage, is taken a few at a time rather than
in one long round). A wake that comes while a read of its bucket is in flight is kept:
the read may have missed the write that woke it, so the bucket is read again by then
whatever the read says (:class:`Sweep`, :meth:`Buckets.begin`).

Both pollers (bot.service.delivery.due_job, bot.service.turns.turns_job) walk the ready
buckets the same way: :func:`due_tables` and :func:`turn_tables`.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from bot.core import replies
from bot.core.keys import BUCKETS

MOST = 1.0  # seconds: every bucket is read at least this often
READ = 8  # members read from a bucket at a time


@dataclass
class Buckets:
    """One deadline set's buckets: when each is next to be read (seconds, the store's
    clock; 0: at the next poll)."""

    next: list[float] = field(default_factory=lambda: [0.0] * BUCKETS)
    # The earliest wake of each bucket while a read of it is in flight (inf: none yet;
    # None: no read is).
    woken: list[float | None] = field(default_factory=lambda: [None] * BUCKETS)

    def ready(self, now: float) -> list[int]:
        """The buckets to read at this poll."""
        return [n for n, at in enumerate(self.next) if at <= now]

    def begin(self, n: int) -> None:
        """A read of bucket ``n`` starts: wakes from now on are kept by :meth:`read`."""
        self.woken[n] = math.inf

    def read(self, n: int, now: float, after: float | None) -> None:
        """Bucket ``n`` was read at ``now``; ``after``: when its next entry falls due
        (None: it holds nothing later). A wake since :meth:`begin` still stands (that
        write may have come after the read)."""
        at = now + MOST
        at = at if after is None else min(at, max(after, now))
        woken, self.woken[n] = self.woken[n], None
        self.next[n] = at if woken is None else min(at, woken)

    def wake(self, n: int, at: float) -> None:
        """Something is due in bucket ``n`` at ``at`` (this process wrote it)."""
        woken = self.woken[n]
        if woken is not None:
            self.woken[n] = min(woken, at)
        if at < self.next[n]:
            self.next[n] = at


@dataclass
class Polls:
    """A process's view of both deadline sets (kept by its store)."""

    due: Buckets = field(default_factory=Buckets)
    turns: Buckets = field(default_factory=Buckets)


async def read_buckets(
    redis: aioredis.Redis, keys: list[str], now_ms: int, limit: int
) -> list[tuple[list[str], float | None]]:
    """For each of ``keys`` (deadline sets), the members due by ``now_ms`` (at most
    ``limit``), and when the first one after them falls due (seconds; None: none is known
    to follow): one ZRANGE of the lowest scores each, all in one round trip (an idle
    process reads its 16 buckets of a set together, once a second). Raises the first
    error (the Sweep then keeps every bucket it asked for ready)."""
    if isinstance(redis, RedisCluster):
        # Side by side, not a pipeline: when a node is gone, redis-py's cluster pipeline
        # closes the whole client before its retry (ClusterPipeline.execute calls
        # aclose(), redis-py 8.1), breaking what other tasks have in flight on healthy
        # nodes; a single command drops only the dead node's idle connections.
        found = await asyncio.gather(
            *(redis.zrange(key, 0, limit, withscores=True) for key in keys),
            return_exceptions=True,
        )
        if failed := [x for x in found if isinstance(x, BaseException)]:
            raise failed[0]
        raws: list[Any] = list(found)
    else:
        async with redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.zrange(key, 0, limit, withscores=True)
            raws = await pipe.execute()
    return [_due_and_after(raw, now_ms, limit) for raw in raws]


def _due_and_after(raw: list[Any], now_ms: int, limit: int) -> tuple[list[str], float | None]:
    """What one bucket's ZRANGE says (:func:`read_buckets`)."""
    found = [(replies.text(m), float(s)) for m, s in raw]
    due = [m for m, score in found[:limit] if score <= now_ms]
    later = [score for _, score in found if score > now_ms]
    if later:
        return due, later[0] / 1000
    if len(found) > limit:  # all due, and more behind them: look again at once
        return due, now_ms / 1000
    return due, None


# Reads buckets at ``now_ms``: the due members of each, and when its next entry falls due.
Read = Callable[[list[int], int], Awaitable[list[tuple[list[str], float | None]]]]


class Sweep:
    """One poll of a deadline set: ``async for`` gives the keys due in the buckets worth a
    read; :attr:`asked` says whether Redis was asked at all (bot.core.services.guarded)."""

    def __init__(self, buckets: Buckets, now_ms: int, read: Read) -> None:
        self.buckets, self.now_ms, self._read = buckets, now_ms, read
        self.ready = buckets.ready(now_ms / 1000)

    @property
    def asked(self) -> bool:
        return bool(self.ready)

    async def __aiter__(self) -> AsyncIterator[str]:
        if not self.ready:
            return
        for n in self.ready:
            self.buckets.begin(n)
        found = await self._read(self.ready, self.now_ms)
        for n, (_, after) in zip(self.ready, found, strict=True):
            self.buckets.read(n, self.now_ms / 1000, after)
        for keys, _ in found:
            for key in keys:
                yield key


class DeadlineStore(Protocol):
    """What a sweep needs of the store (bot.core.deadlines.Deadlines, part of the Store)."""

    polls: Polls

    def now_ms(self) -> int: ...

    async def take_due(
        self, buckets: list[int], now_ms: int, limit: int = ...
    ) -> list[tuple[list[str], float | None]]: ...

    async def due_turns(
        self, buckets: list[int], now_ms: int, limit: int = ...
    ) -> list[tuple[list[str], float | None]]: ...


def due_tables(store: DeadlineStore) -> Sweep:
    """The tables whose messages are due, each handed to this caller alone (and due again
    a lease later, in case its claim fails: bot.core.scripts.TAKE_DUE)."""

    async def read(buckets: list[int], now_ms: int) -> list[tuple[list[str], float | None]]:
        return await store.take_due(buckets, now_ms, READ)

    return Sweep(store.polls.due, store.now_ms(), read)


def turn_tables(store: DeadlineStore) -> Sweep:
    """The tables whose automatic move is due (the caller claims each)."""

    async def read(buckets: list[int], now_ms: int) -> list[tuple[list[str], float | None]]:
        return await store.due_turns(buckets, now_ms, READ)

    return Sweep(store.polls.turns, store.now_ms(), read)
