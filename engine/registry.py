"""Every game the engine knows, in one list of the games' packages (each exports its
:class:`engine.spec.GameSpec` from its ``spec`` module), in the order the bot offers them.

Adding a game means its package under ``engine/games/`` and one entry here (the bot has
its own list, :mod:`bot.screens.registry`); nothing else in the engine names a game.
"""

from __future__ import annotations

from engine.base import MalformedRecord
from engine.games.durak import spec as durak
from engine.games.football import spec as football
from engine.spec import GameSpec

GAMES: dict[str, GameSpec] = {game.SPEC.name: game.SPEC for game in (football, durak)}


def spec(name: object) -> GameSpec:
    """The game called ``name``; raises MalformedRecord for a name no game has (a record
    or a stored table naming an unknown game is malformed)."""
    if not isinstance(name, str) or name not in GAMES:
        raise MalformedRecord(f"unknown game: {name!r}")
    return GAMES[name]
