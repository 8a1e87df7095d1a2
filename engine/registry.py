"""Every game the engine knows, in one list, and what the rest of the project may ask of
each without knowing which game it is: its class, its options, how many may play, the
computer's levels and the series rules (:mod:`engine.series`).

Adding a game means a module implementing :class:`engine.base.Game`, a pair of series
functions, and one entry here (the bot has its own list, :mod:`bot.screens.registry`, for the
screens); nothing else in the engine branches on a game's name.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from engine import durak, football, ratings, series
from engine.base import Event, Game, MalformedRecord
from engine.players import durak_levels
from engine.players import football as football_players


@dataclass(frozen=True)
class GameSpec:
    """One game. ``players(deck_size)``: the fewest and most players its rules allow with
    that deck; ``seats``: the most a lobby may seat at all (a durak lobby may outgrow a
    36-card deck and be offered the 52-card one); ``levels``: the levels its computer
    player accepts, and ``computer`` plays them: ``(view, legal, events, level, seed)``
    to the move (see :mod:`engine.players`)."""

    name: str
    game: type[Game]
    options: type[BaseModel]
    players: Callable[[int], tuple[int, int]]
    seats: int
    levels: tuple[str, ...]
    computer: Callable[[BaseModel, Sequence[Any], Sequence[Event], str, int], Any]
    deal: Callable[[Any, list[str], series.Carry, random.Random, int], tuple[Game, list[int]]]
    finish: Callable[[series.Carry, dict[str, Any]], int | None]
    # (name, result, summary) of a finished game -> how the standings count it
    outcome: Callable[[str, dict[str, Any], dict[str, Any]], ratings.Outcome]

    def make_options(self, settings: BaseModel) -> BaseModel:
        """The game's options from a settings model holding (at least) every option, so a
        lobby keeps one settings model for all games."""
        values = {name: getattr(settings, name) for name in self.options.model_fields}
        return self.options.model_validate(values)


GAMES: dict[str, GameSpec] = {
    spec.name: spec
    for spec in (
        GameSpec(
            name=football.Football.name,
            game=football.Football,
            options=football.FootballOptions,
            players=lambda deck_size: (football.PLAYERS, football.PLAYERS),
            seats=football.PLAYERS,
            # No hard level: normal already takes the exact best chance of scoring each
            # turn, and no stronger play was found (engine/players/football.py).
            levels=("easy", "normal"),
            computer=football_players.choose,
            deal=series.football_deal,
            finish=series.football_finish,
            outcome=ratings.FootballOutcome.of,
        ),
        GameSpec(
            name=durak.Durak.name,
            game=durak.Durak,
            options=durak.DurakOptions,
            players=lambda deck_size: (durak.MIN_PLAYERS, durak.MAX_PLAYERS[deck_size]),
            seats=max(durak.MAX_PLAYERS.values()),
            levels=("easy", "normal", "hard"),
            computer=durak_levels.choose,
            deal=series.durak_deal,
            finish=series.durak_finish,
            outcome=ratings.DurakOutcome.of,
        ),
    )
}


def spec(name: object) -> GameSpec:
    """The game called ``name``; raises MalformedRecord for a name no game has (a record
    or a stored table naming an unknown game is malformed)."""
    if not isinstance(name, str) or name not in GAMES:
        raise MalformedRecord(f"unknown game: {name!r}")
    return GAMES[name]
