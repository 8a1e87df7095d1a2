"""The bot's side of the engines: building a game from a lobby, loading it, series rules.

The rules themselves stay in the engine; here is only what the bot must choose before a
game exists (options, seat order, dealer) and what it records after (the series score).
"""

from __future__ import annotations

import random
import secrets
from collections import OrderedDict
from typing import Any

from bot.models import GameKind, Table
from engine import series
from engine.base import Game
from engine.durak import MAX_PLAYERS, MIN_PLAYERS, Durak, DurakOptions
from engine.football import PLAYERS as FOOTBALL_PLAYERS
from engine.football import Football, FootballOptions

GAMES: dict[str, type[Game]] = {"football": Football, "durak": Durak}


def player_limits(table: Table) -> tuple[int, int]:
    """(fewest, most) players the table's game and deck take (§1 of seeds/football.md
    and seeds/durak.md)."""
    if table.kind == "football":
        return FOOTBALL_PLAYERS, FOOTBALL_PLAYERS
    return MIN_PLAYERS, MAX_PLAYERS[table.settings.deck_size]


def seat_cap(kind: GameKind | None) -> int:
    """How many may join a lobby at all (a durak lobby may outgrow a 36-card deck)."""
    return FOOTBALL_PLAYERS if kind == "football" else max(MAX_PLAYERS.values())


def load(table: Table) -> Game:
    """The table's game, to change (a fresh copy)."""
    assert table.kind is not None and table.state is not None
    return GAMES[table.kind].from_json(table.state)


# Read-only games, by state: one state is rendered for every seat and the group and asked
# who is to act, and the game a move was just applied to is the one asked next.
_GAMES: OrderedDict[str, Game] = OrderedDict()
_CACHED = 256


def remember(state: str, game: Game) -> None:
    """Offer the game whose ``to_json()`` is ``state``; it must not change afterwards."""
    _GAMES[state] = game
    _GAMES.move_to_end(state)
    while len(_GAMES) > _CACHED:
        _GAMES.popitem(last=False)


def current(table: Table) -> Game:
    """The table's game, read-only: never apply a move to it (use :func:`load`)."""
    assert table.state is not None
    game = _GAMES.get(table.state)
    if game is None:
        game = load(table)
        remember(table.state, game)
    return game


def actor(table: Table) -> int | None:
    """The seat to act in a running game (None: nobody, or not running)."""
    if table.phase != "playing" or table.state is None:
        return None
    to_act = current(table).to_act()
    return None if to_act is None else to_act.player


def computer_plays(table: Table, seat: int) -> bool:
    """The computer makes this seat's moves: a computer seat, or a person who is away
    (§7.2 of seeds/football.md and seeds/durak.md)."""
    person = table.seats[seat]
    return person.computer is not None or person.away


def turn_time(table: Table, seat: int) -> int:
    """Seconds of turn time ``seat`` has for his move (seeds/<game>.md §7.2); 0 when it is
    not his move, the computer makes it, or there is no limit."""
    if actor(table) != seat or computer_plays(table, seat):
        return 0
    return table.settings.turn_time


def start(table: Table, rng: random.Random | None = None) -> Game:
    """Deal a new game for the table's seats, following the series rules (§7.1 of
    seeds/football.md and seeds/durak.md).

    Who sits where and who deals come from :mod:`engine.series`; the table keeps the
    durak dealer and previous fool between games. Resets the per-game data of the table.
    """
    rng = rng or random.Random(secrets.randbits(64))
    seed = rng.getrandbits(64)
    settings = table.settings
    game: Game
    if table.kind == "football":
        table.seats = series.football_seating(table.seats, table.games == 0, rng)
        names = [s.name for s in table.seats]
        football = FootballOptions(decks=settings.decks, deck_size=settings.deck_size)
        game = Football.new(football, names, seed=seed)
    else:
        names = [s.name for s in table.seats]
        if table.games == 0 or table.dealer is None:
            table.dealer = series.durak_first_dealer(len(names), rng)
            table.previous_fool = None
        durak = DurakOptions(
            deck_size=settings.deck_size,
            dummy_plays=settings.dummy_plays,
            first_move=settings.first_move,
        )
        game = Durak.new(durak, names, table.dealer, table.previous_fool, seed=seed)
    for seat in table.seats:
        seat.setup = []
    table.state = game.to_json()
    table.moves = []
    table.events = []
    table.phase = "playing"
    table.notice = ""
    table.show_settings = False
    table.record_sent = False
    return game


def finish(table: Table, result: dict[str, Any]) -> None:
    """Count a finished game into the series and note who deals next (durak)."""
    assert table.kind is not None
    table.phase = "finished"
    table.games += 1
    counted = series.scored_seat(table.kind, result)
    if table.kind == "durak" and table.dealer is not None:
        table.dealer, table.previous_fool = series.durak_next_deal(table.dealer, counted)
    if counted is not None:
        uid = str(table.seats[counted].user_id)
        table.series[uid] = table.series.get(uid, 0) + 1


def legal_for(game: Game, seat: int) -> list[tuple[str, dict[str, Any]]] | None:
    """(token, record) of every legal move when ``seat`` is to act, else None."""
    actor = game.to_act()
    if actor is None or actor.player != seat:
        return None
    return [(game.move_token(m), game.move_to_record(m)) for m in game.legal_moves()]


# The computer levels a lobby offers, per game (football's hard plays as normal: not offered).
LEVELS_OFFERED = {"football": ("easy", "normal"), "durak": ("easy", "normal", "hard")}


def levels_offered(table: Table) -> tuple[str, ...]:
    return LEVELS_OFFERED[table.kind or "durak"]


def lobby_level(table: Table) -> str:
    """The level new computer seats get (a stored level the game lacks reads as normal)."""
    level = table.computer_level
    return level if level in levels_offered(table) else "normal"
