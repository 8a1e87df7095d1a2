"""What carries over from one game of a series to the next (seeds/football.md §3.3,
seeds/durak.md §2.3 and §3.2, and §7.1 of both).

A series is the same players playing again; these rules decide only how the next game is
set up and what a finished game adds to the series score. Each game's pair of functions
(``*_deal`` and ``*_finish``) is what :mod:`engine.registry` lists for it, so a caller
keeps a :class:`Carry` and never asks which game it is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.base import Game
from engine.durak import Durak, DurakOptions
from engine.football import Football, FootballOptions

T = TypeVar("T")


@dataclass
class Carry:
    """What a table keeps between the games of a series: whether the next game is the
    first, who dealt last (durak) and the last game's fool (durak; None: first or drawn)."""

    first_game: bool
    dealer: int | None = None
    previous_fool: int | None = None


def football_seating(players: list[T], first_game: bool, rng: random.Random) -> list[T]:
    """The seat order of the next football game: seat 0 (A) moves first.

    The first game draws A by lot; in a rematch the other player starts."""
    if first_game:
        seating = list(players)
        rng.shuffle(seating)
        return seating
    return players[::-1]


def durak_first_dealer(players: int, rng: random.Random) -> int:
    """The first game of a series: the dealer is drawn by lot."""
    return rng.randrange(players)


def durak_next_deal(dealer: int, fool: int | None) -> tuple[int, int | None]:
    """The next game's ``(dealer, previous_fool)`` after a game dealt by ``dealer``.

    The fool deals, and the first move goes under or from under him; after a drawn game
    the same dealer deals again and, with no previous fool, the lowest trump leads."""
    return (dealer, None) if fool is None else (fool, fool)


def _seat(result: dict[str, Any], key: str) -> int | None:
    seat = result.get(key)
    return seat if isinstance(seat, int) else None


def football_deal(
    options: Any, names: list[str], carry: Carry, rng: random.Random, seed: int
) -> tuple[Game, list[int]]:
    """The next football game and its seating (``order[i]``: who sits in seat ``i``)."""
    assert isinstance(options, FootballOptions)
    order = football_seating(list(range(len(names))), carry.first_game, rng)
    return Football.new(options, [names[i] for i in order], seed=seed), order


def football_finish(carry: Carry, result: dict[str, Any]) -> int | None:
    """Football counts wins per player (§7.1): the winner's seat, None for a draw."""
    return _seat(result, "winner")


def durak_deal(
    options: Any, names: list[str], carry: Carry, rng: random.Random, seed: int
) -> tuple[Game, list[int]]:
    """The next durak game (the seats stay as they are); the first game of a series, or
    one with no dealer on record, draws the dealer by lot and has no previous fool."""
    assert isinstance(options, DurakOptions)
    if carry.first_game or carry.dealer is None:
        carry.dealer = durak_first_dealer(len(names), rng)
        carry.previous_fool = None
    game = Durak.new(options, names, carry.dealer, carry.previous_fool, seed=seed)
    return game, list(range(len(names)))


def durak_finish(carry: Carry, result: dict[str, Any]) -> int | None:
    """Durak counts fools (§7.1): the fool's seat, None for a draw; he deals next."""
    fool = _seat(result, "fool")
    if carry.dealer is not None:
        carry.dealer, carry.previous_fool = durak_next_deal(carry.dealer, fool)
    return fool
