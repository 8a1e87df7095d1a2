"""Standings arithmetic: what a finished game scores for each seat, and the ratings.

Pure functions only (no I/O), so that live counting (bot.stats) and a rebuild from game
records compute exactly the same figures, and so that they are testable without Redis.

A game is a ranking of its seats (1 is best, equal numbers tie): in durak every player
who is not the fool ties above the fool, and a drawn game (no fool) ties everyone; in
football the winner is above the loser, and a draw ties both. OpenSkill's Plackett-Luce
model turns a ranking into new ratings, each with its uncertainty (sigma); a rating is
shown as the conservative ``mu - 3 sigma``, so that one lucky game cannot top a board:
a newcomer starts at 0 and climbs as his uncertainty shrinks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    equal); durak: ``fool`` (None: drawn) and ``first_out`` (who got rid of his cards
    first, if anyone did); football: ``goals`` per seat."""

    kind: str
    ranks: tuple[int, ...]
    fool: int | None = None
    first_out: int | None = None
    goals: tuple[int, ...] = ()

    @property
    def drawn(self) -> bool:
        return len(set(self.ranks)) == 1


def outcome(kind: str, result: Mapping[str, Any], summary: Mapping[str, Any]) -> Outcome:
    """The outcome of a finished game from its engine ``result()`` and ``summary()``."""
    if kind == "football":
        goals = tuple(int(g) for g in result["goals"])
        winner = result.get("winner")
        ranks = tuple(1 if winner in (None, seat) else 2 for seat in range(len(goals)))
        return Outcome(kind, ranks, goals=goals)
    players = len(summary["hands"])
    fool = result.get("fool")
    out = [s for s in summary.get("out", []) if isinstance(s, int) and s < players]
    ranks = tuple(2 if seat == fool else 1 for seat in range(players))
    return Outcome(kind, ranks, fool=fool, first_out=out[0] if out else None)


def figures(game: Outcome, seat: int) -> dict[str, int]:
    """What the game adds to ``seat``'s counters (every key a counter, added to)."""
    add = {"n": 1}
    if game.kind == "football":
        mine, theirs = game.goals[seat], sum(game.goals) - game.goals[seat]
        key = "draw" if game.drawn else "won" if game.ranks[seat] == 1 else "lost"
        add.update({key: 1, "gf": mine, "ga": theirs})
        return add
    if game.drawn:
        add["draw"] = 1
    elif game.fool == seat:
        add["fool"] = 1
    if game.first_out == seat:
        add["first"] = 1
    return add


def streak_goes_on(game: Outcome, seat: int) -> bool:
    """The game lengthens the seat's streak: durak, he was not the fool; football, he
    won. Anything else ends it."""
    if game.kind == "football":
        return not game.drawn and game.ranks[seat] == 1
    return game.fool != seat


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
