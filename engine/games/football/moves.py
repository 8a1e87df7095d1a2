"""What a football move is (:class:`Move`), who makes it (:class:`Turn`) and the tables the
legal moves are looked up in: the enter and advance moves by column mask, and a seat's
set-ups, built on demand (:class:`SetupMoves`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import permutations
from typing import Any, NamedTuple, overload

from engine.cards import Card

KINDS = ("setup", "enter", "advance")


class Turn(NamedTuple):
    """Who must act: a seat, always for himself."""

    player: int

    def record(self) -> dict[str, Any]:
        """docs/records.md gives every game's ``to_act`` the same two fields; in football
        nobody acts for another hand, so ``dummy`` is always false."""
        return {"player": self.player, "dummy": False}


class Move(NamedTuple):
    """One choice.  ``column`` for enter/advance; ``cards`` for setup: goalkeeper first,
    then the own row by absolute column."""

    player: int
    kind: str
    column: int = -1
    cards: tuple[Card, ...] = ()


# Listing the legal enter/advance moves is one lookup by (seat, kind) and column mask.
BY_MASK = {
    (p, k): tuple(tuple(Move(p, k, c) for c in range(4) if m >> c & 1) for m in range(16))
    for p in (0, 1)
    for k in KINDS[1:]
}

_PERMS5 = tuple(permutations(range(5)))


@lru_cache(maxsize=64)
def _distinct_perms(pattern: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The arrangements of five sorted cards whose equality ``pattern`` (index of each
    card's first equal) is given, listed once per distinct outcome."""
    seen: set[tuple[int, ...]] = set()
    kept = []
    for perm in _PERMS5:
        outcome = tuple(pattern[i] for i in perm)
        if outcome not in seen:
            seen.add(outcome)
            kept.append(perm)
    return tuple(kept)


class SetupMoves(Sequence[Move]):
    """Every set-up of one seat's five cards, built on demand.

    A hand has up to 120 arrangements; building them all for each new game would cost
    more than the rest of the game, and a caller usually wants one of them.
    """

    __slots__ = ("_hand", "_perms", "_player")

    def __init__(self, player: int, hand: Sequence[Card]) -> None:
        self._player = player
        self._hand = tuple(sorted(hand))
        pattern = tuple(self._hand.index(c) for c in self._hand)
        self._perms = _PERMS5 if pattern == (0, 1, 2, 3, 4) else _distinct_perms(pattern)

    def __len__(self) -> int:
        return len(self._perms)

    @overload
    def __getitem__(self, index: int) -> Move: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Move]: ...
    def __getitem__(self, index: int | slice) -> Move | Sequence[Move]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self._perms))[index]]
        hand = self._hand
        return Move(self._player, "setup", -1, tuple(hand[i] for i in self._perms[index]))

    def __iter__(self) -> Iterator[Move]:
        for i in range(len(self._perms)):
            yield self[i]

    def __contains__(self, move: object) -> bool:
        return (
            isinstance(move, Move)
            and move.player == self._player
            and move.kind == "setup"
            and tuple(sorted(move.cards)) == self._hand
        )
