"""Redis outages: a client that fails fast, one state per process, pollers that back off.

While Redis does not answer nothing can be decided (every table lives there), so the bot
says so at once rather than leave a tap spinning: the update guard (:mod:`bot.handlers.once`)
answers every tap and command with a short "temporarily unavailable" line, and the
pollers of :mod:`bot.service.turns` and :mod:`bot.service.delivery` try less often. Nothing is
half-applied: a change is one compare-and-set script, which runs whole or not at all.

The log gets one WARNING when the outage starts (the first failure seen) and one INFO when
it ends (the first success after it; on a cluster, the first :data:`QUIET` seconds after
the last failure, since another node's success says nothing of the failing one), never a
traceback per tick or per tap.

A failover is an outage too, a short one: while a cluster elects a new primary, or
Sentinel moves the primary, Redis answers with errors that say "not now" rather than
"wrong" (:data:`PAUSES`). Those are what the bot rides out as an outage; any other error
Redis returns (``NOSCRIPT``, ``CROSSSLOT``, a script's bug) is an error: the caller does not
catch it, so it is logged once, with its traceback, where the update or the poller fails.

Fail fast: redis-py 8 retries a failed command ten times with backoff, 5 s timeouts each,
which would keep a tap waiting for a minute. :func:`client` connects and reads with
:data:`TIMEOUT` seconds and retries once, without waiting and only after a broken
connection (what a restarted Redis leaves in the pool), never after a timeout (a hung
server would only double the wait).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis._parsers.base import BaseParser
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    ClusterDownError,
    ReadOnlyError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.core import metrics
from bot.core.replicas import Unconfirmed

log = logging.getLogger(__name__)


class UnblockedError(ResponseError):
    """``UNBLOCKED``: the server cut off a blocking read (or a WAIT) because it stopped
    being a primary (a failover), or an operator's ``CLIENT UNBLOCK ... ERROR``."""


# redis-py reads an error reply's first word to choose its exception; it knows no
# UNBLOCKED, which would come as a plain ResponseError, the kind a script's bug raises.
# Named here, the failover's cut-off is a pause like the others (tests/bot/test_pauses.py
# checks it on a real server).
BaseParser.EXCEPTION_CLASSES.setdefault("UNBLOCKED", UnblockedError)

_send_packed = AbstractConnection._send_packed_command


async def _send_packed_command(self: AbstractConnection, command: Iterable[bytes]) -> None:
    """A connection that another task closed under its user fails as a lost one does.

    Why: redis-py's cluster client, when it reads the slots again (every few MOVED, a
    CLUSTERDOWN, a pipeline's retry after a lost connection or a timeout: a failover),
    closes every connection of every node, also those that other tasks are using. A command
    about to be written on one then met ``AttributeError: 'NoneType' object has no
    attribute 'writelines'`` (and, on Python 3.12, a closing transport a TypeError): an
    error, not a pause, so its webhook update failed with a traceback and was taken off the
    inbox, the tap never answered (issue 33). Named a ConnectionError it is a pause, as the
    same close met a moment later is (tests/bot/test_pauses.py). The bot's clients all set
    a socket timeout, the branch of ``send_packed_command`` that calls this. redis-py's own
    guard (its issue 4287, pull request 4288, merged after 8.1.0) makes this redundant
    once the lock files have a release with it."""
    writer = self._writer
    if writer is None or writer.transport.is_closing():
        raise RedisConnectionError("Connection closed by another task meanwhile")
    await _send_packed(self, command)


AbstractConnection._send_packed_command = _send_packed_command  # type: ignore[method-assign]

# What a failover, or Redis going away, looks like to a caller: an outage, reported once,
# ridden out (the tap is told to try again; pollers back off). A lost or refused
# connection, no answer in time (also Sentinel naming no primary, a server still loading),
# a cluster with a slot nobody serves yet, a node that turned replica under us, a blocking
# read cut off by the same. SlotNotCoveredError is no RedisError: catch this tuple, never
# RedisError for an outage.
PAUSES: tuple[type[Exception], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterDownError,
    TryAgainError,
    SlotNotCoveredError,
    ReadOnlyError,
    UnblockedError,
)
# What keeps a table from being read as a replica holds it now: an outage, or no replica
# confirmed in time, which is no outage (the Mini App's reads, a lost release's clean-up).
UNREAD: tuple[type[Exception], ...] = (*PAUSES, Unconfirmed)

TIMEOUT = 1.0  # seconds to connect, and to wait for an answer
# Pollers try again after this during an outage, doubling up to the cap: the cap bounds
# how late play resumes once Redis is back (turn deadlines, coalesced group edits).
FIRST_BACKOFF = 0.25
MAX_BACKOFF = 1.0


@dataclass
class Backoff:
    """A wait after a failure that doubles with each failure after it, from
    :data:`FIRST_BACKOFF` up to :data:`MAX_BACKOFF`, until a success resets it."""

    wait: float = FIRST_BACKOFF

    def step(self) -> float:
        """The wait now; the next one is twice as long (up to the cap)."""
        now, self.wait = self.wait, min(self.wait * 2, MAX_BACKOFF)
        return now

    def reset(self) -> None:
        self.wait = FIRST_BACKOFF


# On a cluster an outage is one node's: a success on another node says nothing of it, so
# the outage ends only with a success this long after the last failure (a failing node's
# calls fail at least every TIMEOUT plus a retry's pause while it is down).
QUIET = 3.0


def client(url: str, timeout: float = TIMEOUT, **options: Any) -> aioredis.Redis:
    """The bot's Redis client (see the module docstring); tests shorten ``timeout`` so
    that an outage costs them less of the clock. ``options``: more of redis-py's (the
    benchmarks' counting connection class)."""
    return aioredis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
        **options,
    )


@dataclass
class Health:
    """Whether Redis answered the last time this process asked, and whether the process
    is stopping (a SIGTERM: bot.runner); both make it not ready (``/readyz``)."""

    clock: Callable[[], float] = time.monotonic
    # Seconds without a failure before a success ends an outage (:data:`QUIET` on a
    # cluster, bot.app; 0 on one server, where any answer is Redis's as a whole).
    quiet: float = 0.0
    down_since: float | None = None
    _failed_at: float = 0.0  # the last failure's time
    stopping: bool = False
    _next_poll: float = 0.0
    _backoff: Backoff = field(default_factory=Backoff)

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def failed(self, exc: BaseException) -> None:
        """A Redis call failed: the outage starts now unless it is already known. A write
        no replica confirmed is no outage (bot.core.replicas says so, once)."""
        if isinstance(exc, Unconfirmed):
            return
        self._failed_at = self.clock()
        if self.down_since is None:
            self.down_since = self._failed_at
            metrics.REDIS_DOWN.set(1)
            self._next_poll = self.down_since + self._backoff.step()
            log.warning("Redis does not answer (%s): taps and commands are refused meanwhile", exc)

    def ok(self) -> None:
        """A Redis call succeeded: the outage, if any, is over (on a cluster, once no
        call failed for :attr:`quiet` seconds: the success may be a healthy node's)."""
        if self.down_since is not None and self.clock() - self._failed_at >= self.quiet:
            log.info("Redis answers again, after %.1f s", self.clock() - self.down_since)
            self.down_since = None
            metrics.REDIS_DOWN.set(0)
            self._backoff.reset()

    def may_poll(self) -> bool:
        """Whether a poller should try now (always, unless Redis is down and the backoff
        has not run out)."""
        if self.down_since is None:
            return True
        now = self.clock()
        if now < self._next_poll:
            return False
        self._next_poll = now + self._backoff.step()
        return True


def health_of(redis: aioredis.Redis | RedisCluster, clock: Callable[[], float]) -> Health:
    """A process's :class:`Health` for its client, on the process's ``clock`` (a test moves
    it through a backoff): on a cluster, where an outage is one node's while the others
    answer, it ends :data:`QUIET` seconds after the last failure."""
    return Health(clock, quiet=QUIET if isinstance(redis, RedisCluster) else 0.0)
