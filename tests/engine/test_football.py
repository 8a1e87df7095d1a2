"""Belarusian football, rule by rule (seeds/football.md), on deals chosen for each rule."""

from __future__ import annotations

import json

import pytest

from engine.base import CorruptState, MalformedRecord
from engine.games.football.game import Football
from engine.games.football.rules import FootballOptions, Move, Turn
from testing.contract import c, cs, refused
from testing.football_deals import advance, enter, game, kinds, setup

# One deal serves most scenarios.  Field after both set-ups (absolute rows):
#   B keeper KD
#   r3  QD 7H 8H 9H     B's row
#   r2  10D QC KC AC
#   r1  6D 7C 8C 9C
#   r0  JS 7S 8S 9S     A's row
#   A keeper 10S
# B's balls (6S 10C KS AS 6C) match nothing in his row, so B never gets to play here.
ROW1, ROW2 = "6D 7C 8C 9C", "10D QC KC AC"
HAND_A, HAND_B = "10S JS 7S 8S 9S", "KD QD 7H 8H 9H"
PILE_B = "6S 10C KS AS 6C"


def started(pile_a: str, hand_b: str = HAND_B, keeper_b: str = "KD") -> Football:
    g = game(ROW1, ROW2, HAND_A, hand_b, pile_a, PILE_B)
    g.apply(setup(0, "10S", "JS 7S 8S 9S"))
    row_b = " ".join(t for t in hand_b.split() if t != keeper_b)
    g.apply(setup(1, keeper_b, row_b))
    return g


def play(g: Football, *moves: Move) -> list[str]:
    """Apply ``moves``; the kinds of all their events."""
    out: list[str] = []
    for move in moves:
        out += kinds(g.apply(move))
    return out


# ------------------------------------------------------------------ deal and set-up


def test_deal_in_deck_order_then_setups_in_either_order_by_absolute_column() -> None:
    g = game(ROW1, ROW2, HAND_A, HAND_B, "JD", PILE_B)
    view = g.view(None)
    assert view.phase == "setup"
    assert view.piles == [9, 9]
    assert g.hand(0) == cs(HAND_A) and g.hand(1) == cs(HAND_B)
    assert g.view(0).hand == HAND_A.split()
    assert g.places()["field"] == cs(ROW1 + " " + ROW2)
    assert g.places()["pile0"][0] == c("JD") and g.places()["pile1"][:5] == cs(PILE_B)
    assert g.to_act() == Turn(0)
    events = g.apply(setup(1, "KD", "QD 7H 8H 9H"))
    assert kinds(events) == ["setup_done"]
    assert g.to_act() == Turn(0)  # the lowest seat not set up
    assert g.view(None).setup_done == [False, True]
    events = g.apply(setup(0, "10S", "JS 7S 8S 9S"))
    assert kinds(events) == ["setup_done", "started", "drew"]
    assert events[2].data == {"seat": 0, "card": "JD", "pile": 8}
    assert g.to_act() == Turn(0)
    assert g.view(None).phase == "play"
    # Keeper and row placed by absolute column.
    view = g.view(0)
    assert view.field[0] == ["JS", "7S", "8S", "9S"]
    assert view.keepers == ["10S", None]
    assert g.view(1).field[3] == ["QD", "7H", "8H", "9H"]
    assert g.view(1).keepers == [None, "KD"]
    assert all((g.view(s).ball, g.view(s).turn) == ("JD", 0) for s in (0, 1, None))
    with pytest.raises(ValueError):
        g.view(2)  # a seat that does not exist


# ------------------------------------------------------------------ a turn


def test_ball_with_no_entry_is_discarded_and_the_turn_passes() -> None:
    g = game(ROW1, ROW2, HAND_A, HAND_B, "6H JD", PILE_B)
    g.apply(setup(0, "10S", "JS 7S 8S 9S"))
    events = g.apply(setup(1, "KD", "QD 7H 8H 9H"))
    # 6H matches none of JS 7S 8S 9S; B's 6S matches none of QD 7H 8H 9H. The events
    # come with the move that led to them.
    assert [(e.kind, e.data) for e in events[2:]] == [
        ("drew", {"seat": 0, "card": "6H", "pile": 8}),
        ("ball_out", {"seat": 0, "card": "6H", "reason": "no_entry"}),
        ("drew", {"seat": 1, "card": "6S", "pile": 8}),
        ("ball_out", {"seat": 1, "card": "6S", "reason": "no_entry"}),
        ("drew", {"seat": 0, "card": "JD", "pile": 7}),
    ]
    assert g.to_act() == Turn(0)
    assert g.view(None).discarded == ["6H", "6S"]
    assert g.summary()["ball"] == "JD" and g.summary()["ball_at"] is None
    assert g.summary()["piles"] == [7, 8]


def test_entry_options_are_the_matching_cards_of_the_own_row() -> None:
    g = started("7D")  # 7D matches 7S by rank only
    assert list(g.legal_moves()) == [enter(0, 1)]
    g = started("QS")  # every spade matches
    assert list(g.legal_moves()) == [enter(0, c) for c in range(4)]


def test_a_goal_then_one_stepping_on_face_up_cards_past_a_keeper_already_face_up() -> None:
    g = started("JD 7D")
    assert list(g.legal_moves()) == [enter(0, 0)]
    events = g.apply(enter(0, 0))
    assert [(e.kind, e.data) for e in events] == [
        ("entered", {"seat": 0, "column": 0, "card": "JS", "with": "JD", "flipped": True}),
    ]
    assert g.view(1).field[0] == ["JS", None, None, None]  # face up for everyone now
    assert list(g.legal_moves()) == [advance(0, 0), advance(0, 1)]  # column 0: no c-1
    events = g.apply(advance(0, 0))
    assert [(e.kind, e.data) for e in events] == [
        ("flipped", {"seat": 0, "row": 1, "column": 0, "card": "6D", "with": "JD", "match": True})
    ]
    assert g.summary()["ball_at"] == [1, 0]
    assert play(g, advance(0, 0)) == ["flipped"]
    events = g.apply(advance(0, 0))  # onto B's QD: the shot follows by itself
    assert [(e.kind, e.data) for e in events[:3]] == [
        ("flipped", {"seat": 0, "row": 3, "column": 0, "card": "QD", "with": "JD", "match": True}),
        ("keeper", {"seat": 1, "card": "KD", "flipped": True}),
        ("goal", {"seat": 0, "card": "JD", "with": "KD", "goals": [1, 0]}),
    ]
    assert kinds(events[3:]) == ["drew", "ball_out", "drew"]  # B's 6S cannot enter
    view = g.view(None)
    assert view.goals == [["JD"], []]
    assert view.keepers == [None, "KD"]
    assert g.summary()["goals"] == [1, 0]
    # 7D enters on 7S (col 1); 6D, 10D, QD are face up and match by suit.
    assert list(g.legal_moves()) == [enter(0, 1)]
    g.apply(enter(0, 1))
    assert list(g.legal_moves()) == [advance(0, 0), advance(0, 1), advance(0, 2)]
    events = g.apply(advance(0, 0))
    assert [(e.kind, e.data) for e in events] == [
        ("stepped", {"seat": 0, "row": 1, "column": 0, "card": "6D", "with": "7D"})
    ]
    assert play(g, advance(0, 0)) == ["stepped"]
    events = g.apply(advance(0, 0))
    assert events[1] == ("keeper", {"seat": 1, "card": "KD", "flipped": False})
    assert events[2].kind == "goal" and events[2].data["goals"] == [2, 0]


def test_entry_onto_an_own_card_face_up_then_a_mismatch_face_down_then_a_dead_end() -> None:
    g = started("JD JC JH")
    play(g, enter(0, 0), advance(0, 0), advance(0, 0), advance(0, 0))  # the goal above
    assert list(g.legal_moves()) == [enter(0, 0)]
    events = g.apply(enter(0, 0))  # JC onto JS, face up since the goal
    assert events[0].data == {"seat": 0, "column": 0, "card": "JS", "with": "JC", "flipped": False}
    # 6D is face up and does not match JC: only the face-down 7C may be chosen.
    assert list(g.legal_moves()) == [advance(0, 1)]
    assert refused(g, advance(0, 0), "face_up_no_match").params["card"] == "6D"
    play(g, advance(0, 1), advance(0, 1))  # JC on 7C, then QC
    events = g.apply(advance(0, 1))  # 7H: no match
    assert events[0] == (
        "flipped",
        {"seat": 0, "row": 3, "column": 1, "card": "7H", "with": "JC", "match": False},
    )
    assert events[1] == ("ball_out", {"seat": 0, "card": "JC", "reason": "no_match"})
    assert g.view(None).field[3][1] == "7H"  # stays face up for everyone
    assert g.view(None).keepers[1] == "KD"  # turned up by the earlier goal only
    # JH enters on JS; 6D and 7C are face up and neither matches JH.
    events = g.apply(enter(0, 0))
    assert kinds(events)[:2] == ["entered", "ball_out"]
    assert events[1].data == {"seat": 0, "card": "JH", "reason": "dead_end"}
    assert g.view(None).discarded[-2:] == ["JH", "KS"]  # and B's next ball could not enter


def test_column_3_edge() -> None:
    g = started("9D")
    assert list(g.legal_moves()) == [enter(0, 3)]
    g.apply(enter(0, 3))
    assert list(g.legal_moves()) == [advance(0, 2), advance(0, 3)]
    refused(g, advance(0, 1), "not_reachable")


def test_a_shot_the_keeper_saves() -> None:
    g = started("JD", hand_b="AH QD 7H 8H 9H", keeper_b="AH")
    events = play(g, enter(0, 0), advance(0, 0), advance(0, 0), advance(0, 0))
    assert events[-6:-3] == ["flipped", "keeper", "saved"]
    assert g.view(None).goals == [[], []]
    assert g.view(None).discarded[0] == "JD"
    assert g.view(None).keepers[1] == "AH"


def test_b_attacks_downwards() -> None:
    # B's row 6H 7H 8H 9H; his ball 9D enters on 9H (col 3) and goes to row 2.
    g = game(ROW1, ROW2, HAND_A, "KH 6H 7H 8H 9H", "6C", "9D")
    g.apply(setup(0, "10S", "JS 7S 8S 9S"))
    g.apply(setup(1, "KH", "6H 7H 8H 9H"))
    assert g.to_act() == Turn(1)  # A's 6C could not enter (no C, no 6 in JS 7S 8S 9S)
    assert list(g.legal_moves()) == [enter(1, 3)]
    g.apply(enter(1, 3))
    assert g.summary()["ball_at"] == [3, 3]
    assert list(g.legal_moves()) == [advance(1, 2), advance(1, 3)]
    events = g.apply(advance(1, 2))
    assert events[0].data["row"] == 2 and events[0].data["card"] == "KC"


def test_a_drawn_game_where_no_ball_can_ever_enter_ends_with_all_cards_up() -> None:
    # 52 cards.  A's row holds the low spades, B's the low clubs; A draws only clubs and
    # diamonds of 6..A, B only spades and hearts of 6..A: no ball ever enters.
    high = ["6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    pile_a = [r + "C" for r in high] + [r + "D" for r in high[1:]]
    pile_b = [r + "S" for r in high] + [r + "H" for r in high[1:]]
    g = game(
        "2D 3D 4D 5D",
        "2H 3H 4H 5H",
        "6D 2S 3S 4S 5S",
        "6H 2C 3C 4C 5C",
        " ".join(pile_a),
        " ".join(pile_b),
        deck_size=52,
    )
    assert g.summary()["piles"] == [17, 17]
    g.apply(setup(0, "6D", "2S 3S 4S 5S"))
    events = g.apply(setup(1, "6H", "2C 3C 4C 5C"))
    assert kinds(events).count("ball_out") == 34
    assert events[-1] == ("finished", {"goals": [0, 0], "winner": None})
    assert g.is_finished() and g.to_act() is None and list(g.legal_moves()) == []
    assert g.result() == {"goals": [0, 0], "winner": None}
    refused(g, enter(0, 0), "game_over")
    summary = g.summary()
    assert summary["piles"] == [0, 0] and summary["ball"] is None
    assert len(summary["face_up"]) == 18
    assert summary["face_up"]["keeper0"] == "6D" and summary["face_up"]["r3c0"] == "2C"
    public = g.view(None)
    assert public.phase == "finished" and public.result is not None
    assert all(card is not None for row in public.field for card in row)


# ------------------------------------------------------------------ several decks


def test_two_decks_identical_cards_are_listed_once_and_checked_as_a_multiset() -> None:
    g = game(ROW1, ROW2, "6S 6S 7S 8S 9S", HAND_B, "6C", decks=2)
    moves = list(g.legal_moves())
    assert len(moves) == len(set(moves)) == 60
    g.apply(setup(0, "7S", "6S 8S 6S 9S"))
    g.apply(setup(1, "KD", "QD 7H 8H 9H"))
    # The ball 6C matches the two 6S by rank: two columns, two different choices.
    assert list(g.legal_moves()) == [enter(0, 0), enter(0, 2)]
    events = g.apply(enter(0, 2))
    assert events[0].data == {"seat": 0, "column": 2, "card": "6S", "with": "6C", "flipped": True}


def test_three_decks_triple_cards() -> None:
    g = game(ROW1, ROW2, "6S 6S 6S 7S 8S", HAND_B, decks=3)
    assert len(set(g.legal_moves())) == 20  # 5!/3!
    assert g.summary()["piles"] == [45, 45]
    refused(g, setup(0, "6S", "6S 7S 8S 8S"), "setup_cards_mismatch")
    # Three 52-card decks (one gives piles of 17: the drawn game above).
    three = Football.new(FootballOptions(deck_size=52, decks=3), ["Ann", "Bob"], seed=1)
    assert three.summary()["piles"] == [69, 69]


# ------------------------------------------------------------------ illegal moves


def test_illegal_moves_during_setup() -> None:
    g = game(ROW1, ROW2, HAND_A, HAND_B, "JD", PILE_B)
    refused(g, enter(0, 0), "not_in_setup")
    refused(g, Move(0, "jump", 0), "unknown_move")
    refused(g, setup(0, "10S", "JS 7S 8S 6H"), "setup_cards_mismatch")
    refused(g, setup(0, "2S", "JS 7S 8S 9S"), "setup_cards_mismatch")  # not in 36
    refused(g, Move(0, "setup", -1, (c("10S"),)), "setup_cards_mismatch")
    refused(g, setup(2, "10S", "JS 7S 8S 9S"), "no_such_seat")
    err = refused(g, setup(1, "10S", "JS 7S 8S 9S"), "setup_cards_mismatch")
    assert err.params["cards"] == HAND_B.split()
    g.apply(setup(0, "10S", "JS 7S 8S 9S"))
    refused(g, setup(0, "10S", "JS 7S 8S 9S"), "already_set_up")


def test_illegal_moves_during_play() -> None:
    g = started("JD")
    refused(g, enter(1, 0), "not_your_turn")
    refused(g, advance(0, 0), "must_enter")
    refused(g, enter(0, 4), "no_such_column")
    refused(g, enter(0, -1), "no_such_column")
    err = refused(g, enter(0, 1), "cannot_enter")
    assert err.params == {"column": 1, "card": "7S", "ball": "JD"}
    refused(g, setup(0, "10S", "JS 7S 8S 9S"), "setup_over")
    refused(g, Move(5, "enter", 0), "no_such_seat")
    refused(g, Move(0, "jump", 0), "unknown_move")
    # Well-formed records naming things that do not exist are illegal, not malformed.
    for data, code in [
        ({"player": 0, "enter": 9}, "no_such_column"),
        ({"player": 3, "enter": 0}, "no_such_seat"),
        (
            {"player": 0, "setup": {"goalkeeper": "2H", "row": ["JS", "7S", "8S", "9S"]}},
            "setup_over",
        ),
    ]:
        refused(g, g.move_from_record(data), code)
    g.apply(enter(0, 0))
    refused(g, enter(0, 0), "must_advance")
    refused(g, advance(0, 2), "not_reachable")


# ------------------------------------------------------------------ records and tokens


def test_header_is_the_record_without_moves() -> None:
    g = Football.new(FootballOptions(decks=2), ["Ann", "Bob"], seed="x")
    header = g.header()
    assert header["game"] == "football"
    assert header["options"] == {"decks": 2, "deck_size": 36}
    assert header["players"] == ["Ann", "Bob"]
    assert len(header["deck"]) == 72
    again = Football.from_record(json.loads(json.dumps(header)))
    assert again.to_json() == g.to_json()


@pytest.mark.parametrize(
    "change",
    [
        {"options": {"decks": 4}},
        {"options": {"decks": 0}},
        {"options": {"decks": "2"}},
        {"options": {"deck_size": 40}},
        {"options": {"deck_size": 36.0}},
        {"options": {"deck_size": "36"}},
        {"options": {"decks": True}},
        {"options": {"colour": "red"}},
        {"options": []},
        {"players": ["Ann"]},
        {"players": ["Ann", "Bob", "Cid"]},
        {"players": ["Ann", 7]},
        {"deck": None},
        {"deck_drop_one": True},
        {"deck_bad_card": "1S"},
        {"deck_52": True},
    ],
)
def test_malformed_headers(change: dict[str, object]) -> None:
    record = Football.new(FootballOptions(), ["Ann", "Bob"], seed=3).header()
    if change.pop("deck_drop_one", None):
        record["deck"] = record["deck"][1:]
    if (bad := change.pop("deck_bad_card", None)) is not None:
        record["deck"][5] = bad
    if change.pop("deck_52", None):
        record["deck"] = Football.new(FootballOptions(deck_size=52), ["A", "B"], 3).header()["deck"]
    record.update(change)
    with pytest.raises(MalformedRecord):
        Football.from_record(record)


def test_options_and_moves_may_be_missing_or_partial() -> None:
    record = Football.new(FootballOptions(deck_size=52), ["Ann", "Bob"], seed=3).header()
    record["options"] = {"deck_size": 52}
    assert Football.from_record(record).options == FootballOptions(deck_size=52)
    record = Football.new(FootballOptions(), ["Ann", "Bob"], seed=3).header()
    del record["options"]
    assert Football.from_record(record).options == FootballOptions()


@pytest.mark.parametrize(
    "data",
    [
        {"player": 0},
        {"enter": 1},
        {"player": "0", "enter": 1},
        {"player": True, "enter": 1},
        {"player": 0, "enter": "1"},
        {"player": 0, "enter": 1.0},
        {"player": 0, "enter": True},
        {"player": 0, "enter": 1, "advance": 1},
        {"player": 0, "enter": 1, "dummy": False},
        {"player": 0, "shoot": 1},
        {"player": 0, "setup": {"goalkeeper": "KH", "row": ["7H", "8S", "9D"]}},
        {"player": 0, "setup": {"goalkeeper": "KH", "row": ["7H", "8S", "9D", "1C"]}},
        {"player": 0, "setup": {"goalkeeper": "kh", "row": ["7H", "8S", "9D", "AC"]}},
        {"player": 0, "setup": {"row": ["7H", "8S", "9D", "AC"]}},
        {"player": 0, "setup": {"goalkeeper": "KH", "row": "7H 8S 9D AC"}},
        {"player": 0, "setup": ["KH", "7H", "8S", "9D", "AC"]},
    ],
)
def test_moves_of_unknown_shape_are_malformed(data: object) -> None:
    with pytest.raises(MalformedRecord):
        started("JD").move_from_record(data)


def test_tokens_are_short_and_strict() -> None:
    """That every legal move's token reads back is the contract's (test_game_contract.py)."""
    g = game(ROW1, ROW2, "10S 10C 10D 10H 9S", HAND_B, decks=3)
    assert g.move_token(setup(0, "KH", "7H 8S 9D AC")) == "sKH.7H.8S.9D.AC"
    assert g.move_token(enter(0, 2)) == "e2" and g.move_token(advance(1, 1)) == "a1"
    for bad in ["e", "e4", "e-1", "a12", "x1", "E1", "sKH.7H.8S.9D", "sKH.7H.8S.9D.1C"]:
        with pytest.raises(MalformedRecord):
            g.move_from_token(bad, 0)
    with pytest.raises(MalformedRecord):
        g.move_from_token("sKH.7H.8S.9D.AC" + ".AC" * 20, 0)


# ------------------------------------------------------------------ stored state


def test_state_json_round_trip_keeps_everything() -> None:
    g = started("JD JC")
    play(g, enter(0, 0), advance(0, 0))
    text = g.to_json()
    again = Football.from_json(text)
    assert again.to_json() == text
    assert again.view(0) == g.view(0) and again.summary() == g.summary()
    assert again.legal_moves() == g.legal_moves()
    assert kinds(again.apply(advance(0, 0))) == kinds(g.apply(advance(0, 0)))
    assert again.to_json() == g.to_json()


def corrupt(g: Football, **changes: object) -> str:
    state = json.loads(g.to_json())
    state.update(changes)
    return json.dumps(state)


@pytest.mark.parametrize(
    "changes",
    [
        {"up": "3"},
        {"up": -1},
        {"up": 1 << 18},
        {"turn": 2},
        {"phase": 3},
        {"at": 16},
        {"extra": 1},
        {"players": ["Ann"]},
        {"options": {"decks": 9, "deck_size": 36}},
        {"drawn": [5, 1]},
        {"drawn": [1, 1]},
        {"drawn": [10, 9]},
        {"goals": [[4 * 11 + 2], []]},  # a goal he never drew (JD is the ball)
        {"out": [4 * 11 + 2]},  # the ball counted twice
        {"at": 15},  # on B's row: the shot would have happened
        {"at": 5},  # a face-down card
        {"setup": [[], []]},
        {"phase": 0},
        {"phase": 2},
    ],
)
def test_corrupt_states_are_refused_whole(changes: dict[str, object]) -> None:
    g = started("JD")
    g.apply(enter(0, 0))
    with pytest.raises(CorruptState):
        Football.from_json(corrupt(g, **changes))


def test_card_conservation_and_a_goal_keeper_face_up_are_checked_in_stored_state() -> None:
    g = started("JD")
    state = json.loads(g.to_json())
    state["deck"][0], state["deck"][1] = state["deck"][1], state["deck"][1]
    with pytest.raises(CorruptState, match="deck"):
        Football.from_json(json.dumps(state))
    with pytest.raises(CorruptState):
        Football.from_json("not json")
    with pytest.raises(CorruptState):
        Football.from_json(b"[]")
    play(g, enter(0, 0), advance(0, 0), advance(0, 0), advance(0, 0))  # a goal
    state = json.loads(g.to_json())
    state["up"] &= ~(1 << 17)
    with pytest.raises(CorruptState, match="goalkeeper"):
        Football.from_json(json.dumps(state))
