"""Game records (docs/records.md): loading, replaying, exporting.

Every game implements :class:`engine.base.Game`; this module only knows the record's
outer shape and finds the game by its name in :mod:`engine.registry`, so a third game
needs nothing here.
"""

from __future__ import annotations

import json
from typing import Any

from engine import registry
from engine.base import Game, IllegalMove, MalformedRecord


def parse(text: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedRecord(f"bad JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MalformedRecord("a record is a JSON object")
    return data


def load(record: dict[str, Any]) -> tuple[Game, list[Any]]:
    """The game at the start and its parsed moves; raises MalformedRecord."""
    cls = registry.spec(record.get("game")).game
    game = cls.from_record(record)
    moves = record.get("moves", [])
    if not isinstance(moves, list):
        raise MalformedRecord("moves must be a list")
    return game, [game.move_from_record(m) for m in moves]


def export(game: Game, moves: list[dict[str, Any]]) -> dict[str, Any]:
    """The record of ``game`` (its header) with the record-form ``moves`` played so far."""
    return {**game.header(), "moves": moves}


def describe(game: Game) -> dict[str, Any]:
    """The position part of the replay output (docs/records.md §6)."""
    actor = game.to_act()
    return {
        "finished": game.is_finished(),
        "to_act": None if actor is None else actor.record(),
        "legal": [game.move_to_record(m) for m in game.legal_moves()],
        "summary": game.summary(),
        "result": game.result(),
    }


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """Play a record through; stops at the first illegal move. Raises MalformedRecord."""
    game, moves = load(record)
    for index, move in enumerate(moves):
        try:
            game.apply(move)
        except IllegalMove as exc:
            return {"ok": False, "move": index, "error": exc.message, **describe(game)}
    return {"ok": True, **describe(game)}
