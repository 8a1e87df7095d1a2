"""What carries over from one game of a series to the next (§7.1 of each game's rules).

A series is the same players playing again; each game's own series rules (its package's
``series`` module, listed as ``deal`` and ``finish`` in its :class:`engine.spec.GameSpec`)
decide how the next game is set up and what a finished game adds to the series score, so a
caller keeps a :class:`Carry` and never asks which game it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Carry:
    """What a table keeps between the games of a series: whether the next game is the
    first, who dealt last and the last game's loser who deals next (None: the first game,
    or a drawn one), for a game whose rules seat the next deal by them."""

    first_game: bool
    dealer: int | None = None
    previous_fool: int | None = None


def seat_of(result: dict[str, Any], key: str) -> int | None:
    """The seat a finished game's ``result`` names under ``key`` (None: nobody, a draw)."""
    seat = result.get(key)
    return seat if isinstance(seat, int) else None
