"""What a durak move is: the kinds, the move and actor tuples, and the tables the hot loop
looks them up in instead of making them (with the sets of cards that beat or may be thrown
in). Which moves are legal and what they do is :mod:`.play`."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, NamedTuple

from engine import cards
from engine.base import Event
from engine.cards import Card

ATTACK, BEAT, TAKE_KIND, THROW_KIND, PASS = "attack", "beat", "take", "throw", "pass"
TRANSFER = "transfer"
ARITY = {ATTACK: 1, BEAT: 2, TAKE_KIND: 0, THROW_KIND: 1, PASS: 0, TRANSFER: 1}

Seat = int | Literal["dummy"]


class DurakActor(NamedTuple):
    """Who must act: a seat, and whether he acts for the dummy (as its controller)."""

    player: int
    dummy: bool = False

    def record(self) -> dict[str, Any]:
        return {"player": self.player, "dummy": self.dummy}


class DurakMove(NamedTuple):
    """One choice: ``cards`` is ``(C,)`` for attack/throw/transfer, ``(A, C)`` for beat,
    else ``()``.

    ``player`` is the seat that taps; ``dummy`` is true when he acts for the dummy.
    """

    player: int
    dummy: bool
    kind: str
    cards: tuple[Card, ...] = ()


# Event((kind, data)) without NamedTuple's Python-level __new__: events are made in the
# hot loop.
event = partial(tuple.__new__, Event)


def beats(card: Card, attack: Card, trump: int) -> bool:
    """A higher card of the same suit, or any trump against a non-trump."""
    s = attack & 3
    return (card & 3 == s and card > attack) or (card & 3 == trump != s)


ALL_CARDS = frozenset(cards.deck(52))
STR = [cards.to_str(c) if c in ALL_CARDS else "" for c in range(60)]  # hot-path notation


def name(card: object) -> str:
    """Notation of a card, or the raw value of something that is none."""
    return cards.to_str(card) if isinstance(card, int) and card in ALL_CARDS else repr(card)


class MoveTable:
    """Every move object one actor can make, built once: the hot loop only looks them up."""

    __slots__ = ("_key", "_rows", "attack", "pass_", "take", "throw", "transfer")

    def __init__(self, player: int, dummy: bool) -> None:
        self._key = (player, dummy)
        self.attack = [DurakMove(player, dummy, ATTACK, (c,)) for c in range(60)]
        self.throw = [DurakMove(player, dummy, THROW_KIND, (c,)) for c in range(60)]
        self.transfer = [DurakMove(player, dummy, TRANSFER, (c,)) for c in range(60)]
        self.take = DurakMove(player, dummy, TAKE_KIND)
        self.pass_ = DurakMove(player, dummy, PASS)
        self._rows: list[list[DurakMove] | None] = [None] * 60

    def beats(self, a: Card) -> list[DurakMove]:
        """The moves beating ``a`` with each card (a row by card, built on first use)."""
        row = self._rows[a]
        if row is None:
            row = self._rows[a] = [DurakMove(*self._key, BEAT, (a, c)) for c in range(60)]
        return row


_TABLES: dict[tuple[int, bool], MoveTable] = {}


def moves_for(player: int, dummy: bool) -> MoveTable:
    """The move table of one actor, made on first use."""
    table = _TABLES.get((player, dummy))
    if table is None:
        table = _TABLES[player, dummy] = MoveTable(player, dummy)
    return table


# Sets of cards, so that the hot loop filters a hand at C speed (filter, isdisjoint).
# BEATERS[trump][a]: the cards that beat attack card a.
BEATERS = [
    tuple(frozenset(c for c in ALL_CARDS if beats(c, a, trump)) for a in range(60))
    for trump in range(4)
]
_RANK_CARDS: dict[int, frozenset[Card]] = {}


def cards_of_ranks(mask: int) -> frozenset[Card]:
    """The cards whose rank bit is set in ``mask`` (what may be thrown in), cached."""
    found = _RANK_CARDS.get(mask)
    if found is None:
        found = _RANK_CARDS[mask] = frozenset(c for c in ALL_CARDS if mask >> (c >> 2) & 1)
    return found
