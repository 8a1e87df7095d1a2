"""Cards: notation both ways, decks the options make, seeded shuffles, display text."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import cards


def test_notation_round_trips_every_card_of_a_52_deck() -> None:
    deck = cards.deck(52)
    assert [cards.parse(cards.to_str(c)) for c in deck] == deck
    assert {cards.to_str(c) for c in deck} >= {"10H", "QS", "2C", "AD"}


@pytest.mark.parametrize("bad", ["", "1H", "10h", "QX", "11S", " QS", "QS ", "T", 7, None, ["QS"]])
def test_bad_notation_is_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        cards.parse(bad)


@pytest.mark.parametrize(
    ("size", "decks", "count", "lowest"), [(36, 1, 36, 6), (52, 1, 52, 2), (36, 3, 108, 6)]
)
def test_decks_hold_the_cards_the_options_make(
    size: int, decks: int, count: int, lowest: int
) -> None:
    deck = cards.deck(size, decks)
    assert len(deck) == count
    assert min(cards.rank(c) for c in deck) == lowest
    assert max(cards.rank(c) for c in deck) == 14
    assert deck.count(cards.parse("AS")) == decks


@pytest.mark.parametrize(("size", "decks"), [(32, 1), (36, 0), (52, 4)])
def test_impossible_decks_are_refused(size: int, decks: int) -> None:
    with pytest.raises(ValueError):
        cards.deck(size, decks)


@given(st.integers(), st.sampled_from([36, 52]), st.integers(1, 3))
def test_shuffle_is_a_permutation_and_repeats_with_its_seed(
    seed: int, size: int, decks: int
) -> None:
    first = cards.shuffled(size, decks, seed)
    assert cards.is_deck_of(first, size, decks)
    assert cards.shuffled(size, decks, seed) == first


def test_different_seeds_deal_differently() -> None:
    assert cards.shuffled(36, 1, 1) != cards.shuffled(36, 1, 2)


def test_matching_is_same_suit_or_same_rank() -> None:
    seven_h, seven_s, king_h, king_s = map(cards.parse, ["7H", "7S", "KH", "KS"])
    assert cards.matches(seven_h, seven_s)
    assert cards.matches(seven_h, king_h)
    assert not cards.matches(seven_h, king_s)


def test_display_uses_suit_symbols_and_localised_faces() -> None:
    assert cards.display(cards.parse("10H")) == "10♥"
    assert cards.display(cards.parse("JS"), {"J": "В", "Q": "Д", "K": "К", "A": "Т"}) == "В♠"
    assert cards.display(cards.parse("AD"), {"A": "Т"}) == "Т♦"


def test_hand_order_puts_trumps_last_and_ranks_ascending() -> None:
    hand = [cards.parse(t) for t in ["AH", "6S", "7H", "KS", "9C"]]
    hearts = cards.SUITS.index("H")
    ordered = sorted(hand, key=cards.sort_key_by_suit(hearts))
    assert cards.to_strs(ordered) == ["6S", "KS", "9C", "7H", "AH"]
