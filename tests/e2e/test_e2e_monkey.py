"""Random taps on any button seen, commands and links: every tap answered, no card leaked,
the stored table valid (and, by the fixture, no error logged, no call refused)."""

from __future__ import annotations

import random

import pytest

from engine import registry
from testing.chats import FakeUser
from testing.harness import Harness
from testing.tabletop import LeakWatch, Tabletop, stored

COMMANDS = [
    "/newgame",
    "/endgame",
    "/help",
    "/rules",
    "/start",
    "/record",
    "/newgame@cardtable_test_bot",
]


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_taps_and_commands(harness: Harness, seed: int) -> None:
    h = harness
    rng = random.Random(seed)
    users = [h.user(n, language_code=rng.choice(["en", "ru", "uk", None])) for n in "ABCD"]
    users.append(h.user("Shy", started=False))
    group = h.group(creator=users[0], admins=[users[1]])
    top = Tabletop(h, group)
    watch = LeakWatch(top)
    await h.command(users[0], group, "/newgame")
    for _ in range(500):
        user = rng.choice(users)
        roll = rng.random()
        asked = [u for u in users if top.prompt(u) is not None]
        if roll < 0.8 and asked:  # mostly the game goes on
            await top.step(asked, rng)
        elif roll < 0.81:
            await h.command(user, group, rng.choice(COMMANDS))
        elif roll < 0.82:
            await h.private(user, rng.choice(["/start", "/help", "hello"]))
        else:
            await tap_something(h, user, group, rng)
        await watch.check()
        data = await stored(h, group)
        if data.get("state"):
            registry.spec(data["kind"]).game.from_json(data["state"])  # still a valid engine state
    assert all(a.answered for a in h.server.queries.values())


async def tap_something(h: Harness, user: FakeUser, group: object, rng: random.Random) -> None:
    """A button he can see: in the group, or in his own private chat; links followed."""
    messages = [m for m in h.screen(group) if m.buttons]  # type: ignore[arg-type]
    messages += [m for m in h.screen(user) if m.buttons]
    if not messages:
        return
    message = rng.choice(messages)
    button = rng.choice(message.buttons)
    if button.url:
        if "start=" in button.url:
            await h.follow(user, button.url)
        return
    await h.tap(user, message, lambda b: b == button)
