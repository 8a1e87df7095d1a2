"""The one-time upgrade of the keys an earlier version wrote to the hash-tagged layout.

Versions before it kept a table at ``ct:table:<chat>:<thread>``, every due delivery and
turn deadline in ``ct:due`` and ``ct:turns``, the inbox in ``ct:inbox``, the limiter at
``ct:rl:...`` and the standings at ``ct:st:...``. A Redis Cluster refuses scripts over
those (their slots differ), so the keys are now hash-tagged (bot.core.keys). At its start
a process looks at the mark :data:`bot.core.keys.LAYOUT_KEY` (one GET); on one server
whose data is older it renames the old keys once (RENAME keeps a key's value, TTL and a
stream's consumer groups), fills the buckets' sets and the chats' and groups' indexes, and
sets the mark. Every step may run again, and a start that dies anywhere is finished by
the next: what a key needs at its new name (its deadlines in its buckets, its chat's
index, its group's list of people) is written *before* the key is renamed, and the old
``ct:due`` and ``ct:turns`` are deleted only when everything else is done, just before
the mark (a key already renamed is not found under its old name, and its new indexes
are there already). A cluster holds no data of the old layout (the old scripts never
ran there): it is marked at once.

Stop the processes of the old version before the new ones start: an old process would go
on writing the old keys, which nothing reads any more.
"""

from __future__ import annotations

import logging
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from bot.core import replies
from bot.core.inbox import OLD_STREAM as OLD_INBOX
from bot.core.inbox import STREAMS
from bot.core.keys import (
    KEY_PREFIX,
    LAYOUT,
    LAYOUT_KEY,
    closed_key,
    family_of,
    table_key,
)
from bot.tables.stats.keys import ST, group_prefix, people_key

log = logging.getLogger(__name__)

OLD_TABLE = f"{KEY_PREFIX}:table:"
OLD_DUE, OLD_TURNS = f"{KEY_PREFIX}:due", f"{KEY_PREFIX}:turns"
OLD_RL, OLD_ST = f"{KEY_PREFIX}:rl:", f"{KEY_PREFIX}:st:"
NEW_RL = f"{KEY_PREFIX}:{{rl}}:"


def new_table_key(old: str) -> str | None:
    """The key of a table stored at ``old`` (None: ``old`` is not an old table key)."""
    rest = old.removeprefix(OLD_TABLE).split(":")
    if not old.startswith(OLD_TABLE) or len(rest) != 2:
        return None
    try:
        chat, thread = int(rest[0]), int(rest[1])
    except ValueError:
        return None
    return table_key(chat, thread or None)


def new_stats_key(old: str) -> tuple[str, int | None, str] | None:
    """The key of a standings key ``old``, and for a group's figures its group and the
    person (None when ``old`` is no old standings key)."""
    rest = old.removeprefix(OLD_ST)
    if rest.startswith("g:"):  # g:<chat>:<kind>:<uid|board|h2h>
        parts = rest.split(":")
        if len(parts) != 4:
            return None
        if not parts[1].lstrip("-").isdigit():
            return None
        chat, kind, last = int(parts[1]), parts[2], parts[3]
        return f"{group_prefix(chat)}:{kind}:{last}", chat, last
    return f"{ST}:{rest}", None, ""


async def upgrade(redis: aioredis.Redis) -> bool:
    """Bring the data to this layout unless it is there (see the module docstring): True
    when there was something to upgrade."""
    if replies.text(await redis.get(LAYOUT_KEY) or b"") == LAYOUT:
        return False
    if isinstance(redis, RedisCluster):
        await redis.set(LAYOUT_KEY, LAYOUT)
        return False
    moved = 0
    moved += await _tables(redis)
    moved += await _inbox(redis)
    async for raw in redis.scan_iter(match=f"{OLD_RL}*", count=1000):
        old = replies.text(raw)
        moved += await _rename(redis, old, NEW_RL + old.removeprefix(OLD_RL))
    async for raw in redis.scan_iter(match=f"{OLD_ST}*", count=1000):
        found = new_stats_key(replies.text(raw))
        if found is None:
            continue
        new, chat, last = found
        if chat is not None and last.lstrip("-").isdigit():  # before: see the docstring
            await redis.sadd(people_key(chat), last)
        moved += await _rename(redis, replies.text(raw), new)
    await redis.delete(OLD_DUE, OLD_TURNS)  # last: a table renamed meanwhile kept its own
    await redis.set(LAYOUT_KEY, LAYOUT)
    if moved:
        log.info("redis: %d keys renamed to the hash-tagged layout (once)", moved)
    return moved > 0


async def _rename(redis: aioredis.Redis, old: str, new: str) -> int:
    try:
        return int(bool(await redis.renamenx(old, new)))
    except ResponseError as exc:  # gone meanwhile (it expired)
        if "no such key" not in str(exc):
            raise
        return 0


async def _tables(redis: aioredis.Redis) -> int:
    """Each table to its bucket with its deadlines, its chat's index and its players'
    closed-chat sets (all written for the new key before the rename)."""
    moved = 0
    due = await _scores(redis, OLD_DUE)
    turns = await _scores(redis, OLD_TURNS)
    async for raw in redis.scan_iter(match=f"{OLD_TABLE}*", count=1000):
        old = replies.text(raw)
        new = new_table_key(old)
        if new is None or await redis.exists(new):  # taken: left as it was, as RENAMENX would
            continue
        ttl = int(await redis.ttl(old))  # as the commit keeps it: the longest table's
        if ttl == -2:  # gone meanwhile (it expired)
            continue
        keys = family_of(new)
        if old in due:
            await redis.zadd(keys.due, {new: due[old]})
        if old in turns:
            await redis.zadd(keys.turns, {new: turns[old]})
        for index in keys.chat_index:
            await redis.sadd(index, new)
            if ttl > 0 and int(await redis.ttl(index)) < ttl:
                await redis.expire(index, ttl)
        moved += await _rename(redis, old, new)
    async for raw in redis.scan_iter(match=closed_key(0).removesuffix("0") + "*", count=1000):
        members = [replies.text(m) for m in await redis.smembers(raw)]
        for old in members:
            new = new_table_key(old)
            if new is not None:
                await redis.sadd(raw, new)
                await redis.srem(raw, old)
    return moved


async def _scores(redis: aioredis.Redis, key: str) -> dict[str, float]:
    found: list[Any] = await redis.zrange(key, 0, -1, withscores=True)
    return {replies.text(m): float(s) for m, s in found}


async def _inbox(redis: aioredis.Redis) -> int:
    """The old stream becomes the first of the 16 (with its group and what is pending
    there), or, when that one exists already, its entries are added to it. (What an old
    process stores there later is moved by the inbox's workers: Inbox.adopt_old.)"""
    if not await redis.exists(OLD_INBOX):
        return 0
    if await _rename(redis, OLD_INBOX, STREAMS[0]):
        return 1
    entries: list[Any] = await redis.xrange(OLD_INBOX) or []
    for entry_id, fields in entries:
        await redis.xadd(STREAMS[0], fields)
        await redis.xdel(OLD_INBOX, entry_id)
    await redis.delete(OLD_INBOX)
    return 1
