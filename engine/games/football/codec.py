"""A football game written down and read back (:class:`FootballCodec`): the stored
state, the record's header and moves (docs/records.md) and the moves' button tokens.

Loading checks every rule a stored state must satisfy, so that play from a loaded state
can never reach a position the rules do not have.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import to_json

from engine import cards
from engine.base import CorruptState, MalformedRecord, first_error, read_header
from engine.cards import Card
from engine.games.football.rules import (
    ALL_UP,
    DEALT,
    FINISHED,
    HOME,
    KEEPER_BIT,
    PLAY,
    PLAYERS,
    SETUP,
    STEP,
    FootballOptions,
    FootballRules,
    Move,
)

_to_str = cards.to_str


class Stored(BaseModel):
    """The stored state.  The middle rows, hands and piles are all parts of ``deck``, so
    only what the players changed is kept."""

    model_config = ConfigDict(extra="forbid", strict=True)

    v: Literal[1]
    options: FootballOptions
    players: list[str] = Field(min_length=PLAYERS, max_length=PLAYERS)
    deck: list[int]
    setup: list[list[int]] = Field(min_length=2, max_length=2)  # [keeper, c0..c3] or []
    up: int = Field(ge=0, le=ALL_UP)
    drawn: list[int] = Field(min_length=2, max_length=2)
    goals: list[list[int]] = Field(min_length=2, max_length=2)
    out: list[int]
    at: int = Field(ge=-1, le=15)
    turn: int = Field(ge=0, le=1)
    phase: int = Field(ge=SETUP, le=FINISHED)


class FootballCodec(FootballRules):
    """The rules written down and read back (the module doc)."""

    name: ClassVar[str]
    __slots__ = ()

    # ----------------------------------------------------------------- records

    def header(self) -> dict[str, Any]:
        return {
            "game": self.name,
            "options": self.options.model_dump(),
            "players": list(self.names),
            "deck": cards.to_strs(self.deck),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Self:
        options, players, deck = read_header(record, FootballOptions)
        return cls.new(options, players, deck=deck)

    def move_to_record(self, move: Move) -> dict[str, Any]:
        if move.kind == "setup":
            return {
                "player": move.player,
                "setup": {
                    "goalkeeper": _to_str(move.cards[0]),
                    "row": cards.to_strs(move.cards[1:]),
                },
            }
        return {"player": move.player, move.kind: move.column}

    def move_from_record(self, data: object) -> Move:
        if not isinstance(data, dict) or len(data) != 2 or not _is_int(data.get("player")):
            raise MalformedRecord(f"not a football move: {_short(data)}")
        player = data["player"]
        if "setup" in data:
            setup = data["setup"]
            if (
                not isinstance(setup, dict)
                or set(setup) != {"goalkeeper", "row"}
                or not isinstance(setup["row"], list)
                or len(setup["row"]) != 4
            ):
                raise MalformedRecord(f"not a football set-up: {_short(data)}")
            try:
                chosen = (cards.parse(setup["goalkeeper"]), *cards.parse_many(setup["row"]))
            except ValueError as exc:
                raise MalformedRecord(str(exc)) from None
            return Move(player, "setup", -1, chosen)
        for kind in ("enter", "advance"):
            if kind in data:
                if not _is_int(data[kind]):
                    raise MalformedRecord(f"a column must be an integer: {_short(data)}")
                return Move(player, kind, data[kind])
        raise MalformedRecord(f"not a football move: {_short(data)}")

    # ----------------------------------------------------------------- button tokens

    def move_token(self, move: Move) -> str:
        if move.kind == "setup":
            return "s" + ".".join(cards.to_strs(move.cards))
        return move.kind[0] + str(move.column)

    def move_from_token(self, token: str, player: int) -> Move:
        if len(token) == 2 and token[0] in "ea" and token[1] in "0123":
            return Move(player, "enter" if token[0] == "e" else "advance", int(token[1]))
        if token.startswith("s") and len(token) <= 40:
            parts = token[1:].split(".")
            if len(parts) == 5:
                try:
                    return Move(player, "setup", -1, tuple(cards.parse(p) for p in parts))
                except ValueError:
                    pass
        raise MalformedRecord(f"not a football move token: {token[:40]!r}")

    # ----------------------------------------------------------------- stored state

    def to_json(self) -> str:
        # pydantic-core's serialiser is several times faster than json.dumps here.
        return to_json(
            {
                "v": 1,
                "options": {"decks": self.options.decks, "deck_size": self.options.deck_size},
                "players": self.names,
                "deck": self.deck,
                "setup": [list(s) if s else [] for s in self.setup],
                "up": self.up,
                "drawn": self.drawn,
                "goals": self.goals,
                "out": self.out,
                "at": self.at,
                "turn": self.turn,
                "phase": self.phase,
            }
        ).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        state = parse(text)
        try:
            game = cls.new(state.options, state.players, deck=state.deck)
        except MalformedRecord as exc:
            raise CorruptState(f"football state: {exc}") from None
        load(game, state)
        return game


def parse(text: str | bytes) -> Stored:
    """The stored state, validated for its shape; raises CorruptState."""
    try:
        return Stored.model_validate_json(text)
    except ValidationError as exc:
        raise CorruptState(f"football state: {first_error(exc)}") from None


def _bad(why: str) -> CorruptState:
    return CorruptState(f"football state: {why}")


def load(game: FootballRules, state: Stored) -> None:
    """Bring a freshly dealt game to ``state``, checking every rule a stored state must
    satisfy; raises CorruptState."""
    _place_setups(game, state)
    ball = _check_draws(game, state)
    game.up = state.up
    game.drawn = list(state.drawn)
    game.goals = [list(g) for g in state.goals]
    game.out = list(state.out)
    game.turn = state.turn
    game.phase = state.phase
    game.ball = ball
    game.at = state.at
    if state.phase == PLAY:
        _check_ball(game, state, ball)


def _place_setups(game: FootballRules, state: Stored) -> None:
    """Each seat's set-up is his five dealt cards, and play starts only once both have."""
    for seat, chosen in enumerate(state.setup):
        if chosen:
            if sorted(chosen) != sorted(game.hand(seat)):
                raise _bad(f"seat {seat}'s set-up is not his five dealt cards")
            game.setup[seat] = tuple(chosen)
            game.keepers[seat] = chosen[0]
            game.field[HOME[seat] * 4 : HOME[seat] * 4 + 4] = chosen[1:]
        elif state.phase != SETUP:
            raise _bad(f"seat {seat} has not set up but play has started")


def _check_draws(game: FootballRules, state: Stored) -> Card:
    """The draws fit the phase and the turn, and every drawn card is the ball, in a goals
    pile or out of the game, exactly once; returns the ball (-1: none)."""
    phase, pile, drawn, turn = state.phase, game.pile, state.drawn, state.turn
    if not all(0 <= d <= pile for d in drawn):
        raise _bad(f"drawn counts {drawn} out of range 0..{pile}")
    if phase == SETUP:
        if drawn != [0, 0] or state.up or state.at != -1 or turn != 0:
            raise _bad("play has happened during set-up")
        if None not in game.setup:
            raise _bad("both have set up but play has not started")
    elif phase == FINISHED:
        if drawn != [pile, pile] or state.up != ALL_UP or state.at != -1:
            raise _bad("a finished game with cards left or hidden")
    elif drawn[0] - drawn[1] != (1 if turn == 0 else 0) or drawn[turn] < 1:
        raise _bad(f"drawn counts {drawn} do not fit seat {turn}'s turn")
    taken = [game.deck[DEALT + s * pile : DEALT + s * pile + drawn[s]] for s in (0, 1)]
    ball = taken[turn][-1] if phase == PLAY else -1
    placed = sorted([*state.goals[0], *state.goals[1], *state.out] + ([ball] * (ball >= 0)))
    if placed != sorted(taken[0] + taken[1]):
        raise _bad("the drawn cards are not exactly the ball, the goals and the discards")
    for seat in (0, 1):
        rest = sorted(taken[seat])
        for card in state.goals[seat]:
            if card not in rest:
                raise _bad(f"seat {seat} has a goal {card} he never drew")
            rest.remove(card)
        if state.goals[seat] and not state.up & KEEPER_BIT[1 - seat]:
            raise _bad(f"seat {seat} scored past a goalkeeper still face down")
    return ball


def _check_ball(game: FootballRules, state: Stored, ball: Card) -> None:
    """The ball waits at a real decision: in hand with an entry, or standing on a face-up
    matching card of a row it can have reached, with somewhere to go."""
    at, turn = state.at, state.turn
    if at < 0:
        game.mask = game._entry_mask()
        if not game.mask:
            raise _bad("the ball in hand cannot enter, yet play waits for it")
        return
    steps = ((at >> 2) - HOME[turn]) * STEP[turn]
    if not 0 <= steps <= 2 or not state.up >> at & 1 or not cards.matches(game.field[at], ball):
        raise _bad(f"the ball cannot stand on position {at}")
    game.mask = game._advance_mask(at)
    if not game.mask:
        raise _bad(f"the ball on position {at} has nowhere to go, yet play waits for it")


def _is_int(value: object) -> bool:
    return type(value) is int


def _short(data: object) -> str:
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
