"""Tables in Redis: every key the bot keeps, and the scripts every change goes through.

Key layout (one Redis hash per table, i.e. per group chat or per forum topic); ``ct`` is
:data:`KEY_PREFIX`, which the environment variable ``CARDTABLE_KEY_PREFIX`` replaces::

    ct:table:<chat_id>:<thread_id or 0>
        v          version, a decimal integer; bumped by every committed change
        d          the Table as JSON (bot data + the engine state JSON)
        m:table    Slot JSON of the group message (lobby, then the table, then the result)
        m:u<uid>   Slot JSON of user <uid>'s private message: his lobby confirmation,
                   then his hand
        m:e<uid>   Slot JSON of user <uid>'s ephemeral message in the group (only he sees
                   it; docs/ephemeral.md): his lobby confirmation, then his hand, when
                   his hand lives in the group
        x:<chat>:<message>  a message to delete (superseded, or sent by a delivery that
                   lost its lease): the next delivery deletes it
        x:<chat>:<message>:<uid>  the same for a superseded ephemeral message to user
                   <uid> in the group <chat> (its ephemeral id): deleted, else stripped of
                   its buttons, and until then a tap on it is stale
        lease      "<process>|<expiry ms>": the process that is bringing the messages up
                   to date (the delivery lease), renewed while it works

    ct:closed:<uid>  set of the table keys where user <uid>'s private chat refused us
                   (his seat's ``dm_ok`` is false): when he opens the chat again (/start),
                   his hands there are shown (bot.service.delivery.reopen)

    ct:place:<uid>  "group" or "private": where user <uid> chose to keep his hands (none:
                   the HANDS setting's); his seats take it when he sits down. No expiry:
                   it is his standing choice (a few bytes a player), as the standings
                   are; /forgetme erases it with them

    ct:due         sorted set of table keys, scored by when they are due (ms): messages
                   left for later (coalesced, held back by the rate limits, refused by
                   flood control), and, while a delivery runs, its lease's expiry (if the
                   holder dies, a live process delivers once the lease has run out).
                   Every process polls it.

    ct:turns       sorted set of table keys, scored by when their automatic move is due
                   (bot.service.turns)

    ct:changed     a pub/sub channel, not a key: every commit publishes
                   "<version> <table key>" on it (a process with Mini App pages open
                   follows its tables by it: bot.webapp.server). Channels are shared by
                   every database of the server: a notice is only a reason to read.

    ct:rl:all, ct:rl:c:<chat_id>  the shared rate-limit buckets (bot.core.limiter)
    ct:rl:learned  sorted set of group chat ids, scored by when (ms, the limiter's clock)
                   their hands stop counting against the group's own limit: a day after
                   Telegram's 429 in that group taught it (bot.core.budget); what ended is
                   dropped when the next group learns

    ct:upd:<update_id>  "busy" while a process handles that update, then "done" for an
                   hour: a redelivered update is dropped (bot.handlers.once)
    ct:inbox       a stream of the webhook's updates (field ``u``: the update's JSON),
                   each stored before its 200 and deleted once handled; its consumer group
                   ``workers`` holds each entry a worker has read until it is done, for
                   another worker to take over should that one die (bot.core.inbox)
    ct:member:<chat_id>:<uid>  "1" for a minute after Telegram said that <uid> is in the
                   group <chat_id> (joining needs it; bot.handlers.members)
    ct:init:<hash>  "1" once a Mini App page exchanged the initData of that signature
                   (its ``hash`` field) for a session, until that initData's own age limit:
                   a second exchange of it is a replay (bot.webapp.auth)
    ct:st:...      the standings: per group and per person, without a TTL (their layout
                   is documented in bot.tables.stats.keys)

Why scripts: ``v`` and ``d`` change only together, by a compare-and-set on ``v`` in Lua
(the in-process store and the tests run the same scripts on fakeredis), so that two
processes serving one chat can neither lose nor double a move. Why a lease: one process
at a time brings a table's messages up to date, so that an older render never lands
after a newer one. A commit takes the lease when it is free, expired or its own; the
holder renews it while it works (:data:`LEASE_MS`, so a dead holder blocks nothing for
long) and saves the slots and releases it in one script, which hands it the newest
version if another process committed meanwhile. A move costs one HGETALL, one CAS (which
also takes the lease, publishes the version and lowers the turn deadline) and one
release. A key lives as long as its game needs (:func:`ttl_for`); a table whose group
became a supergroup moves to its new key whole, without its lease (:meth:`Store.move`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import redis.asyncio as aioredis
from pydantic import ValidationError
from redis.asyncio.client import PubSub

from bot.core.models import Place, Slot, Table

log = logging.getLogger(__name__)

R = TypeVar("R")
MAX_ATTEMPTS = 50

LEASE_MS = 2_000  # a delivery lease outlives a crashed holder by at most this
RENEW_EVERY = 0.5  # seconds between two renewals of the leases a process holds
IDLE_GAME_TTL = 30 * 24 * 3600  # a running game with no turn limit (correspondence play)
DEADLINE_MARGIN = 3600  # seconds a key outlives its game's pending deadline

# Shared Lua. KEYS[1] is the table, KEYS[2] the due set; ARGV[1..3] owner, now (ms), lease
# ms. A lease is "<owner>|<expiry ms>". Taking it also puts the table in the due set at its
# expiry at the latest: if the holder dies before it has delivered, a live process's poll
# finds the table there once the lease has run out, and delivers.
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
  redis.call('ZADD', KEYS[2], 'LT', expires, KEYS[1])
end
"""

# KEYS[3]: the turn deadlines. ARGV[4..]: expected version, new version, table JSON, ttl,
# fresh (1 drops every other field: a new game starts with no remembered messages), the
# channel of changes, the prefixes of the slot and the junk fields, and the deadline to
# lower the table's score in the turn deadlines to ("": none; bot.service.turns). 0:
# conflict; 1: committed, another process
# delivers; else committed, deliver: the message fields (slots and junk) as they are now,
# name/value pairs. A delivery may have saved them since the caller loaded the table (only
# the version is compared), and the one that follows must start from what the messages
# show.
_CAS = (
    _LEASE
    + """
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '0') ~= ARGV[4] then return 0 end
if ARGV[8] == '1' then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'v', ARGV[5], 'd', ARGV[6])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
redis.call('PUBLISH', ARGV[9], ARGV[5] .. ' ' .. KEYS[1])
if ARGV[12] ~= '' then redis.call('ZADD', KEYS[3], 'LT', ARGV[12], KEYS[1]) end
if not lease_free() then return 1 end
take_lease()
local function starts(name, prefix) return string.sub(name, 1, #prefix) == prefix end
local shown = {}
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local name = fields[i]
  if starts(name, ARGV[10]) or starts(name, ARGV[11]) then
    shown[#shown + 1] = name
    shown[#shown + 1] = fields[i + 1]
  end
end
return shown
"""
)

# ARGV[4..]: delivered version (-1: give the lease back after an error), due ("" or when
# what was left for later is due, ms), the number of fields to delete, those fields, then
# slot name/value pairs. The holder saves what the messages show and releases the lease;
# if a newer version was committed meanwhile it keeps the lease and gets that version back
# (deliver again). -1: the lease is not ours any more (nothing written).
_RELEASE = (
    _LEASE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 or not lease_free() then return -1 end
local drop = tonumber(ARGV[6])
if drop > 0 then redis.call('HDEL', KEYS[1], unpack(ARGV, 7, 6 + drop)) end
if #ARGV > 6 + drop then redis.call('HSET', KEYS[1], unpack(ARGV, 7 + drop)) end
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[4]) and ARGV[4] ~= '-1' then
  take_lease()
  return v
end
redis.call('HDEL', KEYS[1], 'lease')
if ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[5], KEYS[1])
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

# KEYS: the due set, then the tables this process is delivering. Each lease still ours is
# pushed on, and so is its due time (the time another process would take over).
_RENEW = """
local expires = string.format('%d', tonumber(ARGV[2]) + tonumber(ARGV[3]))
for i = 2, #KEYS do
  local lease = redis.call('HGET', KEYS[i], 'lease')
  if lease and string.match(lease, '^(.*)|') == ARGV[1] then
    redis.call('HSET', KEYS[i], 'lease', ARGV[1] .. '|' .. expires)
    redis.call('ZADD', KEYS[1], 'GT', expires, KEYS[i])
  end
end
return 1
"""

# KEYS: old key, new key, the due set. 1: moved; 0: nothing to move, or the new key is
# taken (the first of several notices of one upgrade moves the table); 2: a delivery of
# the table is under way (in any process): try again when it is done. ARGV[4]: the group
# message's slot, dropped (that message stays in the old chat: the table is posted anew).
_MOVE = (
    _LEASE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local holder, expires = lease_expiry()
if holder ~= nil and expires > tonumber(ARGV[2]) then return 2 end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('HDEL', KEYS[2], 'lease', ARGV[4])
redis.call('ZREM', KEYS[3], KEYS[1])
return 1
"""
)
MOVED, NOTHING_TO_MOVE, BUSY = 1, 0, 2

# KEYS[1]: a table; ARGV: fields to set (pairs), the TTL for a key that has none. Writes
# nothing when the table is gone (no table-less hash is left behind).
_SAVE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]), 'NX')
return 1
"""

# The first part of every key. bench/bot.py sets a prefix of its own, so that it can share
# a Redis database with a running bot and afterwards remove its own keys and nothing else.
KEY_PREFIX = os.environ.get("CARDTABLE_KEY_PREFIX", "ct")
DUE_KEY = f"{KEY_PREFIX}:due"
CHANGED = f"{KEY_PREFIX}:changed"
TURNS_KEY = f"{KEY_PREFIX}:turns"
SLOT = "m:"  # the fields that remember a message shown (see the module docstring)
JUNK = "x:"


# KEYS[1]: the deadlines; ARGV: the table key, our claim's score, the new score ("": none).
# Our claim is replaced, unless a commit has set an earlier time meanwhile.
_TURN_SETTLE = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""

# KEYS[1]: the deadlines; ARGV: the table key, now (ms), the claim's score. 1 when the
# table was due and is ours now.
_TURN_CLAIM = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


def table_key(chat_id: int, thread_id: int | None) -> str:
    return f"{KEY_PREFIX}:table:{chat_id}:{thread_id or 0}"


def init_key(signature: str) -> str:
    return f"{KEY_PREFIX}:init:{signature}"


def closed_key(user_id: int) -> str:
    return f"{KEY_PREFIX}:closed:{user_id}"


def user_slot(user_id: int) -> str:
    return f"{SLOT}u{user_id}"


def group_slot(user_id: int) -> str:
    """The slot of ``user_id``'s ephemeral hand in the group."""
    return f"{SLOT}e{user_id}"


def place_key(user_id: int) -> str:
    return f"{KEY_PREFIX}:place:{user_id}"


def junk_field(chat_id: int, message_id: int, receiver: int = 0) -> str:
    """The junk field of a message (``receiver``: an ephemeral message to him)."""
    tail = f":{receiver}" if receiver else ""
    return f"{JUNK}{chat_id}:{message_id}{tail}"


# A message to remove: (chat, message, only strip its buttons, the receiver of an
# ephemeral message or 0).
Junk = tuple[int, int, bool, int]


TABLE_SLOT = f"{SLOT}table"


@dataclass
class Write:
    """What a transaction function decided: the table to store (None: store nothing)."""

    table: Table | None
    fresh: bool = False
    # The table's next automatic move came closer: lower its deadline in ``ct:turns`` to
    # this (seconds since the epoch), in the same script as the commit.
    wake: float | None = None


@dataclass
class Snapshot:
    """A table as loaded, with its message slots and the messages left to delete."""

    table: Table | None
    slots: dict[str, Slot] = field(default_factory=dict)
    version: int = 0  # the stored version (also when the table itself did not validate)
    lease: bool = False  # this process holds the delivery lease: it must deliver, release
    junk: list[Junk] = field(default_factory=list)  # messages to remove


# Delete a key only while it still holds the value its owner gave it (a claim released by
# its owner, never one someone else made since: bot.handlers.once).
_DELETE_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# The consumers of a stream's group (KEYS[1]; ARGV: the group, an idle time in ms, a name)
# that hold no pending entry and are that one or idle that long: removed from the group (a
# worker that stopped, or died: bot.core.inbox). Checked and removed in one step, so that
# no entry is dropped with a consumer that took it meanwhile.
FORGET_CONSUMERS = """
local gone = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f['pending'] == 0 and (f['name'] == ARGV[3] or f['idle'] >= tonumber(ARGV[2])) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
    gone = gone + 1
  end
end
return gone
"""


class ConflictError(RuntimeError):
    """The CAS kept failing (a pathological storm of concurrent changes)."""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


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
    slots, junk = _messages(raw)
    return Snapshot(table, slots, version, junk=junk)


def _messages(raw: Mapping[bytes, bytes]) -> tuple[dict[str, Slot], list[Junk]]:
    """A table's message fields: its slots, and the messages left to remove."""
    slots: dict[str, Slot] = {}
    junk: list[Junk] = []
    for name, value in raw.items():
        if name.startswith(SLOT.encode()):
            try:
                slots[name.decode()] = Slot.model_validate_json(value)
            except ValidationError:
                continue
        elif name.startswith(JUNK.encode()):
            chat, message, *receiver = name.decode().removeprefix(JUNK).split(":")
            who = int(receiver[0]) if receiver else 0
            junk.append((int(chat), int(message), value == b"s", who))
    return slots, sorted(junk)


def _junk_pairs(junk: Sequence[Junk]) -> list[str]:
    """Hash fields of messages to remove: "s" strips the buttons, "" deletes."""
    return [
        x
        for chat, message, strip, receiver in junk
        for x in (junk_field(chat, message, receiver), "s" if strip else "")
    ]


async def _changes(pubsub: PubSub) -> AsyncIterator[tuple[str, int]]:
    async for message in pubsub.listen():
        if message["type"] == "message":
            version, _, key = _text(message["data"]).partition(" ")
            yield key, int(version)


def ttl_for(table: Table, base: int, now: float) -> int:
    """How long a table's key must live after this commit (see the module docstring)."""
    if table.phase != "playing":
        return base
    if not table.turn_due:
        return max(base, IDLE_GAME_TTL)
    return max(base, int(table.turn_due - now) + DEADLINE_MARGIN)


class Store:
    """Loads tables and commits changes to them with optimistic concurrency; hands out
    the delivery lease (see the module docstring)."""

    def __init__(
        self, redis: aioredis.Redis, ttl: int, clock: Callable[[], float] = time.time
    ) -> None:
        self.redis = redis
        self.ttl = ttl
        self.clock = clock
        self.owner = secrets.token_hex(6)  # this process, as a lease holder
        self._cas = redis.register_script(_CAS)
        self._release = redis.register_script(_RELEASE)
        self._claim = redis.register_script(_CLAIM)
        self._renew = redis.register_script(_RENEW)
        self._move = redis.register_script(_MOVE)
        self._save = redis.register_script(_SAVE)
        self._turn_claim = redis.register_script(_TURN_CLAIM)
        self._turn_settle = redis.register_script(_TURN_SETTLE)
        self._delete_if = redis.register_script(_DELETE_IF)

    async def delete_if(self, key: str, value: bytes) -> bool:
        """Delete ``key`` if it holds ``value`` (GET, compare and DEL in one script)."""
        return bool(await self._delete_if(keys=[key], args=[value]))

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    async def _lease_call(self, script: Any, keys: list[str], *args: Any) -> Any:
        return await script(keys=keys, args=[self.owner, self.now_ms(), LEASE_MS, *args])

    async def load(self, key: str) -> Snapshot:
        return _decode(await self.redis.hgetall(key))

    async def transact(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R]:
        """Load, let ``decide`` change the table, commit if the version is unchanged.

        ``decide`` must be pure (no I/O): on a conflict it runs again on the newer table.
        Returns the snapshot as committed (or as loaded when nothing was written) and
        ``decide``'s result. A committed snapshot with ``lease`` must be delivered by the
        caller (:func:`bot.service.delivery.publish`).
        """
        for attempt in range(MAX_ATTEMPTS):
            snap = await self.load(key)
            expected = snap.version
            write, result = decide(snap)
            if write.table is None:
                return snap, result
            new = write.table
            ttl = ttl_for(new, self.ttl, self.clock())
            done = await self._lease_call(
                self._cas,
                [key, DUE_KEY, TURNS_KEY],
                expected,
                expected + 1,
                new.model_dump_json(),
                ttl,
                1 if write.fresh else 0,
                CHANGED,
                SLOT,
                JUNK,
                "" if write.wake is None else str(int(write.wake * 1000)),
            )
            if done == 0:
                # Lost a race: back off a little, with jitter, so that a crowd thins out.
                await asyncio.sleep(random.random() * 0.001 * min(attempt, 10))
                continue
            new.version = expected + 1
            if done == 1:  # another process delivers
                if write.fresh:
                    return Snapshot(new, version=new.version), result
                return Snapshot(new, snap.slots, new.version, junk=snap.junk), result
            slots, junk = _messages(dict(zip(done[::2], done[1::2], strict=True)))
            return Snapshot(new, slots, new.version, lease=True, junk=junk), result
        raise ConflictError(key)

    async def release(
        self,
        key: str,
        version: int,
        slots: Mapping[str, Slot],
        *,
        due: float | None = None,
        drop: bool = False,
        deleted: Sequence[tuple[int, int, int]] = (),
        junk: Sequence[Junk] = (),
    ) -> Snapshot | None:
        """Save what the messages show (``version`` of the table) and give the lease back;
        ``due``: when what was left for later is due (seconds since the epoch);
        ``deleted``: messages of the junk list that are gone now (chat, message, receiver);
        ``junk``: messages to remove later (:data:`Junk`).

        Returns the newest snapshot, still leased, when a newer version was committed
        meanwhile: the caller delivers again. ``drop``: give the lease back whatever
        happened (after an error).
        """
        pairs = [x for name, slot in slots.items() for x in (name, slot.model_dump_json())]
        pairs += _junk_pairs(junk)
        gone = [junk_field(chat, message, receiver) for chat, message, receiver in deleted]
        delivered = -1 if drop else version
        due_ms = "" if due is None else str(int(due * 1000))
        newer = await self._lease_call(
            self._release, [key, DUE_KEY], delivered, due_ms, len(gone), *gone, *pairs
        )
        if newer is not None and newer > 0:
            return await self._leased(key)
        return None

    async def _leased(self, key: str) -> Snapshot:
        snap = await self.load(key)
        snap.lease = True
        return snap

    async def claim(self, key: str) -> Snapshot | None:
        """The table with the delivery lease, or None when another process holds it."""
        raw = await self._lease_call(self._claim, [key, DUE_KEY])
        if raw is None:
            return None
        snap = _decode(dict(zip(raw[::2], raw[1::2], strict=True)))
        snap.lease = True
        return snap

    async def renew(self, keys: Sequence[str]) -> None:
        """Push on the leases this process holds on ``keys`` (it is alive and working)."""
        if keys:
            await self._lease_call(self._renew, [DUE_KEY, *keys])

    async def move(self, old: str, new: str) -> int:
        """Move a table to another key (see the module docstring): MOVED, NOTHING_TO_MOVE
        (nothing at ``old``, or ``new`` is taken) or BUSY (a delivery is under way: moving
        now would leave that delivery showing the old address)."""
        return int(await self._lease_call(self._move, [old, new, DUE_KEY], TABLE_SLOT))

    async def discard(self, key: str, messages: Sequence[Junk]) -> None:
        """Remember messages that must be removed (the next delivery removes them)."""
        if messages:
            await self._save(keys=[key], args=[self.ttl, *_junk_pairs(messages)])

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

    async def place(self, user_id: int) -> Place | None:
        """Where ``user_id`` chose to keep his hands (``ct:place``; None: he never chose)."""
        raw = await self.redis.get(place_key(user_id))
        return None if raw is None else "private" if _text(raw) == "private" else "group"

    async def set_place(self, user_id: int, place: Place) -> None:
        await self.redis.set(place_key(user_id), place.encode())

    async def forget_place(self, user_id: int) -> None:
        """/forgetme: his choice of place goes with his figures."""
        await self.redis.delete(place_key(user_id))

    async def closed_to(self, user_id: int) -> list[str]:
        """The table keys where ``user_id``'s private chat refused us."""
        found = await self.redis.smembers(closed_key(user_id))
        return sorted(_text(k) for k in found)

    @contextlib.asynccontextmanager
    async def changes(self) -> AsyncIterator[AsyncIterator[tuple[str, int]]]:
        """Every commit from now on, in any process, as (table key, version). It yields
        once Redis has confirmed the subscription: a table loaded after that misses none
        of its later changes. Raises RedisError when the subscription breaks (commits
        made meanwhile are not told again)."""
        async with self.redis.pubsub() as pubsub:
            await pubsub.subscribe(CHANGED)
            async for message in pubsub.listen():
                if message["type"] == "subscribe":
                    break
            yield _changes(pubsub)

    async def spend(self, signature: str, until: float) -> bool:
        """Mark an initData (by its signature) used, until ``until`` (seconds since the
        epoch); False when it was used before (a replay)."""
        ttl = max(1, int(until - self.clock()))
        return bool(await self.redis.set(init_key(signature), "1", ex=ttl, nx=True))

    async def defer(self, key: str, due: float) -> None:
        """Leave the table's messages for later (``due``: seconds since the epoch)."""
        await self.redis.zadd(DUE_KEY, {key: int(due * 1000)})

    async def take_due(self, limit: int = 100) -> list[str]:
        """Table keys whose messages are due, each handed to exactly one caller."""
        found = await self.redis.zrangebyscore(DUE_KEY, "-inf", self.now_ms(), start=0, num=limit)
        keys = [_text(k) for k in found]
        if not keys:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for k in keys:
                pipe.zrem(DUE_KEY, k)
            taken = await pipe.execute()
        return [k for k, t in zip(keys, taken, strict=True) if t]

    async def schedule_turn(self, key: str, due: float) -> None:
        """The table's automatic move is due at ``due`` (seconds since the epoch), unless
        an earlier time is set already (bot.service.turns)."""
        await self.redis.zadd(TURNS_KEY, {key: int(due * 1000)}, lt=True)

    async def due_turns(self, now_ms: int, limit: int = 50) -> list[str]:
        """Table keys whose automatic move is due (a poller then claims each)."""
        found = await self.redis.zrangebyscore(TURNS_KEY, "-inf", now_ms, start=0, num=limit)
        return [_text(k) for k in found]

    async def claim_turn(self, key: str, now_ms: int, claim: int) -> bool:
        """Take a due table's move by moving its deadline to ``claim`` (ms); False when it
        was not due any more or another poller took it."""
        return bool(await self._turn_claim(keys=[TURNS_KEY], args=[key, now_ms, claim]))

    async def settle_turn(self, key: str, claim: int, due: float) -> None:
        """Replace our claim by the table's next deadline (``due``; 0: none), unless a
        commit has set an earlier time meanwhile."""
        new = str(int(due * 1000)) if due else ""
        await self._turn_settle(keys=[TURNS_KEY], args=[key, claim, new])

    async def chat_tables(self, chat_id: int) -> list[str]:
        """The keys of every table of a chat, in any of its topics."""
        pattern = f"{KEY_PREFIX}:table:{chat_id}:*"
        return [_text(k) async for k in self.redis.scan_iter(match=pattern, count=1000)]

    async def drop(self, key: str) -> Snapshot:
        """Delete a table with its entries in the deadline sets, in one transaction, and
        in its players' closed-chat sets (the bot was removed from its chat); the table
        as it was."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(key)
            pipe.delete(key)
            for index in (DUE_KEY, TURNS_KEY):
                pipe.zrem(index, key)
            raw, *_ = await pipe.execute()
        snap = _decode(raw)
        if snap.table is not None and snap.table.seats:
            await self.note_reach(key, {seat.user_id: True for seat in snap.table.seats})
        return snap

    async def save_slots(self, key: str, slots: Mapping[str, Slot]) -> None:
        """Remember a message outside a delivery (a lobby's private confirmation)."""
        if slots:
            fields = [x for name, slot in slots.items() for x in (name, slot.model_dump_json())]
            await self._save(keys=[key], args=[self.ttl, *fields])
