"""Building football games with a chosen deal, for scenario tests."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from engine import cards
from engine.base import Event
from engine.games.football.game import Football
from engine.games.football.rules import FootballOptions, Move
from testing.contract import c, cs


def deal(
    row1: str,
    row2: str,
    hand_a: str,
    hand_b: str,
    pile_a: str = "",
    pile_b: str = "",
    *,
    decks: int = 1,
    deck_size: int = 36,
) -> list[int]:
    """A whole deck that deals the given cards (in the order of seeds/football.md §3.1);
    the cards not named fill the ends of the piles in deck order."""
    named = [cs(part) for part in (row1, row2, hand_a, hand_b, pile_a, pile_b)]
    rest = Counter(cards.deck(deck_size, decks))
    rest.subtract(card for part in named for card in part)
    assert min(rest.values(), default=0) >= 0, "a card named more often than the deck has it"
    spare = list(rest.elements())
    half = (len(cards.deck(deck_size, decks)) - 18) // 2
    piles = []
    for pile in named[4:]:
        fill = half - len(pile)
        piles.append(pile + spare[:fill])
        spare = spare[fill:]
    return [*named[0], *named[1], *named[2], *named[3], *piles[0], *piles[1]]


def game(*parts: str, decks: int = 1, deck_size: Literal[36, 52] = 36) -> Football:
    """A game dealt by :func:`deal` from ``parts`` (row1, row2, hand_a, hand_b, piles)."""
    options = FootballOptions(decks=decks, deck_size=deck_size)
    return Football.new(
        options, ["Ann", "Bob"], deck=deal(*parts, decks=decks, deck_size=deck_size)
    )


def setup(seat: int, keeper: str, row: str) -> Move:
    return Move(seat, "setup", -1, (c(keeper), *cs(row)))


def enter(seat: int, column: int) -> Move:
    return Move(seat, "enter", column)


def advance(seat: int, column: int) -> Move:
    return Move(seat, "advance", column)


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]
