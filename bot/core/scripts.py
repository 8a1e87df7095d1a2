"""The Lua scripts every change of a table goes through (and two more), run by
:class:`bot.core.store.Store` and :mod:`bot.core.inbox`.

Why Lua: a script runs whole in Redis, with nothing of another process in between, so a
compare-and-set, a lease and the indexes it touches change together (the key layout is
:mod:`bot.core.keys`'s). Each script touches the keys of one hash slot only, every one of
them named in KEYS (none built in Lua), so that it runs on a Redis Cluster too: a table and
the due set, turn set and chat index of its bucket. A move to another slot (a group that
became a supergroup) is three scripts, each of one slot and each safe to run again. The
in-process store and the tests run the same scripts on fakeredis.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.keys import BORN_FIELD, CHANGED, FROM_FIELD, JUNK, MOVED_FIELD, SLOT
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
# finds the table there once the lease has run out, and delivers. ``lease``: the field as
# read with the fields a script compares (false: none); nil: read here.
LEASE = """
local function lease_expiry(lease)
  if lease == nil then lease = redis.call('HGET', table_key, 'lease') end
  if not lease then return nil, 0 end
  local holder, expires = string.match(lease, '^(.*)|(%d+)$')
  return holder, tonumber(expires)
end
local function lease_free(lease)
  local holder, expires = lease_expiry(lease)
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
    turns_key: Key  # the bucket's turn deadlines
    chat_index: Keys  # the chat's set of table keys (none for an inline table)
    expected: int
    version: int
    data: str  # the table's JSON
    ttl: int
    fresh: bool  # drop every other field: a new game starts with no remembered messages
    wake_ms: int | None  # lower the table's score in the turn deadlines to this
    # Where the commit is published; "": by the caller, once a replica has it.
    channel: str = CHANGED
    slot_prefix: str = SLOT
    junk_prefix: str = JUNK
    moved_field: str = MOVED_FIELD
    born_field: str = BORN_FIELD


# 0: conflict (also for a table moving to another key: it is frozen); 1: committed,
# another process delivers; else committed, deliver: the message fields (slots and junk)
# as they are now, name/value pairs. A delivery may have saved them since the caller
# loaded the table (only the version is compared), and the one that follows must start
# from what the messages show. The chat's index lives as long as its longest-lived table.
# Where a commit waits for a replica the caller announces its version on ``ct:changed``
# once one confirmed it (bot.core.store); else the script does.
CAS = Script(
    Cas,
    shared=LEASE,
    body="""
-- The fields compared, in one read (absent: false); lease_free weighs the lease as read.
local v, moved, lease = unpack(redis.call('HMGET', table_key, 'v', moved_field, 'lease'))
if tonumber(v or '0') ~= expected then return 0 end
if moved then return 0 end
if fresh then  -- its messages go, but not a delivery's lease (its release goes round)
  redis.call('DEL', table_key)
  if lease then redis.call('HSET', table_key, 'lease', lease) end
  redis.call('HSET', table_key, 'v', version, 'd', data, born_field, version)
else
  redis.call('HSET', table_key, 'v', version, 'd', data)
end
redis.call('EXPIRE', table_key, ttl)
for _, index in ipairs(chat_index) do
  redis.call('SADD', index, table_key)
  if redis.call('TTL', index) < ttl then redis.call('EXPIRE', index, ttl) end
end
if channel ~= '' then redis.call('PUBLISH', channel, version .. ' ' .. table_key) end
if wake_ms then redis.call('ZADD', turns_key, 'LT', wake_ms, table_key) end
if not lease_free(lease) then return 1 end
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
    delivered: int  # the version delivered
    due_ms: int | None  # when what was left for later is due
    gone: tuple[str, ...]  # fields to delete
    fields: tuple[str, ...]  # slot and junk name/value pairs to set
    moved_field: str = MOVED_FIELD
    born_field: str = BORN_FIELD
    junk_prefix: str = JUNK


# If a newer version was committed meanwhile the holder keeps the lease and gets that
# version back (deliver again). -1: the lease is not ours any more (nothing written):
# another process took it once it had run out, and perhaps gave it back since, its slots
# standing (a release run again after its first try landed finds it gone too). The
# lease is the process's, not the round's: where this process committed a new game
# (``born``, by a fresh CAS) after the version delivered, the messages saved are the old
# game's, and the new one starts with none, so they are not written (they stay as the
# old game ended; their buttons are stale); only what the old game left to remove is
# handed on, for the new game's first delivery to remove.
RELEASE = Script(
    Release,
    shared=LEASE,
    body="""
-- The fields compared, in one read (a field not there, or no table: false); the writes
-- below are of slot and junk fields, never these.
local lease, moved, born, v =
  unpack(redis.call('HMGET', table_key, 'lease', moved_field, born_field, 'v'))
if lease_expiry(lease) ~= owner or moved then return -1 end  -- no table: no lease
if tonumber(born or '0') <= delivered then
  if #gone > 0 then redis.call('HDEL', table_key, unpack(gone)) end
  if #fields > 0 then redis.call('HSET', table_key, unpack(fields)) end
else
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, #junk_prefix) == junk_prefix then
      redis.call('HSET', table_key, fields[i], fields[i + 1])
    end
  end
end
v = tonumber(v or '0')
if v ~= delivered then
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


@dataclass(frozen=True)
class Claim(Args):
    """Take a table's lease to deliver it."""

    lease: Lease
    moved_field: str = MOVED_FIELD


# The table with the lease taken, or nil: when it is gone or moving (then it leaves the
# due set), or when another process holds the lease (then the table stays due at the
# lease's expiry, in case that holder dies).
CLAIM = Script(
    Claim,
    shared=LEASE,
    body="""
if redis.call('EXISTS', table_key) == 0 or redis.call('HEXISTS', table_key, moved_field) == 1 then
  redis.call('ZREM', due_key, table_key)
  return nil
end
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
class TakeDue(Args):
    """Take tables of a bucket's due set that are due, for one caller."""

    due_key: Key
    now_ms: int
    again_ms: int  # when a table taken is due again, unless its claim says otherwise
    tables: tuple[str, ...]


# The tables still due (no other caller took them first), each due again at ``again_ms``
# rather than taken off the set: a caller whose claim then fails (a failover) leaves the
# table due for the next poll of any process, not lost. The lease's renewals push that
# time on while its delivery works (RENEW), and the release clears it or sets what is
# left for later.
TAKE_DUE = Script(
    TakeDue,
    body="""
local taken = {}
for _, table_key in ipairs(tables) do
  local score = redis.call('ZSCORE', due_key, table_key)
  if score and tonumber(score) <= now_ms then
    redis.call('ZADD', due_key, again_ms, table_key)
    taken[#taken + 1] = table_key
  end
end
return taken
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
class MoveOut(Args):
    """Freeze the table at ``lease``'s key for its move to ``new_key`` (another slot)."""

    lease: Lease
    turns_key: Key
    mark: str  # "<new key>|<token of this move>": where it goes (in another slot)
    group_slot: str  # the group message's slot, left behind (that message stays in the old chat)
    moved_field: str = MOVED_FIELD
    from_field: str = FROM_FIELD


# {1, mark, turn deadline ms or '', name/value pairs}: the table to write at the new key,
# frozen here (CAS, CLAIM and RELEASE leave it alone) under the mark of the move that
# froze it; {0}: nothing to move; {2}: a delivery of the table is under way (in any
# process): try again when it is done. Run again, it returns the same table and mark
# (nothing changes a frozen one).
MOVE_OUT = Script(
    MoveOut,
    shared=LEASE,
    body="""
if redis.call('EXISTS', table_key) == 0 then return {0} end
if redis.call('HEXISTS', table_key, moved_field) == 0 then
  local holder, expires = lease_expiry()
  if holder ~= nil and expires > now_ms then return {2} end
  redis.call('HDEL', table_key, 'lease')
  redis.call('HSET', table_key, moved_field, mark)
end
local turn = redis.call('ZSCORE', turns_key, table_key) or ''
local out = {1, redis.call('HGET', table_key, moved_field), turn}
local fields = redis.call('HGETALL', table_key)
for i = 1, #fields, 2 do
  local name = fields[i]
  if name ~= moved_field and name ~= group_slot and name ~= from_field then
    out[#out + 1] = name
    out[#out + 1] = fields[i + 1]
  end
end
return out
""",
)


@dataclass(frozen=True)
class MoveIn(Args):
    """Write a moved table at its new key, with its indexes in the new bucket."""

    table_key: Key  # the new key
    turns_key: Key
    chat_index: Keys
    mark: str  # the move's (MOVE_OUT's): its table is written once
    ttl: int
    turn_ms: int | None  # its automatic move's deadline, if it has one
    fields: tuple[str, ...]  # name/value pairs (MOVE_OUT's)
    from_field: str = FROM_FIELD


# 1: written (or written before, by this very move); 0: the new key holds another table.
# The table is posted anew in the new chat (its group message was left behind).
MOVE_IN = Script(
    MoveIn,
    body="""
if redis.call('EXISTS', table_key) == 1 then
  if redis.call('HGET', table_key, from_field) == mark then return 1 end
  return 0
end
redis.call('HSET', table_key, from_field, mark, unpack(fields))
redis.call('EXPIRE', table_key, ttl)
for _, index in ipairs(chat_index) do
  redis.call('SADD', index, table_key)
  if redis.call('TTL', index) < ttl then redis.call('EXPIRE', index, ttl) end
end
if turn_ms then redis.call('ZADD', turns_key, turn_ms, table_key) end
return 1
""",
)


@dataclass(frozen=True)
class Drop(Args):
    """Delete a table with its entries in its bucket's sets and its chat's index."""

    table_key: Key
    due_key: Key
    turns_key: Key
    chat_index: Keys
    only_moved: bool  # delete only a table frozen for its move (MOVE_OUT)
    moved_field: str = MOVED_FIELD


# The table as it was (its fields, name/value pairs; none when it was not there, or is
# not frozen while ``only_moved``).
DROP = Script(
    Drop,
    body="""
if only_moved and redis.call('HEXISTS', table_key, moved_field) == 0 then return {} end
local fields = redis.call('HGETALL', table_key)
redis.call('DEL', table_key)
redis.call('ZREM', due_key, table_key)
redis.call('ZREM', turns_key, table_key)
for _, index in ipairs(chat_index) do redis.call('SREM', index, table_key) end
return fields
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


# The consumers that are ``name`` or idle ``idle_ms``: those that hold no pending entry
# removed from the group (a worker that stopped, or died: bot.core.inbox), checked and
# removed in one step, so that no entry is dropped with a consumer that took it meanwhile.
# Returns the names removed, and those of the others (which still hold entries).
FORGET_CONSUMERS = Script(
    ForgetConsumers,
    body="""
local gone, held = {}, {}
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f['name'] == name or f['idle'] >= idle_ms then
    if f['pending'] == 0 then
      redis.call('XGROUP', 'DELCONSUMER', stream, group, f['name'])
      gone[#gone + 1] = f['name']
    else
      held[#held + 1] = f['name']
    end
  end
end
return {gone, held}
""",
)
