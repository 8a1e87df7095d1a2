"""Standings arithmetic: what a finished game scores for each seat, and the ratings.

Pure functions only (no I/O), so that live counting (bot.tables.stats) and a rebuild from game
records compute exactly the same figures, and so that they are testable without Redis.

A game is a ranking of its seats (1 is best, equal numbers tie), which each game's
:class:`Outcome` (its package's ``outcome`` module) makes from the engine's result; a
drawn game ties everyone. OpenSkill's Plackett-Luce model turns a ranking into new
ratings, each with its uncertainty (sigma); a rating is shown as the conservative
``mu - 3 sigma``, so that one lucky game cannot top a board: a newcomer starts at 0 and
climbs as his uncertainty shrinks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

_MODEL = PlackettLuce()
SPARKS = "▁▂▃▄▅▆▇"
TREND_LEN = 8  # ratings kept for the trend line


@dataclass(frozen=True)
class Rating:
    mu: float = _MODEL.mu
    sigma: float = _MODEL.sigma

    @property
    def shown(self) -> float:
        """The conservative figure a board shows and orders by."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class Outcome:
    """A finished game as standings count it. ``ranks``: each seat's place (1 best, ties
    equal). Each game has its own kind of outcome (:attr:`engine.spec.GameSpec.outcome`
    makes it), which knows its counters and what keeps a streak going."""

    kind: str
    ranks: tuple[int, ...]

    @property
    def drawn(self) -> bool:
        return len(set(self.ranks)) == 1

    def figures(self, seat: int) -> dict[str, int]:
        """What the game adds to ``seat``'s counters (every key a counter, added to)."""
        raise NotImplementedError

    def streak_goes_on(self, seat: int) -> bool:
        """The game lengthens the seat's streak; anything else ends it."""
        raise NotImplementedError


def above(game: Outcome) -> list[tuple[int, int]]:
    """(better, worse) seat pairs: head-to-head wins."""
    seats = range(len(game.ranks))
    return [(a, b) for a in seats for b in seats if game.ranks[a] < game.ranks[b]]


def rate(ratings: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """New ratings of the seats after a game that ranked them so (pure)."""
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return [Rating(team[0].mu, team[0].sigma) for team in rated]


def trend(values: Sequence[float]) -> str:
    """A rating history as a line of bars, lowest to highest of its own range."""
    if not values:
        return ""
    low, high = min(values), max(values)
    top = len(SPARKS) - 1
    if high - low < 1e-9:
        return SPARKS[top // 2] * len(values)
    return "".join(SPARKS[round((v - low) / (high - low) * top)] for v in values)
