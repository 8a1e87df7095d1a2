"""Invariants of football over random games (hypothesis): cards, secrecy, storage, records."""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import permutations
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import cards
from engine.base import IllegalMove
from engine.games.football.game import Football
from engine.games.football.rules import HOME, FootballOptions, Move
from engine.games.football.view import FootballView
from testing.contract import cards_named

games = st.builds(
    lambda seed, decks, size: Football.new(
        FootballOptions(decks=decks, deck_size=size), ["Ann", "Bob"], seed=seed
    ),
    st.integers(0, 2**32),
    st.integers(1, 3),
    st.sampled_from([36, 52]),
)


def truth(state: dict[str, Any]) -> tuple[list[list[int]], list[int]]:
    """The real field [row][col] (-1 before its set-up) and keepers, read from the stored
    state (the deck and the set-ups), not from any view."""
    deck = state["deck"]
    field = [[-1] * 4, deck[0:4], deck[4:8], [-1] * 4]
    keepers = [-1, -1]
    for seat, chosen in enumerate(state["setup"]):
        if chosen:
            keepers[seat] = chosen[0]
            field[HOME[seat]] = chosen[1:]
    return field, keepers


def check_view(g: Football, state: dict[str, Any], view: FootballView, seat: int | None) -> None:
    """The view shows a card exactly where ``seat`` may know it, and shows it truly
    (``state``: the game as stored, read once for all the checks of a position)."""
    field, keepers = truth(state)
    up = view.face_up
    for row in range(4):
        for col in range(4):
            real = field[row][col]
            may_know = up[row][col] or (seat is not None and HOME[seat] == row)
            shown = view.field[row][col]
            if may_know and real >= 0:
                assert shown == cards.to_str(real)
            else:
                assert shown is None, (seat, row, col)
    for k in (0, 1):
        if (view.keepers_up[k] or seat == k) and keepers[k] >= 0:
            assert view.keepers[k] == cards.to_str(keepers[k])
        else:
            assert view.keepers[k] is None
    if view.phase == "finished":
        assert all(all(row) for row in up) and all(view.keepers_up)
    own_hand = seat is not None and not view.setup_done[seat]
    assert view.hand == (cards.to_strs(g.hand(seat)) if own_hand and seat is not None else [])
    # No card anywhere in the view beyond what the seat may know: the piles are counts.
    assert cards_named(view.model_dump(mode="json")) <= known(g, state, seat)


def known(g: Football, state: dict[str, Any], seat: int | None) -> Counter[str]:
    """Every card ``seat`` may know, as a multiset, from the stored state."""
    field, keepers = truth(state)
    up = state["up"] if state["phase"] != 2 else (1 << 18) - 1
    seen = [
        card
        for row in range(4)
        for col in range(4)
        if (card := field[row][col]) >= 0
        and (up >> (row * 4 + col) & 1 or (seat is not None and HOME[seat] == row))
    ]
    seen += [k for s, k in enumerate(keepers) if k >= 0 and (up >> (16 + s) & 1 or seat == s)]
    if seat is not None and not state["setup"][seat]:
        seen += g.hand(seat)
    seen += state["goals"][0] + state["goals"][1] + state["out"]
    ball = g.summary()["ball"]
    return Counter(cards.to_strs(seen) + ([ball] if ball else []))


def check_places(g: Football, state: dict[str, Any]) -> None:
    places = g.places()
    every = Counter(card for where in places.values() for card in where)
    assert every == Counter(state["deck"])
    field, _ = truth(state)
    placed = sum(1 for row in field for card in row if card >= 0)
    assert len(places["field"]) == placed


def every_column_move(seat: int) -> list[Move]:
    return [Move(seat, kind, col) for kind in ("enter", "advance") for col in range(-1, 5)]


@settings(max_examples=10, deadline=None)
@given(games, st.randoms(use_true_random=False))
def test_random_games_keep_every_invariant(g: Football, rng: random.Random) -> None:
    # What every game keeps (round trips, one actor, replays) is tests/engine/test_game_contract.py.
    pile = g.summary()["piles"][0]
    assert g.summary()["piles"] == [pile, pile]
    events = []
    while not g.is_finished():
        piles = g.piles()
        assert piles[0] - piles[1] in (0, -1)  # the two draw by turns, A first
        text = g.to_json()
        state = json.loads(text)
        check_places(g, state)
        for seat in (0, 1, None):
            check_view(g, state, g.view(seat), seat)
        legal = g.legal_moves()
        if legal[0].kind != "setup":
            # Exactly the listed column moves are accepted, by anyone; a refused one leaves
            # the game as it was (so the same copy serves the next try).
            copy = Football.from_json(text)
            for move in every_column_move(0) + every_column_move(1):
                try:
                    copy.apply(move)
                    accepted = True
                    copy = Football.from_json(text)
                except IllegalMove:
                    accepted = False
                    assert copy.to_json() == text
                assert accepted == (move in legal), move
        events = g.apply(rng.choice(legal))
        assert events, "every move has something to tell"
    state = json.loads(g.to_json())
    check_places(g, state)
    summary = g.summary()
    assert summary["piles"] == [0, 0] and len(summary["face_up"]) == 18
    result = g.result()
    assert result is not None and result["goals"] == summary["goals"]
    goals = result["goals"]
    assert result["winner"] == (0 if goals[0] > goals[1] else 1 if goals[1] > goals[0] else None)
    assert events[-1] == ("finished", result)
    for seat in (0, 1, None):
        check_view(g, state, g.view(seat), seat)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.sampled_from([36, 52]), st.integers(0, 2**32))
def test_setups_are_listed_once_each_and_all_of_them(decks: int, size: int, seed: int) -> None:
    g = Football.new(FootballOptions(decks=decks, deck_size=size), ["A", "B"], seed=seed)
    for seat in (0, 1):  # A sets up first, then B
        hand, legal = g.hand(seat), list(g.legal_moves())
        assert all(m.player == seat for m in legal)
        distinct = {(m.cards[0], *m.cards[1:]) for m in legal}
        assert len(distinct) == len(legal)
        # Every arrangement of the hand as a multiset, counted independently.
        expected = {(hand[k], *r) for k in range(5) for r in permutations(hand[:k] + hand[k + 1 :])}
        assert distinct == expected
        g.apply(legal[seed % len(legal)])
