"""Whole football games through the real Application, as for durak (test_e2e_durak.py)."""

from __future__ import annotations

import json

import pytest

from bot.core.callbacks import Action
from engine import records
from engine.games.football.game import Football
from testing.chats import FakeUser
from testing.harness import Harness
from testing.tabletop import LeakWatch, is_action, playing, stored


def two(h: Harness, langs: tuple[str, str] = ("en", "uk")) -> list[FakeUser]:
    return [h.user("Ann", language_code=langs[0]), h.user("Bob", language_code=langs[1])]


# One game on a deck of 36, one on two of 52 (more seeds played the same game again).
@pytest.mark.parametrize(("seed", "options"), [(1, ()), (2, ("d", "n"))])
async def test_a_whole_game_from_newgame_to_result(
    harness: Harness, seed: int, options: tuple[str, ...]
) -> None:
    h = harness
    players = two(h, ("en", "ru") if seed % 2 else ("uk", "en"))
    top = await playing(h, "football", players, options, h.group(creator=players[0]))
    # Both players set up at once, privately.
    assert all(top.prompt(u) is not None for u in players)
    moves = await top.play_watched(players, seed)
    data = await stored(h, top.group)
    game = Football.from_json(data["state"])
    assert data["phase"] == "finished" and game.is_finished()
    if options:  # two decks of 52 cards
        assert game.header()["options"] == {"decks": 2, "deck_size": 52}
    result = game.result()
    assert result is not None
    # 2 set-ups of 5 taps (4 picks, the last card goes in by itself, + confirm) + play.
    assert moves == 10 + len(data["played"]["moves"]) - 2
    text = top.table_message().text or ""
    goals = result["goals"]
    assert f"{goals[0]}" in text and f"{goals[1]}" in text
    if result["winner"] is not None:
        assert data["seats"][result["winner"]]["name"] in text
    for user in players:
        assert top.prompt(user) is None


async def test_set_up_as_chosen_record_and_rematch_where_the_other_player_starts(
    harness: Harness,
) -> None:
    h = harness
    players = two(h)
    top = await playing(h, "football", players)
    group = top.group
    watch = LeakWatch(top)
    data = await stored(h, top.group)
    by_seat = {s["user_id"]: i for i, s in enumerate(data["seats"])}
    for user in players:
        seat = by_seat[user.id]
        hand = Football.from_json(data["state"]).view(seat).hand
        assert len([b for b in top.prompt(user).buttons if is_action(Action.SETUP)(b)]) == 5  # type: ignore[union-attr]
        # A wrong start and a reset first (4, r): nothing is kept of it; confirmed (c).
        for arg in "4r0123c":
            await h.tap(user, top.prompt(user), is_action(Action.SETUP, arg))  # type: ignore[arg-type]
        if user is players[0]:  # set up: she waits for Bob now
            assert top.prompt(user) is None and "⏳" in (top.table_message().text or "")
        view = Football.from_json((await stored(h, top.group))["state"]).view(seat)
        assert view.keepers[seat] == hand[0]
        home = 0 if seat == 0 else 3
        row = view.field[home]
        # From the player's own left: A's left is column 0, B's is column 3.
        expected = hand[1:] if seat == 0 else list(reversed(hand[1:]))
        assert row == expected
    data = await stored(h, top.group)
    assert sorted(m["player"] for m in data["played"]["moves"] if "setup" in m) == [0, 1]
    await watch.check()
    await top.play_watched(players, 8, watch)
    first = await stored(h, group)
    assert first["phase"] == "finished" and first["series"]["games"] == 1
    await top.tap_group(players[0], Action.RECORD)
    name, content = h.last_document(group)
    assert name.startswith("belarusian-football-")  # the game's name in English
    record = json.loads(content)
    replayed = records.replay(record)
    game = Football.from_json(first["state"])
    assert replayed["ok"] and replayed["finished"]
    assert replayed["result"] == game.result()
    assert replayed["summary"] == game.summary()
    goals = replayed["result"]["goals"]
    assert f"{goals[0]}:{goals[1]}" in (top.table_message().text or "")  # as the group saw it
    await top.tap_group(players[1], Action.AGAIN)
    second = await stored(h, group)
    assert second["phase"] == "playing" and second["game_id"] != first["game_id"]
    assert [s["user_id"] for s in second["seats"]] == [
        s["user_id"] for s in reversed(first["seats"])
    ]
    assert second["series"] == first["series"]  # the score and the count carried over
    await top.play_watched(players, 9, watch)
    third = await stored(h, group)
    assert third["series"]["games"] == 2 and third["phase"] == "finished"
