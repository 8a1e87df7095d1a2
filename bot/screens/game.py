"""What a game's bot folder exports (``bot/games/<game>/entry.py``): its :class:`BotGame`,
everything the bot shows and sets up of it, which :mod:`bot.screens.registry` lists, in
parts of one concern each (issue 32: no model of more than 15 fields)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from typing import Any

from pydantic import BaseModel

from bot.core.models import GameSettings, Table
from bot.core.screen import Button
from bot.screens.render import ILLEGAL, Ctx, Words
from bot.tables.stats.standings import Line
from engine.spec import GameSpec

# (token, record) of each legal move of the reader, when he is to act.
Legal = list[tuple[str, dict[str, Any]]]
Rows = list[tuple[Button, ...]]


@dataclass(frozen=True)
class Names:
    """What a game is called, so that the picker, the standings and the table name it.

    ``title``: the catalogue key of its name, the picker's and the standings board's
    (every variant of a game counts on one board); ``naming``: the name of the variant a
    set of its engine options makes, in a language (:meth:`BotGame.variant`);
    ``series``: the catalogue key of its series line."""

    title: str
    naming: Callable[[str, BaseModel], str]
    series: str


@dataclass(frozen=True)
class Standings:
    """How a game's lines read on the standings, whose counters differ by game.

    ``row`` and ``streak``: the catalogue keys of its line on a standings board and of its
    streak; ``share``: the counter a board shows as a percentage of games; ``figures``: one
    person's counters of it, in a language."""

    row: str
    streak: str
    share: str
    figures: Callable[[str, Line], str]


@dataclass(frozen=True)
class Texts:
    """The catalogue keys of what a game's engine says, which only its folder knows.

    ``events``: the key of each event the engine emits, by kind (``kind.reason`` for one
    with a reason); ``refusals``: the key of each reason it refuses a move for, beyond
    those of every game (:data:`bot.screens.render.ILLEGAL`); ``words``: what its engine
    data's keys hold."""

    events: Mapping[str, str]
    refusals: Mapping[str, str]
    words: Words


@dataclass(frozen=True)
class LobbyOptions:
    """The lobby settings only a game has, which the shared lobby offers without naming it.

    ``options``: each by its option code, with what a tap on it changes (``settings``
    gives their lines); ``seatings``: those of them a lobby too full for its settings is
    offered, if they seat everyone (by option code, the catalogue key of the button)."""

    options: Mapping[str, Callable[[GameSettings], None]]
    seatings: Mapping[str, str]
    settings: Callable[[Ctx], list[tuple[str, str]]]


@dataclass(frozen=True)
class Screens:
    """A game's texts in the chat. Each takes the game's own view (``game.view(seat)``),
    which only the game's folder knows the type of.

    ``group``: the group's board; ``status``: whose turn it is, or how the game ended;
    ``hand``: a player's own screen, with his moves as buttons when he is to act;
    ``alert``: his secret cards in one short line (the group's "My cards" alert)."""

    group: Callable[[Any, Ctx], str]
    status: Callable[[Any, Ctx], str]
    hand: Callable[[Any, Ctx, list[int], Legal | None, bool], tuple[str, Rows]]
    alert: Callable[[Any, Ctx], str]


@dataclass(frozen=True)
class Page:
    """A game's drawing on the Mini App page, which the page loads without naming a game.

    ``played``: what the page plays a legal move (its record, in the reader's view) by,
    in the keys the drawing reads (a ``card`` in hand is the one the page itself offers
    to pick; durak's also say which card a beat covers, football's the field ``cell`` the
    ball steps onto); ``words``: the catalogue keys of the words the drawing uses, beyond
    the page's own; ``script`` and ``style``: the drawing itself (a page module that
    registers it with ``CT.game(<name>, …)``, and its style sheet); ``scene``: what it
    shows beside the view, public and read from the table (football: the ball's latest
    run), or nothing."""

    played: Callable[[Any, dict[str, Any]], dict[str, Any]]
    words: Mapping[str, str]
    script: Traversable
    style: Traversable
    scene: Callable[[Any, Ctx], dict[str, Any]] = lambda view, ctx: {}


@dataclass(frozen=True)
class BotGame:
    """One game on screen: its rules (``spec``), ``letter`` (the game in callback data:
    the picker, the standings) and its parts, each of one concern."""

    spec: GameSpec
    letter: str
    names: Names
    standings: Standings
    texts: Texts
    lobby: LobbyOptions
    screens: Screens
    page: Page
    # The names :meth:`variant` made, by language and option values.
    _variants: dict[tuple[Any, ...], str] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def offered(self) -> tuple[str, ...]:
        """The computer levels a lobby offers, weakest first: the engine's list."""
        return self.spec.levels

    @property
    def name(self) -> str:
        return self.spec.name

    def ctx(self, table: Table, lang: str) -> Ctx:
        """The rendering context of a table of this game for a reader of ``lang``."""
        return Ctx(table, lang, self.texts.words)

    def level(self, table: Table) -> str:
        """The level new computer seats get (a stored level the game lacks reads as normal)."""
        level = table.lobby.computer_level
        return level if level in self.offered else "normal"

    def variant(self, lang: str, settings: GameSettings) -> str:
        """The name of the game a table's settings make, in ``lang``: the lobby's, the
        table's, each hand's, the result's and the record's.

        Made once per language and option values: every round of a delivery names the
        variant on each screen, and checking the options anew (pydantic) and wording them
        was a seventh of rendering a hand; the name depends on nothing else."""
        key = (lang, *(getattr(settings, name) for name in self.spec.options.model_fields))
        name = self._variants.get(key)
        if name is None:
            name = self._variants[key] = self.names.naming(lang, self.spec.make_options(settings))
        return name

    @property
    def illegal(self) -> dict[str, str]:
        """The catalogue key of every reason the game's engine may refuse a move for."""
        return {**ILLEGAL, **self.texts.refusals}
