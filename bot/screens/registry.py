"""Every game the bot offers, in one list, with what the bot needs to show and set it up:
its screens (the game's ``bot.screens.render_<game>`` module), its own lobby settings, the
computer levels a lobby offers, and its standings' figures. The rules come from the
engine's entry (:mod:`engine.registry`).

Outside this module and each game's own modules nothing in ``bot/`` names a game or asks
which one a table plays: it asks the table's :func:`entry` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.core.models import GameSettings, Table
from bot.core.screen import Button
from bot.screens import render_durak, render_football
from bot.screens.render import Ctx
from bot.tables.stats.standings import Line
from engine.registry import GAMES as ENGINE_GAMES
from engine.registry import GameSpec

# (token, record) of each legal move of the reader, when he is to act.
Legal = list[tuple[str, dict[str, Any]]]
Rows = list[tuple[Button, ...]]


@dataclass(frozen=True)
class BotGame:
    """One game on screen. The screen functions take the game's own view
    (``game.view(seat)``), which only the game's module knows the type of.

    ``letter``: the game in callback data (the picker, the standings); ``title``,
    ``series``, ``board_row``, ``streak``: the catalogue keys of its name, its series
    line, its line on a standings board and its streak; ``events``: the catalogue key of
    each event its engine emits, by kind (``kind.reason`` for one with a reason);
    ``options``: the lobby settings only this game has, each by its option code with
    what a tap on it changes (``settings`` gives their lines); ``share``: the counter a
    standings board shows as a percentage of games; ``played``: what the Mini App plays
    a legal move (its record, in the reader's view) by: the ``card`` in hand, the ``beat``
    card it covers, ``dummy``, or the field ``cell`` it steps onto."""

    spec: GameSpec
    letter: str
    title: str
    series: str
    board_row: str
    streak: str
    events: Mapping[str, str]
    options: Mapping[str, Callable[[GameSettings], None]]
    settings: Callable[[Ctx], list[tuple[str, str]]]
    group: Callable[[Any, Ctx], str]
    status: Callable[[Any, Ctx], str]
    hand: Callable[[Any, Ctx, list[int], Legal | None, bool], tuple[str, Rows]]
    alert: Callable[[Any, Ctx], str]
    played: Callable[[Any, dict[str, Any]], dict[str, Any]]
    share: str
    figures: Callable[[str, Line], str]

    @property
    def offered(self) -> tuple[str, ...]:
        """The computer levels a lobby offers, weakest first: the engine's list."""
        return self.spec.levels

    @property
    def name(self) -> str:
        return self.spec.name


# In the picker's order.
GAMES: dict[str, BotGame] = {
    game.name: game
    for game in (
        BotGame(
            spec=ENGINE_GAMES["football"],
            letter="f",
            title="game.football",
            series="series.football",
            board_row="stats.row_football",
            streak="stats.streak_football",
            events=render_football.EVENTS,
            options=render_football.OPTIONS,
            settings=render_football.settings,
            group=render_football.group,
            status=render_football.status,
            hand=render_football.hand,
            alert=render_football.alert,
            played=render_football.played,
            share="won",
            figures=render_football.figures,
        ),
        BotGame(
            spec=ENGINE_GAMES["durak"],
            letter="d",
            title="game.durak",
            series="series.durak",
            board_row="stats.row_durak",
            streak="stats.streak_durak",
            events=render_durak.EVENTS,
            options=render_durak.OPTIONS,
            settings=render_durak.settings,
            group=render_durak.public,
            status=render_durak.status,
            hand=render_durak.hand,
            alert=render_durak.alert,
            played=render_durak.played,
            share="fool",
            figures=render_durak.figures,
        ),
    )
}
BY_LETTER = {game.letter: game for game in GAMES.values()}
# The name of each computer level any game offers.
LEVELS = {
    "easy": "computer.level.easy",
    "normal": "computer.level.normal",
    "hard": "computer.level.hard",
}


def entry(kind: str | None) -> BotGame:
    """The table's game (``table.kind``); a table in the picker has none yet."""
    assert kind is not None
    return GAMES[kind]


def lobby_level(table: Table) -> str:
    """The level new computer seats get (a stored level the game lacks reads as normal)."""
    level = table.computer_level
    return level if level in entry(table.kind).offered else "normal"
