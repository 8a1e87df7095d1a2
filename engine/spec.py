"""What the rest of the project may ask of a game without knowing which game it is: each
game's package exports one :class:`GameSpec` (its ``spec`` module), and
:mod:`engine.registry` lists them."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from engine.base import Event, Game
from engine.ratings import Outcome
from engine.series import Carry


@dataclass(frozen=True)
class GameSpec:
    """One game. ``players(options)``: the fewest and most players its rules allow with
    those options (its options model; durak's depend on the deck and the dummy);
    ``seats``: the most a lobby may seat at all (a lobby may outgrow what its options
    seat and be offered options that seat it); ``levels``: the levels its computer player
    accepts, weakest first, and ``computer`` plays them: ``(view, legal, events, level,
    seed)`` to the move; ``deal`` and ``finish``: its series rules (:mod:`engine.series`);
    ``outcome``: how the standings count a finished game, from ``(name, result,
    summary)``."""

    name: str
    game: type[Game]
    options: type[BaseModel]
    players: Callable[[BaseModel], tuple[int, int]]
    seats: int
    levels: tuple[str, ...]
    computer: Callable[[BaseModel, Sequence[Any], Sequence[Event], str, int], Any]
    deal: Callable[[Any, list[str], Carry, random.Random, int], tuple[Game, list[int]]]
    finish: Callable[[Carry, dict[str, Any]], int | None]
    outcome: Callable[[str, dict[str, Any], dict[str, Any]], Outcome]

    def make_options(self, settings: BaseModel) -> BaseModel:
        """The game's options from a settings model holding (at least) every option, so a
        lobby keeps one settings model for all games."""
        values = {name: getattr(settings, name) for name in self.options.model_fields}
        return self.options.model_validate(values)
