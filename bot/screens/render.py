"""What both games' renderers share: the reader's language, names, cards, engine data as text."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bot.core import callbacks
from bot.core.callbacks import Action
from bot.core.i18n import Markup, faces, t
from bot.core.models import Table
from engine import cards

# Event data keys that hold a seat (an int, or "dummy" for durak's dummy).
_SEAT_KEYS = frozenset({"seat", "attacker", "defender", "fool", "winner"})
_CARD_KEYS = frozenset({"card", "with", "with_card", "ball"})

# The text of each reason an engine gives for refusing a move (``IllegalMove.code``).
ILLEGAL = {
    "game_over": "illegal.game_over",
    "unknown_move": "illegal.unknown_move",
    "no_such_seat": "illegal.no_such_seat",
    "not_your_turn": "illegal.not_your_turn",
    "not_in_setup": "illegal.not_in_setup",
    "already_set_up": "illegal.already_set_up",
    "setup_cards_mismatch": "illegal.setup_cards_mismatch",
    "setup_over": "illegal.setup_over",
    "must_enter": "illegal.must_enter",
    "must_advance": "illegal.must_advance",
    "no_such_column": "illegal.no_such_column",
    "cannot_enter": "illegal.cannot_enter",
    "not_reachable": "illegal.not_reachable",
    "face_up_no_match": "illegal.face_up_no_match",
    "cannot_beat_now": "illegal.cannot_beat_now",
    "cannot_beat": "illegal.cannot_beat",
    "cannot_take_now": "illegal.cannot_take_now",
    "cannot_pass_now": "illegal.cannot_pass_now",
    "rank_not_on_table": "illegal.rank_not_on_table",
    "not_in_game": "illegal.not_in_game",
    "not_in_hand": "illegal.not_in_hand",
    "not_on_table": "illegal.not_on_table",
    "cannot_attack_now": "illegal.cannot_attack_now",
    "cannot_throw_now": "illegal.cannot_throw_now",
}


@dataclass(frozen=True)
class Ctx:
    """Rendering context: one reader's language and one table's names and address."""

    table: Table
    lang: str

    def t(self, key: str, **params: Any) -> Markup:
        return t(self.lang, key, **params)

    def card(self, notation: str | None) -> str:
        if notation is None:
            return "?"
        return cards.display(cards.parse(notation), faces(self.lang))

    def cards(self, notations: list[str]) -> str:
        return " ".join(self.card(c) for c in notations) or self.t("common.none")

    def name(self, seat: int | str | None) -> str:
        """A seat's name as its player wrote it (:func:`bot.core.i18n.t` escapes it)."""
        if seat == "dummy":
            return self.t("durak.dummy")
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
        return self.cb(Action.MOVE, callbacks.stamp(len(self.table.moves)) + token)

    def params(self, data: dict[str, Any]) -> dict[str, Any]:
        """Engine data (events, illegal-move params) as text: seats by name, cards shown."""
        params: dict[str, Any] = {}
        for key, value in data.items():
            if key in _SEAT_KEYS:
                params[key] = self.name(value)
            elif key in _CARD_KEYS and isinstance(value, str):
                params[key] = self.card(value)
            elif key == "cards" and isinstance(value, list):
                params[key] = self.cards(value)
            elif key == "goals" and isinstance(value, list):
                params[key] = ":".join(str(g) for g in value)
            else:
                params[key] = value
        return params


def percent(part: int, whole: int) -> int:
    """``part`` as a whole percentage of ``whole`` (0 of nothing)."""
    return round(100 * part / whole) if whole else 0
