"""The webhook's updates, stored durably before Telegram is told they arrived.

Telegram sends a webhook update once it is answered 200 no more, so the webhook answers
200 only once the update is in Redis (:meth:`Inbox.put`: ``XADD`` to the stream
:data:`STREAM`); while Redis does not answer it answers 503 and Telegram sends it again.
Every process reads the stream as a member of one consumer group (:data:`GROUP`): an
entry goes to one worker (``XREADGROUP``), stays pending under its name until it is
handled (then ``XACK`` and ``XDEL``: the stream holds only what is not handled yet), and
the worker touches its pending entries every second (``XCLAIM`` to itself, which restarts
their idle time). An entry idle for :data:`CLAIM_IDLE_MS` belongs to a worker that died
(or froze): any other takes it over (``XAUTOCLAIM``). The update guard
(bot.handlers.once) still sees every update, so one is handled once whoever reads it.

Every process joins the group under a name of its own; a worker leaves it when it stops
with nothing pending (:meth:`Inbox.leave`), and one that died is removed once it has
been idle for :data:`CLAIM_IDLE_MS` with nothing pending (:meth:`Inbox.forget_dead`), so
that the group holds only the living.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Sequence
from typing import cast

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from bot.core.config import read_alone
from bot.core.keys import KEY_PREFIX
from bot.core.scripts import FORGET_CONSUMERS, ForgetConsumers

STREAM = f"{KEY_PREFIX}:inbox"
GROUP = "workers"
FIELD = b"u"  # the field that holds the update's JSON
CLAIM_IDLE_MS: int = read_alone("claim_idle_ms")  # an entry untouched this long: another's

Entry = tuple[bytes, bytes]  # the stream's entry id, the update's JSON
Raw = Sequence[tuple[bytes, dict[bytes, bytes] | None]]  # entries as redis-py reads them


def consumer_name() -> str:
    """This process's name in the group: unique, and readable in XINFO."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def _entries(raw: Raw) -> list[Entry]:
    """Entries with their update (one deleted meanwhile comes back without fields)."""
    return [(i, fields[FIELD]) for i, fields in raw if fields and FIELD in fields]


class Inbox:
    """One process's side of the stream (see the module docstring)."""

    def __init__(self, redis: aioredis.Redis, consumer: str) -> None:
        self.redis = redis
        self.consumer = consumer
        self._forget = FORGET_CONSUMERS.register(redis)

    async def put(self, update: bytes) -> None:
        """Store an update (the webhook answers 200 after this only)."""
        await self.redis.xadd(STREAM, {FIELD: update})

    async def make_group(self) -> None:
        """The consumer group, made with the stream if either is missing (a first start,
        or a Redis that lost its data): it reads every entry still in the stream."""
        try:
            await self.redis.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def take(self, count: int, block_ms: int) -> list[Entry]:
        """Up to ``count`` entries no worker has read, waiting at most ``block_ms``."""
        try:
            got = await self.redis.xreadgroup(
                GROUP, self.consumer, {STREAM: ">"}, count=count, block=block_ms
            )
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.make_group()
            return []
        streams = cast(list[tuple[bytes, Raw]], got)  # RESP2: [(stream, entries)]
        return [entry for _, raw in streams for entry in _entries(raw)]

    async def touch(self, ids: Sequence[bytes]) -> None:
        """This worker is still on ``ids``: their idle time starts again."""
        if ids:
            await self.redis.xclaim(STREAM, GROUP, self.consumer, 0, list(ids), justid=True)

    async def reclaim(self, count: int) -> list[Entry]:
        """Entries a dead worker left (idle for :data:`CLAIM_IDLE_MS`), now this one's."""
        try:
            got = await self.redis.xautoclaim(
                STREAM, GROUP, self.consumer, CLAIM_IDLE_MS, "0-0", count=count
            )
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.make_group()
            return []
        return _entries(cast(Raw, got[1]))  # [cursor, entries, deleted ids]

    async def leave(self) -> None:
        """This worker stops: out of the group, unless it still holds entries (they stay
        pending under its name, for another worker to take over)."""
        await self._forget_where(idle_ms=2**62, name=self.consumer)

    async def forget_dead(self) -> None:
        """Remove the consumers idle for :data:`CLAIM_IDLE_MS` that hold nothing."""
        await self._forget_where(idle_ms=CLAIM_IDLE_MS, name="")

    async def _forget_where(self, idle_ms: int, name: str) -> None:
        try:
            await self._forget(ForgetConsumers(STREAM, GROUP, idle_ms, name))
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):  # no group: no consumers either
                raise

    async def backlog(self) -> int:
        """Updates stored and not yet handled, by any worker."""
        return int(await self.redis.xlen(STREAM))

    async def done(self, entry_id: bytes) -> None:
        """Handled: off the stream."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xack(STREAM, GROUP, entry_id)
            pipe.xdel(STREAM, entry_id)
            await pipe.execute()
