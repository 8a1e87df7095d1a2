"""Delivery apart from the taps: a tap is answered before Telegram has shown its move, and
whatever the races and errors, no superseded prompt keeps its buttons."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
import redis.asyncio as aioredis

from testing.chats import Button, FakeMessage, FakeUser
from testing.errors import EDIT_NOT_FOUND
from testing.fakegram import FakeRequest, FakeTelegram, method_of
from testing.harness import AppFactory, Harness, settle
from testing.tabletop import PLAY_ACTIONS, Tabletop, action_of, game_for, playing, stored

ANSWERED_WITHIN = 5.0  # seconds; the answer never comes if it waits for the messages


class SlowMessages(FakeRequest):
    """Telegram slow to send and edit messages (until ``shown`` is set), quick to answer taps."""

    def __init__(self, server: FakeTelegram, shown: asyncio.Event) -> None:
        super().__init__(server)
        self.shown = shown

    async def do_request(self, url: str, method: str, *args: Any, **kwargs: Any) -> Any:
        if method_of(url) in ("sendMessage", "editMessageText"):
            await self.shown.wait()
        return await super().do_request(url, method, *args, **kwargs)


async def slow_table(
    h: Harness, shown: asyncio.Event
) -> tuple[Tabletop, list[FakeUser], FakeUser, FakeMessage, Button]:
    """A durak table whose Telegram has become slow to show messages (until ``shown``):
    the table, the players, the one to act, his prompt and a move on it."""
    top, players = await game_for(h, "durak")
    slow = SlowMessages(h.server, shown)
    h.app.bot._request = (slow, slow)  # type: ignore[attr-defined]
    actor = top.asked(players)
    prompt = top.prompt(actor)
    assert prompt is not None
    move = next(b for b in prompt.buttons if action_of(b) in PLAY_ACTIONS)
    return top, players, actor, prompt, move


async def answers_to(server: FakeTelegram, data: str | None, count: int = 1) -> None:
    """Waits, at most ANSWERED_WITHIN, until ``count`` taps with ``data`` are answered."""
    async with asyncio.timeout(ANSWERED_WITHIN):
        while sum(a.answered for a in server.queries.values() if a.data == data) < count:
            await asyncio.sleep(0.005)


async def test_a_double_tap_is_refused_at_once_while_the_first_is_being_shown(
    harness: Harness,
) -> None:
    """The first tap is answered before its move is shown, and a second one refused."""
    h, shown = harness, asyncio.Event()
    top, players, actor, prompt, move = await slow_table(h, shown)
    first = asyncio.create_task(h.tap(actor, prompt, lambda b: b == move))
    await answers_to(h.server, move.callback_data)  # applied; its messages on their way
    again = asyncio.create_task(h.tap(actor, prompt, lambda b: b == move))
    await answers_to(h.server, move.callback_data, 2)  # the refusal, before the messages
    assert not first.done()
    shown.set()
    applied, refused = await asyncio.gather(first, again)
    assert applied.text is None and refused.text  # the first silently, the other refused
    assert len((await stored(h, top.group))["played"]["moves"]) == 1
    assert any(top.prompt(user) is not None for user in players)  # the move was shown


@pytest.mark.telegram_complaints  # the injected "message to edit not found"
async def test_no_prompt_keeps_its_buttons_after_the_game_whatever_the_races(
    real_harness: Harness, make_app: AppFactory, real_redis: aioredis.Redis
) -> None:
    """Two processes, and now and then an edit's message not found: at most one live prompt
    a player at every step, none after the game."""
    h = real_harness
    h.apps.append(await make_app(real_redis))
    players = [h.user(n) for n in ("Ann", "Bob", "Cid")]
    top = await playing(h, "durak", players)
    rng = random.Random(5)
    for move in range(400):
        if top.finished():
            break
        if move % 7 == 3:
            h.server.inject("editMessageText", 400, EDIT_NOT_FOUND)
        asked = [(u, m) for u in players if (m := top.prompt(u)) is not None]
        user, message = rng.choice(asked)
        button = rng.choice([b for b in message.buttons if action_of(b) in PLAY_ACTIONS])
        await h.tap(user, message, lambda b, button=button: b == button, rng.choice(h.apps))
        for app in h.apps:
            await settle(app)
        for user in players:
            assert len(top.prompts(user)) <= 1, "two live prompts"
    assert top.finished()
    for user in players:
        assert top.prompts(user) == [], "a prompt kept its buttons after the game"
