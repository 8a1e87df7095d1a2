"""A table's game through the engine: deal, load, apply a move, keep the series.

The rules, series rules included, stay in the engine (:mod:`engine.registry` finds the
table's game); here the table only keeps what they decide: the seat order, the dealer
and previous fool (:class:`engine.series.Carry`), and the series score.
"""

from __future__ import annotations

import random
import secrets
import typing
from collections import OrderedDict
from typing import Any

from bot.core.models import GameSettings, Table
from engine import registry
from engine.base import Event, Game
from engine.series import Carry
from engine.spec import GameSpec


def spec(table: Table) -> GameSpec:
    """The engine's entry for the table's game (it has one once picked)."""
    return registry.spec(table.kind)


def player_limits(table: Table, settings: GameSettings | None = None) -> tuple[int, int]:
    """(fewest, most) players the table's game takes with its settings, or with
    ``settings`` (§1 of seeds/football.md, §1 and §10 of seeds/durak.md)."""
    game = spec(table)
    return game.players(game.make_options(settings or table.lobby.settings))


def deck_sizes(table: Table) -> tuple[int, ...]:
    """The deck sizes the table's game is played with, smallest first (its options
    model's ``deck_size``)."""
    field = spec(table).options.model_fields["deck_size"]
    return tuple(sorted(typing.get_args(field.annotation)))


def seat_cap(table: Table) -> int:
    """How many may join the table's lobby at all (a durak lobby may outgrow a 36-card
    deck)."""
    return spec(table).seats


def load(table: Table) -> Game:
    """The table's game, to change: a copy of :func:`current`'s, so that a tap on a
    position this process has seen (it applied the move that led there, or rendered it)
    copies the game instead of reading and checking its stored state again."""
    return current(table).copy()


# Read-only games, by state: one state is rendered for every seat and the group and asked
# who is to act, and the game a move was just applied to is the one asked and changed next.
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
        game = spec(table).game.from_json(table.state)
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
    return table.lobby.settings.turn_time


def start(table: Table, rng: random.Random | None = None) -> Game:
    """Deal a new game for the table's seats, following the series rules (§7.1 of
    seeds/football.md and seeds/durak.md).

    Who sits where and who deals come from :mod:`engine.series`; the table keeps the
    dealer and previous fool between games. Resets the per-game data of the table.
    """
    rng = rng or random.Random(secrets.randbits(64))
    seed = rng.getrandbits(64)
    game_spec = spec(table)
    carry = _carry(table)
    options = game_spec.make_options(table.lobby.settings)
    game, order = game_spec.deal(options, [s.name for s in table.seats], carry, rng, seed)
    table.seats = [table.seats[i] for i in order]
    table.series.dealer, table.series.previous_fool = carry.dealer, carry.previous_fool
    for seat in table.seats:
        seat.setup = []
    table.state = game.to_json()
    table.played.moves = []
    table.played.events = []
    table.phase = "playing"
    table.lobby.notice = ""
    table.lobby.show_settings = False
    table.delivery.record_asked = table.delivery.record_sent = False
    table.delivery.counted, table.delivery.moved_up = False, None
    return game


def _carry(table: Table) -> Carry:
    return Carry(table.series.games == 0, table.series.dealer, table.series.previous_fool)


def finish(table: Table, result: dict[str, Any]) -> None:
    """Count a finished game into the series and note who deals next."""
    table.phase = "finished"
    carry = _carry(table)
    table.series.games += 1
    counted = spec(table).finish(carry, result)
    table.series.dealer, table.series.previous_fool = carry.dealer, carry.previous_fool
    if counted is not None:
        uid = str(table.seats[counted].user_id)
        table.series.score[uid] = table.series.score.get(uid, 0) + 1


def apply_move(table: Table, game: Game, seat: int, move: Any) -> list[Event]:
    """Play ``move`` for ``seat``: engine first (raises IllegalMove), then the bot's data:
    the record's move list, the state, recent events, and the series when it ends."""
    events = game.apply(move)
    table.played.moves.append(game.move_to_record(move))
    table.state = game.to_json()
    remember(table.state, game)  # rendered next, and never changed again
    table.played.add_events(events)
    result = game.result()
    if result is not None:
        finish(table, result)
    return events


def legal_for(game: Game, seat: int) -> list[tuple[str, dict[str, Any]]] | None:
    """(token, record) of every legal move when ``seat`` is to act, else None."""
    actor = game.to_act()
    if actor is None or actor.player != seat:
        return None
    return [(game.move_token(m), game.move_to_record(m)) for m in game.legal_moves()]
