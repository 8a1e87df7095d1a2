"""Durak's own lobby settings (seeds/durak.md §1, §3.2 and §9): the variant (the dummy,
transfers, who throws in, five before the first discard), whether the dummy plays, and
who leads a rematch. Each is an option of the engine's :class:`DurakOptions`, kept in the
lobby's one settings model (:class:`bot.core.models.GameSettings`).

A setting that §9 allows only with or only without the dummy is offered only then, and
turning the dummy on or off puts the settings it rules out back to their defaults: the
lobby never holds a combination the engine would refuse."""

from __future__ import annotations

from bot.core.models import GameSettings
from bot.screens.render import Ctx
from engine.games.durak.rules import NEEDS_DUMMY, DurakOptions
from engine.games.durak.spec import SPEC

_FIRST_MOVE = {"under": "settings.first_move.under", "from_under": "settings.first_move.from_under"}
_THROW_IN = {"all": "settings.throw_in.all", "neighbours": "settings.throw_in.neighbours"}
# Each yes/no setting's line, off and on.
_DUMMY = ("settings.dummy.off", "settings.dummy.on")
_DUMMY_PLAYS = ("settings.dummy_plays.off", "settings.dummy_plays.on")
_TRANSFER = ("settings.transfer.off", "settings.transfer.on")
_FIVE = ("settings.five.off", "settings.five.on")


def options(settings: GameSettings) -> DurakOptions:
    """The engine's options the lobby's settings stand for."""
    found = SPEC.make_options(settings)
    assert isinstance(found, DurakOptions)
    return found


def lines(ctx: Ctx) -> list[tuple[str, str]]:
    """Each of durak's settings that its variant allows, as (its line, its option code)."""
    chosen = options(ctx.table.lobby.settings)
    found: list[tuple[str, str]] = [(ctx.t(_DUMMY[chosen.dummy]), "m")]
    if chosen.dummy:
        found.append((ctx.t(_DUMMY_PLAYS[chosen.dummy_plays]), "p"))
    else:
        found.append((ctx.t(_TRANSFER[chosen.transfer]), "x"))
        found.append((ctx.t(_THROW_IN[chosen.throw_in]), "n"))
    found.append((ctx.t(_FIVE[chosen.five_before_discard]), "5"))
    found.append((ctx.t(_FIRST_MOVE[chosen.first_move]), "f"))
    return found


def _set_dummy(settings: GameSettings, dummy: bool) -> None:
    """The dummy on or off; what §9 allows only the other way goes back to its default."""
    settings.choose("dummy", dummy)
    defaults = DurakOptions()
    for name, needs in NEEDS_DUMMY.items():
        if needs != dummy:
            settings.choose(name, getattr(defaults, name))


def _toggle_dummy(settings: GameSettings) -> None:
    _set_dummy(settings, not options(settings).dummy)


def _no_dummy(settings: GameSettings) -> None:
    _set_dummy(settings, False)


def _toggle_dummy_plays(settings: GameSettings) -> None:
    settings.choose("dummy_plays", not options(settings).dummy_plays)


def _toggle_transfer(settings: GameSettings) -> None:
    settings.choose("transfer", not options(settings).transfer)


def _toggle_throw_in(settings: GameSettings) -> None:
    now = options(settings).throw_in
    settings.choose("throw_in", "neighbours" if now == "all" else "all")


def _toggle_five(settings: GameSettings) -> None:
    settings.choose("five_before_discard", not options(settings).five_before_discard)


def _toggle_first_move(settings: GameSettings) -> None:
    now = options(settings).first_move
    settings.choose("first_move", "from_under" if now == "under" else "under")


# By option code: what a tap on each changes ("m0": the too-full lobby's "without the
# dummy", which only turns it off, so that a second tap changes nothing).
OPTIONS = {
    "m": _toggle_dummy,
    "m0": _no_dummy,
    "p": _toggle_dummy_plays,
    "x": _toggle_transfer,
    "n": _toggle_throw_in,
    "5": _toggle_five,
    "f": _toggle_first_move,
}
# What a lobby too full for its settings may be offered besides another deck: option code
# -> its button's text.
SEATINGS = {"m0": "btn.no_dummy"}
