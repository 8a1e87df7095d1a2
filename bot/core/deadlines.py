"""The deadline sets of the buckets, a part of :class:`bot.core.store.Store`: the due
deliveries (messages left for later, and leases whose holder may have died) and the turn
deadlines (automatic moves), each in 16 buckets (``ct:{b<n>}:due``, ``ct:{b<n>}:turns``,
:mod:`bot.core.keys`), and when each bucket is worth a read (:mod:`bot.core.polls`).
None of these writes waits for a replica: nothing is shown from them alone (a turn's move
is a commit, which does)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis

from bot.core import replies, scripts
from bot.core.keys import DUE_KEYS, TURN_KEYS, family_of
from bot.core.polls import Polls, read_buckets

LEASE_MS = 2_000  # a delivery lease outlives a crashed holder by at most this (bot.core.store)


class Deadlines:
    """The store's deadline sets (see the module docstring)."""

    redis: aioredis.Redis
    clock: Callable[[], float]
    polls: Polls
    _take_due: Callable[[scripts.TakeDue], Awaitable[Any]]
    _turn_claim: Callable[[scripts.TurnClaim], Awaitable[Any]]
    _turn_settle: Callable[[scripts.TurnSettle], Awaitable[Any]]

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    async def defer(self, key: str, due: float) -> None:
        """Leave the table's messages for later (``due``: seconds since the epoch)."""
        keys = family_of(key)
        await self.redis.zadd(keys.due, {key: int(due * 1000)})
        self.polls.due.wake(keys.bucket, due)

    async def take_due(
        self, buckets: list[int], now_ms: int, limit: int = 100
    ) -> list[tuple[list[str], float | None]]:
        """For each of ``buckets``, the table keys whose messages are due, each handed to
        exactly one caller, and when the bucket's next entry falls due (seconds since the
        epoch; None: none is left), from one read of them all (bot.core.polls). Each taken
        is due again a lease later, until the caller's claim or release says when
        (scripts.TAKE_DUE): a claim that fails leaves it due, not lost."""
        keys = [DUE_KEYS[n] for n in buckets]
        found = await read_buckets(self.redis, keys, now_ms, limit)
        return [
            (await self._take(key, now_ms, due) if due else [], after)
            for key, (due, after) in zip(keys, found, strict=True)
        ]

    async def _take(self, key: str, now_ms: int, due: list[str]) -> list[str]:
        """Of ``due``, read in deadline set ``key``, those this caller takes
        (:meth:`take_due`)."""
        lease = now_ms + LEASE_MS
        taken = await self._take_due(scripts.TakeDue(key, now_ms, lease, tuple(due)))
        return [replies.text(k) for k in taken]

    async def schedule_turn(self, key: str, due: float) -> None:
        """The table's automatic move is due at ``due`` (seconds since the epoch), unless
        an earlier time is set already (bot.service.turns)."""
        keys = family_of(key)
        await self.redis.zadd(keys.turns, {key: int(due * 1000)}, lt=True)
        self.polls.turns.wake(keys.bucket, due)

    async def due_turns(
        self, buckets: list[int], now_ms: int, limit: int = 50
    ) -> list[tuple[list[str], float | None]]:
        """For each of ``buckets``, the table keys whose automatic move is due (a poller
        then claims each), and when its next deadline falls (as :meth:`take_due`)."""
        return await read_buckets(self.redis, [TURN_KEYS[n] for n in buckets], now_ms, limit)

    async def claim_turn(self, key: str, now_ms: int, claim: int) -> bool:
        """Take a due table's move by moving its deadline to ``claim`` (ms); False when it
        was not due any more or another poller took it."""
        keys = family_of(key)
        taken = await self._turn_claim(scripts.TurnClaim(keys.turns, key, now_ms, claim))
        if taken:  # it comes due again when the claim runs out, unless settled before
            self.polls.turns.wake(keys.bucket, claim / 1000)
        return bool(taken)

    async def settle_turn(self, key: str, claim: int, due: float) -> None:
        """Replace our claim by the table's next deadline (``due``; 0: none), unless a
        commit has set an earlier time meanwhile."""
        new, keys = int(due * 1000) if due else None, family_of(key)
        await self._turn_settle(scripts.TurnSettle(keys.turns, key, claim, new))
        if due:
            self.polls.turns.wake(keys.bucket, due)
