"""Keys that live together hash together (docs/redis.md): every script call keeps to one
hash slot and names each key it touches, as a Redis Cluster demands. The suite's own
calls are checked as they run (``CARDTABLE_STRICT_SCRIPTS=1``, tests/conftest.py); here
that check is shown to refuse what a cluster refuses, a whole game is played under it,
and the layout's keys are shown to share the slots they must."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import fakeredis
import pytest
from redis.crc import key_slot
from redis.exceptions import ResponseError

from bot.core import inbox, limiter, lua, scripts
from bot.core.callbacks import INLINE_CHAT
from bot.core.keys import (
    BUCKETS,
    DUE_KEYS,
    KEY_PREFIX,
    TURN_KEYS,
    closed_key,
    family,
    family_of,
    table_key,
)
from bot.core.lua import Args, Key, Keys, Script
from bot.tables.stats import count
from bot.tables.stats import keys as stats_keys
from testing.harness import Harness
from testing.tabletop import game_for


def slot(key: str) -> int:
    return key_slot(key.encode())


@dataclass(frozen=True)
class Two(Args):
    first: Key
    rest: Keys


READ_BOTH = Script(Two, body="return {redis.call('GET', first), redis.call('GET', rest[1])}")
# A key named inside the Lua: a cluster's node cannot know it (it may live elsewhere).
BUILT = Script(Two, body="return redis.call('GET', first .. ':other')")


async def test_the_check_refuses_keys_of_two_slots_and_a_key_not_in_keys() -> None:
    redis = fakeredis.FakeAsyncRedis()
    read, built = READ_BOTH.register(redis), BUILT.register(redis)
    assert await read(Two("{a}:1", ("{a}:2",))) == [None, None]  # one slot: fine
    with pytest.raises(ResponseError, match="CROSSSLOT"):
        await read(Two("a:1", ("b:2",)))
    with pytest.raises(ResponseError, match="undeclared key"):
        await built(Two("{a}:1", ()))
    await redis.aclose()


async def test_a_whole_game_runs_every_script_in_one_slot(harness: Harness) -> None:
    h = harness
    before = lua.CHECKED.copy()
    top, players = await game_for(h, "durak", 3)
    await top.play(players, random.Random(3))
    ran = lua.CHECKED - before
    # Commits, deliveries and the standings' count all ran, each call checked.
    for name in ("Cas", "Release", "Count"):
        assert ran[name] > 0, ran


def test_a_table_shares_its_slot_with_its_bucket_keys_and_its_chat_index() -> None:
    rng = random.Random(33)
    chats = [-(10**12) - rng.randrange(10**12) for _ in range(200)]
    chats += [rng.randrange(1, 10**10) for _ in range(50)]
    for chat in chats:
        for thread in (None, 7):
            key = table_key(chat, thread)
            keys, (index,) = family_of(key), family(chat).chat_index
            assert slot(key) == slot(keys.due) == slot(keys.turns) == slot(index)
            assert slot(keys.barrier) == slot(key)  # a page's read and its barrier write
            assert keys.chat_index == (index,)
    inline = family_of(table_key(INLINE_CHAT, 123456789))  # an inline table: no chat index
    assert slot(inline.table) == slot(inline.due) and inline.chat_index == ()
    # The buckets are 16 slots, and the chats spread over all of them.
    assert len({slot(k) for k in DUE_KEYS}) == len({slot(k) for k in TURN_KEYS}) == BUCKETS
    assert {slot(family(c).due) for c in chats} == {slot(k) for k in DUE_KEYS}


@pytest.mark.parametrize(
    ("chat", "thread", "stored"),
    [
        (-1001234567890, None, ("ct:{b5}:table:-1001234567890:0", "ct:{b5}:chat:-1001234567890")),
        (-1001234567890, 7, ("ct:{b5}:table:-1001234567890:7", "ct:{b5}:chat:-1001234567890")),
        (42, None, ("ct:{b8}:table:42:0", "ct:{b8}:chat:42")),
        (INLINE_CHAT, 123456789, ("ct:{b6}:table:0:123456789",)),
    ],
)
def test_the_stored_keys_stay_where_the_running_version_keeps_them(
    chat: int, thread: int | None, stored: tuple[str, ...]
) -> None:
    """Written out, not derived: a changed layout would lose every running game."""
    keys = family(chat, thread)
    tag = stored[0].split(":table:")[0]
    assert (keys.table, *keys.chat_index) == stored
    assert (keys.due, keys.turns) == (f"{tag}:due", f"{tag}:turns")


def test_a_key_of_the_old_layout_or_of_no_table_has_no_family() -> None:
    assert family_of(table_key(-100123, 5)) == family(-100123, 5)
    with pytest.raises(ValueError, match="not a table key"):
        family_of(f"{KEY_PREFIX}:table:-100123:5")  # where the old layout kept it
    with pytest.raises(ValueError, match="not a table key"):
        family_of(closed_key(5))


def test_the_limiter_and_the_people_standings_each_have_one_slot_the_inbox_sixteen() -> None:
    rl = [limiter.ALL_KEY, limiter.LEARNED_KEY, limiter.chat_bucket_key(-5)]
    rl += [limiter.refused_key(-5), limiter.cooldown_key(9)]
    assert len({slot(k) for k in rl}) == 1
    people = [stats_keys.person_key(1, "durak"), stats_keys.groups_key(2)]
    people += [stats_keys.variant_key(3, "durak", "{}"), stats_keys.marker_key("ab", "cd")]
    assert len({slot(k) for k in people}) == 1
    group = [stats_keys.group_key(-7, "durak", 1), stats_keys.board_key(-7, "football")]
    group += [stats_keys.h2h_key(-7, "durak"), stats_keys.people_key(-7)]
    group += [stats_keys.group_marker_key(-7, "ab", "cd")]
    assert len({slot(k) for k in group}) == 1
    assert len({slot(k) for k in inbox.STREAMS}) == BUCKETS


def test_every_script_is_known_to_the_check() -> None:
    """Each command a script calls is in lua.KEY_AT (the check knows where its key is),
    every call of each script goes through the check, and each is listed to be loaded
    at start (lua.SCRIPTS), once."""
    found = [
        value
        for module in (scripts, limiter, count, inbox)
        for value in vars(module).values()
        if isinstance(value, Script)
    ]
    assert len(found) >= 14 and {id(s) for s in found} <= {id(s) for s in lua.SCRIPTS}
    assert len([s for s in lua.SCRIPTS if s.args.__module__ == limiter.__name__]) == 3
    for script in found:
        for command in re.findall(r"redis\.call\('(\w+)'", script.source):
            assert command.upper() in lua.KEY_AT, (script.args.__name__, command)
        # every call goes through the check (whose own call is the one left)
        assert lua.strict_source(script.source).count("redis.call(") == 1
