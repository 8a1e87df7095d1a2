"""An update handled twice is a no-op the second time (bot.handlers.once, bot.service.taps.commit).

Telegram delivers an update again when a webhook did not acknowledge it in time (same
update_id, same callback query), several webhook workers may each be handed it, and a
process may die after committing a tap but before answering it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.callbacks import Action
from bot.handlers.once import update_key
from testing.chats import FakeUser
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


async def test_a_webhook_retry_is_dropped(harness: Harness) -> None:
    """Each kind the issue names: a command, /start, a set-up tap, a move."""
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
    chosen = picks(await stored(h, group), ann)
    await h.deliver(update)
    query = update["callback_query"]["id"]
    assert len(answers(h, query)) == 1
    assert h.alerts(ann) == [], "no 'You have already chosen that card'"
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
