"""Durak games for the computer players' tests: the seed's game, a position laid out
from text, every variant with each number of players it seats, and a game played on by the
computer's levels.
"""

from __future__ import annotations

import json
from typing import Any

from engine import cards
from engine.base import Event
from engine.cards import Card
from engine.computer import choose
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakActor, DurakMove, DurakOptions, seating
from engine.games.durak.view import DurakView
from testing.contract import combinations
from testing.durak_positions import NAMES, position


def c(text: str) -> Card:
    return cards.parse(text)


def new_game(
    seed: int, players: int = 2, dummy_plays: bool = False, options: DurakOptions | None = None
) -> Durak:
    """The seed's game (``dummy_plays`` or not), or the variant ``options`` make."""
    if options is None:
        options = DurakOptions(deck_size=36 if players <= 4 else 52, dummy_plays=dummy_plays)
    return Durak.new(options, NAMES[:players], dealer=seed % players, seed=seed)


def play_levels(
    game: Durak, levels: list[str], seed: int, stop: int | None = None
) -> tuple[list[Event], list[DurakMove]]:
    """Play with the given computer level per seat (to the end, or ``stop`` decisions)."""
    events: list[Event] = []
    moves: list[DurakMove] = []
    while not game.is_finished() and (stop is None or len(moves) < stop):
        actor, view, legal = turn(game)
        move = choose("durak", view, legal, events, levels[actor.player], seed + len(moves))
        assert move in legal
        moves.append(move)
        events.extend(game.apply(move))
    return events, moves


def turn(game: Durak) -> tuple[DurakActor, DurakView, list[DurakMove]]:
    """Who is to act (the game not over), his view and his legal moves."""
    actor = game.to_act()
    assert actor is not None
    return actor, game.view(actor.player), game.legal_moves()


def state(game: Durak) -> dict[str, Any]:
    """The full stored state (the tests may look at everything; the players may not)."""
    return json.loads(game.to_json())  # type: ignore[no-any-return]


def laid(
    hands: str,
    trump: str,
    stock: int,
    table: str = "",
    options: dict[str, Any] | None = None,
    known: str | None = None,
) -> Durak:
    """:func:`position` from text, for positions written one a line: ``hands`` and
    ``known`` by seat, the dummy last (``"KD 9C/6S 8S/"``); ``stock`` the number of cards
    in it, the trump card one of them, the others the lowest left."""
    held = hands.split("/")
    options = options or {}
    placed = {c(x) for x in [*hands.replace("/", " ").split(), *table.replace(">", " ").split()]}
    size = options.get("deck_size", 36)
    rest = [x for x in cards.deck(size) if x not in placed and x != c(trump)]
    above = " ".join(cards.to_str(x) for x in rest[: stock - 1]) if stock else None
    seen = None if known is None else known.split("/")
    return position(
        held[:-1], held[-1], trump=trump, stock=above, table=table, known=seen, limit=6, **options
    )


# Every allowed combination of options, with each number of players it seats.
VARIANTS = [
    (options, players)
    for options in combinations(DurakOptions)
    for players in range(2, seating(options)[1] + 1)
]
