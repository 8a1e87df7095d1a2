"""Turn timeouts (rules.md §3): a player who does not act within the turn time has his move
made for him by the computer player; the lobby offers the option (60 s by default).

The lobby's shortest choice is 30 s; to keep the test short the stored table is given a
1-second turn time before the deal (the settings model takes any number of seconds).
"""

from __future__ import annotations

import asyncio
import json

from tests.fakegram import Harness
from tests.tabletop import Tabletop, stored, table_key


async def test_a_player_who_does_not_act_has_his_move_made_for_him(harness: Harness) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    top = Tabletop(h, h.group())
    await top.open(ann, "durak")
    await top.join(bob)
    key = table_key(top.group)
    raw = json.loads(await h.redis.hget(key, "d"))
    raw["settings"]["turn_time"] = 1
    await h.redis.hset(key, "d", json.dumps(raw))
    await top.start(ann)
    (asked,) = [u for u in (ann, bob) if top.prompt(u) is not None]
    await asyncio.sleep(3.5)
    data = await stored(h, top.group)
    assert data["moves"], "nobody acted and the game still waits for him"
    assert data["moves"][0]["player"] == [s["user_id"] for s in data["seats"]].index(asked.id)
