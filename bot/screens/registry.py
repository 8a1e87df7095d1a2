"""Every game the bot offers, in one list of the games' bot folders (each exports its
:class:`bot.screens.game.BotGame` from its ``entry`` module), in the picker's order. The
rules come from the engine's entry (:mod:`engine.registry`).

Outside the games' folders nothing in ``bot/`` names a game or asks which one a table
plays: it asks the table's :func:`entry` instead.
"""

from __future__ import annotations

from bot.core.models import Table
from bot.games.durak import entry as durak
from bot.games.football import entry as football
from bot.screens.game import BotGame
from bot.screens.render import Ctx, Words

GAMES: dict[str, BotGame] = {game.ENTRY.name: game.ENTRY for game in (football, durak)}
BY_LETTER = {game.letter: game for game in GAMES.values()}
# The name of each computer level any game offers.
LEVELS = {
    "easy": "computer.level.easy",
    "normal": "computer.level.normal",
    "hard": "computer.level.hard",
}
# The catalogue key of every reason any game's engine may refuse a move for.
ILLEGAL = {code: key for game in GAMES.values() for code, key in game.illegal.items()}


def entry(kind: str | None) -> BotGame:
    """The table's game (``table.kind``); a table in the picker has none yet."""
    assert kind is not None
    return GAMES[kind]


def ctx(table: Table, lang: str) -> Ctx:
    """The rendering context of ``table`` for a reader of ``lang``, with its game's words
    (none yet in the picker)."""
    return GAMES[table.kind].ctx(table, lang) if table.kind else Ctx(table, lang, Words())


def lobby_level(table: Table) -> str:
    """The level new computer seats get (a stored level the game lacks reads as normal)."""
    return entry(table.kind).level(table)


def page_files() -> dict[str, tuple[bytes, str]]:
    """The games' drawings on the Mini App page, by the name the page asks for: every
    game's script in one file and their style sheets in another (the page loads them
    after its own, so it names no game)."""
    return {
        "games.js": (
            b"\n".join(game.page.script.read_bytes() for game in GAMES.values()),
            "text/javascript; charset=utf-8",
        ),
        "games.css": (
            b"\n".join(game.page.style.read_bytes() for game in GAMES.values()),
            "text/css; charset=utf-8",
        ),
    }
