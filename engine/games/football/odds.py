"""Exact scoring chances in Belarusian football, for the computer player.

Within a turn the ball never changes: it only walks onto cards that match it.  So
whether a face-down card lets the ball through depends only on whether *that* card
matches the ball, and, the face-down cards being drawn without replacement from the
cards this seat has not seen, the chance that the next one revealed matches is
``(M - k) / (N - k)``: ``N`` unseen cards, ``M`` of them matching the ball, ``k``
matching ones already turned up on this path (a non-matching one ends the turn, so
every earlier reveal on a live path matched).  The best route is then a small
expectimax over (row, column, k), exact in rational numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from engine.cards import Card, matches

ROWS = 4
COLUMNS = 4
ZERO = Fraction(0)
ONE = Fraction(1)


@dataclass(frozen=True)
class Pitch:
    """The field as the attacker knows it, in his direction of attack.

    ``rows[0]`` is his own row (he knows all of it), ``rows[1]`` and ``rows[2]`` the
    middle rows, ``rows[3]`` the opponent's row; ``None`` is a card he cannot see.
    ``keeper`` is the opponent's goalkeeper when it is face up.
    """

    rows: tuple[tuple[Card | None, ...], ...]
    keeper: Card | None


def unseen_pool(deck: Iterable[Card], seen: Iterable[Card]) -> Counter[Card]:
    """The multiset of cards this seat has not seen (``deck`` minus ``seen``)."""
    pool = Counter(deck)
    pool.subtract(Counter(seen))
    if any(n < 0 for n in pool.values()):
        raise ValueError("a card was seen more often than the deck holds it")
    return +pool


def step_chances(ball: Card, pool: Counter[Card]) -> tuple[int, int]:
    """``(N, M)``: how many cards are unseen and how many of them match ``ball``."""
    total = sum(pool.values())
    matching = sum(n for card, n in pool.items() if matches(card, ball))
    return total, matching


def reachable(column: int) -> range:
    return range(max(0, column - 1), min(COLUMNS, column + 2))


def chance_from(pitch: Pitch, ball: Card, row: int, column: int, pool: Counter[Card]) -> Fraction:
    """The chance of scoring with ``ball`` standing on (``row``, ``column``), played best."""
    total, matching = step_chances(ball, pool)
    return _Solver(pitch, ball, total, matching).value(row, column, 0)


def advance_chance(
    pitch: Pitch, ball: Card, row: int, column: int, pool: Counter[Card]
) -> Fraction | None:
    """The chance of scoring if the ball, now in ``row``, goes to ``column`` of the next
    row; ``None`` when the rules forbid it (a face-up card that does not match)."""
    total, matching = step_chances(ball, pool)
    return _Solver(pitch, ball, total, matching).step(row + 1, column, 0)


class _Solver:
    def __init__(self, pitch: Pitch, ball: Card, total: int, matching: int) -> None:
        self.pitch = pitch
        self.ball = ball
        self.total = total
        self.matching = matching
        self.value = lru_cache(maxsize=None)(self._value)

    def reveal(self, k: int) -> Fraction:
        """Chance that the next face-down card matches, ``k`` matching ones already out."""
        left = self.total - k
        return Fraction(max(self.matching - k, 0), left) if left > 0 else ZERO

    def step(self, row: int, column: int, k: int) -> Fraction | None:
        """Value of moving the ball onto (row, column); ``None`` if not allowed."""
        card = self.pitch.rows[row][column]
        if card is None:
            return self.reveal(k) * self.value(row, column, k + 1)
        if not matches(card, self.ball):
            return None
        return self.value(row, column, k)

    def _value(self, row: int, column: int, k: int) -> Fraction:
        if row == ROWS - 1:
            keeper = self.pitch.keeper
            if keeper is None:
                return self.reveal(k)
            return ONE if matches(keeper, self.ball) else ZERO
        options = [self.step(row + 1, c, k) for c in reachable(column)]
        allowed = [v for v in options if v is not None]
        return max(allowed, default=ZERO)


def row_cover(row: Sequence[Card], pool: Counter[Card]) -> Fraction:
    """The share of ``pool`` that matches at least one card of ``row``: balls that enter."""
    total = sum(pool.values())
    hit = sum(n for card, n in pool.items() if any(matches(card, r) for r in row))
    return Fraction(hit, total) if total else ZERO
