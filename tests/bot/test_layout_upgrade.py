"""The one-time upgrade of the old key layout (bot.tables.layout), killed at any step, is
finished by the next start: exactly what one uninterrupted upgrade leaves."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest

from bot.core.keys import LAYOUT, LAYOUT_KEY, family_of, table_key
from bot.tables import layout
from bot.tables.stats.keys import people_key

# What the upgrade writes with: a start may die after any one of these.
WRITES = ("renamenx", "zadd", "sadd", "srem", "expire", "delete", "set")


async def _old_layout() -> Any:
    """A Redis holding data of the layout before the hash tags."""
    redis = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer())
    for chat, turn in ((-100, 2e12), (-200, 3e12)):
        old = f"ct:table:{chat}:0"
        await redis.hset(old, mapping={"v": 3, "d": "{}"})
        await redis.expire(old, 600)
        await redis.zadd("ct:turns", {old: turn})
    await redis.zadd("ct:due", {"ct:table:-100:0": 1e12})
    await redis.sadd("ct:closed:7", "ct:table:-100:0")
    await redis.hset("ct:st:g:-100:durak:7", mapping={"n": 4, "name": "Ann"})
    await redis.hset("ct:st:g:-100:durak:8", mapping={"n": 2, "name": "Bob"})
    await redis.zadd("ct:st:g:-100:durak:board", {"7": 12.5, "8": 3.0})
    await redis.hset("ct:st:p:7:durak", mapping={"n": 9, "name": "Ann"})
    await redis.zadd("ct:rl:learned", {"-100": 2e12})
    return redis


async def _dump(redis: Any) -> dict[bytes, Any]:
    """Every key with its value (and whether it expires)."""
    found: dict[bytes, Any] = {}
    for key in sorted(await redis.keys("*")):
        kind = (await redis.type(key)).decode()
        value: Any = {
            "hash": redis.hgetall,
            "set": redis.smembers,
            "string": redis.get,
            "zset": lambda k: redis.zrange(k, 0, -1, withscores=True),
        }[kind](key)
        found[key] = (kind, await value, await redis.ttl(key) > 0)
    return found


def _dying_at(redis: Any, step: int) -> list[int]:
    """Make the ``step``-th write of ``redis`` raise (once), as a process killed right
    after it; returns the count of writes made."""
    made = [0]
    for name in WRITES:
        real = getattr(redis, name)

        async def write(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            result = await _real(*args, **kwargs)
            made[0] += 1
            if made[0] == step:
                raise ConnectionError(f"killed after write {step}")
            return result

        setattr(redis, name, write)
    return made


async def test_an_upgrade_killed_after_a_rename_keeps_the_tables_deadlines_and_the_people() -> None:
    """The case the review found: the table renamed, the process gone before its
    deadlines reached its buckets; the next start found nothing under the old name and
    deleted ct:due and ct:turns."""
    redis = await _old_layout()
    real = redis.renamenx

    async def dies(old: str, new: str) -> Any:
        await real(old, new)
        raise ConnectionError("killed -9 after the RENAME")

    redis.renamenx = dies
    for _ in range(2):  # the first table's and the first standings key's
        with pytest.raises(ConnectionError):
            await layout.upgrade(redis)
        if not await redis.exists("ct:table:-200:0"):
            break
    redis.renamenx = real
    await layout.upgrade(redis)
    assert await redis.get(LAYOUT_KEY) == LAYOUT.encode()
    for chat, turn in ((-100, 2e12), (-200, 3e12)):
        new = table_key(chat, None)
        assert await redis.exists(new)
        assert await redis.zscore(family_of(new).turns, new) == turn
    new = table_key(-100, None)
    assert await redis.zscore(family_of(new).due, new) == 1e12
    assert await redis.smembers(people_key(-100)) == {b"7", b"8"}
    assert not await redis.exists("ct:due", "ct:turns")


async def test_an_upgrade_killed_at_any_step_is_finished_by_the_next_start() -> None:
    clean = await _old_layout()
    made = _dying_at(clean, 0)
    assert await layout.upgrade(clean)
    expected = await _dump(clean)
    assert made[0] > 10
    for step in range(1, made[0] + 1):
        redis = await _old_layout()
        _dying_at(redis, step)
        with pytest.raises(ConnectionError):
            await layout.upgrade(redis)
        await layout.upgrade(redis)  # the next start (the write that killed it stays off)
        assert await _dump(redis) == expected, f"killed after write {step}"
