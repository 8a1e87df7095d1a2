"""Durak with a dummy (seeds/durak.md) behind the :class:`engine.base.Game` protocol: the
rules (:mod:`.rules`) with their codecs (:mod:`.codec`) and views (:mod:`.view`)."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from engine.base import MalformedRecord
from engine.games.durak import codec, view
from engine.games.durak.rules import DurakMove, DurakRules
from engine.games.durak.view import DurakView


class Durak(DurakRules):
    """One game of Durak with a dummy, as the bot, the records and the players see it."""

    name: ClassVar[str] = "durak"
    __slots__ = ()

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Self:
        options, players, dealer, previous_fool, deck = codec.start(record)
        try:
            return cls.new(options, players, dealer, previous_fool, deck=deck)
        except ValueError as exc:
            raise MalformedRecord(str(exc)) from None

    def header(self) -> dict[str, Any]:
        return codec.header(self, self.name)

    def move_to_record(self, move: DurakMove) -> dict[str, Any]:
        return codec.move_to_record(move)

    def move_from_record(self, data: object) -> DurakMove:
        return codec.move_from_record(data)

    def move_token(self, move: DurakMove) -> str:
        return codec.move_token(move)

    def move_from_token(self, token: str, player: int) -> DurakMove:
        return codec.move_from_token(token, player)

    def summary(self) -> dict[str, Any]:
        return view.summary(self)

    def view(self, seat: int | None) -> DurakView:
        return view.view(self, seat)

    def to_json(self) -> str:
        return codec.dump(self)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        state = codec.parse(text)
        game = cls(state.options, state.players, state.dealer, state.previous_fool, state.deck)
        codec.load(game, state)
        return game
