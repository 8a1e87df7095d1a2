"""Belarusian football (seeds/football.md) behind the :class:`engine.base.Game` protocol:
the rules (:mod:`.rules`) with their codecs (:mod:`.codec`) and views (:mod:`.view`)."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from engine.base import CorruptState, MalformedRecord
from engine.games.football import codec, view
from engine.games.football.rules import FootballRules, Move
from engine.games.football.view import FootballView


class Football(FootballRules):
    """One game of Belarusian football between two seats."""

    name: ClassVar[str] = "football"
    __slots__ = ()

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Self:
        options, players, deck = codec.start(record)
        return cls.new(options, players, deck=deck)

    def header(self) -> dict[str, Any]:
        return codec.header(self, self.name)

    def move_to_record(self, move: Move) -> dict[str, Any]:
        return codec.move_to_record(move)

    def move_from_record(self, data: object) -> Move:
        return codec.move_from_record(data)

    def move_token(self, move: Move) -> str:
        return codec.move_token(move)

    def move_from_token(self, token: str, player: int) -> Move:
        return codec.move_from_token(token, player)

    def summary(self) -> dict[str, Any]:
        return view.summary(self)

    def view(self, seat: int | None) -> FootballView:
        return view.view(self, seat)

    def to_json(self) -> str:
        return codec.dump(self)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        state = codec.parse(text)
        try:
            game = cls.new(state.options, state.players, deck=state.deck)
        except MalformedRecord as exc:
            raise CorruptState(f"football state: {exc}") from None
        codec.load(game, state)
        return game
