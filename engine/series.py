"""What carries over from one game of a series to the next (seeds/football.md §3.3,
seeds/durak.md §2.3 and §3.2, and §7.1 of both).

A series is the same players playing again; these rules decide only how the next game is
set up, so they take and return plain seats and leave the game itself to its module.
"""

from __future__ import annotations

import random
from typing import TypeVar

T = TypeVar("T")


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


def scored_seat(game: str, result: dict[str, object]) -> int | None:
    """The seat a finished game adds one to in the series score (§7.1 of seeds/football.md
    and seeds/durak.md: wins per player in football, fool counts in durak); None for a
    draw."""
    seat = result.get("winner" if game == "football" else "fool")
    return seat if isinstance(seat, int) else None
