"""Tables in Redis: the key layout and the compare-and-set every change goes through.

Key layout (one Redis hash per table, i.e. per group chat or per forum topic)::

    ct:table:<chat_id>:<thread_id or 0>
        v          version, a decimal integer; bumped by every committed change
        d          the Table as JSON (bot data + the engine state JSON)
        m:table    Slot JSON of the group message (lobby, then the table, then the result)
        m:u<uid>   Slot JSON of user <uid>'s hand message in his private chat
        lease      "<process>|<expiry ms>": the process that is bringing the messages up
                   to date (the delivery lease)

    ct:closed:<uid>  set of the table keys where user <uid>'s private chat refused us
                   (his seat's ``dm_ok`` is false): when he opens the chat again (/start),
                   his hands there are shown (bot.delivery.reopen)

    ct:due         sorted set of table keys, scored by when they are due (ms): a group
                   edit left for later (coalesced, or refused by flood control), and,
                   while a delivery runs, its lease's expiry (if the holder dies, a live
                   process delivers once the lease has run out). Every process polls it.

    ct:upd:<update_id>  "busy" while a process handles that update, then "done" for an
                   hour: a redelivered update is dropped (bot.once)
    ct:member:<chat_id>:<uid>  "1" for a minute after Telegram said that <uid> is in the
                   group <chat_id> (joining needs it; bot.members)

``v`` and ``d`` change only together, through a compare-and-set on ``v`` (a Lua script;
WATCH/MULTI/EXEC where the server has no Lua, e.g. fakeredis without lupa), so two bot
processes serving the same chat can neither lose nor double a move.

Messages are brought up to date by one process at a time, so that an older render can
never land after a newer one: a commit takes the lease when it is free (or expired, or
already this process's), and only the holder delivers. The holder saves the slots and
releases the lease in one script, which tells it when a newer version was committed
meanwhile by a process that found the lease taken: then it delivers again, from the
newest state, until it has shown the newest one. Every write refreshes the key's TTL, so
finished and abandoned tables expire.

A move costs one HGETALL, one CAS (which takes the lease) and one script that saves the
slots and releases the lease.

A table whose chat id changes (a basic group upgraded to a supergroup) is moved to its
new key whole, once no other process is delivering it, and without its lease: the
move's next commit takes a lease there. A release finds a key gone and writes nothing,
so that nothing can leave a table-less hash behind.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
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

LEASE_MS = 30_000  # a delivery lease outlives a crashed holder by at most this

# Shared Lua. KEYS[1] is the table, KEYS[2] the due set; ARGV[1..3] owner, now (ms), lease
# ms. A lease is "<owner>|<expiry ms>". Taking it also puts the table in the due set at its
# expiry: if the holder dies before it has delivered, a live process's poll finds the
# table there once the lease has run out, and delivers.
_LEASE = """
local function lease_expiry()
  local lease = redis.call('HGET', KEYS[1], 'lease')
  if not lease then return nil, 0 end
  local holder, expires = string.match(lease, '^(.*)|(%d+)$')
  return holder, tonumber(expires)
end
local function lease_free()
  local holder, expires = lease_expiry()
  return holder == nil or holder == ARGV[1] or expires <= tonumber(ARGV[2])
end
local function take_lease()
  local expires = string.format('%d', tonumber(ARGV[2]) + tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'lease', ARGV[1] .. '|' .. expires)
  redis.call('ZADD', KEYS[2], 'NX', expires, KEYS[1])
end
"""

# ARGV[4..]: expected version, new version, table JSON, ttl, fresh (1 drops every other
# field: a new game starts with no remembered messages).
# 0: conflict; 1: committed, another process delivers; 2: committed, deliver.
_CAS = (
    _LEASE
    + """
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '0') ~= ARGV[4] then return 0 end
if ARGV[8] == '1' then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'v', ARGV[5], 'd', ARGV[6])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
if not lease_free() then return 1 end
take_lease()
return 2
"""
)

# ARGV[4..]: delivered version (-1: give the lease back after an error), ttl, due ("" or
# when the group edit left for later is due, ms), then slot name/value pairs. The holder
# saves what the messages show and releases the lease; if a newer version was committed
# meanwhile it keeps the lease and gets that version back (deliver again). -1: the lease
# is not ours any more (nothing written).
_RELEASE = (
    _LEASE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 or not lease_free() then return -1 end
if #ARGV > 6 then redis.call('HSET', KEYS[1], unpack(ARGV, 7)) end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[4]) and ARGV[4] ~= '-1' then
  take_lease()
  return v
end
redis.call('HDEL', KEYS[1], 'lease')
if ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[6], KEYS[1])
else
  redis.call('ZREM', KEYS[2], KEYS[1])
end
return 0
"""
)

# The table with the lease taken, or nil: when it is gone, or when another process holds
# the lease (then the table stays due at the lease's expiry, in case that holder dies).
_CLAIM = (
    _LEASE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
if not lease_free() then
  local _, expires = lease_expiry()
  redis.call('ZADD', KEYS[2], string.format('%d', expires), KEYS[1])
  return nil
end
take_lease()
return redis.call('HGETALL', KEYS[1])
"""
)

# KEYS: old key, new key, the due set. 1: moved; 0: nothing to move, or the new key is
# taken (the first of several notices of one upgrade moves the table); 2: another
# process is delivering the table (its lease): try again when it is done.
_MOVE = (
    _LEASE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if not lease_free() then return 2 end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('HDEL', KEYS[2], 'lease')
redis.call('ZREM', KEYS[3], KEYS[1])
return 1
"""
)
MOVED, NOTHING_TO_MOVE, BUSY = 1, 0, 2

DUE_KEY = "ct:due"


def table_key(chat_id: int, thread_id: int | None) -> str:
    return f"ct:table:{chat_id}:{thread_id or 0}"


def closed_key(user_id: int) -> str:
    return f"ct:closed:{user_id}"


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
    lease: bool = False  # this process holds the delivery lease: it must deliver, release


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


def _now_ms() -> int:
    return int(time.time() * 1000)


def _expiry(raw: Any) -> int:
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    return int(text.rpartition("|")[2] or 0)


def _lease_free(raw: Any, owner: str, now: int) -> bool:
    """The WATCH path's twin of the Lua ``lease_free``."""
    if raw is None:
        return True
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    return text.rpartition("|")[0] == owner or _expiry(raw) <= now


class Store:
    """Loads tables and commits changes to them with optimistic concurrency; hands out
    the delivery lease (see the module docstring)."""

    def __init__(self, redis: aioredis.Redis, ttl: int) -> None:
        self.redis = redis
        self.ttl = ttl
        self.owner = secrets.token_hex(6)  # this process, as a lease holder
        self._cas = redis.register_script(_CAS)
        self._release = redis.register_script(_RELEASE)
        self._claim = redis.register_script(_CLAIM)
        self._move = redis.register_script(_MOVE)
        self._lua: bool | None = None  # unknown until first tried

    async def load(self, key: str) -> Snapshot:
        return _decode(await self.redis.hgetall(key))

    async def transact(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R]:
        """Load, let ``decide`` change the table, commit if the version is unchanged.

        ``decide`` must be pure (no I/O): on a conflict it runs again on the newer table.
        Returns the snapshot as committed (or as loaded when nothing was written) and
        ``decide``'s result. A committed snapshot with ``lease`` must be delivered by the
        caller (:func:`bot.delivery.publish` releases the lease).
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

    async def _lua_call(self, script: Any, keys: list[str], *args: Any) -> Any:
        """Run a script; _NO_LUA (and the WATCH path from now on) when the server has none."""
        try:
            result = await script(keys=keys, args=[self.owner, _now_ms(), LEASE_MS, *args])
        except ResponseError as exc:
            if "unknown command" in str(exc).lower():
                self._lua = False
                log.info("no Lua on this Redis: using WATCH/MULTI for compare-and-set")
                return _NO_LUA
            raise
        self._lua = True
        return result

    async def _attempt_lua(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R] | None:
        snap = await self.load(key)
        expected = snap.version
        write, result = decide(snap)
        if write.table is None:
            return snap, result
        new = write.table
        fresh = 1 if write.fresh else 0
        json = new.model_dump_json()
        done = await self._lua_call(
            self._cas, [key, DUE_KEY], expected, expected + 1, json, self.ttl, fresh
        )
        if done is _NO_LUA or not done:
            return None
        new.version = expected + 1
        slots = {} if write.fresh else snap.slots
        return Snapshot(new, slots, expected + 1, lease=done == 2), result

    async def _attempt_watch(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R] | None:
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(key)
                raw = await pipe.hgetall(key)
                snap = _decode(raw)
                expected = snap.version
                write, result = decide(snap)
                if write.table is None:
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return snap, result
                new = write.table
                now = _now_ms()
                lease = write.fresh or _lease_free(raw.get(b"lease"), self.owner, now)
                pipe.multi()  # type: ignore[no-untyped-call]
                if write.fresh:
                    pipe.delete(key)
                pipe.hset(key, mapping={"v": expected + 1, "d": new.model_dump_json()})
                if lease:
                    self._take_lease(pipe, key, now)
                pipe.expire(key, self.ttl)
                await pipe.execute()
            except WatchError:
                return None
        new.version = expected + 1
        slots = {} if write.fresh else snap.slots
        return Snapshot(new, slots, expected + 1, lease=lease), result

    async def release(
        self,
        key: str,
        version: int,
        slots: Mapping[str, Slot],
        *,
        due: float | None = None,
        drop: bool = False,
    ) -> Snapshot | None:
        """Save what the messages show (``version`` of the table) and give the lease back;
        ``due``: when the group edit left for later is due (seconds since the epoch).

        Returns the newest snapshot, still leased, when a newer version was committed
        meanwhile: the caller delivers again. ``drop``: give the lease back whatever
        happened (after an error).
        """
        pairs = [x for name, slot in slots.items() for x in (name, slot.model_dump_json())]
        delivered = -1 if drop else version
        due_ms = "" if due is None else str(int(due * 1000))
        if self._lua is not False:
            newer = await self._lua_call(
                self._release, [key, DUE_KEY], delivered, self.ttl, due_ms, *pairs
            )
            if newer is not _NO_LUA:
                return await self._leased(key) if newer and newer > 0 else None
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(key)
                lease, current = await pipe.hmget(key, ["lease", "v"])
                now = _now_ms()
                if current is None or not _lease_free(lease, self.owner, now):
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return None
                newer = int(current or 0) != version and not drop
                pipe.multi()  # type: ignore[no-untyped-call]
                if pairs:
                    pipe.hset(key, mapping=dict(zip(pairs[::2], pairs[1::2], strict=True)))
                pipe.expire(key, self.ttl)
                if newer:
                    self._take_lease(pipe, key, now)
                else:
                    pipe.hdel(key, "lease")
                    if due_ms:
                        pipe.zadd(DUE_KEY, {key: int(due_ms)})
                    else:
                        pipe.zrem(DUE_KEY, key)
                await pipe.execute()
            except WatchError:
                return await self.release(key, version, slots, due=due, drop=drop)
        return await self._leased(key) if newer else None

    def _take_lease(self, pipe: Any, key: str, now: int) -> None:
        """The WATCH path's twin of the Lua ``take_lease``."""
        expires = now + LEASE_MS
        pipe.hset(key, "lease", f"{self.owner}|{expires}")
        pipe.zadd(DUE_KEY, {key: expires}, nx=True)

    async def _leased(self, key: str) -> Snapshot:
        snap = await self.load(key)
        snap.lease = True
        return snap

    async def claim(self, key: str) -> Snapshot | None:
        """The table with the delivery lease, or None when another process holds it."""
        if self._lua is not False:
            raw = await self._lua_call(self._claim, [key, DUE_KEY])
            if raw is not _NO_LUA:
                if raw is None:
                    return None
                snap = _decode(dict(zip(raw[::2], raw[1::2], strict=True)))
                snap.lease = True
                return snap
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(key)
                raw = await pipe.hgetall(key)
                now = _now_ms()
                if not raw:
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return None
                pipe.multi()  # type: ignore[no-untyped-call]
                held = not _lease_free(raw.get(b"lease"), self.owner, now)
                if held:  # due again when that lease runs out, in case its holder died
                    pipe.zadd(DUE_KEY, {key: _expiry(raw.get(b"lease"))})
                else:
                    self._take_lease(pipe, key, now)
                await pipe.execute()
            except WatchError:
                return await self.claim(key)
        if held:
            return None
        snap = _decode(raw)
        snap.lease = True
        return snap

    async def move(self, old: str, new: str) -> int:
        """Move a table to another key (see the module docstring): MOVED, NOTHING_TO_MOVE
        (nothing at ``old``, or ``new`` is taken) or BUSY (another process is delivering
        it: moving now would leave that delivery showing the old address)."""
        if self._lua is not False:
            moved = await self._lua_call(self._move, [old, new, DUE_KEY])
            if moved is not _NO_LUA:
                return int(moved)
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(old, new)
                if not await pipe.exists(old) or await pipe.exists(new):
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return NOTHING_TO_MOVE
                if not _lease_free(await pipe.hget(old, "lease"), self.owner, _now_ms()):
                    await pipe.unwatch()  # type: ignore[no-untyped-call]
                    return BUSY
                pipe.multi()  # type: ignore[no-untyped-call]
                pipe.rename(old, new)
                pipe.hdel(new, "lease")
                pipe.zrem(DUE_KEY, old)
                await pipe.execute()
            except WatchError:
                return await self.move(old, new)
        return MOVED

    async def note_reach(self, key: str, reach: Mapping[int, bool]) -> None:
        """Keep ``ct:closed:<uid>`` in step with the seats' ``dm_ok`` just committed."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for user_id, ok in reach.items():
                if ok:
                    pipe.srem(closed_key(user_id), key)
                else:
                    pipe.sadd(closed_key(user_id), key)
                    pipe.expire(closed_key(user_id), self.ttl)
            await pipe.execute()

    async def closed_to(self, user_id: int) -> list[str]:
        """The table keys where ``user_id``'s private chat refused us."""
        found = await self.redis.smembers(closed_key(user_id))
        return sorted(k.decode() if isinstance(k, bytes) else str(k) for k in found)

    async def defer(self, key: str, due: float) -> None:
        """Leave the group edit for later (``due``: seconds since the epoch)."""
        await self.redis.zadd(DUE_KEY, {key: int(due * 1000)})

    async def take_due(self, limit: int = 100) -> list[str]:
        """Table keys whose group edit is due, each handed to exactly one caller."""
        found = await self.redis.zrangebyscore(DUE_KEY, "-inf", _now_ms(), start=0, num=limit)
        keys = [k.decode() if isinstance(k, bytes) else str(k) for k in found]
        if not keys:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for k in keys:
                pipe.zrem(DUE_KEY, k)
            taken = await pipe.execute()
        return [k for k, t in zip(keys, taken, strict=True) if t]

    async def drop(self, key: str, *indexes: str) -> Snapshot:
        """Delete a table and its members of the sorted sets ``indexes``, in one
        transaction (the bot was removed from its chat); the table as it was."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(key)
            pipe.delete(key)
            for index in indexes:
                pipe.zrem(index, key)
            raw, *_ = await pipe.execute()
        return _decode(raw)

    async def save_slots(self, key: str, slots: Mapping[str, Slot]) -> None:
        """Remember a message outside a delivery (a lobby's private confirmation)."""
        if not slots:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping={k: s.model_dump_json() for k, s in slots.items()})
            pipe.expire(key, self.ttl)
            await pipe.execute()


_NO_LUA = object()
