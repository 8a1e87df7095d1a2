"""The prompt tells the turn time the lobby set (seeds/<game>.md §7.2), or none if unlimited;
what a timeout does is test_e2e_computer.py's (``someone_away``)."""

from __future__ import annotations

import random

import pytest

from bot.core.callbacks import Action
from testing.chats import FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, action_of, opened, stored


def timers(top: Tabletop, user: FakeUser) -> list[str]:
    """The "⏱" lines of the bot's messages in ``user``'s private chat."""
    texts = [m.text or "" for m in top.h.screen(user) if m.from_bot]
    return [line for text in texts for line in text.splitlines() if line.startswith("⏱")]


@pytest.mark.parametrize(
    ("game", "taps", "shown"),
    [
        ("durak", [], ["⏱ 60 s per move"]),
        ("football", [], ["⏱ 60 s per move"]),
        ("durak", ["t"] * 3, []),  # 60 s → 120 s → 300 s → unlimited: not shown
    ],
)
async def test_the_prompt_shows_the_turn_time(
    harness: Harness, game: str, taps: list[str], shown: list[str]
) -> None:
    h = harness
    players = [h.user("Ann"), h.user("Bob")]
    top = await opened(h, players[0], game)
    await top.join(players[1])
    if taps:
        await top.configure(players[0], taps)
        assert (await stored(h, top.group))["lobby"]["settings"]["turn_time"] == 0
    await top.start(players[0])
    rng = random.Random(2)
    prompts = 0
    for _ in range(30):
        if top.finished():  # a football deal can run out of balls early: play on
            await top.tap_group(players[0], Action.AGAIN)
        for user in players:
            prompt = top.prompt(user)
            if prompt is not None and any(action_of(b) is Action.MOVE for b in prompt.buttons):
                assert timers(top, user) == shown, prompt.text
                prompts += 1
            elif prompt is None:
                assert timers(top, user) == [], "only a player asked to act is timed"
        await top.step(players, rng)
    assert prompts >= 10
