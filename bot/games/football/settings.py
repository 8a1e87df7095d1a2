"""Football's own lobby setting (seeds/football.md §1): how many decks are shuffled
together. It is an option of the engine's :class:`FootballOptions`, kept in the lobby's one
settings model (:class:`bot.core.models.GameSettings`)."""

from __future__ import annotations

from pydantic import BaseModel

from bot.core.i18n import Markup, t
from bot.core.models import GameSettings
from bot.screens.render import Ctx
from engine import cards
from engine.games.football.rules import FootballOptions
from engine.games.football.spec import SPEC


def options(settings: GameSettings) -> FootballOptions:
    """The engine's options the lobby's settings stand for."""
    found = SPEC.make_options(settings)
    assert isinstance(found, FootballOptions)
    return found


def name(lang: str, options: BaseModel) -> Markup:
    """Football's name, whatever its settings: its decks are no variant."""
    return t(lang, "game.football")


def lines(ctx: Ctx) -> list[tuple[str, str]]:
    """Football's setting as (its line, its option code)."""
    return [(ctx.t("settings.decks", n=options(ctx.table.lobby.settings).decks), "n")]


def _more_decks(settings: GameSettings) -> None:
    settings.choose("decks", options(settings).decks % cards.MAX_DECKS + 1)


# By option code: what a tap on it changes.
OPTIONS = {"n": _more_decks}
# A football lobby cannot be too full: it seats two and takes no more.
SEATINGS: dict[str, str] = {}
