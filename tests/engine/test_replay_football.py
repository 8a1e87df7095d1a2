"""`python -m engine replay` on football records, as a user runs it (docs/records.md §6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.games.football.game import Football
from engine.games.football.rules import FootballOptions
from testing.football_deals import deal
from testing.replays import malformed, ok

SETUP_A = {"player": 0, "setup": {"goalkeeper": "10S", "row": ["JS", "7S", "8S", "9S"]}}
SETUP_B = {"player": 1, "setup": {"goalkeeper": "KD", "row": ["QD", "7H", "8H", "9H"]}}


def record(moves: list[Any] | None = None, **changes: Any) -> dict[str, Any]:
    deck = deal("6D 7C 8C 9C", "10D QC KC AC", "10S JS 7S 8S 9S", "KD QD 7H 8H 9H", "JD", "6S 10C")
    g = Football.new(FootballOptions(), ["Ann", "Bob"], deck=deck)
    return {**g.header(), "moves": moves or [], **changes}


def test_a_record_without_moves_waits_for_the_setups() -> None:
    out = ok(record())
    assert out["ok"] is True and out["finished"] is False and out["result"] is None
    assert out["to_act"] == {"player": 0, "dummy": False}
    assert len(out["legal"]) == 120
    assert SETUP_A in out["legal"]
    assert out["summary"] == {
        "piles": [9, 9],
        "goals": [0, 0],
        "ball": None,
        "ball_at": None,
        "face_up": {},
    }


def test_either_seat_may_set_up_first() -> None:
    out = ok(record([SETUP_B]))
    assert out["ok"] and out["to_act"] == {"player": 0, "dummy": False}
    out = ok(record([SETUP_B, SETUP_A, {"player": 0, "enter": 0}, {"player": 0, "advance": 0}]))
    assert out["ok"]
    assert out["to_act"] == {"player": 0, "dummy": False}
    assert out["summary"]["ball"] == "JD" and out["summary"]["ball_at"] == [1, 0]
    assert out["summary"]["face_up"] == {"r0c0": "JS", "r1c0": "6D"}
    assert sorted(map(json.dumps, out["legal"])) == sorted(
        json.dumps({"player": 0, "advance": c}) for c in (0, 1)
    )


def test_an_illegal_move_is_reported_with_its_index_and_the_position_before_it() -> None:
    out = ok(record([SETUP_A, SETUP_B, {"player": 0, "enter": 1}, {"player": 0, "enter": 0}]))
    assert out["ok"] is False and out["move"] == 2
    assert "JD" in out["error"] and "7S" in out["error"]
    assert out["legal"] == [{"player": 0, "enter": 0}]
    assert out["summary"]["ball"] == "JD" and out["summary"]["ball_at"] is None


@pytest.mark.parametrize(
    "data",
    [
        # What the command refuses for every game is test_replay_durak.py's; what
        # football's records may not hold, test_football.py's. One of each through here:
        record(players=["Ann", "Bob", "Cid"]),
        record(options={"deck_size": 52}),  # a 36-card deck for 52 cards
        record([SETUP_A, {"player": 0, "kick": 2}]),
    ],
)
def test_malformed_records_exit_2_with_one_line(data: dict[str, Any]) -> None:
    malformed(json.dumps(data))
