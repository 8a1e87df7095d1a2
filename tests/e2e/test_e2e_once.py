"""An update handled twice (a webhook retry, two workers, a process dead before answering), or
a button tapped twice, makes one change (bot.handlers.once, bot.service.taps.commit)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.callbacks import Action, decode
from bot.handlers.once import update_key
from engine.games.football.game import Football
from testing.chats import FakeMessage, FakeUser
from testing.harness import AppFactory, Harness
from testing.tabletop import Tabletop, game_for, is_action, stored


def answers(h: Harness, query_id: str) -> list[Any]:
    """Every answerCallbackQuery the bot made for one callback query, refused ones too."""
    return [
        c
        for c in h.server.calls
        if c.method == "answerCallbackQuery" and c.params.get("callback_query_id") == query_id
    ]


def picks(data: dict[str, Any], user: FakeUser) -> list[int]:
    """The set-up cards ``user`` has chosen so far, as stored."""
    (seat,) = [s for s in data["seats"] if s["user_id"] == user.id]
    return list(seat["setup"])


def bot_texts(h: Harness, chat: Any) -> list[str]:
    return [m.text or "" for m in h.screen(chat) if m.from_bot]


async def setup_tap(h: Harness, top: Tabletop, user: FakeUser) -> dict[str, Any]:
    """Ann picks her goalkeeper (the first set-up step); the update as delivered."""
    hand = top.prompt(user)
    assert hand is not None
    await h.tap(user, hand, is_action(Action.SETUP, "0"))
    return h.delivered[-1]


@pytest.mark.parametrize(
    "hands",
    [
        "private",
        # an ephemeral hand in the group (docs/ephemeral.md): its tap has no message id
        pytest.param("group", marks=pytest.mark.settings(hands="group")),
    ],
)
async def test_a_webhook_retry_is_dropped(harness: Harness, hands: str) -> None:
    """Each kind the issue names: a command, /start, a set-up tap, a move; the tap on a
    hand in the private chat and on one in the group."""
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    group = h.group()
    await h.command(ann, group, "/newgame")
    await h.deliver(h.delivered[-1])
    assert len(bot_texts(h, group)) == 1, "one picker, and no 'a game is already open here'"

    await h.private(bob, "/start")
    await h.deliver(h.delivered[-1])
    assert len(bot_texts(h, bob)) == 1, "welcomed once"

    top = Tabletop(h, group)
    await top.tap_group(ann, Action.PICK, "f")
    await top.join(bob)
    await top.start(ann)
    update = await setup_tap(h, top, ann)
    assert (update["callback_query"]["message"]["message_id"] == 0) is (hands == "group")
    chosen = picks(await stored(h, group), ann)
    calls = len(h.server.calls)
    await h.deliver(update)
    # dropped by its claim: not a second answer, nor "You have already chosen that card"
    assert h.server.calls[calls:] == []
    assert picks(await stored(h, group), ann) == chosen == [0]


@pytest.mark.redis
async def test_two_workers_handed_the_same_updates_handle_each_once(
    real_harness: Harness, make_app: AppFactory, real_redis: aioredis.Redis
) -> None:
    h = real_harness
    h.fanout = [h.app, await make_app(real_redis)]
    top, players = await game_for(h, "football")
    assert len(bot_texts(h, top.group)) == 1, "one table message, no 'already open'"
    for user in players:
        assert len([m for m in h.screen(user) if m.from_bot]) == 1, "one hand each"
    before = await stored(h, top.group)
    update = await setup_tap(h, top, players[0])
    after = await stored(h, top.group)
    assert after["version"] == before["version"] + 1
    assert picks(after, players[0]) == [0]
    assert len(answers(h, update["callback_query"]["id"])) == 1
    assert all(a.text is None for a in h.server.queries.values()), "nothing was refused"


async def test_a_tap_committed_by_a_process_that_died_is_answered_silently_again(
    harness: Harness, make_app: AppFactory, fake_redis: aioredis.Redis
) -> None:
    """The process commits a set-up step and dies before answering; its in-progress
    claim on the update runs out and Telegram delivers the tap again, to a live
    process: no second step, no "already chosen", one silent answer."""
    h = harness
    top, (ann, _) = await game_for(h, "football")
    doomed = await make_app(fake_redis)
    frozen = doomed.bot.request.hold = asyncio.Event()  # its Bot API calls never return
    hand = top.prompt(ann)
    assert hand is not None
    before = (await stored(h, top.group))["version"]
    data = h.find(hand, is_action(Action.SETUP, "0")).callback_data or ""
    dying = asyncio.create_task(h.tap_data(ann, ann.id, hand.message_id, data, doomed))
    try:
        while (await stored(h, top.group))["version"] == before:
            await asyncio.sleep(0.001)
        dying.cancel()
        update = h.delivered[-1]
        await fake_redis.delete(update_key(update["update_id"]))  # the claim ran out
        await h.deliver(update)
    finally:
        frozen.set()
    after = await stored(h, top.group)
    assert after["version"] == before + 1
    assert picks(after, ann) == [0]
    (answer,) = answers(h, update["callback_query"]["id"])
    assert answer.error is None and answer.params.get("text") is None


async def until_advance(
    top: Tabletop, players: list[FakeUser], seed: int
) -> tuple[FakeUser, FakeMessage]:
    """Plays on until someone is asked to advance the ball; him and his prompt."""
    rng = random.Random(seed)
    for _ in range(400):
        data = await stored(top.h, top.group)
        if data.get("state"):
            game = Football.from_json(data["state"])
            actor = game.to_act()
            legal = game.legal_moves() if actor is not None else []
            if game.view(None).phase == "play" and legal and legal[0].kind == "advance":
                user = next(u for u in players if u.id == data["seats"][actor.player]["user_id"])
                prompt = top.prompt(user)
                assert prompt is not None
                return user, prompt
        await top.step(players, rng)
    raise AssertionError("nobody ever advanced the ball")


async def test_an_advance_redelivered_or_tapped_twice_moves_the_ball_once(harness: Harness) -> None:
    """Advancing the ball is often legal twice in a row, so a legality check alone would let
    the update sent again, or the button tapped again, make a move nobody chose."""
    h = harness
    for seed in range(6):
        top, players = await game_for(h, "football")
        user, prompt = await until_advance(top, players, seed)
        data = prompt.buttons[0].callback_data
        assert data is not None
        before = await stored(h, top.group)
        first = await h.tap_data(user, user.id, prompt.message_id, data)
        assert first.answered and first.text is None
        once = await stored(h, top.group)
        assert len(once["played"]["moves"]) == len(before["played"]["moves"]) + 1
        await h.deliver(h.delivered[-1])  # the same update again
        assert await stored(h, top.group) == once, "the same update made a second move"
        second = await h.tap_data(user, user.id, prompt.message_id, data)  # a double tap
        assert await stored(h, top.group) == once, f"{decode(data).arg} moved the ball twice"
        assert second.answered and second.show_alert and second.text
