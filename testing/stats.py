"""Finished games for the standings' tests: one built from a played game, a series
played at a table.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from bot.core.callbacks import Action
from bot.core.models import Lobby, Seat, Table
from bot.tables.stats.finished import Player, record_table
from engine import records
from engine.base import Game
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.games.football.game import Football
from engine.games.football.rules import FootballOptions
from testing.chats import FakeUser
from testing.tabletop import Tabletop

GROUP = -1001


def table_of(game: Game, kind: str, players: list[Player], game_id: str = "g001") -> Table:
    seats = [Seat(user_id=p.uid, name=p.name, computer=p.computer) for p in players]
    return Table(
        game_id=game_id,
        chat_id=GROUP,
        lobby=Lobby(creator=players[0].uid),
        kind=kind,
        phase="finished",
        seats=seats,
        state=game.to_json(),
    )


def played(
    kind: str, seed: int, players: list[Player], game_id: str
) -> tuple[Table, dict[str, Any]]:
    """A random finished game at the group's table, and the record the bot hands out."""
    rng = random.Random(seed)
    names = [p.name for p in players]
    game: Game
    if kind == "football":
        game = Football.new(FootballOptions(), names, seed=seed)
    else:
        game = Durak.new(DurakOptions(), names, seed % len(names), None, seed=seed)
    moves = []
    while game.result() is None:
        move: Any = rng.choice(list(game.legal_moves()))
        moves.append(game.move_to_record(move))
        game.apply(move)
    table = table_of(game, kind, players, game_id)
    table.played.moves = moves
    record = {**records.export(game, moves), "table": record_table(table)}
    return table, json.loads(json.dumps(record))


async def play_series(
    top: Tabletop,
    players: list[FakeUser],
    kind: str,
    games: int,
    settings: Mapping[str, Any] | None = None,
    *,
    shun: str | None = None,
    prefer: str | None = None,
) -> None:
    """``games`` games in a row at the table (Play again between them), its lobby given
    ``settings``; ``shun`` and ``prefer`` as :meth:`Tabletop.play` takes them."""
    await top.setup_game(kind, players, settings=settings)
    for number in range(games):
        if number:
            await top.tap_group(players[0], Action.AGAIN)
        await top.play(players, random.Random(number), shun=shun, prefer=prefer)
