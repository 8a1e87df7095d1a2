"""Durak with a dummy as the registry lists it (:class:`engine.spec.GameSpec`)."""

from __future__ import annotations

from engine.games.durak import computer, series
from engine.games.durak.game import Durak
from engine.games.durak.outcome import DurakOutcome
from engine.games.durak.rules import MAX_PLAYERS, MIN_PLAYERS, DurakOptions
from engine.spec import GameSpec

SPEC = GameSpec(
    name=Durak.name,
    game=Durak,
    options=DurakOptions,
    players=lambda deck_size: (MIN_PLAYERS, MAX_PLAYERS[deck_size]),
    seats=max(MAX_PLAYERS.values()),
    levels=("easy", "normal", "hard"),
    computer=computer.choose,
    deal=series.deal,
    finish=series.finish,
    outcome=DurakOutcome.of,
)
