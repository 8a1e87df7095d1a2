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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis

from bot.core.keys import BUCKETS

MOST = 1.0  # seconds: every bucket is read at least this often


@dataclass
class Buckets:
    """One deadline set's buckets: when each is next to be read (seconds, the store's
    clock; 0: at the next poll)."""

    next: list[float] = field(default_factory=lambda: [0.0] * BUCKETS)

    def ready(self, now: float) -> list[int]:
        """The buckets to read at this poll."""
        return [n for n, at in enumerate(self.next) if at <= now]

    def read(self, n: int, now: float, after: float | None) -> None:
        """Bucket ``n`` was read at ``now``; ``after``: when its next entry falls due
        (None: it holds nothing later)."""
        at = now + MOST
        self.next[n] = at if after is None else min(at, max(after, now))

    def wake(self, n: int, at: float) -> None:
        """Something is due in bucket ``n`` at ``at`` (this process wrote it)."""
        if at < self.next[n]:
            self.next[n] = at


@dataclass
class Polls:
    """A process's view of both deadline sets (kept by its store)."""

    due: Buckets = field(default_factory=Buckets)
    turns: Buckets = field(default_factory=Buckets)


async def read_bucket(
    redis: aioredis.Redis, key: str, now_ms: int, limit: int
) -> tuple[list[str], float | None]:
    """The members of a deadline set due by ``now_ms`` (at most ``limit``), and when the
    first one after them falls due (seconds; None: none is known to follow): one ZRANGE of
    the lowest scores."""
    raw: list[Any] = await redis.zrange(key, 0, limit, withscores=True)
    found = [(m.decode() if isinstance(m, bytes) else str(m), float(s)) for m, s in raw]
    due = [m for m, score in found[:limit] if score <= now_ms]
    later = [score for _, score in found if score > now_ms]
    if later:
        return due, later[0] / 1000
    if len(found) > limit:  # all due, and more behind them: look again at once
        return due, now_ms / 1000
    return due, None
