"""Durak's own lobby settings (seeds/durak.md §1 and §3.2): whether the dummy plays, and
who leads a rematch. Each is an option of the engine's :class:`DurakOptions`, kept in the
lobby's one settings model (:class:`bot.core.models.GameSettings`)."""

from __future__ import annotations

from bot.core.models import GameSettings
from bot.screens.render import Ctx
from engine.games.durak.rules import DurakOptions
from engine.games.durak.spec import SPEC

_FIRST_MOVE = {"under": "settings.first_move.under", "from_under": "settings.first_move.from_under"}


def options(settings: GameSettings) -> DurakOptions:
    """The engine's options the lobby's settings stand for."""
    found = SPEC.make_options(settings)
    assert isinstance(found, DurakOptions)
    return found


def lines(ctx: Ctx) -> list[tuple[str, str]]:
    """Each of durak's settings as (its line, its option code)."""
    chosen = options(ctx.table.settings)
    dummy = "settings.dummy_plays.on" if chosen.dummy_plays else "settings.dummy_plays.off"
    return [(ctx.t(dummy), "p"), (ctx.t(_FIRST_MOVE[chosen.first_move]), "f")]


def _toggle_dummy(settings: GameSettings) -> None:
    settings.choose("dummy_plays", not options(settings).dummy_plays)


def _toggle_first_move(settings: GameSettings) -> None:
    now = options(settings).first_move
    settings.choose("first_move", "from_under" if now == "under" else "under")


# By option code: what a tap on each changes.
OPTIONS = {"p": _toggle_dummy, "f": _toggle_first_move}
