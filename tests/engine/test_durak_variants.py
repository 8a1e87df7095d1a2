"""Durak's variants (seeds/durak.md §9–§15): the options and what each changes, position
by position: no dummy, the whole deck dealt, transfers, throw-in by neighbours, five
before the first discard."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pydantic import ValidationError

from engine import cards
from engine.base import CorruptState
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions, SeatingError
from engine.games.durak.spec import SPEC
from testing.contract import check_views, refused
from testing.durak_positions import NAMES, PEREVODNOY, hand, move, new_game, play, position
from testing.replays import malformed, ok

NO_DUMMY: dict[str, Any] = {"dummy": False}

# ---------------------------------------------------------------- options and seating

REFUSED = [
    {"transfer": True},
    {"throw_in": "neighbours"},
    {"dummy": False, "dummy_plays": True},
    {"dummy": True, "transfer": True, "throw_in": "neighbours"},
]


@pytest.mark.parametrize("bad", REFUSED)
def test_a_combination_against_what_an_option_needs_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="needs dummy"):
        DurakOptions.model_validate(bad)


# The most players each deck seats, and the larger deck a refusal of one more names.
SEATS = [
    (24, True, 2, " (the 36-card deck takes up to 4)"),
    (36, True, 4, " (the 52-card deck takes up to 6)"),
    (52, True, 6, ""),
    (24, False, 4, " (the 36-card deck takes up to 6)"),
    (36, False, 6, ""),
    (52, False, 6, ""),
]


@pytest.mark.parametrize(("deck_size", "dummy", "most", "hint"), SEATS)
def test_the_seats_depend_on_the_deck_and_the_dummy(
    deck_size: int, dummy: bool, most: int, hint: str
) -> None:
    options = DurakOptions.model_validate({"deck_size": deck_size, "dummy": dummy})
    assert SPEC.players(options) == (2, most)
    for players in (2, most):  # six cards to each hand and to the dummy, the rest the stock
        summary = Durak.new(options, NAMES[:players], dealer=0, seed=1).summary()
        assert summary["hands"] == [6] * players and summary["dummy"] == 6 * dummy
        assert summary["stock"] == deck_size - 6 * (players + dummy)
    game = f"a {deck_size}-card game" + ("" if dummy else " without the dummy")
    for players, told in ((most + 1, hint), (1, "")):
        with pytest.raises(SeatingError) as err:
            Durak.new(options, ["p"] * players, dealer=0, seed=1)
        assert str(err.value) == f"{game} takes 2 to {most} players, not {players}{told}"


def _record(options: dict[str, Any], players: int) -> dict[str, Any]:
    size = options.get("deck_size", 36)
    deck = cards.to_strs(cards.shuffled(size, 1, 4))
    record = {"game": "durak", "options": options, "players": NAMES[:players], "deck": deck}
    return {**record, "dealer": 0, "moves": []}


@pytest.mark.parametrize(
    ("options", "players"),
    [
        *((bad, 2) for bad in REFUSED),
        ({"deck_size": 24}, 3),  # with the dummy 24 cards seat two
        ({"deck_size": 24, "dummy": False}, 5),
        ({"deck_size": 36, "dummy": True}, 5),
        ({"dummy": False, "throw_in": "left"}, 2),
        ({"dummy": False, "transfer": "yes"}, 2),
        ({"deck_size": 24.0, "dummy": False}, 2),  # a Literal takes 24.0 == 24; a record not
        ({"deck_size": 36.0}, 2),
    ],
)
def test_a_record_with_options_that_are_no_game_is_malformed(
    options: dict[str, Any], players: int
) -> None:
    malformed(json.dumps(_record(options, players)))


def test_six_players_without_the_dummy_replay() -> None:
    out = ok(_record({"dummy": False}, 6))
    assert out["summary"]["hands"] == [6] * 6 and out["summary"]["stock"] == 0


# ---------------------------------------------------------------- no dummy, whole deck


@pytest.mark.parametrize("transfer", [False, True])
@pytest.mark.parametrize(("deck_size", "players"), [(24, 4), (36, 6)])
def test_the_whole_deck_is_dealt_and_the_dealers_sixth_card_is_trump(
    deck_size: int, players: int, transfer: bool
) -> None:
    """Every view shows the dealer's face-up card as his until he plays it, and (the
    contract's view check, at every position of the game) nothing else he keeps hidden."""
    options = DurakOptions.model_validate(
        {"deck_size": deck_size, "dummy": False, "transfer": transfer}
    )
    for dealer in (0, 1):
        deck = cards.shuffled(deck_size, 1, 11 + dealer)
        game = Durak.new(options, NAMES[:players], dealer, deck=deck)
        trump = cards.to_str(deck[-1])  # the dealer is dealt last: his sixth card
        summary = game.summary()
        assert summary["trump"] == trump and summary["stock"] == 0
        assert summary["hands"] == [6] * players and summary["dummy"] == 0
        assert summary["controller"] is None
        assert trump in hand(game, dealer)
        for seat in [None, *range(players)]:
            view = game.view(seat)
            assert view.whole_deck and view.stock == 0 and not view.dummy
            assert view.known[dealer] == [trump] and view.trump_held_by == dealer
            assert view.dummy_hand is None and view.controller is None
        rng, played = random.Random(2), False
        while not game.is_finished():
            check_views(game)
            view = game.view(None)
            if not played and trump in {c for pair in view.table for c in pair if c}:
                # Once the dealer plays it, nobody is told he holds it any more.
                assert trump not in view.known[dealer] and view.trump_held_by is None
                played = True
            game.apply(rng.choice(game.legal_moves()))
        check_views(game)
        assert played


def test_a_game_without_the_dummy_has_no_dummy_anywhere() -> None:
    options = DurakOptions.model_validate({"dummy": False, "deck_size": 52})
    for seed in range(5):
        game = Durak.new(options, NAMES[:3], dealer=seed % 3, seed=seed)
        rng = random.Random(seed)
        kinds = set()
        while not game.is_finished():
            actor = game.to_act()
            assert actor is not None and not actor.dummy
            assert all(not m.dummy for m in game.legal_moves())
            summary = game.summary()
            assert summary["dummy"] == 0 and summary["controller"] is None
            assert "dummy" not in (summary["attacker"], summary["defender"])
            kinds |= {e.kind for e in game.apply(rng.choice(game.legal_moves()))}
        assert "control" not in kinds


def test_the_lowest_trump_leads_without_the_dummy() -> None:
    # Dealer 0: seat 1 is dealt first. Seat 2 holds the lowest trump (7S; 6S is turned up).
    game = new_game(
        3,
        0,
        {1: "8S 9H 10H JH QH KH", 2: "7S 9C 10C JC QC KC", 0: "9S 9D 10D JD QD KD"},
        trump="6S",
        **NO_DUMMY,
    )
    assert game.to_act() == (2, False)
    assert game.view(None).defender == 0  # the next player clockwise: no dummy between


# ---------------------------------------------------------------- transfers


def test_the_defender_transfers_and_becomes_the_lead_attacker() -> None:
    game = position(
        ["7H 9C 10D JD QD KD", "7S 8D 9D 10H JH QH", "10C JC QC KC AC 9H"],
        stock="8C 8H 9S",
        **PEREVODNOY,
    )
    play(game, "a7H")
    assert game.move_token(game.move_from_record({"player": 1, "transfer": "7S"})) == "r7S"
    events = play(game, "r7S")
    assert events == [("transfer", {"seat": 1, "card": "7S", "defender": 2})]
    view = game.view(None)
    assert (view.attacker, view.defender) == (1, 2) and view.to_act is not None
    assert view.to_act.player == 2 and view.table == [("7H", None), ("7S", None)]
    assert view.throw_order == [1, 0]  # the transferrer throws in first
    events = play(game, "t")
    # He also draws first (then clockwise: seat 2 holds eight and draws none, then seat 0).
    drew = [data["seat"] for kind, data in events if kind == "drew"]
    assert drew == [1, 0]
    assert game.view(None).attacker == 0  # after a take: the next one after seat 2


def test_whom_a_transfer_would_reach_is_public_and_a_hand_too_small_is_never_reached() -> None:
    """The group's status names the transfer from this: public, so the same whether or
    not the defender holds a card of the rank."""
    cards = ["7H 9C", "8D KD QS", "8H 7C AS KC"]
    for defender in ("8D KD QS", "7S KD QS"):
        game = position([cards[0], defender, cards[2]], trump="6D", **PEREVODNOY)
        assert game.view(None).transfer_to is None  # the lead: nothing to transfer yet
        play(game, "a7H")
        assert game.view(None).transfer_to == 2 and game.view(0).transfer_to == 2
    play(game, "r7S")  # seat 0 holds one card: too few to face three
    assert game.view(None).phase == "defend" and game.view(None).transfer_to is None
    assert all(m.kind != "transfer" for m in game.legal_moves())
    err = refused(game, move(game, "r7C"), "transfer_too_few")
    assert err.params["seat"] == 0 and "Ann holds 1 cards, too few to face 3" in err.message
    again = position(cards, trump="6D", **PEREVODNOY)
    play(again, "a7H", "b7H8D")
    assert again.view(None).transfer_to is None  # beaten: no transfer any more
    podkidnoy = position(cards, trump="6D", **NO_DUMMY)
    play(podkidnoy, "a7H")
    assert podkidnoy.view(None).transfer_to is None


def test_a_transfer_is_refused_after_a_beat_and_with_another_rank() -> None:
    game = position(["7H 9C", "7S 8D KD", "8H 7C AS KC"], trump="6D", **PEREVODNOY)
    play(game, "a7H")
    refused(game, move(game, "r8D"), "transfer_rank")
    play(game, "r7S")
    play(game, "b7H8H")  # one card beaten, one still to beat: the defender acts again
    assert game.to_act() == (2, False) and game.view(None).phase == "defend"
    assert all(m.kind != "transfer" for m in game.legal_moves())
    refused(game, move(game, "r7C"), "transfer_after_beat")
    play(game, "b7SAS")
    assert game.view(None).phase != "defend"


def test_two_players_transfer_back_and_forth_and_the_cards_are_beaten_in_any_order() -> None:
    game = position(["7H 7C 9D JD", "7D 10C 8H QD"], trump="AS", **PEREVODNOY)
    play(game, "a7H", "r7D")  # back to seat 0: with two players the lead attacker defends
    view = game.view(None)
    assert (view.attacker, view.defender, view.limit) == (1, 0, 3)
    play(game, "r7C")  # and back again: seat 1 holds three cards, three on the table
    view = game.view(None)
    assert (view.attacker, view.defender, view.limit) == (0, 1, 3)
    beats = {game.move_token(m) for m in game.legal_moves() if m.kind == "beat"}
    assert beats == {"b7H8H", "b7C10C", "b7DQD"}  # every unbeaten card, in any order
    events = play(game, "b7C10C", "b7DQD", "b7H8H")
    assert ("out", {"seat": 1}) in events and ("discarded", {"count": 6}) in events
    assert game.is_finished() and game.result() == {"fool": 0}


def test_a_transfer_with_the_last_card_when_the_stock_is_empty_goes_out_at_once() -> None:
    game = position(["7H 9C", "7S", "8H 10S JC"], trump="6D", **PEREVODNOY)
    events = play(game, "a7H", "r7S")
    assert ("out", {"seat": 1}) in events and game.summary()["out"] == [1]
    events = play(game, "b7H8H", "b7S10S")  # seat 1 throws in first, with nothing: passed
    assert ("discarded", {"count": 4}) in events and game.view(None).attacker == 2


def test_a_record_with_a_transfer_replays() -> None:
    hands = {0: "8S 7H 9C 10D JD QD", 1: "7D 9D 10H JH QH KH"}
    game = new_game(2, 1, hands, trump="6S", **PEREVODNOY)
    lead = [{"player": 0, "attack": "7H"}]
    out = ok({**game.header(), "moves": lead})
    assert {"player": 1, "transfer": "7D"} in out["legal"]
    out = ok({**game.header(), "moves": [*lead, {"player": 1, "transfer": "7D"}]})
    assert out["ok"] and out["to_act"] == {"player": 0, "dummy": False}
    summary = out["summary"]
    assert (summary["attacker"], summary["defender"]) == (1, 0)
    assert summary["table"] == [["7H", None], ["7D", None]] and summary["controller"] is None
    out = ok({**game.header(), "moves": [*lead, {"player": 1, "transfer": "9D"}]})
    assert not out["ok"] and out["move"] == 1 and "rank" in out["error"]


# ---------------------------------------------------------------- neighbours


def test_with_four_players_only_the_neighbours_throw_in() -> None:
    hands = {
        0: "7S 8H 10D JD QD KD",
        1: "9H KH AH KC AC QC",
        2: "JC 10C 10H JH QH AD",
        3: "8C 8D 9C 9D JS QS",
    }
    everyone = new_game(4, 3, hands, trump="6S", **NO_DUMMY)
    neighbours = new_game(4, 3, hands, trump="6S", throw_in="neighbours", **NO_DUMMY)
    for game in (everyone, neighbours):
        play(game, "a8H")
    assert neighbours.view(None).throw_order == [0, 2]
    assert everyone.view(None).throw_order == [0, 2, 3]
    play(everyone, "b8H9H")
    assert everyone.to_act() == (3, False)  # seat 3 holds 8s and 9s
    events = play(neighbours, "b8H9H")
    assert ("discarded", {"count": 2}) in events  # seat 3 is no neighbour of seat 1
    assert neighbours.view(None).attacker == 1


def test_with_six_players_on_the_whole_deck_only_the_neighbours_throw_in() -> None:
    hands = {
        0: "6H 7C 8D 10D JD QD",
        1: "9C KC AC KD AD QC",
        2: "6C 8C 10C JC 6D 8S",
        3: "7S 9S 7D 9D 6S 10S",
        4: "7H 9H JS QS KS AS",
        5: "8H 10H JH QH KH AH",
    }
    game = new_game(6, 5, hands, trump="", throw_in="neighbours", **NO_DUMMY)
    assert game.summary()["trump"] == "AH" and game.summary()["stock"] == 0
    assert game.to_act() == (0, False)  # the lowest trump, 6H
    play(game, "a7C")
    assert game.view(None).throw_order == [0, 2]
    events = play(game, "b7C9C")
    assert ("discarded", {"count": 2}) in events  # seats 3 and 4 held 7s and 9s
    assert game.view(None).attacker == 1


def test_a_neighbour_who_goes_out_is_passed_not_replaced() -> None:
    # Seat 0 leads against seat 1; seat 2 is the other neighbour, seat 3 is not.
    game = position(
        ["7H 9C KS", "9H 10C JD QD", "9D", "9S 7S"], order=[0, 2], throw_in="neighbours", **NO_DUMMY
    )
    play(game, "a7H", "b7H9H", "w9C", "b9C10C")
    events = play(game, "w9D")  # seat 2 throws in his last card: he is out
    assert ("out", {"seat": 2}) in events
    text = game.to_json()
    assert json.loads(text)["order"] == [0, 2]
    again = Durak.from_json(text)
    assert again.view(None).throw_order == [0, 2]  # stored: seat 3 does not come in
    events = play(again, "b9DJD")
    assert ("discarded", {"count": 6}) in events  # seat 3's 9S and 7S stay in his hand


# ---------------------------------------------------------------- five before the discard


def _five(**options: Any) -> Durak:
    # Dealer 1: seat 0 is dealt first and holds the lowest trump (6C).
    hands = {0: "6C 6D 6S 8S 9H 10H", 1: "9C 8D 10S JS QD KD"}
    return new_game(2, 1, hands, trump="KC", **options)


FIVE = ["a6C", "b6C9C", "w6D", "b6D8D", "w6S", "b6S10S", "w8S", "b8SJS", "w9H"]


@pytest.mark.parametrize("extra", [{}, NO_DUMMY])
def test_five_cards_at_most_before_the_first_discard(extra: dict[str, Any]) -> None:
    game = _five(five_before_discard=True, **extra)
    assert game.view(None).limit == 5
    play(game, FIVE[0])
    state = json.loads(game.to_json())
    assert state["limit"] == 5 and not state["discard"]
    with pytest.raises(CorruptState):  # a stored bout over five before the first discard
        Durak.from_json(json.dumps({**state, "limit": 6}))
    play(game, *FIVE[1:])
    events = play(game, "t")  # seat 0 still holds 10H, but five cards are the most
    assert ("took", {"seat": 1, "count": 9}) in events
    plain = _five(**extra)
    play(plain, *FIVE, "t")
    assert plain.to_act() == (0, False)  # without the option the sixth card may follow
