"""What a game's bot folder exports (``bot/games/<game>/entry.py``): its :class:`BotGame`,
everything the bot shows and sets up of it, which :mod:`bot.screens.registry` lists."""

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
class BotGame:
    """One game on screen. The screen functions take the game's own view
    (``game.view(seat)``), which only the game's folder knows the type of.

    ``letter``: the game in callback data (the picker, the standings); ``title``,
    ``series``, ``board_row``, ``streak``: the catalogue keys of its name (the picker's
    and the standings board's: every variant of a game counts on one board), its series
    line, its line on a standings board and its streak; ``naming``: the name of the
    variant a set of its engine options makes, in a language (:meth:`variant`);
    ``events``: the catalogue key of each event its engine emits, by kind
    (``kind.reason`` for one with a reason);
    ``refusals``: the catalogue key of each reason its engine refuses a move for, beyond
    those of every game (:data:`bot.screens.render.ILLEGAL`); ``words``: what its engine
    data's keys hold; ``options``: the lobby settings only this game has, each by its
    option code with what a tap on it changes (``settings`` gives their lines);
    ``seatings``: those of them a lobby too full for its settings is offered, if they
    seat everyone (by option code, the catalogue key of the button);
    ``share``: the counter a standings board shows as a percentage of games;
    ``played``: what the Mini App plays a legal move (its record, in the reader's view)
    by, in the keys the game's drawing reads (a ``card`` in hand is the one the page
    itself offers to pick; durak's also say which card a beat covers, football's the field
    ``cell`` the ball steps onto); ``page_words``: the catalogue keys of the words its drawing
    on the page uses, beyond the page's own; ``script`` and ``style``: that drawing (a
    page module that registers it with ``CT.game(<name>, …)``, and its style sheet);
    ``scene``: what that drawing shows beside the view, public and read from the table
    (football: the ball's latest run), or nothing."""

    spec: GameSpec
    letter: str
    title: str
    naming: Callable[[str, BaseModel], str]
    series: str
    board_row: str
    streak: str
    events: Mapping[str, str]
    refusals: Mapping[str, str]
    words: Words
    options: Mapping[str, Callable[[GameSettings], None]]
    seatings: Mapping[str, str]
    settings: Callable[[Ctx], list[tuple[str, str]]]
    group: Callable[[Any, Ctx], str]
    status: Callable[[Any, Ctx], str]
    hand: Callable[[Any, Ctx, list[int], Legal | None, bool], tuple[str, Rows]]
    alert: Callable[[Any, Ctx], str]
    played: Callable[[Any, dict[str, Any]], dict[str, Any]]
    share: str
    figures: Callable[[str, Line], str]
    page_words: Mapping[str, str]
    script: Traversable
    style: Traversable
    scene: Callable[[Any, Ctx], dict[str, Any]] = lambda view, ctx: {}
    # The names :meth:`variant` made, by language and option values.
    _names: dict[tuple[Any, ...], str] = field(
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
        return Ctx(table, lang, self.words)

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
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = self.naming(lang, self.spec.make_options(settings))
        return name

    @property
    def illegal(self) -> dict[str, str]:
        """The catalogue key of every reason the game's engine may refuse a move for."""
        return {**ILLEGAL, **self.refusals}
