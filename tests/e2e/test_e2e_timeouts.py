"""Turn timeouts (seeds/<game>.md §7.2): a player who does not act within the turn time has his move
made for him by the computer player; the lobby offers the option (60 s by default).

The lobby's shortest choice is 30 s; to keep the test short the stored table is given a
1-second turn time before the deal (the settings model takes any number of seconds).
"""

from __future__ import annotations

import random

import pytest

from bot.core.callbacks import Action
from testing.chats import FakeUser
from testing.clock import Clock
from testing.harness import Harness
from testing.tabletop import Tabletop, action_of, opened, stored


async def test_a_player_who_does_not_act_has_his_move_made_for_him(
    harness: Harness, clock: Clock
) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    top = Tabletop(h, h.group())
    await top.setup_game("durak", [ann, bob], turn_time=1)
    asked = top.asked([ann, bob])
    await clock.advance(3.5)
    data = await stored(h, top.group)
    assert data["played"]["moves"], "nobody acted and the game still waits for him"
    assert data["played"]["moves"][0]["player"] == [s["user_id"] for s in data["seats"]].index(
        asked.id
    )


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
