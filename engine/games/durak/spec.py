"""Durak, with the dummy or without and its other variants, as the registry lists it
(:class:`engine.spec.GameSpec`)."""

from __future__ import annotations

from pydantic import BaseModel

from engine.games.durak import computer, series
from engine.games.durak.game import Durak
from engine.games.durak.outcome import DurakOutcome
from engine.games.durak.rules import MOST_PLAYERS, DurakOptions, seating
from engine.spec import GameSpec


def players(options: BaseModel) -> tuple[int, int]:
    """(fewest, most) players by the deck and the dummy (seeds/durak.md §1, §10.2)."""
    assert isinstance(options, DurakOptions)
    return seating(options)


SPEC = GameSpec(
    name=Durak.name,
    game=Durak,
    options=DurakOptions,
    players=players,
    seats=MOST_PLAYERS,
    levels=("easy", "normal", "hard"),
    computer=computer.choose,
    deal=series.deal,
    finish=series.finish,
    outcome=DurakOutcome.of,
)
