"""A table stored by the previous version (one flat model, before the table was split
into parts by the layer that writes them) loads and plays on.

tests/data/table-before-split.json is a table exactly as that version stored it: a
second durak game of a series in progress, six moves in, with the lobby's flags and the
delivery's flags of its seats set as that version's own code set them."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bot.core.keys import DUE_KEY, closed_key
from bot.core.services import services
from testing.harness import Harness
from testing.tabletop import Tabletop, stored, table_key

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
    await h.redis.zadd(DUE_KEY, {key: 1})

    table = (await services(h.app).store.load(key)).table
    assert table is not None, "the old table did not load"
    assert (table.game_id, table.phase, len(table.moves)) == (OLD["game_id"], "playing", 6)
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
    players = [ann, bob, cat]
    await top.caught_up(players)
    rng = random.Random(8)
    for _ in range(6):
        _, answer = await top.step(players, rng)
        assert answer.text is None, answer.text
    after = await stored(h, top.group)
    assert after["phase"] == "playing" and len(after["moves"]) == 12
    assert after["series"] == {"score": OLD["series"], "games": 1, "dealer": 2, "previous_fool": 2}
    assert after["seats"][1]["reach"]["dm_ok"]
