"""What both games share: errors, the actor to move, events and the Game protocol.

The bot, the replay tool and the computer players talk to a game only through
:class:`Game`; each game module keeps its whole rule set behind it (OpenSpiel style:
state, legal moves, apply).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple, Protocol, Self, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from engine import cards

OptionsT = TypeVar("OptionsT", bound=BaseModel)


class MalformedRecord(ValueError):
    """A record, move or token that is not well-formed (docs/records.md §6.6: exit code 2)."""


class CorruptState(ValueError):
    """A stored state that does not validate: refused whole, never half-loaded."""


class IllegalMove(Exception):
    """A well-formed move that the rules do not allow now.

    ``code`` names the reason for translation (the bot's catalogue key is
    ``illegal.<code>``), ``params`` fills its placeholders, ``message`` is the English
    sentence the replay tool prints.
    """

    def __init__(self, code: str, message: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = params


class Actor(Protocol):
    """Who must act: his seat, and how a record names him (docs/records.md ``to_act``).

    Each game has its own actor type, which may say more than the seat (in what capacity
    he acts); the rest of the project reads only ``player``."""

    @property
    def player(self) -> int: ...

    def record(self) -> dict[str, Any]:
        """The replay's ``to_act`` object for this actor."""
        ...


class Event(NamedTuple):
    """One thing that happened, for narration.

    ``kind`` names it (the bot's catalogue key is ``event.<game>.<kind>``); ``data`` holds
    JSON values only: seats as ints (``"dummy"`` for the dummy), cards in record notation
    under the keys ``card``, ``with`` and ``cards`` (a list).
    """

    kind: str
    data: dict[str, Any]

    def to_json(self) -> list[Any]:
        return [self.kind, self.data]


class Game(Protocol):
    """The interface every game module implements."""

    name: ClassVar[str]

    @property
    def players(self) -> list[str]: ...

    def to_act(self) -> Actor | None:
        """Who acts next; ``None`` when finished."""

    def legal_moves(self) -> Sequence[Any]:
        """Every legal move of the actor (duplicates of identical cards listed once)."""

    def apply(self, move: Any) -> list[Event]:
        """Validate and apply; raises :class:`IllegalMove`. Forced steps run here too."""

    def is_finished(self) -> bool: ...

    def result(self) -> dict[str, Any] | None:
        """docs/records.md §6.4 ``result``; ``None`` while the game runs."""

    def summary(self) -> dict[str, Any]:
        """docs/records.md §6.5 ``summary``: public information only."""

    def view(self, seat: int | None) -> BaseModel:
        """Exactly what ``seat`` may know (``None``: the public)."""

    def known_to(self, seat: int | None) -> Counter[str]:
        """The cards the rules let ``seat`` (``None``: everyone) know, each as often as
        he knows it by a fact of his own (his hand, a face-up card…). Stated apart from
        :meth:`view`, which may name no card more often than this: the contract test
        (tests/engine/test_game_contract.py) holds every view against it."""

    def move_to_record(self, move: Any) -> dict[str, Any]: ...

    def move_token(self, move: Any) -> str:
        """A compact text for the move (at most 40 ASCII bytes: it goes in callback_data)."""

    def move_from_token(self, token: str, player: int) -> Any:
        """Strict inverse of :meth:`move_token` for ``player``'s tap; the token carries
        everything but the player (the bot knows who tapped). Raises MalformedRecord."""

    def header(self) -> dict[str, Any]:
        """The record of this game without its moves (game, options, players, deck, …)."""

    def move_from_record(self, data: object) -> Any:
        """Parse a record move; raises :class:`MalformedRecord` for an unknown shape."""

    def to_json(self) -> str: ...

    def copy(self) -> Self:
        """An independent game at the same point, far cheaper than :meth:`from_json` of its
        :meth:`to_json`: applying a move to either leaves the other as it was."""

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Raises :class:`CorruptState` when the text does not validate."""

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Self:
        """The game at the start of a record (moves ignored); raises MalformedRecord."""


@runtime_checkable
class SetsUp(Protocol):
    """A game whose players first place their dealt cards, which the bot lets them pick
    one by one (football's goalkeeper and row). Where each pick goes is the game's rule,
    so the bot only keeps the picks (indexes into the seat's dealt hand)."""

    def complete_setup(self, picks: list[int]) -> list[int]:
        """``picks`` with whatever the rules now place by themselves."""

    def setup_move(self, seat: int, picks: Sequence[int]) -> Any:
        """The set-up move of ``seat`` once every dealt card is picked."""


def first_error(exc: ValidationError) -> str:
    """A pydantic error as one line: where, and what is wrong there."""
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"]) or "value"
    return f"{where}: {err['msg']}"


def read_header(
    record: dict[str, Any], options_model: type[OptionsT]
) -> tuple[OptionsT, list[str], list[cards.Card]]:
    """The options, player names and deck of a record, each checked for its shape
    (docs/records.md §2); raises MalformedRecord. What a game makes of them is its own check."""
    raw = record.get("options", {})
    if not isinstance(raw, dict):
        raise MalformedRecord("options must be an object")
    try:
        options = options_model.model_validate(raw)
    except ValidationError as exc:
        raise MalformedRecord(f"bad option {first_error(exc)}") from None
    players = record.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise MalformedRecord("players must be a list of names")
    try:
        deck = cards.parse_many(record.get("deck"))
    except ValueError as exc:
        raise MalformedRecord(str(exc)) from None
    return options, players, deck
