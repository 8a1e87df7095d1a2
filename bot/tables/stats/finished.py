"""A finished game as the standings count it, and the record the bot hands out.

One shape from a table (live) or a record (rebuild), so that both count alike; the
record (docs/records.md) carries its ``table`` field for that.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.models import Table
from bot.tables import games
from bot.tables.stats.keys import group_marker_key, marker_key
from engine import records
from engine.base import Game, IllegalMove, MalformedRecord
from engine.ratings import Outcome
from engine.registry import GAMES


def deal_digest(game: Game) -> str:
    """What tells one game from every other: its deal (shuffled deck, seats, options),
    hashed. Not the chat: a table moves when its group becomes a supergroup, and its
    finished game must not count again there; not the game id alone: four characters."""
    header = json.dumps(game.header(), sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(header.encode(), digest_size=9).hexdigest()


@dataclass(frozen=True)
class Player:
    uid: int
    name: str
    computer: str | None = None  # a computer seat's level


@dataclass(frozen=True)
class Finished:
    """A finished game as standings need it, from a table (live) or a record (rebuild)."""

    chat: int  # the group (a forum topic counts for its group), or a private chat
    game_id: str
    players: tuple[Player, ...]
    outcome: Outcome
    deal: str = ""  # deal_digest of the game
    # Which variant of its game it was: all its options, as canonical JSON ("": not known),
    # so that a person's figures split by variant (bot/tables/stats/keys.py)
    variant: str = ""

    @property
    def marker(self) -> str:
        """Set once the game is counted, both steps (bot.tables.stats.count)."""
        return marker_key(self.game_id, self.deal)

    @property
    def group_marker(self) -> str:
        """Set once its group's step is counted (in the group's slot)."""
        return group_marker_key(self.chat, self.game_id, self.deal)

    @property
    def kind(self) -> str:
        return self.outcome.kind

    @property
    def level(self) -> str | None:
        """The hardest computer level at the table (None: people only)."""
        levels = GAMES[self.kind].levels
        found = [p.computer for p in self.players if p.computer in levels]
        return max(found, key=levels.index) if found else None

    @property
    def in_group(self) -> bool:
        """Counted in its group's standings: a group, and people only."""
        return self.chat < 0 and self.level is None


def _finished(
    chat: int, game_id: str, players: Sequence[Player], kind: str, game: Game
) -> Finished:
    result = game.result()
    assert result is not None
    outcome = GAMES[kind].outcome(kind, result, game.summary())
    options = GAMES[kind].options.model_validate(game.header()["options"]).model_dump()
    variant = json.dumps(options, sort_keys=True, separators=(",", ":"))  # every option
    return Finished(chat, game_id, tuple(players), outcome, deal_digest(game), variant)


def from_table(table: Table) -> Finished | None:
    """The finished game at ``table`` (None: it is not a finished game)."""
    if table.phase != "finished" or table.kind is None or table.state is None:
        return None
    players = [Player(s.user_id, s.name, s.computer) for s in table.seats]
    return _finished(table.counted_in, table.game_id, players, table.kind, games.current(table))


def record_table(table: Table) -> dict[str, Any]:
    """The ``table`` field a record the bot hands out carries (docs/records.md §2): where
    the game was played and who sat where, so that standings can be rebuilt from records."""
    return {
        "chat": table.counted_in,
        "thread": table.thread_id,
        "game_id": table.game_id,
        "users": [s.user_id for s in table.seats],
        "computer": [s.computer for s in table.seats],
    }


def record_document(table: Table) -> bytes:
    """The game record the bot hands out (docs/records.md), as its file holds it."""
    record = {**records.export(games.load(table), table.played.moves), "table": record_table(table)}
    return json.dumps(record, ensure_ascii=False, indent=1).encode()


def from_record(record: dict[str, Any]) -> Finished:
    """The finished game of a record with a ``table`` field; raises MalformedRecord."""
    meta = record.get("table")
    if not isinstance(meta, dict):
        raise MalformedRecord("the record has no table field: whose game is it?")
    game, moves = records.load(record)
    for index, move in enumerate(moves):
        try:
            game.apply(move)
        except IllegalMove as exc:
            raise MalformedRecord(f"move {index} is illegal: {exc.message}") from None
    if game.result() is None:
        raise MalformedRecord("the game is not finished")
    names = game.players
    users, levels = meta.get("users"), meta.get("computer")
    if not isinstance(users, list) or not isinstance(levels, list) or len(users) != len(names):
        raise MalformedRecord("table.users must give a user id for every player")
    try:
        players = [Player(int(u), n, c) for u, n, c in zip(users, names, levels, strict=True)]
        chat, game_id = int(meta["chat"]), str(meta["game_id"])
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedRecord(f"a bad table field: {exc}") from None
    return _finished(chat, game_id, players, str(record["game"]), game)
