"""`python -m engine replay` on durak records, as a user runs it (docs/records.md §6)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine import cards
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.records import export
from testing.durak_positions import NAMES, deck_for
from testing.replays import malformed, ok, run

# Dealer 0: the ring is 0 → dummy → 1 → 2. Seat 1 holds the lowest trump (6S) and leads.
HANDS = {
    1: "6S 7H 7C QC KC AC",
    2: "8H 8C 9D AS KS QH",
    0: "7D JD QD KD AD 10H",
}
DUMMY = "7S 10C JC 9C 6H 6D"


def record(moves: list[Any] | None = None, **changes: Any) -> dict[str, Any]:
    deck = cards.to_strs(deck_for(3, 0, HANDS, DUMMY, trump="10S"))
    base = {
        "game": "durak",
        "options": {},
        "players": NAMES[:3],
        "deck": deck,
        "dealer": 0,
        "moves": moves or [],
    }
    return {**base, **changes}


OPENING = [
    {"player": 1, "attack": "7H"},
    {"player": 2, "beat": "7H", "with": "8H"},
    {"player": 1, "throw": "7C"},
    {"player": 2, "beat": "7C", "with": "8C"},
    # Seat 1 holds no 7 or 8 any more: passed without a move; seat 0 has the right.
    {"player": 0, "throw": "7D"},
    {"player": 2, "beat": "7D", "with": "9D"},
]


def test_a_record_without_moves_waits_for_the_lowest_trump() -> None:
    out = ok(record())
    assert out["ok"] is True and out["finished"] is False and out["result"] is None
    assert out["to_act"] == {"player": 1, "dummy": False}
    expected = [{"player": 1, "attack": c} for c in HANDS[1].split()]
    assert sorted(map(json.dumps, out["legal"])) == sorted(map(json.dumps, expected))
    assert out["summary"] == {
        "trump": "10S",
        "stock": 12,
        "hands": [6, 6, 6],
        "dummy": 6,
        "discard": 0,
        "table": [],
        "attacker": 1,
        "defender": 2,
        "controller": 1,
        "out": [],
    }


def test_the_controller_throws_in_for_the_dummy() -> None:
    out = ok(record(OPENING))
    # Seats 1 and 0 hold no 7, 8 or 9: the dummy's turn comes, played by seat 1.
    assert out["ok"] is True and out["to_act"] == {"player": 1, "dummy": True}
    legal = sorted(map(json.dumps, out["legal"]))
    assert legal == sorted(
        json.dumps(m)
        for m in [
            {"player": 1, "throw": "7S", "dummy": True},
            {"player": 1, "throw": "9C", "dummy": True},
            {"player": 1, "pass": True, "dummy": True},
        ]
    )
    out = ok(record([*OPENING, {"player": 1, "throw": "9C", "dummy": True}]))
    assert out["summary"]["table"][-1] == ["9C", None]
    assert out["summary"]["dummy"] == 5
    assert out["to_act"] == {"player": 2, "dummy": False}


@pytest.mark.parametrize(
    ("bad_move", "words"),
    [
        ({"player": 2, "pass": True}, "turn"),
        ({"player": 1, "throw": "AC"}, "rank"),
        ({"player": 1, "throw": "2C"}, "deck"),
        ({"player": 9, "pass": True}, "seat"),
        ({"player": 1, "pass": True, "dummy": True}, "turn"),
        ({"player": 1, "attack": "7C"}, "under way"),
    ],
)
def test_an_illegal_move_stops_the_replay_and_describes_the_state_before(
    bad_move: dict[str, Any], words: str
) -> None:
    moves = [*OPENING[:2], bad_move, *OPENING[2:]]
    out = ok(record(moves))
    assert out["ok"] is False and out["move"] == 2
    assert words in out["error"]
    before = ok(record(OPENING[:2]))
    assert {k: out[k] for k in before if k != "ok"} == {
        k: v for k, v in before.items() if k != "ok"
    }


def test_a_whole_game_replays_to_its_fool_from_a_file(tmp_path: Path) -> None:
    # The command reads a file the same for every game (a real process here); that every
    # game's record replays to its end is the contract's (test_game_contract.py).
    game = Durak.new(DurakOptions(dummy_plays=True), NAMES[:4], dealer=2, seed=11)
    start = Durak.from_json(game.to_json())
    rng = random.Random(11)
    moves = []
    while not game.is_finished():
        move = rng.choice(game.legal_moves())
        moves.append(game.move_to_record(move))
        game.apply(move)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(export(start, moves)))
    done = run("", file=path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["ok"] is True and out["finished"] is True
    assert out["to_act"] is None and out["legal"] == []
    assert out["result"] == game.result()
    assert out["summary"]["attacker"] is None and out["summary"]["defender"] is None
    assert out["summary"] == game.summary()


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        json.dumps(record(game="chess")),
        json.dumps(record(moves={"player": 1})),
        # One header and one move the game refuses; test_durak.py lists what else it refuses.
        json.dumps(record(players=NAMES[:5])),
        json.dumps(record([{"player": 1, "attack": "7X"}])),
        # Well-formedness is about the whole record: it is checked before anything is played.
        json.dumps(record([{"player": 2, "pass": True}, {"player": 1, "x": 1}])),
    ],
)
def test_malformed_records_exit_2_with_one_line(text: str) -> None:
    malformed(text)


def test_a_missing_dealer_is_named() -> None:
    data = record()
    del data["dealer"]
    assert "dealer" in malformed(json.dumps(data))
