"""Random games of both engines at a table of the bot's, for the tests that look for leaked
cards in its screens (what a reader may not know: testing.tabletop.hidden_cards)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from bot.core.models import Lobby, Seat, Table
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.games.football.game import Football


def table_of(game: Any, kind: str, langs: list[str]) -> Table:
    """A group's table playing ``game``, its seats in ``langs`` in turn."""
    seats = [
        Seat(user_id=10 + i, name=name, lang=langs[i % 3]) for i, name in enumerate(game.players)
    ]
    return Table(
        game_id="g1g1",
        chat_id=-100777,
        kind=kind,
        phase="playing",
        seats=seats,
        state=game.to_json(),
        lobby=Lobby(creator=10, lang=langs[0]),
    )


def random_games(kind: str, count: int) -> Iterator[tuple[Any, random.Random]]:
    """``count`` new games of ``kind`` (durak for 2 to 4, the dummy playing or not), each
    with the random source to play it on with."""
    for n in range(count):
        rng = random.Random(n)
        if kind == "football":
            yield Football.new(None, ["Ann", "Bob"], seed=n), rng
        else:
            players = ["Ann", "Bob", "Cid", "Dan"][: 2 + n % 3]
            options = DurakOptions(dummy_plays=n % 2 == 1, deck_size=36)
            yield Durak.new(options, players, n % len(players), seed=n), rng
