"""What every game's screens share: the reader's language, names, cards, engine data as text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from bot.core import callbacks
from bot.core.callbacks import Action
from bot.core.i18n import Markup, escape, faces, t
from bot.core.models import Table
from engine import cards

# The text of each reason any game's engine may give for refusing a move
# (``IllegalMove.code``): those of the protocol itself. A game adds its own
# (:attr:`bot.screens.game.Texts.refusals`).
ILLEGAL = {
    "game_over": "illegal.game_over",
    "unknown_move": "illegal.unknown_move",
    "no_such_seat": "illegal.no_such_seat",
    "not_your_turn": "illegal.not_your_turn",
}


@dataclass(frozen=True)
class Words:
    """How a game's engine data (its events' and refusals' params) reads as text: the
    keys that hold a seat or a card (``seat``, ``card`` and ``with`` in every game; a list
    of cards is always under ``cards``), the keys that hold a score (a list of numbers,
    shown ``a:b``), and the catalogue key of each seat that is no player's."""

    seats: frozenset[str] = frozenset()
    cards: frozenset[str] = frozenset()
    scores: frozenset[str] = frozenset()
    others: Mapping[str, str] = field(default_factory=dict)


@lru_cache(maxsize=1024)
def _card(notation: str, lang: str) -> Markup:
    """A card as a reader of ``lang`` sees it, worked out once: the screens of one round
    show the same few dozen cards over and over; escaped here, once, so that no text it
    goes into escapes it again."""
    return escape(cards.display(cards.parse(notation), faces(lang)))


_SEATS = frozenset({"seat"})
_CARDS = frozenset({"card", "with"})


@dataclass(frozen=True)
class Ctx:
    """Rendering context: one reader's language and one table's names and address."""

    table: Table
    lang: str
    words: Words = Words()

    def t(self, key: str, **params: Any) -> Markup:
        return t(self.lang, key, **params)

    def card(self, notation: str | None) -> str:
        if notation is None:
            return "?"
        return _card(notation, self.lang)

    def cards(self, notations: list[str]) -> str:
        if not notations:
            return self.t("common.none")
        return Markup(" ".join([_card(c, self.lang) for c in notations]))

    def name(self, seat: int | str | None) -> str:
        """A seat's name as its player wrote it (:func:`bot.core.i18n.t` escapes it)."""
        if isinstance(seat, str) and seat in self.words.others:
            return self.t(self.words.others[seat])
        if isinstance(seat, int) and 0 <= seat < len(self.table.seats):
            return self.table.seats[seat].name
        return "—"

    @cached_property
    def _address(self) -> str:
        table = self.table
        return callbacks.address(table.chat_id, table.thread_id, table.game_id)

    def cb(self, action: Action, arg: str = "") -> str:
        return callbacks.at(self._address, action, arg)

    def move(self, token: str) -> str:
        """A move button, stamped with the position it is offered in (see bot.core.callbacks)."""
        return self.cb(Action.MOVE, callbacks.stamp(len(self.table.played.moves)) + token)

    def params(self, data: dict[str, Any]) -> dict[str, Any]:
        """Engine data (events, illegal-move params) as text: seats by name, cards shown."""
        words = self.words
        params: dict[str, Any] = {}
        for key, value in data.items():
            if key in _SEATS or key in words.seats:
                params[key] = self.name(value)
            elif (key in _CARDS or key in words.cards) and isinstance(value, str):
                params[key] = self.card(value)
            elif key == "cards" and isinstance(value, list):
                params[key] = self.cards(value)
            elif key in words.scores and isinstance(value, list):
                params[key] = ":".join(str(g) for g in value)
            else:
                params[key] = value
        return params


def percent(part: int, whole: int) -> int:
    """``part`` as a whole percentage of ``whole`` (0 of nothing)."""
    return round(100 * part / whole) if whole else 0
