"""The Lua scripts every change of a table goes through (and two more), run by
:class:`bot.core.store.Store` and :mod:`bot.core.inbox`.

Why Lua: a script runs whole in Redis, with nothing of another process in between, so a
compare-and-set, a lease and the indexes it touches change together (the key layout is
:mod:`bot.core.keys`'s). The in-process store and the tests run the same scripts on
fakeredis.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.keys import CHANGED, JUNK, SLOT
from bot.core.lua import Args, Key, Keys, Script


@dataclass(frozen=True)
class Holder(Args):
    """Who takes a lease, when, and for how long."""

    owner: str  # this process (Store.owner)
    now_ms: int
    lease_ms: int


@dataclass(frozen=True)
class Lease(Args):
    """A table, the due set, and who takes the table's lease."""

    table_key: Key
    due_key: Key
    holder: Holder


# A lease is "<owner>|<expiry ms>". Taking it also puts the table in the due set at its
# expiry at the latest: if the holder dies before it has delivered, a live process's poll
# finds the table there once the lease has run out, and delivers.
LEASE = """
local function lease_expiry()
  local lease = redis.call('HGET', table_key, 'lease')
  if not lease then return nil, 0 end
  local holder, expires = string.match(lease, '^(.*)|(%d+)$')
  return holder, tonumber(expires)
end
local function lease_free()
  local holder, expires = lease_expiry()
  return holder == nil or holder == owner or expires <= now_ms
end
local function take_lease()
  local expires = string.format('%d', now_ms + lease_ms)
  redis.call('HSET', table_key, 'lease', owner .. '|' .. expires)
  redis.call('ZADD', due_key, 'LT', expires, table_key)
end
"""


@dataclass(frozen=True)
class Cas(Args):
    """Commit ``version`` (the table as ``data``) if the stored one is ``expected``."""

    lease: Lease
    turns_key: Key
    expected: int
    version: int
    data: str  # the table's JSON
    ttl: int
    fresh: bool  # drop every other field: a new game starts with no remembered messages
    wake_ms: int | None  # lower the table's score in the turn deadlines to this
    channel: str = CHANGED  # where the commit is published
    slot_prefix: str = SLOT
    junk_prefix: str = JUNK


# 0: conflict; 1: committed, another process delivers; else committed, deliver: the
# message fields (slots and junk) as they are now, name/value pairs. A delivery may have
# saved them since the caller loaded the table (only the version is compared), and the one
# that follows must start from what the messages show.
CAS = Script(
    Cas,
    shared=LEASE,
    body="""
local v = redis.call('HGET', table_key, 'v')
if tonumber(v or '0') ~= expected then return 0 end
if fresh then redis.call('DEL', table_key) end
redis.call('HSET', table_key, 'v', version, 'd', data)
redis.call('EXPIRE', table_key, ttl)
redis.call('PUBLISH', channel, version .. ' ' .. table_key)
if wake_ms then redis.call('ZADD', turns_key, 'LT', wake_ms, table_key) end
if not lease_free() then return 1 end
take_lease()
local function starts(name, prefix) return string.sub(name, 1, #prefix) == prefix end
local shown = {}
local fields = redis.call('HGETALL', table_key)
for i = 1, #fields, 2 do
  local name = fields[i]
  if starts(name, slot_prefix) or starts(name, junk_prefix) then
    shown[#shown + 1] = name
    shown[#shown + 1] = fields[i + 1]
  end
end
return shown
""",
)


@dataclass(frozen=True)
class Release(Args):
    """Save what the messages show and give the lease back."""

    lease: Lease
    delivered: int | None  # the version delivered; None: give the lease back (an error)
    due_ms: int | None  # when what was left for later is due
    gone: tuple[str, ...]  # fields to delete
    fields: tuple[str, ...]  # slot name/value pairs to set


# If a newer version was committed meanwhile the holder keeps the lease and gets that
# version back (deliver again). -1: the lease is not ours any more (nothing written).
RELEASE = Script(
    Release,
    shared=LEASE,
    body="""
if redis.call('EXISTS', table_key) == 0 or not lease_free() then return -1 end
if #gone > 0 then redis.call('HDEL', table_key, unpack(gone)) end
if #fields > 0 then redis.call('HSET', table_key, unpack(fields)) end
local v = tonumber(redis.call('HGET', table_key, 'v') or '0')
if delivered and v ~= delivered then
  take_lease()
  return v
end
redis.call('HDEL', table_key, 'lease')
if due_ms then
  redis.call('ZADD', due_key, due_ms, table_key)
else
  redis.call('ZREM', due_key, table_key)
end
return 0
""",
)


# The table with the lease taken, or nil: when it is gone, or when another process holds
# the lease (then the table stays due at the lease's expiry, in case that holder dies).
CLAIM = Script(
    Lease,
    shared=LEASE,
    body="""
if redis.call('EXISTS', table_key) == 0 then return nil end
if not lease_free() then
  local _, expires = lease_expiry()
  redis.call('ZADD', due_key, string.format('%d', expires), table_key)
  return nil
end
take_lease()
return redis.call('HGETALL', table_key)
""",
)


@dataclass(frozen=True)
class Renew(Args):
    """Push on the leases a process holds."""

    due_key: Key
    tables: Keys
    holder: Holder


# Each lease still ours is pushed on, and so is its due time (the time another process
# would take over).
RENEW = Script(
    Renew,
    body="""
local expires = string.format('%d', now_ms + lease_ms)
for _, table_key in ipairs(tables) do
  local lease = redis.call('HGET', table_key, 'lease')
  if lease and string.match(lease, '^(.*)|') == owner then
    redis.call('HSET', table_key, 'lease', owner .. '|' .. expires)
    redis.call('ZADD', due_key, 'GT', expires, table_key)
  end
end
return 1
""",
)


@dataclass(frozen=True)
class Move(Args):
    """Move the table at ``lease``'s key to ``new_key``."""

    lease: Lease
    new_key: Key
    group_slot: str  # the group message's slot, dropped (that message stays in the old chat)


# 1: moved; 0: nothing to move, or the new key is taken (the first of several notices of
# one upgrade moves the table); 2: a delivery of the table is under way (in any process):
# try again when it is done. The table is posted anew in the new chat.
MOVE = Script(
    Move,
    shared=LEASE,
    body="""
if redis.call('EXISTS', table_key) == 0 or redis.call('EXISTS', new_key) == 1 then return 0 end
local holder, expires = lease_expiry()
if holder ~= nil and expires > now_ms then return 2 end
redis.call('RENAME', table_key, new_key)
redis.call('HDEL', new_key, 'lease', group_slot)
redis.call('ZREM', due_key, table_key)
return 1
""",
)


@dataclass(frozen=True)
class Save(Args):
    """Set fields of a table that exists."""

    table_key: Key
    ttl: int  # for a key that has none
    fields: tuple[str, ...]  # name/value pairs


# Writes nothing when the table is gone (no table-less hash is left behind).
SAVE = Script(
    Save,
    body="""
if redis.call('EXISTS', table_key) == 0 then return 0 end
redis.call('HSET', table_key, unpack(fields))
redis.call('EXPIRE', table_key, ttl, 'NX')
return 1
""",
)


@dataclass(frozen=True)
class TurnSettle(Args):
    """Replace a claim on a table's turn deadline by its next deadline."""

    turns_key: Key
    table_key: str  # a member of the deadlines
    claim: int  # our claim's score
    due_ms: int | None  # the new score (None: no deadline)


# Our claim is replaced, unless a commit has set an earlier time meanwhile.
TURN_SETTLE = Script(
    TurnSettle,
    body="""
local score = redis.call('ZSCORE', turns_key, table_key)
if not score or tonumber(score) ~= claim then return 0 end
if due_ms then
  redis.call('ZADD', turns_key, due_ms, table_key)
else
  redis.call('ZREM', turns_key, table_key)
end
return 1
""",
)


@dataclass(frozen=True)
class TurnClaim(Args):
    """Take a due table's turn by moving its deadline to ``claim``."""

    turns_key: Key
    table_key: str  # a member of the deadlines
    now_ms: int
    claim: int


# 1 when the table was due and is ours now.
TURN_CLAIM = Script(
    TurnClaim,
    body="""
local score = redis.call('ZSCORE', turns_key, table_key)
if not score or tonumber(score) > now_ms then return 0 end
redis.call('ZADD', turns_key, claim, table_key)
return 1
""",
)


@dataclass(frozen=True)
class DeleteIf(Args):
    """Delete a key while it holds a value."""

    owned_key: Key
    value: bytes


# A claim released by its owner, never one someone else made since: bot.handlers.once.
DELETE_IF = Script(
    DeleteIf,
    body="""
if redis.call('GET', owned_key) == value then return redis.call('DEL', owned_key) end
return 0
""",
)


@dataclass(frozen=True)
class ForgetConsumers(Args):
    """Remove the idle consumers of a stream's group."""

    stream: Key
    group: str
    idle_ms: int
    name: str  # a consumer removed however short its idle time


# The consumers that hold no pending entry and are ``name`` or idle ``idle_ms``: removed
# from the group (a worker that stopped, or died: bot.core.inbox). Checked and removed in
# one step, so that no entry is dropped with a consumer that took it meanwhile.
FORGET_CONSUMERS = Script(
    ForgetConsumers,
    body="""
local gone = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f['pending'] == 0 and (f['name'] == name or f['idle'] >= idle_ms) then
    redis.call('XGROUP', 'DELCONSUMER', stream, group, f['name'])
    gone = gone + 1
  end
end
return gone
""",
)
