"""Whole durak games through the real Application: seeded-random taps on the buttons shown,
no card shown to anyone who may not know it."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from bot.core.callbacks import Action
from engine import cards
from engine.games.durak.game import Durak
from testing.chats import FakeUser
from testing.clock import Clock
from testing.harness import Harness
from testing.settings import settings
from testing.tabletop import NAMES, LeakWatch, playing, stored


def seat_users(h: Harness, n: int, langs: tuple[str, ...] = ("en", "ru", "uk")) -> list[FakeUser]:
    return [h.user(NAMES[i], language_code=langs[i % len(langs)]) for i in range(n)]


# Two and four players, each on one of the shorter deals of seeds 1-12 (three play whole
# games below, and in the group in test_e2e_group_hands).
@pytest.mark.parametrize(("n", "seed"), [(2, 12), (4, 6)])
async def test_a_whole_game_from_newgame_to_result(
    harness: Harness, deals: Callable[[int], None], n: int, seed: int
) -> None:
    h = harness
    deals(seed)
    players = seat_users(h, n)
    top = await playing(h, "durak", players, group=h.group(creator=players[0]))
    data = await stored(h, top.group)
    assert data["phase"] == "playing"
    assert [s["user_id"] for s in data["seats"]] == [u.id for u in players]
    # Each player got his hand privately; the group shows one table message.
    for user in players:
        assert [m for m in h.screen(user) if m.from_bot], f"{user.first_name} got no hand"
    moves = await top.play_watched(players, seed)
    assert moves > 0
    data = await stored(h, top.group)
    game = Durak.from_json(data["state"])
    assert data["phase"] == "finished" and game.is_finished()
    fool = game.result()["fool"]  # type: ignore[index]
    text = top.table_message().text or ""
    if fool is not None:
        assert players[fool].first_name in text
    # Every private hand message has lost its move buttons.
    for user in players:
        assert top.prompt(user) is None
    # One group table message only (the lobby became the table), edited in place.
    tables = [m for m in h.screen(top.group) if m.from_bot]
    assert len(tables) == 1 and tables[0].edits >= moves


async def test_play_again_keeps_players_and_series_and_the_fool_deals(
    harness: Harness, deals: Callable[[int], None]
) -> None:
    h = harness
    deals(10)  # two of the shorter games (262 taps; 255-413 with seeds 1-12), a fool in the first
    players = seat_users(h, 3)
    top = await playing(h, "durak", players)
    watch = LeakWatch(top)
    await top.play_watched(players, 21, watch)
    first = await stored(h, top.group)
    fool = Durak.from_json(first["state"]).result()["fool"]  # type: ignore[index]
    old_message = top.table_message()
    refused = await top.tap_group(h.user("Eve"), Action.AGAIN)  # not hers to play again
    assert refused.show_alert and refused.text and await stored(h, top.group) == first
    await top.tap_group(players[1], Action.AGAIN)
    second = await stored(h, top.group)
    assert second["phase"] == "playing" and second["game_id"] != first["game_id"]
    assert [s["user_id"] for s in second["seats"]] == [u.id for u in players]
    assert second["series"]["score"] == first["series"]["score"]
    game = Durak.from_json(second["state"])
    assert fool is not None, "this seed's first game has a fool"
    assert game.header()["dealer"] == fool
    assert game.header()["previous_fool"] == fool
    # first_move "under" (the default): the fool's right-hand neighbour attacks him.
    assert game.summary()["attacker"] == (fool - 1) % len(players)
    assert game.summary()["defender"] == fool
    # The finished table keeps its text but loses its buttons; a new table message.
    assert old_message.buttons == [] and old_message.text
    assert top.table_message().message_id != old_message.message_id
    await top.play_watched(players, 22, watch)
    third = await stored(h, top.group)
    assert third["series"]["games"] == 2
    assert sum(third["series"]["score"].values()) == sum(
        1
        for d in (first, third)
        if Durak.from_json(d["state"]).result()["fool"] is not None  # type: ignore[index]
    )


async def test_the_private_hand_is_edited_in_place_and_rings_when_asked(
    harness: Harness, clock: Clock
) -> None:
    """A prompt while he is playing edits his hand; one after a quiet while rings (a new one)."""
    h = harness
    players = seat_users(h, 2)
    top = await playing(h, "durak", players)
    rng = random.Random(2)
    rang = edited = 0
    moved_at: dict[int, float] = {}  # when each player's buttons last went (he moved)
    ring_after = settings().messages.ring_after
    for step in range(16):
        before = {u.id: [m.message_id for m in h.screen(u) if m.from_bot] for u in players}
        asked_before = {u.id: top.prompt(u) is not None for u in players}
        if step % 3 == 0:  # the opponent thinks for a while
            await clock.advance(ring_after + 1)
        await top.step(players, rng)
        for user in players:
            now = [m.message_id for m in h.screen(user) if m.from_bot]
            assert len(now) == 1, "one live hand message per player"
            asked = top.prompt(user) is not None
            if asked_before[user.id] and not asked:
                moved_at[user.id] = clock()
            idle = clock() - moved_at.get(user.id, 0.0) >= ring_after
            if asked and not asked_before[user.id] and idle:
                assert now != before[user.id], "a prompt after a quiet while rings"
                rang += 1
            else:
                assert now == before[user.id], "otherwise the hand is edited in place"
                edited += asked and not asked_before[user.id]
        if top.finished():
            break
    assert rang and edited


async def test_the_leak_check_catches_a_card_shown_to_the_wrong_reader(harness: Harness) -> None:
    """The check above cannot pass vacuously: a hidden card posted anywhere is caught."""
    h = harness
    players = seat_users(h, 2)
    top = await playing(h, "durak", players)
    watch = LeakWatch(top)
    await watch.check()
    state = (await stored(h, top.group))["state"]
    secret = Durak.from_json(state).view(1).hand[0]
    shown = cards.display(cards.parse(secret), {"J": "В", "Q": "Д", "K": "К", "A": "Т"})
    await h.app.bot.send_message(players[0].id, f"psst: {shown}")
    with pytest.raises(AssertionError, match="seat 0 is shown"):
        await watch.check()
    await h.app.bot.send_message(top.group.id, f"look: {secret}")
    with pytest.raises(AssertionError, match="group shows"):
        await watch.check()
