"""Games with computer seats: a quickly paced bot, waiting on its clock for the computer,
playing the people's part while the computer plays the rest."""

from __future__ import annotations

import inspect
import random
from collections.abc import Awaitable, Callable

from bot.core.callbacks import Action
from testing.chats import FakeGroup, FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, action_of, clock_of, playable, stored

DELAY = 0.02  # seconds between computer moves in these tests (Settings.play.computer_delay)
PAUSE = 0.25  # seconds a person waits after a refused tap before he taps again


async def until(
    h: Harness, check: Callable[[], bool | Awaitable[bool]], timeout: float = 10.0, what: str = "it"
) -> None:
    """Lets time pass for the bot (testing/clock.py), a step of the computer's pace
    at a time, until ``check`` holds (awaited if need be); ``timeout``: the bot's seconds."""
    clock = clock_of(h)
    deadline = clock() + timeout
    while not ((await held) if inspect.isawaitable(held := check()) else held):
        assert clock() < deadline, f"{what} did not happen within {timeout} s"
        await clock.advance(DELAY)


async def lobby_with_computers(
    h: Harness,
    owner: FakeUser,
    chat: FakeGroup | FakeUser,
    game: str,
    computers: int,
    start: bool = False,
) -> Tabletop:
    """/newgame in ``chat``, the game picked, ``computers`` computer seats added, the game
    started by ``owner`` if ``start``."""
    top = Tabletop(h, chat)  # type: ignore[arg-type]  # a private chat is a table too
    await top.open(owner, game)
    for _ in range(computers):
        answer = await top.tap_group(owner, Action.COMPUTER, "+")
        assert answer.text is None, answer.text
    if start:
        await top.start(owner)
    return top


def finished(h: Harness, top: Tabletop) -> bool:
    return any(
        action_of(b) is Action.AGAIN for m in h.screen(top.group) for b in m.buttons if m.from_bot
    )


async def play_people(
    h: Harness, top: Tabletop, people: list[FakeUser], rng: random.Random, *, timeout: float = 600.0
) -> int:
    """Plays the people's part (random legal buttons) until the game ends while the
    computer plays its seats (the bot's clock moves on while nobody is asked); the number
    of people's taps. ``timeout``: seconds of the bot's time."""
    taps = 0
    clock = clock_of(h)
    deadline = clock() + timeout
    while True:
        data = await stored(h, top.group)
        if data["phase"] != "playing":
            return taps
        assert clock() < deadline, "the game did not end"
        asked = [(u, m) for u in people if (m := top.prompt(u)) is not None]
        if not asked:
            await clock.advance(DELAY)
            continue
        user, message = rng.choice(asked)
        button = rng.choice(playable(message))
        answer = await h.tap(user, message, button.__eq__)
        taps += 1
        if answer.text is not None:
            # Refused (a stale button, not his turn): he waits for the bot to catch up,
            # as a person would, instead of tapping again at once while no time passes
            # (rate limited, the bot may edit his hand a second later: at the computer's
            # pace he tapped 40 stale buttons before it came).
            await clock.advance(PAUSE)
