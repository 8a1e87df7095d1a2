"""Belarusian football as the registry lists it (:class:`engine.spec.GameSpec`)."""

from __future__ import annotations

from engine.games.football import computer, series
from engine.games.football.game import Football
from engine.games.football.outcome import FootballOutcome
from engine.games.football.rules import PLAYERS, FootballOptions
from engine.spec import GameSpec

SPEC = GameSpec(
    name=Football.name,
    game=Football,
    options=FootballOptions,
    players=lambda options: (PLAYERS, PLAYERS),
    seats=PLAYERS,
    # No hard level: normal already takes the exact best chance of scoring each turn, and
    # no stronger play was found (engine/games/football/computer.py).
    levels=("easy", "normal"),
    computer=computer.choose,
    deal=series.deal,
    finish=series.finish,
    outcome=FootballOutcome.of,
)
