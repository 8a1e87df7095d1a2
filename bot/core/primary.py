"""Behind Sentinel, writes reach the new primary within a second of a failover.

Why: redis-py asks the Sentinels where the primary is only when it opens a connection.
After a graceful ``SENTINEL FAILOVER`` the old primary goes on answering on the pool's open
connections until the Sentinels turn it into a replica, 8 to 10 s later with their default
periods (they wait for its INFO to say "master" a few times). No replica confirms what it
takes meanwhile (it has none left: bot.core.replicas), so every tap of those seconds was
told "not confirmed yet", and its write was lost when the old primary became a replica.

So when a write comes back unconfirmed, or a node answers as a replica, :meth:`Follow.ask`
asks the Sentinels which primary they name (at most once per :data:`ASK_EVERY` seconds per
process), and drops the pool's connections to any other server: the idle ones at once,
those in use once their command is done (their task is not cut off). The next write opens
a connection to the primary the Sentinels name. A write that went to a server the pool
no longer takes for the primary (:class:`Landing` says where each went) is not confirmed
by what the new primary says of its replicas (bot.core.replicas); one that went to the
primary has that read from the primary, not from a connection left on the old one
(:meth:`Follow.keep_to`). One server and a cluster have no :class:`Follow` (a cluster
follows its slots itself): no call more there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio.client import Pipeline
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.sentinel import SentinelConnectionPool
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

ASK_EVERY = 1.0  # seconds between two questions to the Sentinels, at least


@dataclass
class Follow:
    """The pool of a client behind Sentinel, kept on the primary the Sentinels name."""

    pool: SentinelConnectionPool
    clock: Callable[[], float] = time.monotonic
    _asked_at: float | None = None
    _told: Any = None  # the primary last known (logged when it changes: note)
    _unanswered: bool = False  # the Sentinels' silence was logged (once, until they answer)

    def __post_init__(self) -> None:
        self._told = self.address

    @property
    def address(self) -> Any:
        """The primary's address as the pool last heard it from the Sentinels (None
        before its first connection): it changes when the pool learns of a failover."""
        return self.pool.master_address

    async def ask(self) -> bool:
        """Ask the Sentinels which server is the primary (unless asked less than
        :data:`ASK_EVERY` seconds ago) and drop the connections to any other; whether some
        were dropped. Sentinels that do not answer tell nothing: the write's own error
        stands."""
        now = self.clock()
        if self._asked_at is not None and now - self._asked_at < ASK_EVERY:
            return False
        self._asked_at = now
        before = self.address
        try:  # (redis-py drops the idle connections itself when the address changed)
            address = await self.pool.get_master_address()  # type: ignore[no-untyped-call]
        except RedisError as exc:  # none answers, or not as a Sentinel: the write's stands
            if not self._unanswered:
                self._unanswered = True
                log.warning("the Sentinels name no primary (%s); the pool stays", exc)
            return False
        self._unanswered = False
        moved = await self.keep_to(address) or address != before
        self.note()
        return moved

    def note(self) -> None:
        """Log a new primary once, whoever learned of it: :meth:`ask`, or the pool itself
        when a new connection asked the Sentinels (the old primary, turned replica, closed
        the connections it had, say), which a later :meth:`ask` would not see as a move."""
        address = self.address
        if address is None or address == self._told:
            return
        if self._told is not None:  # (the first primary met is no change)
            log.info("Redis primary is now %s:%s, per Sentinel", *address)
        self._told = address

    async def keep_to(self, address: Any = None) -> bool:
        """Drop the pool's connections to any other server than ``address`` (by default
        the one it last heard of): the idle ones at once, those in use once given back.
        Whether there were any."""
        address = address or self.address
        if address is None:  # no connection yet
            return False
        async with self.pool._lock:  # no task takes an idle connection meanwhile
            idle = [c for c in self.pool._available_connections if _elsewhere(c, address)]
            busy = [c for c in self.pool._in_use_connections if _elsewhere(c, address)]
            for connection in idle:
                await connection.disconnect(nowait=True)
        for connection in busy:  # closed when given back (redis-py's release)
            connection.mark_for_reconnect()  # type: ignore[no-untyped-call]
        return bool(idle or busy)


class Landing:
    """Where a pipeline's commands were answered: ``at``, the (host, port) of the
    connection its last try went out on (None until it has run). A try that failed, on a
    connection that broke or met a replica, is run again on a new one: that one counts."""

    def __init__(self, pipe: Any) -> None:
        self.at: Any = None
        self._run = pipe._execute_pipeline
        pipe._execute_pipeline = self._execute

    async def _execute(self, connection: AbstractConnection, *args: Any) -> Any:
        result = await self._run(connection, *args)
        self.at = (getattr(connection, "host", None), getattr(connection, "port", None))
        return result


def _elsewhere(connection: AbstractConnection, address: Any) -> bool:
    """Whether ``connection`` is open to another server than ``address``."""
    host, port = getattr(connection, "host", None), getattr(connection, "port", None)
    return connection.is_connected and (host, port) != tuple(address)


# What of redis-py's own this module reaches into: a release without one fails at start,
# not in the middle of a failover.
_POOL_PARTS = ("_lock", "_available_connections", "_in_use_connections")


def follow(redis: Any, clock: Callable[[], float]) -> Follow | None:
    """A :class:`Follow` of ``redis``'s pool when it is behind Sentinel, else None."""
    pool = getattr(redis, "connection_pool", None)
    if not isinstance(pool, SentinelConnectionPool):
        return None
    missing = [name for name in _POOL_PARTS if not hasattr(pool, name)]
    if missing or not hasattr(Pipeline, "_execute_pipeline"):
        raise RuntimeError(f"this redis-py lacks what bot.core.primary uses: {missing}")
    return Follow(pool, clock)
