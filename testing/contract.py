"""What the game contract's tests check of every game, shared with the variants'
tests: every combination of a game's options, and views that leak nothing; and the
card notation both games' scenario tests write their cards in.
"""

from __future__ import annotations

import itertools
import re
import typing
from collections import Counter
from typing import Any

import annotated_types
import pytest
from hypothesis import HealthCheck, settings
from pydantic import BaseModel, ValidationError

from engine import cards
from engine.base import Game, IllegalMove

M = typing.TypeVar("M", bound=BaseModel)

c = cards.parse


def cs(text: str) -> list[int]:
    """``"7H QS"`` → card ints: a scenario's hands and rows, written as records name cards."""
    return [c(t) for t in text.split()]


# Two games per option set: hypothesis's simplest case first (the smallest table, seed 0),
# then a random one.
TWO_GAMES = settings(
    max_examples=2, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def refused(game: Game, move: Any, code: str) -> IllegalMove:
    """``move`` is refused with ``code`` and a sentence that says why (it opens with a capital
    or a card), and changes nothing."""
    before = game.to_json()
    with pytest.raises(IllegalMove) as err:
        game.apply(move)
    assert err.value.code == code, err.value.message
    assert re.fullmatch(r"[A-Z0-9].*\.", err.value.message, re.DOTALL), err.value.message
    assert game.to_json() == before
    return err.value


def _field(annotation: Any, metadata: list[Any]) -> tuple[Any, ...]:
    """Every value an option field allows (its Literal, a bool, or a bounded int)."""
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    if annotation is bool:
        return (False, True)
    if annotation is int:
        low = typing.cast(int, next(m.ge for m in metadata if isinstance(m, annotated_types.Ge)))
        high = typing.cast(int, next(m.le for m in metadata if isinstance(m, annotated_types.Le)))
        return tuple(range(low, high + 1))
    raise AssertionError(f"no values for an option of type {annotation!r}")


def combinations(model: type[M]) -> list[M]:
    """Every combination of option values that the game's options model allows."""
    fields = {
        name: _field(info.annotation, info.metadata) for name, info in model.model_fields.items()
    }
    found = []
    for values in itertools.product(*fields.values()):
        try:
            found.append(model.model_validate(dict(zip(fields, values, strict=True))))
        except ValidationError:
            continue  # a combination the game's rules do not allow
    return found


def cards_named(value: object) -> Counter[str]:
    """Every card a view's JSON names, with how often. One walk by exact type, counted at
    the end: this runs for every seat at every position of the contract's games, where
    ``isinstance`` checks and counting card by card took a quarter of that test's CPU."""
    names: list[str] = []
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str:
            if item in cards._PARSE:
                names.append(item)
        elif kind is list or kind is tuple:
            pending.extend(item)  # type: ignore[arg-type]
        elif kind is dict:
            pending.extend(item.values())  # type: ignore[attr-defined]
    return Counter(names)


def check_views(game: Game) -> None:
    """Everyone sees what the public does, and no view names a card more often than the
    rules let its viewer know it (the game's ``known_to``, stated apart from its views):
    a face-down card, a card of the stock or another seat's hand shown to one seat, or
    to the group, fails here."""
    public = cards_named(game.view(None).model_dump(mode="json"))
    leaked = public - game.known_to(None)
    assert not leaked, f"the public view shows {leaked}"
    for seat in range(len(game.players)):
        shown = cards_named(game.view(seat).model_dump(mode="json"))
        assert not public - shown, f"seat {seat} does not see {public - shown}"
        leaked = shown - game.known_to(seat)
        assert not leaked, f"seat {seat} is shown {leaked}, which he may not know"
