"""The Lua scripts every change of a table goes through (and two more), run by
:class:`bot.core.store.Store` and :mod:`bot.core.inbox`.

Why Lua: a script runs whole in Redis, with nothing of another process in between, so a
compare-and-set, a lease and the indexes it touches change together (the key layout is
:mod:`bot.core.keys`'s). The in-process store and the tests run the same scripts on
fakeredis.
"""

from __future__ import annotations

# Shared Lua. KEYS[1] is the table, KEYS[2] the due set; ARGV[1..3] owner, now (ms), lease
# ms. A lease is "<owner>|<expiry ms>". Taking it also puts the table in the due set at its
# expiry at the latest: if the holder dies before it has delivered, a live process's poll
# finds the table there once the lease has run out, and delivers.
LEASE = """
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
CAS = (
    LEASE
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
RELEASE = (
    LEASE
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
CLAIM = (
    LEASE
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
RENEW = """
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
MOVE = (
    LEASE
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

# KEYS[1]: a table; ARGV: fields to set (pairs), the TTL for a key that has none. Writes
# nothing when the table is gone (no table-less hash is left behind).
SAVE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]), 'NX')
return 1
"""


# KEYS[1]: the deadlines; ARGV: the table key, our claim's score, the new score ("": none).
# Our claim is replaced, unless a commit has set an earlier time meanwhile.
TURN_SETTLE = """
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
TURN_CLAIM = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


# Delete a key only while it still holds the value its owner gave it (a claim released by
# its owner, never one someone else made since: bot.handlers.once).
DELETE_IF = """
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
