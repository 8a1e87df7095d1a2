"""Cards as small integers, the record notation and display text.

A card is ``rank * 4 + suit`` (rank 2..14, suit 0..3 = S C D H).  Integers keep the
engines' hot loops cheap (suit is ``c & 3``, rank is ``c >> 2``, and comparing ranks is
comparing integers); notation and display are only computed at the boundaries.  With
several decks identical cards are the same integer: they are simply equal cards.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence

Card = int

SUITS = "SCDH"
SUIT_SYMBOLS = "♠♣♦♥"
RANK_NAMES = {2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", 10: "10"}
RANK_NAMES.update({11: "J", 12: "Q", 13: "K", 14: "A"})
DECK_SIZES = (24, 36, 52)  # the 24-card pack (9 to ace) is durak's only
MAX_DECKS = 3

_LOW_RANK = {24: 9, 36: 6, 52: 2}


def integer_deck_size(value: object) -> object:
    """Refuses a deck size that is not an integer before the options' Literal sees it:
    a Literal takes 36.0 (and True for 1) as equal even in strict mode; a record may not."""
    if type(value) is not int:
        raise ValueError("deck_size must be an integer")
    return value


def rank(card: Card) -> int:
    return card >> 2


def suit(card: Card) -> int:
    return card & 3


def make(rank_: int, suit_: int) -> Card:
    return rank_ * 4 + suit_


def matches(a: Card, b: Card) -> bool:
    """Football's 'can walk on': same suit or same rank."""
    return (a & 3) == (b & 3) or (a >> 2) == (b >> 2)


# Notation: built once, so that formatting is a table lookup.
_NOTATION: dict[Card, str] = {
    make(r, s): RANK_NAMES[r] + SUITS[s] for r in range(2, 15) for s in range(4)
}
_PARSE: dict[str, Card] = {text: card for card, text in _NOTATION.items()}


def to_str(card: Card) -> str:
    """Record notation: ``10H``, ``QS``."""
    return _NOTATION[card]


def parse(text: object) -> Card:
    """Strict inverse of :func:`to_str`; anything else raises ``ValueError``."""
    if not isinstance(text, str) or text not in _PARSE:
        raise ValueError(f"bad card notation: {text!r}")
    return _PARSE[text]


def parse_many(texts: object) -> list[Card]:
    if not isinstance(texts, list):
        raise ValueError(f"expected a list of cards, got {texts!r}")
    return [parse(t) for t in texts]


def display(card: Card, faces: Mapping[str, str] | None = None) -> str:
    """Display text such as ``10♥``; ``faces`` maps J/Q/K/A to a language's letters."""
    name = RANK_NAMES[card >> 2]
    if faces:
        name = faces.get(name, name)
    return name + SUIT_SYMBOLS[card & 3]


def deck(size: int = 36, decks: int = 1) -> list[Card]:
    """An ordered deck: ``decks`` copies of the 24-, 36- or 52-card pack."""
    if size not in DECK_SIZES:
        raise ValueError(f"deck size must be 24, 36 or 52, not {size!r}")
    if not 1 <= decks <= MAX_DECKS:
        raise ValueError(f"deck count must be 1 to {MAX_DECKS}, not {decks!r}")
    one = [make(r, s) for s in range(4) for r in range(_LOW_RANK[size], 15)]
    return one * decks


def shuffled(size: int, decks: int, seed: int | str | None) -> list[Card]:
    """The deck the options make, shuffled by a seeded generator: same seed, same deal."""
    cards = deck(size, decks)
    random.Random(seed).shuffle(cards)
    return cards


def is_deck_of(cards: Sequence[Card], size: int, decks: int = 1) -> bool:
    """True when ``cards`` is exactly the multiset of cards the options make."""
    return sorted(cards) == sorted(deck(size, decks))


# Each card's place in a hand shown suit by suit, one table per trump suit (None: no
# trump): trumps last, then by suit, low to high within a suit (ranks are below 16). A
# hand is sorted for every seat's view at every delivery; a key read from a list costs
# about half the sort that called a Python function per card.
_BY_SUIT: dict[int | None, list[int]] = {
    trump: [(64 if (c & 3) == trump else 0) + (c & 3) * 16 + (c >> 2) for c in range(64)]
    for trump in (None, 0, 1, 2, 3)
}


def sort_key_by_suit(trump: int | None) -> Callable[[Card], int]:
    """Key for showing a hand: suit by suit, trumps last, low to high within a suit."""
    return _BY_SUIT[trump].__getitem__


def to_strs(cards: Iterable[Card]) -> list[str]:
    return [_NOTATION[c] for c in cards]
