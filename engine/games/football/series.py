"""Football's series rules (seeds/football.md §3.3 and §7.1): the other player starts a
rematch, and the series counts wins."""

from __future__ import annotations

import random
from typing import Any, TypeVar

from engine.base import Game
from engine.games.football.game import Football
from engine.games.football.rules import FootballOptions
from engine.series import Carry, seat_of

T = TypeVar("T")


def seating(players: list[T], first_game: bool, rng: random.Random) -> list[T]:
    """The seat order of the next game: seat 0 (A) moves first.

    The first game draws A by lot; in a rematch the other player starts."""
    if first_game:
        order = list(players)
        rng.shuffle(order)
        return order
    return players[::-1]


def deal(
    options: Any, names: list[str], carry: Carry, rng: random.Random, seed: int
) -> tuple[Game, list[int]]:
    """The next football game and its seating (``order[i]``: who sits in seat ``i``)."""
    assert isinstance(options, FootballOptions)
    order = seating(list(range(len(names))), carry.first_game, rng)
    return Football.new(options, [names[i] for i in order], seed=seed), order


def finish(carry: Carry, result: dict[str, Any]) -> int | None:
    """Football counts wins per player (§7.1): the winner's seat, None for a draw."""
    return seat_of(result, "winner")
