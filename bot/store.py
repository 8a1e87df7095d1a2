"""Tables in Redis: the key layout and the compare-and-set every change goes through.

Key layout (one Redis hash per table, i.e. per group chat or per forum topic)::

    ct:table:<chat_id>:<thread_id or 0>
        v          version, a decimal integer; bumped by every committed change
        d          the Table as JSON (bot data + the engine state JSON)
        m:table    Slot JSON of the group message (lobby, then the table, then the result)
        m:u<uid>   Slot JSON of user <uid>'s hand message in his private chat

``v`` and ``d`` change only together, through a compare-and-set on ``v`` (a Lua script;
WATCH/MULTI/EXEC where the server has no Lua, e.g. fakeredis without lupa), so two bot
processes serving the same chat can neither lose nor double a move. The ``m:*`` slots are
written after delivery without CAS: they only remember what Telegram shows, and each
carries the version it shows so that an older render is never written over a newer one.
Every write refreshes the key's TTL, so finished and abandoned tables expire.

A move costs one HGETALL, one CAS and (after delivery) one HSET of the slots.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import redis.asyncio as aioredis
from pydantic import ValidationError
from redis.exceptions import ResponseError, WatchError

from bot.models import Slot, Table

log = logging.getLogger(__name__)

R = TypeVar("R")
MAX_ATTEMPTS = 50

# KEYS[1] table key; ARGV: expected version, new version, table JSON, ttl, fresh (1 drops
# every other field: a new game in the chat starts with no remembered messages).
_CAS = """
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '0') ~= ARGV[1] then return 0 end
if ARGV[5] == '1' then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'd', ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return 1
"""


def table_key(chat_id: int, thread_id: int | None) -> str:
    return f"ct:table:{chat_id}:{thread_id or 0}"


def user_slot(user_id: int) -> str:
    return f"m:u{user_id}"


TABLE_SLOT = "m:table"


@dataclass
class Write:
    """What a transaction function decided: the table to store (None: store nothing)."""

    table: Table | None
    fresh: bool = False


@dataclass
class Snapshot:
    """A table as loaded, with its message slots."""

    table: Table | None
    slots: dict[str, Slot] = field(default_factory=dict)
    version: int = 0  # the stored version (also when the table itself did not validate)


class ConflictError(RuntimeError):
    """The CAS kept failing (a pathological storm of concurrent changes)."""


def _decode(raw: Mapping[Any, Any]) -> Snapshot:
    version = int(raw.get(b"v", b"0"))
    if b"d" not in raw:
        return Snapshot(None, version=version)
    try:
        table = Table.model_validate_json(raw[b"d"])
    except ValidationError:
        # A table written by an incompatible version: treat the chat as free (the next
        # game overwrites it) rather than fail on every update.
        log.warning("a stored table does not validate; the chat counts as free")
        return Snapshot(None, version=version)
    table.version = version
    slots: dict[str, Slot] = {}
    for name, value in raw.items():
        if name.startswith(b"m:"):
            try:
                slots[name.decode()] = Slot.model_validate_json(value)
            except ValidationError:
                continue
    return Snapshot(table, slots, version)


class Store:
    """Loads tables and commits changes to them with optimistic concurrency."""

    def __init__(self, redis: aioredis.Redis, ttl: int) -> None:
        self.redis = redis
        self.ttl = ttl
        self._script = redis.register_script(_CAS)
        self._lua: bool | None = None  # unknown until first tried

    async def load(self, key: str) -> Snapshot:
        return _decode(await self.redis.hgetall(key))

    async def transact(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R]:
        """Load, let ``decide`` change the table, commit if the version is unchanged.

        ``decide`` must be pure (no I/O): on a conflict it runs again on the newer table.
        Returns the snapshot as committed (or as loaded when nothing was written) and
        ``decide``'s result.
        """
        for attempt in range(MAX_ATTEMPTS):
            if self._lua is not False:
                done = await self._attempt_lua(key, decide)
            else:
                done = await self._attempt_watch(key, decide)
            if done is not None:
                return done
            # Lost a race: back off a little, with jitter, so that a crowd thins out.
            await asyncio.sleep(random.random() * 0.001 * min(attempt, 10))
        raise ConflictError(key)

    async def _attempt_lua(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R] | None:
        snap = await self.load(key)
        expected = snap.version
        write, result = decide(snap)
        if write.table is None:
            return snap, result
        new = write.table
        try:
            ok = await self._script(
                keys=[key],
                args=[
                    expected,
                    expected + 1,
                    new.model_dump_json(),
                    self.ttl,
                    1 if write.fresh else 0,
                ],
            )
        except ResponseError as exc:
            if "unknown command" in str(exc).lower():
                self._lua = False
                log.info("no Lua on this Redis: using WATCH/MULTI for compare-and-set")
                return None
            raise
        self._lua = True
        if not ok:
            return None
        new.version = expected + 1
        return Snapshot(new, {} if write.fresh else snap.slots, expected + 1), result

    async def _attempt_watch(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R] | None:
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(key)
                snap = _decode(await pipe.hgetall(key))
                expected = snap.version
                write, result = decide(snap)
                if write.table is None:
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return snap, result
                new = write.table
                pipe.multi()  # type: ignore[no-untyped-call]
                if write.fresh:
                    pipe.delete(key)
                pipe.hset(key, mapping={"v": expected + 1, "d": new.model_dump_json()})
                pipe.expire(key, self.ttl)
                await pipe.execute()
            except WatchError:
                return None
        new.version = expected + 1
        return Snapshot(new, {} if write.fresh else snap.slots, expected + 1), result

    async def save_slots(self, key: str, slots: Mapping[str, Slot]) -> None:
        """Remember what the messages show now (no CAS: see the module docstring)."""
        if not slots:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping={k: s.model_dump_json() for k, s in slots.items()})
            pipe.expire(key, self.ttl)
            await pipe.execute()
