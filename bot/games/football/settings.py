"""Football's own lobby setting (seeds/football.md §1): how many decks are shuffled
together. It is an option of the engine's :class:`FootballOptions`, kept in the lobby's one
settings model (:class:`bot.core.models.GameSettings`)."""

from __future__ import annotations

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


def lines(ctx: Ctx) -> list[tuple[str, str]]:
    """Football's setting as (its line, its option code)."""
    return [(ctx.t("settings.decks", n=options(ctx.table.settings).decks), "n")]


def _more_decks(settings: GameSettings) -> None:
    settings.choose("decks", options(settings).decks % cards.MAX_DECKS + 1)


# By option code: what a tap on it changes.
OPTIONS = {"n": _more_decks}
