"""Durak's series rules (seeds/durak.md §2.3, §3.2 and §7.1): the fool deals the next
game, and the series counts fools."""

from __future__ import annotations

import random
from typing import Any

from engine.base import Game
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.series import Carry, seat_of


def first_dealer(players: int, rng: random.Random) -> int:
    """The first game of a series: the dealer is drawn by lot."""
    return rng.randrange(players)


def next_deal(dealer: int, fool: int | None) -> tuple[int, int | None]:
    """The next game's ``(dealer, previous_fool)`` after a game dealt by ``dealer``.

    The fool deals, and the first move goes under or from under him; after a drawn game
    the same dealer deals again and, with no previous fool, the lowest trump leads."""
    return (dealer, None) if fool is None else (fool, fool)


def deal(
    options: Any, names: list[str], carry: Carry, rng: random.Random, seed: int
) -> tuple[Game, list[int]]:
    """The next durak game (the seats stay as they are); the first game of a series, or
    one with no dealer on record, draws the dealer by lot and has no previous fool."""
    assert isinstance(options, DurakOptions)
    if carry.first_game or carry.dealer is None:
        carry.dealer = first_dealer(len(names), rng)
        carry.previous_fool = None
    game = Durak.new(options, names, carry.dealer, carry.previous_fool, seed=seed)
    return game, list(range(len(names)))


def finish(carry: Carry, result: dict[str, Any]) -> int | None:
    """Durak counts fools (§7.1): the fool's seat, None for a draw; he deals next."""
    fool = seat_of(result, "fool")
    if carry.dealer is not None:
        carry.dealer, carry.previous_fool = next_deal(carry.dealer, fool)
    return fool
