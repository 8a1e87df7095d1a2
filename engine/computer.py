"""A computer seat's move: the game's player at its level, as :mod:`engine.registry` lists
them (each game's player is its package's ``computer`` module).

A player is given the seat's view (``game.view(seat)``), the legal moves (what the rules
allow is public) and the public events of the game so far; never the game itself. So a
computer player cannot cheat by construction, and the bot can call it for a timed-out
person with nothing but what it already shows him. Same inputs, same move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from engine import records, registry
from engine.base import Event


def choose(
    game: str,
    view: BaseModel,
    legal: Sequence[Any],
    events: Sequence[Event],
    level: str,
    seed: int,
) -> Any:
    """The move the computer plays for the seat whose ``view`` is given."""
    spec = registry.GAMES.get(game)
    if spec is None:
        raise ValueError(f"unknown game: {game!r}")
    if level not in spec.levels:
        raise ValueError(f"unknown level for {game}: {level!r}")
    if not legal:
        raise ValueError("no legal move to choose from")
    return spec.computer(view, legal, events, level, seed)


def public_events(record: dict[str, Any]) -> list[Event]:
    """Every event of a record's game, in order, as the players saw them happen.

    Events carry only public information by design, so replaying the public record is
    how the bot gets a computer player's memory of the game.  Raises MalformedRecord,
    and IllegalMove for a record whose moves are not legal.
    """
    game, moves = records.load(record)
    events: list[Event] = []
    for move in moves:
        events.extend(game.apply(move))
    return events
