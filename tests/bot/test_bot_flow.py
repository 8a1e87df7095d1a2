"""The bot's own contracts beyond a happy game (tests/e2e plays the games): coalesced group
edits, the Redis round trips a move costs."""

from __future__ import annotations

import html
import random
import re
from contextvars import ContextVar
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.models import Table
from bot.screens.views import group_screen
from testing.chats import BOT_USERNAME
from testing.clock import Clock
from testing.harness import Harness
from testing.tabletop import game_for, stored


@pytest.mark.settings(table_edit_interval=0.3)
async def test_group_edits_are_coalesced_and_end_on_the_newest_state(
    harness: Harness, clock: Clock
) -> None:
    h, server = harness, harness.server
    top, (ann, bob) = await game_for(h, "durak")
    await clock.advance(0.35)
    edits_before = len(server.calls_to("editMessageText"))
    table_id = top.table_message().message_id
    rng = random.Random(5)
    for _ in range(12):
        await top.step([ann, bob], rng)
    group_edits = [
        c
        for c in server.calls_to("editMessageText")[edits_before:]
        if c.params.get("chat_id") == top.group.id
    ]
    assert len(group_edits) <= 2  # one at most per 0.3 s, and the clock stood still
    await clock.advance(0.4)  # the scheduled edit runs
    data = await stored(h, top.group)
    table = Table.model_validate({k: v for k, v in data.items() if k != "version"})
    expected = html.unescape(re.sub(r"<[^>]+>", "", group_screen(table, BOT_USERNAME).text))
    assert server.messages[top.group.id][table_id].text == expected


@pytest.mark.redis
async def test_a_move_costs_three_redis_round_trips(
    real_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = real_harness
    top, users = await game_for(h, "durak", 3)
    trips = claims = 0
    plain = aioredis.Redis.execute_command
    batch = aioredis.client.Pipeline.execute
    # Only the move's own commands are counted (its update's tasks and the delivery they
    # set off see ``moving`` set): under load a poller, in a task of its own, can take a
    # due table in the middle of a move.
    moving: ContextVar[bool] = ContextVar("moving", default=False)

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal trips, claims
        if moving.get():
            # Every update, not only a move, is claimed (bot.handlers.once).
            if args[0] == "SET" and str(args[1]).startswith("ct:upd:"):
                claims += 1
            elif not isinstance(self, aioredis.client.Pipeline):
                trips += 1
        return await plain(self, *args, **kwargs)

    async def counted_batch(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal trips
        trips += moving.get()
        return await batch(self, *args, **kwargs)

    monkeypatch.setattr(aioredis.Redis, "execute_command", counted)
    monkeypatch.setattr(aioredis.client.Pipeline, "execute", counted_batch)
    rng = random.Random(6)
    for _ in range(30):
        before, claimed = trips, claims
        token = moving.set(True)  # copied into the tasks the update runs in
        try:
            _, answer = await top.step(users, rng)
        finally:
            moving.reset(token)
        assert 2 <= trips - before <= 3, (trips - before, answer.text)  # load, CAS, slots
        assert claims - claimed == 1  # a tap is not marked done: its table remembers it
        if top.finished():
            break
