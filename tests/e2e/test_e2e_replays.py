"""Doubled taps: the same update delivered twice, and a second tap on a button that was
rendered for a position that no longer exists. Each must leave exactly one move.

Football is where it bites: the player who advanced the ball usually advances it again, so
"advance to column c" tapped twice is often legal twice, and a legality check alone lets
the second tap through as a move the player never chose.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

from bot.core.callbacks import decode
from engine.games.football.game import Football
from testing.chats import FakeMessage, FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, playing, stored


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


async def advances(h: Harness) -> AsyncIterator[tuple[Tabletop, FakeUser, FakeMessage]]:
    """Six football games, each played on until someone is asked to advance the ball:
    its table, him and his prompt."""
    for seed in range(6):
        players = [h.user("Ann"), h.user("Bob")]
        top = await playing(h, "football", players)
        yield top, *await until_advance(top, players, seed)


async def test_a_redelivered_update_is_applied_once(harness: Harness) -> None:
    """Telegram sends an update again when a webhook did not acknowledge it in time:
    same update_id, same callback query. It is dropped: no second move, and no second
    answer (the harness fails a test whose bot answered a query twice)."""
    h = harness
    async for top, user, prompt in advances(h):
        before = await stored(h, top.group)
        await h.tap(user, prompt, 0)
        once = await stored(h, top.group)
        assert len(once["played"]["moves"]) == len(before["played"]["moves"]) + 1
        await h.deliver(h.delivered[-1])
        again = await stored(h, top.group)
        assert again["played"]["moves"] == once["played"]["moves"], (
            "the same update made a second move"
        )


async def test_a_second_tap_on_a_superseded_button_makes_no_move(harness: Harness) -> None:
    """A double tap: both callback queries carry the button as it was rendered; the
    second reaches the bot after the first moved the ball."""
    h = harness
    async for top, user, prompt in advances(h):
        data = prompt.buttons[0].callback_data
        assert data is not None
        before = await stored(h, top.group)
        first = await h.tap_data(user, user.id, prompt.message_id, data)
        assert first.answered and first.text is None
        once = await stored(h, top.group)
        second = await h.tap_data(user, user.id, prompt.message_id, data)
        after = await stored(h, top.group)
        assert len(after["played"]["moves"]) == len(before["played"]["moves"]) + 1, (
            f"a double tap on {decode(data).arg} moved the ball twice"
        )
        assert after == once, "the second tap changed the table"
        assert second.answered and second.show_alert and second.text
