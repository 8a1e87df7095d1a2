"""A football game's state as data (:class:`FootballState`): the deal, the two set-ups,
the face-up cards, the draw piles, the ball, the turn and the goals, in one place; the
rules (:mod:`.rules`) act on it and the codec (:mod:`.codec`) stores it.

The field is 16 positions ``row * 4 + col`` in absolute coordinates (row 0 is A's own
row, row 3 is B's; columns 0..3 from A's left) plus the two goalkeepers. Face-up cards
are one bit mask: bits 0..15 the field, bit 16 A's goalkeeper, bit 17 B's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Self

from engine.cards import Card
from engine.games.football.options import FootballOptions


@dataclass(slots=True, eq=False, repr=False)
class FootballState:
    """Everything one game of football is at a point between two moves (the module doc)."""

    options: FootballOptions
    names: list[str]  # the players, A first
    deck: list[Card]  # as dealt: the middle, the hands, then the two draw piles
    field: list[Card]  # -1 where a row has not been placed yet
    keepers: list[Card]
    setup: list[tuple[Card, ...] | None]  # each seat's set-up move's cards, once made
    up: int  # the face-up cards (the module doc)
    pile: int  # cards in each draw pile at the start
    drawn: list[int]  # cards drawn from each pile
    goals: list[list[Card]]  # each seat's goals: the balls that went in
    out: list[Card]  # balls out of the game
    ball: Card  # -1: none
    at: int  # -1: in hand (or none); else the field position the ball stands on
    turn: int
    phase: int
    mask: int  # the columns the actor may choose now (enter/advance)

    def copy(self) -> Self:
        """An independent game at the same point: what play changes is copied, the deal
        (the options, the names, the deck) shared."""
        return replace(
            self,
            field=list(self.field),
            keepers=list(self.keepers),
            setup=list(self.setup),
            drawn=list(self.drawn),
            goals=[list(g) for g in self.goals],
            out=list(self.out),
        )
