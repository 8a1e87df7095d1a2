"""The football computer player: easy plays at random, normal plays the exact odds.

Everything it uses comes from the seat's :class:`~engine.games.football.view.FootballView`: its own
row and goalkeeper, the face-up cards, the ball, the goals and the discarded balls.  The
cards it has not seen (middle rows, the opponent's row and goalkeeper, both draw piles)
are, as far as it can tell, a uniform shuffle of the rest of the deck.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from pydantic import BaseModel

from engine import cards
from engine.base import Event
from engine.cards import Card, matches
from engine.games.football.odds import (
    Pitch,
    advance_chance,
    chance_from,
    row_cover,
    step_chances,
    unseen_pool,
)
from engine.games.football.rules import HOME, Move
from engine.games.football.view import FootballView

# How many cells of the next row a ball in each column can reach: a card in a middle
# column gives the ball more ways forward (and the opponent more ways onto it).
REACH_COUNT = (2, 3, 3, 2)


def choose(
    view: BaseModel, legal: Sequence[Any], events: Sequence[Event], level: str, seed: int
) -> Move:
    """The move for ``view``'s seat; the events are not needed: every card played stays
    in sight on the pitch, in the goals or on the discard list."""
    if not isinstance(view, FootballView):
        raise TypeError("football needs a FootballView")
    if level == "easy":
        move: Move = legal[random.Random(seed).randrange(len(legal))]
        return move
    if legal[0].kind == "setup":
        return best_setup(view, legal)
    return best_shot(view, legal)


# ---------------------------------------------------------------------- knowledge


def seen_cards(view: FootballView) -> list[Card]:
    """Every card this seat has seen, each physical card once."""
    seen: list[Card] = [cards.parse(c) for c in view.hand]
    for row in view.field:
        seen.extend(cards.parse(c) for c in row if c is not None)
    seen.extend(cards.parse(k) for k in view.keepers if k is not None)
    if view.ball is not None:
        seen.append(cards.parse(view.ball))
    for pile in view.goals:
        seen.extend(cards.parse(c) for c in pile)
    seen.extend(cards.parse(c) for c in view.discarded)
    return seen


def pool_of(view: FootballView) -> Counter[Card]:
    """The cards this seat has not seen: every face-down card is drawn from these."""
    deck = cards.deck(view.options.deck_size, view.options.decks)
    return unseen_pool(deck, seen_cards(view))


def pitch_of(view: FootballView, seat: int) -> Pitch:
    """The field in ``seat``'s direction of attack, as ``seat`` knows it."""
    order = (0, 1, 2, 3) if HOME[seat] == 0 else (3, 2, 1, 0)
    rows = tuple(tuple(None if c is None else cards.parse(c) for c in view.field[r]) for r in order)
    keeper = view.keepers[1 - seat]
    return Pitch(rows, None if keeper is None else cards.parse(keeper))


# ---------------------------------------------------------------------- play


def best_shot(view: FootballView, legal: Sequence[Move]) -> Move:
    """The entry or advance with the best chance of scoring this turn.

    Ties go to the move that shows the opponent least: stepping onto a face-up card
    shows nothing; turning up one's own row tells him which of one's cards he can walk
    onto, an edge card less than a middle one (fewer cells of his reach it).
    """
    seat = legal[0].player
    assert view.ball is not None
    ball = cards.parse(view.ball)
    pitch, pool = pitch_of(view, seat), pool_of(view)

    def key(move: Move) -> tuple[Fraction, int, int, int]:
        if move.kind == "enter":
            chance = chance_from(pitch, ball, 0, move.column, pool)
            own_shown = 0 if view.face_up[HOME[seat]][move.column] else 1
            return chance, -own_shown, 0, -REACH_COUNT[move.column] * own_shown
        assert view.ball_at is not None
        row = view.ball_at[0]
        step = advance_chance(pitch, ball, abs(row - HOME[seat]), move.column, pool)
        target = row + (1 if seat == 0 else -1)
        shown = 0 if view.face_up[target][move.column] else 1
        return step or Fraction(0), 0, -shown, 0

    return max(legal, key=key)


# ---------------------------------------------------------------------- set-up


def best_setup(view: FootballView, legal: Sequence[Move]) -> Move:
    """Goalkeeper and row order by the per-turn odds they give each side.

    A turn of ours scores about ``P(enter) · q⁴`` (three reveals and the keeper, each
    matching with the mean chance ``q``): the row should match as many balls as possible.
    A turn of the opponent scores about ``P(enter) · q² · E[share of our row the ball
    matches · [it matches our keeper]]``: the keeper should match few balls, and above all
    not the balls our row lets through.  Within the chosen split, the cards matching most
    balls go to the middle columns, where a ball entering has three ways forward.
    """
    pool = pool_of(view)
    total = sum(pool.values())
    q = _mean_match(pool)
    scores: dict[tuple[Card, ...], Fraction] = {}

    def split_score(keeper: Card, row: tuple[Card, ...]) -> Fraction:
        split = (keeper, *sorted(row))
        if split not in scores:
            cover = row_cover(row, pool)
            threat = Fraction(0)
            if total:
                for ball, n in pool.items():
                    if matches(ball, keeper):
                        threat += Fraction(n * sum(matches(ball, r) for r in row), 4 * total)
            scores[split] = cover * q**4 - cover * q**2 * threat
        return scores[split]

    reach = {card: step_chances(card, pool)[1] for card in legal[0].cards}

    def key(move: Move) -> tuple[Fraction, int]:
        keeper, row = move.cards[0], move.cards[1:]
        placement = sum(REACH_COUNT[col] * reach[card] for col, card in enumerate(row))
        return split_score(keeper, row), placement

    return max(legal, key=key)


def _mean_match(pool: Counter[Card]) -> Fraction:
    """The mean chance that a face-down card matches a ball, both from ``pool`` (a ball
    always matches its own copies, one of which is the ball itself)."""
    total = sum(pool.values())
    if total < 2:
        return Fraction(0)
    pairs = sum(n * (step_chances(ball, pool)[1] - 1) for ball, n in pool.items())
    return Fraction(pairs, total * (total - 1))
