"""The bot's own contracts beyond a happy game (tests/e2e plays the games): refusals that
change nothing, the football set-up, coalesced group edits, a private chat that refuses us,
the Redis round trips a move costs."""

from __future__ import annotations

import html
import random
import re
from contextvars import ContextVar
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.callbacks import Action, Callback, decode, encode
from bot.core.models import Table
from bot.screens.views import group_screen
from testing.chats import BOT_USERNAME
from testing.clock import Clock
from testing.harness import Harness
from testing.tabletop import Tabletop, is_action, stored


async def _football(h: Harness) -> tuple[Tabletop, list[Any]]:
    users = [h.user("Ann"), h.user("Bob", language_code="ru")]
    top = Tabletop(h, h.group(creator=users[0]))
    await top.setup_game("football", users)
    return top, users


async def test_set_up_is_a_private_multi_step_choice(harness: Harness) -> None:
    top, (ann, _) = await _football(harness)
    prompt = top.prompt(ann)
    assert prompt is not None
    cards = [b for b in prompt.buttons if is_action(Action.SETUP)(b)]
    assert len(cards) == 5  # choose the goalkeeper among the five dealt cards
    for _ in range(4):
        await harness.tap(ann, top.prompt(ann), is_action(Action.SETUP))  # type: ignore[arg-type]
    # Goalkeeper and three row cards chosen: the fifth goes in by itself.
    assert top.prompt(ann) is not None
    await harness.tap(ann, top.prompt(ann), is_action(Action.SETUP, "c"))  # type: ignore[arg-type]
    data = await stored(harness, top.group)
    seat = [s["user_id"] for s in data["seats"]].index(ann.id)
    first = data["played"]["moves"][0]  # (an IndexError if none)
    assert first["player"] == seat and "setup" in first
    assert top.prompt(ann) is None  # he waits for Bob now
    assert "⏳" in top.table_message().text


async def test_refused_taps_change_nothing(harness: Harness) -> None:
    top, (ann, bob) = await _football(harness)
    rng = random.Random(2)
    while len((await stored(harness, top.group))["played"]["moves"]) < 2:  # both set up
        await top.step([ann, bob], rng)
    before = await stored(harness, top.group)
    mover = next(u for u in (ann, bob) if top.prompt(u) is not None)
    other = bob if mover is ann else ann
    message = top.prompt(mover)
    assert message is not None
    button = next(b for b in message.buttons if is_action(Action.MOVE)(b))
    cb = decode(button.callback_data)
    forged = [
        ("not his turn", other, other.id, encode(cb)),
        ("garbage", mover, mover.id, "hello"),
        ("wrong game", mover, mover.id, encode(cb._replace(game_id="zzzz"))),
        ("bad token", mover, mover.id, encode(cb._replace(arg="x9"))),
        ("move from the group", mover, top.group.id, encode(cb)),
    ]
    for why, user, chat, data in forged:
        answer = await harness.tap_data(user, chat, message.message_id, data)
        assert answer.text, why
        assert await stored(harness, top.group) == before, why
    # An outsider cannot start, join a running game or see cards.
    outsider = harness.user("Eve")
    answer = await harness.tap_data(
        outsider,
        top.group.id,
        top.table_message().message_id,
        encode(Callback(top.group.id, None, before["game_id"], Action.CARDS)),
    )
    assert answer.text and answer.show_alert
    assert await stored(harness, top.group) == before


@pytest.mark.telegram_complaints
async def test_a_player_whose_private_chat_refuses_us(harness: Harness) -> None:
    ann, bob = harness.user("Ann"), harness.user("Bob")
    top = Tabletop(harness, harness.group(creator=ann))
    await top.open(ann, "football")
    await top.join(bob)
    bob.blocked = True  # he blocks the bot before the deal
    await top.start(ann)
    table = top.table_message()
    assert "Bob" in table.text.split("⚠️")[-1]
    # Meanwhile "My cards" shows him his hand, to him only.
    answer = await top.tap_group(bob, Action.CARDS)
    assert answer.show_alert and sum((answer.text or "").count(suit) for suit in "♠♣♦♥") == 5
    # He opens the private chat through the group's link: his hand arrives, the warning goes.
    link = next(b.url for b in table.buttons if b.url)
    await harness.follow(bob, link)
    assert top.prompt(bob) is not None
    assert "⚠️" not in top.table_message().text
    seats = (await stored(harness, top.group))["seats"]
    assert next(s for s in seats if s["user_id"] == bob.id)["reach"]["dm_ok"]


@pytest.mark.frozen_clock  # the moves below take no time for the bot, however slow the machine
@pytest.mark.settings(table_edit_interval=0.3)
async def test_group_edits_are_coalesced_and_end_on_the_newest_state(
    harness: Harness, clock: Clock
) -> None:
    h, server = harness, harness.server
    ann, bob = h.user("Ann"), h.user("Bob")
    top = Tabletop(h, h.group(creator=ann))
    await top.setup_game("durak", [ann, bob])
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
    users = [h.user(n) for n in ("Ann", "Bob", "Cid")]
    top = Tabletop(h, h.group(creator=users[0]))
    await top.setup_game("durak", users)
    trips = claims = 0
    plain = aioredis.Redis.execute_command
    batch = aioredis.client.Pipeline.execute
    # Only what the move itself sends is counted: the commands of the tasks that handle
    # its update (and of the delivery those set off), which see ``moving`` set. The pollers
    # (due deliveries, turn deadlines, lease renewals) run on the real clock in tasks of
    # their own, started with the app: under load one of them can take a due table in
    # the middle of a move, and its commands are not the move's.
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
