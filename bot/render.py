"""What both games' renderers share: the reader's language, names, cards, narration."""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bot import callbacks
from bot.callbacks import Action
from bot.i18n import faces, t
from bot.models import Table
from engine import cards

# Event data keys that hold a seat (an int, or "dummy" for durak's dummy).
_SEAT_KEYS = frozenset({"seat", "attacker", "defender", "fool", "winner"})
_CARD_KEYS = frozenset({"card", "with", "with_card", "ball"})


@dataclass(frozen=True)
class Ctx:
    """Rendering context: one reader's language and one table's names and address."""

    table: Table
    lang: str

    def t(self, key: str, **params: Any) -> str:
        return t(self.lang, key, **params)

    def card(self, notation: str | None) -> str:
        if notation is None:
            return "?"
        return cards.display(cards.parse(notation), faces(self.lang))

    def cards(self, notations: list[str]) -> str:
        return " ".join(self.card(c) for c in notations) or self.t("common.none")

    def name(self, seat: int | str | None) -> str:
        if seat == "dummy":
            return self.t("durak.dummy")
        if isinstance(seat, int) and 0 <= seat < len(self.table.seats):
            return html.escape(self.table.seats[seat].name)
        return "—"

    @cached_property
    def _address(self) -> str:
        table = self.table
        return callbacks.address(table.chat_id, table.thread_id, table.game_id)

    def cb(self, action: Action, arg: str = "") -> str:
        return callbacks.at(self._address, action, arg)

    def move(self, token: str) -> str:
        """A move button, stamped with the position it is offered in (see bot.callbacks)."""
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

    def narrate(self, kind: str, data: dict[str, Any]) -> str:
        """One event in words (catalogue ``event.<game>.<kind>[.<reason>]``)."""
        name = f"event.{self.table.kind}.{kind}"
        reason = data.get("reason")
        if isinstance(reason, str):
            name += f".{reason}"
        return self.t(name, **self.params(data))


def percent(part: int, whole: int) -> int:
    """``part`` as a whole percentage of ``whole`` (0 of nothing)."""
    return round(100 * part / whole) if whole else 0


def esc(text: str) -> str:
    return html.escape(text)
