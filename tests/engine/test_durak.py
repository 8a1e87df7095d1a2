"""Durak with a dummy: scenario tests, one rule of seeds/durak.md each."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from engine import cards
from engine.base import CorruptState, MalformedRecord
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakActor as Actor
from engine.games.durak.rules import DurakMove, DurakOptions
from testing.contract import c, cs, refused
from testing.durak_positions import NAMES, dummy_hand, hand, new_game, play, position

# ---------------------------------------------------------------- options and seating


def test_options_defaults_and_strictness() -> None:
    assert DurakOptions().model_dump() == {
        "deck_size": 36,
        "dummy_plays": False,
        "first_move": "under",
        "dummy": True,
        "transfer": False,
        "throw_in": "all",
        "five_before_discard": False,
    }
    for bad in ({"deck_size": 40}, {"dummy_plays": "yes"}, {"first_move": "left"}, {"x": 1}):
        with pytest.raises(ValidationError):
            DurakOptions.model_validate(bad)


@pytest.mark.parametrize(
    "bad",
    [
        {"dealer": 3},
        {"dealer": -1},
        {"previous_fool": 3},
        {"deck": cards.deck(52)},
        {"deck": cards.deck(36)[:-1] + cards.deck(36)[:1]},
    ],
)
def test_new_refuses_a_setup_that_cannot_start(bad: dict[str, object]) -> None:
    args: dict[str, object] = {"dealer": 0, **bad}
    with pytest.raises(ValueError):
        Durak.new(DurakOptions(), NAMES[:3], **args)  # type: ignore[arg-type]


def test_same_seed_same_deal() -> None:
    one = Durak.new(DurakOptions(), NAMES[:3], dealer=2, seed="table-7")
    two = Durak.new(DurakOptions(), NAMES[:3], dealer=2, seed="table-7")
    assert one.to_json() == two.to_json()
    assert Durak.new(DurakOptions(), NAMES[:3], dealer=2, seed=8).header() != one.header()


# ---------------------------------------------------------------- deal and seats


def _one_leads(hands: list[str], dummy_cards: str, stock: str | None = None) -> Durak:
    """Dealer 0, so the ring is 0 → dummy → 1 → 2 → 0: seat 1 (controller) leads against 2."""
    return position(hands, dummy_cards, attacker=1, defender=2, stock=stock)


def test_deal_in_blocks_from_dealers_neighbour_then_dummy_then_trump_under_stock() -> None:
    deck = cards.deck(36)  # unshuffled: the blocks are easy to see
    game = Durak.new(DurakOptions(), NAMES[:3], dealer=1, deck=deck)
    assert hand(game, 2) == set(cards.to_strs(deck[0:6]))
    assert hand(game, 0) == set(cards.to_strs(deck[6:12]))
    assert hand(game, 1) == set(cards.to_strs(deck[12:18]))
    assert dummy_hand(game) == set(cards.to_strs(deck[18:24]))
    assert game.summary()["trump"] == cards.to_str(deck[24])
    assert game.summary()["stock"] == 36 - 24
    assert game.header()["deck"] == cards.to_strs(deck)


def test_trump_card_is_drawn_last_and_draw_order_starts_with_the_lead_attacker() -> None:
    game = _one_leads(
        ["AC AD KD 6C 6D", "7H 9D 10C JD QC 6H", "8H 9C 10D JC QD KC"],
        "KH AH KS AS 10S",
        "10H JH QH",
    )
    discard = game.view(None).discard
    events = play(game, "a7H", "b7H8H")  # nobody holds a 7 or an 8: everyone passed
    assert events == [
        ("attack", {"seat": 1, "card": "7H"}),
        ("beat", {"seat": 2, "card": "7H", "with": "8H"}),
        ("discarded", {"count": 2}),
        ("drew", {"seat": 1, "count": 1}),
        ("drew", {"seat": 2, "count": 1}),
        ("drew", {"seat": 0, "count": 1}),
        ("drew", {"seat": "dummy", "count": 1}),
        ("bout", {"attacker": 2, "defender": 0}),
    ]
    assert "10H" in hand(game, 1) and "JH" in hand(game, 2) and "QH" in hand(game, 0)
    assert "6S" in dummy_hand(game)
    public = game.view(None)
    assert public.dummy_known == ["6S"]  # everyone saw the face-up card go to the dummy
    assert public.stock == 0 and public.discard == discard + 2


def test_draw_stops_when_the_stock_runs_out() -> None:
    game = _one_leads(
        ["AC AD KD 6C 6D", "7H 9D 10C JD QC", "8H 9C 10D JC QD KC"], "KH AH KS AS 10S", "10H"
    )
    events = play(game, "a7H", "b7H8H")
    drew = [data for kind, data in events if kind == "drew"]
    assert drew == [{"seat": 1, "count": 2}]  # 10H and the face-up 6S; nothing left for 2
    assert hand(game, 1) >= {"10H", "6S"}


# ---------------------------------------------------------------- who leads, who controls


def test_lowest_trump_leads_and_becomes_controller() -> None:
    game = new_game(
        3,
        0,
        {2: "7S AH AD AC KH KD", 1: "9S QH QD QC JH JD", 0: "6H 6D 6C 7H 7D 7C"},
        dummy_cards="8H 8D 8C 9H 9D 9C",
        trump="QS",
    )
    assert game.to_act() == Actor(2)
    assert game.view(None).controller == 2
    assert game.view(2).dummy_hand is not None and game.view(1).dummy_hand is None


def test_dummy_lowest_trump_makes_the_dealer_lead_from_his_own_hand() -> None:
    game = new_game(
        3,
        1,
        {1: "AH AD AC AS KH KD", 2: "7S QH QD QC JH JD", 0: "8S KC KS QS JC JS"},
        dummy_cards="6S 6H 6D 6C 7H 7D",
        trump="10S",
    )
    assert game.to_act() == Actor(1)  # the dealer
    assert game.view(None).controller == 1
    assert game.view(None).defender == 2  # the dummy, right after the dealer, never defends
    assert {m.cards[0] for m in game.legal_moves()} == set(cs("AH AD AC AS KH KD"))
    assert all(not m.dummy for m in game.legal_moves())


@pytest.mark.parametrize(
    ("sixes", "dummy_cards", "leader"),
    [
        # Seat 2 comes before the dealer going round from seat 1.
        ({2: "6D 8D 9D 10D JD QD", 0: "6C 8C 9C 10C JC QC"}, "KH KD KC AH AD AC", 2),
        ({}, "6H KD KC AH AD AC", 0),  # the dummy's low card counts as the dealer's
    ],
)
def test_no_trump_in_any_hand_lowest_rank_leads_ties_first_clockwise(
    sixes: dict[int, str], dummy_cards: str, leader: int
) -> None:
    hands = {1: "7H 8H 9H 10H JH QH", 2: "7D 8D 9D 10D JD QD", 0: "7C 8C 9C 10C JC QC"} | sixes
    game = new_game(3, 0, hands, dummy_cards=dummy_cards, trump="AS", stock="6S 7S 8S")
    assert game.to_act() == Actor(leader)


@pytest.mark.parametrize(
    ("first_move", "previous_fool", "leader"),
    [("under", 2, 1), ("from_under", 2, 3), ("under", 0, 3), ("from_under", 3, 0)],
)
def test_later_games_lead_under_or_from_under_the_fool(
    first_move: str, previous_fool: int, leader: int
) -> None:
    options = DurakOptions(first_move=first_move)  # type: ignore[arg-type]
    game = Durak.new(options, NAMES[:4], dealer=previous_fool, previous_fool=previous_fool, seed=5)
    assert game.to_act() == Actor(leader)
    assert game.view(None).controller == leader


# ---------------------------------------------------------------- the bout


def _three_handed() -> Durak:
    return _one_leads(["7D JD QH", "7H 7C QC", "8H 8C 9D AS KS"], "7S 10C", "10H JH")


def test_throw_in_priority_lead_attacker_then_clockwise_dummy_at_its_seat() -> None:
    game = _three_handed()
    play(game, "a7H")
    assert game.to_act() == Actor(2)
    play(game, "b7H8H")
    assert game.to_act() == Actor(1)  # the lead attacker has the first right
    assert {game.move_token(m) for m in game.legal_moves()} == {"w7C", "p"}
    play(game, "p")
    assert game.to_act() == Actor(0)
    play(game, "w7D")
    assert game.to_act() == Actor(2)  # the defender answers every throw-in at once
    play(game, "b7D9D")
    assert game.to_act() == Actor(1)  # the round restarts at the lead attacker
    play(game, "p")
    # Seat 0 holds no 7, 8 or 9 now: passed without a button; the dummy's turn comes.
    assert game.to_act() == Actor(1, dummy=True)
    assert {game.move_token(m) for m in game.legal_moves()} == {"dw7S", "dp"}
    discard = game.view(None).discard
    play(game, "dw7S", "b7SKS", "p")
    view = game.view(None)
    assert view.table == [] and view.discard == discard + 6  # all passed: bout over
    assert game.to_act() == Actor(2)  # the successful defender attacks next


def test_dummy_is_skipped_for_throw_ins_while_its_controller_defends() -> None:
    # Ring 0 → dummy → 1 → 2; seat 2 leads against seat 0, who controls the dummy.
    game = position(
        ["8H 9C 10D", "QC JC", "7H 7C QH"],
        dummy_cards="7S 7D",
        attacker=2,
        defender=0,
        controller=0,
        stock="10H JH",
    )
    play(game, "a7H", "b7H8H")
    assert game.to_act() == Actor(2)
    play(game, "p")  # the dummy holds two sevens but is not asked; seat 1 holds none
    assert game.view(None).table == [] and game.to_act() == Actor(0)


def test_take_round_runs_once_more_and_the_defender_takes_everything() -> None:
    game = _one_leads(["7D 8D QH", "7H 7C QC", "8H 8C 9D AS KS"], "7S 10C", "10H JH")
    play(game, "a7H", "b7H8H", "w7C")
    events = play(game, "t")
    assert events == [("take_declared", {"seat": 2})]
    # The lead attacker, first in the round, holds QC only: passed; seat 0 may add 7D.
    assert game.to_act() == Actor(0)
    play(game, "w7D")
    assert game.to_act() == Actor(0)  # in the take round one may add several cards
    play(game, "w8D")
    assert game.to_act() == Actor(1, dummy=True)  # seat 0 holds QH only now
    events = play(game, "dw7S")  # the fifth attack card: the limit (seat 2 held five)
    assert ("took", {"seat": 2, "count": 6}) in events
    taken = {"7H", "8H", "7C", "7D", "8D", "7S"}
    assert hand(game, 2) >= taken
    public = game.view(None)
    assert set(public.known[2]) == taken
    assert public.attacker == 0  # after a take, the next player after the defender


def test_limit_is_the_defenders_hand_at_bout_start_and_counts_every_attack_card() -> None:
    game = position(["7H 7C 7D 7S 8S", "9H 10D JC"])
    assert game.view(None).limit == 3
    play(game, "a7H", "t", "w7C")
    assert game.to_act() == Actor(0)
    events = play(game, "w7D")  # the third attack card: the limit; the take happens
    assert ("took", {"seat": 1, "count": 3}) in events
    assert hand(game, 0) == {"7S", "8S"}


def test_limit_of_six_in_the_first_bout() -> None:
    game = position(["7H 7C 7D 9C 9D 10H 10D", "9H 10C JD QH KH AH AC"], stock="10S JS")
    assert game.view(None).limit == 6
    play(game, "a7H", "b7H9H", "w7C", "b7C10C", "w7D", "t", "w9C", "w9D")
    assert {game.move_token(m) for m in game.legal_moves()} == {"w10H", "w10D", "p"}
    events = play(game, "w10H")
    assert ("took", {"seat": 1, "count": 8}) in events
    assert "10D" in hand(game, 0)


# ---------------------------------------------------------------- going out and the end


def test_out_after_the_draw_when_the_stock_ran_out_before_him() -> None:
    # The stock holds only the face-up trump card.
    game = _one_leads(["7D", "7H 9C 9D JC QC KC", "8H 8D 10D JD QD KD"], "AC AD", "")
    play(game, "a7H", "b7H8H")
    events = play(game, "w7D")  # seat 0's last card, the stock not yet empty: not out yet
    assert not any(kind == "out" for kind, _ in events)
    events = play(game, "b7D8D")
    assert [k for k, _ in events] == ["beat", "discarded", "drew", "out", "bout"]
    assert game.view(None).out == [0]


# Seat 0 goes out as he leads his last card: the dummy passes to seat 1.
GONE = [("out", {"seat": 0}), ("control", {"seat": 1})]


@pytest.mark.parametrize(
    ("hands", "dummy_cards", "lead", "fool", "out"),
    [
        (["7H 9C", "8H"], "AC", [], 0, [1]),  # the one player still holding cards
        (["7H", "8H"], "AC", GONE, 1, [0, 1]),  # the dummy left last: who emptied his hand last
        (["7H", "8H"], "", GONE, None, [0, 1]),  # nothing anywhere: a drawn game
        # None: a game without the dummy (§2.6.6)
        (["7H", "8H 10C"], None, GONE[:1], 1, [0]),
        (["7H", "8H"], None, GONE[:1], None, [0, 1]),
    ],
)
def test_the_fool_is_who_is_left_holding_cards_and_nobody_in_a_draw(
    hands: list[str], dummy_cards: str | None, lead: list[object], fool: int | None, out: list[int]
) -> None:
    game = position(hands, dummy_cards or "", dummy=dummy_cards is not None)
    assert play(game, "a7H")[1:] == lead
    assert play(game, "b7H8H")[-1] == ("finished", {"fool": fool})
    assert game.result() == {"fool": fool} and game.to_act() is None and game.legal_moves() == []
    refused(game, DurakMove(0, False, "attack", (cards.parse("9C"),)), "game_over")
    assert Durak.from_json(game.to_json()).result() == game.result()
    assert game.view(None).out == out
    summary = game.summary()
    assert summary["attacker"] is None and summary["defender"] is None


def test_out_mid_bout_passes_control_at_once_but_the_end_waits_for_the_bout_end() -> None:
    # Seat 1, the controller, goes out at once; seat 0 and seat 2 still finish the bout.
    game = _one_leads(["7C 9D", "7H", "8H 8C KD"], "7D")
    events = play(game, "a7H")
    assert events == [
        ("attack", {"seat": 1, "card": "7H"}),
        ("out", {"seat": 1}),
        ("control", {"seat": 2}),
    ]
    assert game.view(2).dummy_hand == ["7D"] and game.view(1).dummy_hand is None
    assert not game.is_finished() and game.to_act() == Actor(2)
    play(game, "b7H8H")
    assert game.to_act() == Actor(0)  # seat 0 may still throw in his 7C
    play(game, "w7C", "b7C8C")
    # Seat 0 has no 7 or 8 left, the dummy's 7D is not thrown (its new controller is the
    # defender): the bout is over and seat 2 attacks next.
    assert game.view(None).table == [] and game.to_act() == Actor(2)
    assert game.view(None).out == [1]


def test_next_attacker_skips_a_defender_who_went_out() -> None:
    # Ring 0 → dummy → 1 → 2 → 0. Seat 2 beats with his last card, the stock empty.
    game = _one_leads(["9C 9D", "7H JC", "8H"], "AC")
    events = play(game, "a7H", "b7H8H")
    assert ("out", {"seat": 2}) in events
    assert events[-1] == ("bout", {"attacker": 0, "defender": 1})  # the dummy skipped too


# ---------------------------------------------------------------- dummy_plays


def test_dummy_plays_dealer_leads_against_the_dummy_and_controls_both_sides() -> None:
    game = new_game(
        3,
        0,
        {1: "AH AD AC AS KH KD", 2: "9S QH QD QC JH JD", 0: "8S 7H 7C 9H 9C 9D"},
        dummy_cards="6S 6H 10H JC 8H 8C",
        trump="10S",
        dummy_plays=True,
    )
    assert game.to_act() == Actor(0)
    assert game.view(None).defender == "dummy"
    play(game, "a7H")
    assert game.to_act() == Actor(0, dummy=True)
    assert {game.move_token(m) for m in game.legal_moves()} == {"db7H8H", "db7H10H", "db7H6S", "dt"}
    play(game, "db7H8H")
    assert game.to_act() == Actor(0)  # the controller may throw in against his own dummy
    play(game, "w7C", "db7C8C", "p")  # seats 1 and 2 hold no 7 or 8
    assert game.view(None).attacker == "dummy"  # the dummy defended: it attacks next
    assert game.to_act() == Actor(0, dummy=True)


def test_dummy_plays_the_dummy_leads_even_against_its_controller() -> None:
    # Ring 0 → dummy → 1 → 2; the dummy leads, seat 1 (its controller) defends.
    game = position(
        ["7C QD", "8H 9C KS", "JC QC"],
        dummy_cards="7H 7S 7D",
        attacker=3,
        controller=1,
        stock="10H JH",
        dummy_plays=True,
    )
    assert game.to_act() == Actor(1, dummy=True)
    play(game, "da7H", "b7H8H")
    # The dummy (lead attacker) is skipped while its controller defends; seat 2 holds no
    # 7 or 8; seat 0 holds 7C.
    assert game.to_act() == Actor(0)


# ---------------------------------------------------------------- illegal moves


def test_illegal_moves_are_refused_with_a_reason_and_leave_the_state_alone() -> None:
    game = _three_handed()
    refused(game, DurakMove(2, False, "attack", (c("8H"),)), "not_your_turn")
    refused(game, DurakMove(1, True, "attack", (c("7S"),)), "not_your_turn")
    refused(game, DurakMove(7, False, "attack", (c("7H"),)), "no_such_seat")
    refused(game, DurakMove(-1, False, "pass"), "no_such_seat")
    refused(game, DurakMove(1, False, "attack", (c("AH"),)), "not_in_hand")
    refused(game, DurakMove(1, False, "attack", (c("2H"),)), "not_in_game")
    refused(game, DurakMove(1, False, "throw", (c("7H"),)), "cannot_throw_now")
    refused(game, DurakMove(1, False, "pass"), "cannot_pass_now")
    refused(game, DurakMove(1, False, "take"), "cannot_take_now")
    refused(game, DurakMove(1, False, "beat", (c("7H"), c("7C"))), "cannot_beat_now")
    refused(game, DurakMove(1, False, "jump"), "unknown_move")
    play(game, "a7H")
    refused(game, DurakMove(2, False, "beat", (c("7H"), c("9D"))), "cannot_beat")
    refused(game, DurakMove(2, False, "beat", (c("7C"), c("8C"))), "not_on_table")
    refused(game, DurakMove(2, False, "beat", (c("7H"), c("AH"))), "not_in_hand")
    refused(game, DurakMove(2, False, "attack", (c("8H"),)), "cannot_attack_now")
    refused(game, DurakMove(2, False, "pass"), "cannot_pass_now")
    play(game, "b7H8H")
    refused(game, DurakMove(1, False, "throw", (c("QC"),)), "rank_not_on_table")
    refused(game, DurakMove(1, False, "take"), "cannot_take_now")
    refused(game, DurakMove(0, False, "throw", (c("7D"),)), "not_your_turn")
    err = refused(game, DurakMove(1, True, "pass"), "not_your_turn")
    assert "own turn" in err.message


# ---------------------------------------------------------------- records and tokens


def test_move_records_round_trip_and_dummy_false_is_never_written() -> None:
    game = _three_handed()
    records = [
        {"player": 1, "attack": "7H"},
        {"player": 2, "beat": "7H", "with": "8H"},
        {"player": 2, "take": True},
        {"player": 0, "throw": "7D"},
        {"player": 1, "pass": True},
        {"player": 1, "throw": "7S", "dummy": True},
        {"player": 1, "pass": True, "dummy": True},
    ]
    for record in records:
        assert game.move_to_record(game.move_from_record(record)) == record
    assert game.move_from_record({"player": 0, "pass": True, "dummy": False}) == DurakMove(
        0, False, "pass"
    )
    assert all("dummy" not in game.move_to_record(m) for m in game.legal_moves())


@pytest.mark.parametrize(
    "bad",
    [
        {"player": 0},
        {"player": "0", "pass": True},
        {"player": True, "pass": True},
        {"player": 0, "pass": False},
        {"player": 0, "take": 1},
        {"player": 0, "attack": "7X"},
        {"player": 0, "attack": ["7H"]},
        {"player": 0, "beat": "7H"},
        {"player": 0, "beat": "7H", "with": "8H", "extra": 1},
        {"player": 0, "attack": "7H", "throw": "8H"},
        {"player": 0, "pass": True, "dummy": "yes"},
        {"player": 0, "setup": {}},
    ],
)
def test_malformed_move_records(bad: object) -> None:
    with pytest.raises(MalformedRecord):
        _three_handed().move_from_record(bad)


@pytest.mark.parametrize(
    "bad", ["x", "a", "a7", "a1H", "a11H", "b7H", "tt", "pd", "D", "a7h", "a７H", "w10S ", 7]
)
def test_tokens_are_decoded_strictly(bad: object) -> None:
    with pytest.raises(MalformedRecord):
        _three_handed().move_from_token(bad, 0)  # type: ignore[arg-type]


def _record(**changes: object) -> dict[str, object]:
    game = Durak.new(DurakOptions(), NAMES[:3], dealer=1, seed=9)
    return {**game.header(), **changes}


def test_header_is_the_record_without_moves() -> None:
    game = Durak.new(DurakOptions(dummy_plays=True), NAMES[:3], dealer=1, previous_fool=1, seed=9)
    header = game.header()
    assert header["game"] == "durak" and header["players"] == NAMES[:3]
    assert header["options"] == {"deck_size": 36, "dummy_plays": True, "first_move": "under"}
    assert header["dealer"] == 1 and header["previous_fool"] == 1
    again = Durak.from_record(json.loads(json.dumps(header)))
    assert again.to_json() == game.to_json()


@pytest.mark.parametrize(
    "changes",
    [
        {"options": {"deck_size": 40}},
        {"options": {"decks": 2}},
        {"options": []},
        {"players": ["a"]},
        {"players": ["a", "b", "c", "d", "e"]},
        {"players": "abc"},
        {"deck": ["7H"] * 36},
        {"deck": "7H"},
        {"deck": ["1H", *cards.to_strs(cards.deck(36))[1:]]},  # bad card notation
        {"dealer": 3},
        {"dealer": "0"},
        {"dealer": True},
        {"dealer": None},
        {"previous_fool": 5},
        {"previous_fool": -1},
        {"previous_fool": "x"},
    ],
)
def test_malformed_headers(changes: dict[str, object]) -> None:
    with pytest.raises(MalformedRecord):
        Durak.from_record(_record(**changes))


def test_a_header_may_give_part_of_the_options() -> None:
    record = _record(options={"dummy_plays": True})
    del record["previous_fool"]
    game = Durak.from_record(record)
    assert game.options == DurakOptions(dummy_plays=True)


# ---------------------------------------------------------------- summary, view, state


def test_views_and_summary_show_own_hand_dummy_only_to_controller_and_counts() -> None:
    game = _three_handed()
    mine = game.view(1)
    assert mine.hand == ["7C", "QC", "7H"]  # by suit, low to high
    assert mine.dummy_hand == ["10C", "7S"]  # trumps (spades) last
    other = game.view(0)
    assert other.dummy_hand is None and set(other.hand) == {"7D", "JD", "QH"}
    public = game.view(None)
    assert public.hand == [] and public.dummy_hand is None
    assert public.hand_counts == [3, 3, 5] and public.dummy_count == 2
    assert public.to_act is not None and public.to_act.player == 1
    with pytest.raises(ValueError):
        game.view(5)  # a seat that does not exist
    play(game, "a7H")
    assert game.summary() == {  # the shape of records.md
        "trump": "6S",
        "stock": 3,
        "hands": [3, 2, 5],
        "dummy": 2,
        "discard": 36 - (3 + 2 + 5) - 2 - 1 - 3,
        "table": [["7H", None]],
        "attacker": 1,
        "defender": 2,
        "controller": 1,
        "out": [],
    }


def _state(**changes: object) -> str:
    game = _three_handed()
    play(game, "a7H")
    return json.dumps({**json.loads(game.to_json()), **changes})


@pytest.mark.parametrize(
    "changes",
    [
        {"v": 2},
        {"hands": [[1, 2]]},
        {"drawn": 99},
        {"discard": []},
        {"table": [[31, 30]]},
        {"phase": "lead"},
        {"phase": "throw"},
        {"attacker": 1, "defender": 1},
        {"controller": 3},
        {"controller": None},  # the dummy's game always has its controller
        {"extra": 1},
        {"limit": 0},
        {"known": [[], [], [], [cards.parse("AS")]]},
        {"deck": list(range(36))},
    ],
)
def test_corrupt_states_are_refused_whole(changes: dict[str, object]) -> None:
    with pytest.raises(CorruptState):
        Durak.from_json(_state(**changes))


def test_garbage_is_a_corrupt_state() -> None:
    for text in ("", "{", "[]", "null", '{"v": 1}'):
        with pytest.raises(CorruptState):
            Durak.from_json(text)


def test_six_player_state_json_is_small() -> None:
    game = Durak.new(DurakOptions(deck_size=52), ["Player Name"] * 6, dealer=0, seed=1)
    assert len(game.to_json().encode()) < 2048


def test_a_defence_against_two_unbeaten_cards_is_not_a_state_of_the_game() -> None:
    # Throw-ins are answered one at a time: only the latest attack card can be unbeaten.
    state = json.loads(_state())
    seven = cards.parse("7C")
    state["hands"][1].remove(seven)
    state["table"].append([seven])
    with pytest.raises(CorruptState, match="phase defend"):
        Durak.from_json(json.dumps(state))
    state["phase"] = "take"
    state["pos"] = 1
    assert Durak.from_json(json.dumps(state)).to_act() == Actor(0)  # the take round
