"""A table stored by an earlier version loads and plays on: one of the flat model before the
split into parts (tests/data/table-before-split.json, a series' second durak game six moves
in), one of form 2 (tests/data/table-form-2.json) under the keys before the hash tags."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bot.core.inbox import STREAMS
from bot.core.keys import LAYOUT_KEY, closed_key, family_of
from bot.core.limiter import LEARNED_KEY
from bot.core.models import FORM
from bot.core.services import services
from bot.tables import layout
from bot.tables.stats.standings import of
from testing.chats import FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, stored, table_key


async def played_on(
    top: Tabletop, players: list[FakeUser], rng: random.Random, moves: int
) -> dict[str, Any]:
    """The table of ``top`` as stored after ``moves`` more moves, each of them taken."""
    await top.caught_up(players)
    for _ in range(moves):
        _, answer = await top.step(players, rng)
        assert answer.text is None, answer.text
    return await stored(top.h, top.group)


OLD = json.loads((Path(__file__).parents[1] / "data" / "table-before-split.json").read_text())


async def test_a_table_stored_before_the_split_loads_and_plays_on(harness: Harness) -> None:
    h = harness
    ann, bob, cat = (
        h.user(s["name"], user_id=s["user_id"], language_code=s["lang"]) for s in OLD["seats"]
    )
    top = Tabletop(h, h.group(OLD["chat_title"], creator=ann))
    key = table_key(top.group)
    clock = services(h.app).clock
    # In its group, with its turn's deadline a moment ahead (as if saved just now); Bob's
    # private chat is closed, as the old version noted beside his flag.
    raw: dict[str, Any] = {**OLD, "chat_id": top.group.id, "turn_due": clock() + 60}
    await h.redis.hset(key, mapping={"v": 7, "d": json.dumps(raw)})
    await h.redis.sadd(closed_key(bob.id), key)
    await h.redis.zadd(family_of(key).due, {key: 1})

    table = (await services(h.app).store.load(key)).table
    assert table is not None, "the old table did not load"
    assert (table.game_id, table.phase, len(table.played.moves)) == (OLD["game_id"], "playing", 6)
    lobby, reach = table.lobby, [s.reach for s in table.seats]
    assert (lobby.creator, lobby.lang, lobby.computer_level) == (ann.id, "en", "hard")
    assert lobby.settings.model_dump() == OLD["settings"]
    assert (lobby.show_settings, lobby.lobby_link, lobby.notice) == (True, True, "record.refused")
    assert table.delivery.taps == OLD["taps"] and table.delivery.bot_admin
    assert table.delivery.last_taps == {k: tuple(v) for k, v in OLD["last_taps"].items()}
    assert (table.clock.turn_for, table.series.score) == (OLD["turn_for"], OLD["series"])
    assert (table.series.games, table.series.dealer, table.series.previous_fool) == (1, 2, 2)
    flags = ("place", "dm_ok", "group_ok", "admin_refused", "renew")
    old_flags = [{f: s[f] for f in flags} for s in OLD["seats"]]
    assert [r.model_dump(include=set(flags)) for r in reach] == old_flags
    assert all(r.nudge for r in reach)  # a flag it did not have: its default
    assert [(r.dm_ok, r.renew, r.group_ok, r.admin_refused) for r in reach[1:]] == [
        (False, 2, True, False),
        (True, 0, False, True),
    ]
    assert table.seats[0].timeouts == 1

    # Bob opens his private chat again: his hand comes, and the game plays on.
    await h.private(bob, "/start")
    after = await played_on(top, [ann, bob, cat], random.Random(8), 6)
    assert after["phase"] == "playing" and len(after["played"]["moves"]) == 12
    assert after["series"] == {"score": OLD["series"], "games": 1, "dealer": 2, "previous_fool": 2}
    assert after["seats"][1]["reach"]["dm_ok"]


FORM_2 = json.loads((Path(__file__).parents[1] / "data" / "table-form-2.json").read_text())


async def form_2(h: Harness) -> tuple[Tabletop, list[FakeUser]]:
    """A durak game of three, five moves in, as form 2 stored it (its moves and events
    beside the parts) in a new group, at its key of the old layout, its turn due in a
    minute."""
    players = [
        h.user(s["name"], user_id=s["user_id"], language_code=s["lang"]) for s in FORM_2["seats"]
    ]
    top = Tabletop(h, h.group(FORM_2["chat_title"], creator=players[0]))
    due = {**FORM_2["clock"], "turn_due": services(h.app).clock() + 60}  # as if saved just now
    # This harness numbers its callback queries from 1 again, as the one that stored the
    # table did: the taps it remembers would pass for this game's taps delivered twice.
    delivery = {**FORM_2["delivery"], "taps": [], "last_taps": {}}
    raw = {**FORM_2, "chat_id": top.group.id, "clock": due, "delivery": delivery}
    old = f"ct:table:{top.group.id}:0"
    await h.redis.hset(old, mapping={"v": 9, "d": json.dumps(raw, separators=(",", ":"))})
    return top, players


async def test_a_game_stored_in_the_old_key_layout_plays_on_after_the_starts_upgrade(
    harness: Harness,
) -> None:
    """The keys before the hash-tagged layout (docs/redis.md): the table (of form 2), its
    deadlines, a closed chat's set, the standings, the limiter and an update pending in
    ``ct:inbox``. A start renames them once (bot.tables.layout); the table loads as it was
    stored, and plays on stored in the current form."""
    h = harness
    assert await h.redis.get(LAYOUT_KEY) == b"2"  # this process's start marked its data
    await h.redis.delete(LAYOUT_KEY)  # the data below predates it
    top, players = await form_2(h)
    ann, bob = players[0], players[1]
    chat, old = top.group.id, f"ct:table:{top.group.id}:0"
    clock = services(h.app).clock
    await h.redis.expire(old, 3600)
    await h.redis.zadd("ct:due", {old: 1})
    await h.redis.zadd("ct:turns", {old: int((clock() + 60) * 1000)})
    await h.redis.sadd(closed_key(bob.id), old)
    await h.redis.hset(f"ct:st:g:{chat}:durak:{ann.id}", mapping={"n": 4, "name": "Ann"})
    await h.redis.zadd(f"ct:st:g:{chat}:durak:board", {str(ann.id): 12.5})
    await h.redis.hset(f"ct:st:p:{ann.id}:durak", mapping={"n": 9, "name": "Ann"})
    await h.redis.sadd(f"ct:st:in:{ann.id}", chat)
    await h.redis.zadd("ct:rl:learned", {str(chat): 2e12})
    await h.redis.xgroup_create("ct:inbox", "workers", id="0", mkstream=True)
    entry = await h.redis.xadd("ct:inbox", {"u": b"{}"})
    await h.redis.xreadgroup("workers", "dead", {"ct:inbox": ">"})  # pending, as it was

    assert await layout.upgrade(h.redis)
    assert not await layout.upgrade(h.redis)  # once: the mark says it is done
    key = table_key(top.group)
    assert not await h.redis.exists(old, "ct:due", "ct:turns", "ct:inbox", "ct:rl:learned")
    assert 0 < await h.redis.ttl(key) <= 3600
    assert await h.redis.zscore(family_of(key).turns, key) is not None
    assert await h.redis.smembers(closed_key(bob.id)) == {key.encode()}
    assert await services(h.app).store.chat_tables(chat) == [key]
    standings = of(services(h.app).store)
    assert (await standings.in_group(chat, ann.id))["durak"].n == 4
    assert [line.uid for line in await standings.board(chat, "durak")] == [ann.id]
    assert (await standings.mine(ann.id))[0]["durak"].n == 9
    assert await h.redis.zscore(LEARNED_KEY, str(chat)) == 2e12
    pending = await h.redis.xpending_range(STREAMS[0], "workers", "-", "+", 10)
    assert [p["message_id"] for p in pending] == [entry]  # still pending: taken over later

    table = (await services(h.app).store.load(key)).table
    assert table is not None, "the form-2 table did not load"
    assert (table.game_id, table.phase) == (FORM_2["game_id"], "playing")
    assert table.played.moves == FORM_2["moves"]
    assert table.played.events == [tuple(e) for e in FORM_2["events"]]

    # The hands come, and the game plays on at its new key, in the current form.
    after = await played_on(top, players, random.Random(3), 4)
    assert after["form"] == FORM
    assert after["phase"] == "playing" and len(after["played"]["moves"]) == 9
    assert after["played"]["moves"][:5] == FORM_2["moves"]
