"""Hard's reading of the others' choices: which deals of the unseen cards fit them.

A deal the engine's own passing-over rules out must never be the true one, however the
game went; a sensible player's unlikely choice makes a deal unlikely, not impossible; a
hand's old choices say nothing about cards it took afterwards, and less and less as it
draws new ones.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import cards
from engine.base import Event
from engine.computer import choose
from engine.games.durak.game import Durak
from engine.games.durak.players import reads as durak_reads
from engine.games.durak.players.reads import ODDS, Reads
from engine.games.durak.players.sampling import every_world
from engine.games.durak.players.search import MAX_DEALS, MAX_SAMPLES, fitness, hard, likeliest
from engine.games.durak.players.seen import Memory, Seen, seen_from_view
from engine.games.durak.rules import DurakMove, DurakOptions
from engine.games.durak.view import DurakView
from testing.contract import c
from testing.durak_positions import NAMES, VARIANTS, state, turn

SPADES = cards.parse("6S") & 3  # the trump suit of the made-up bouts below
SEED_GAME = DurakOptions()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), variant=st.sampled_from(VARIANTS), stop=st.integers(1, 400))
def test_the_true_deal_is_never_ruled_out(
    seed: int, variant: tuple[DurakOptions, int], stop: int
) -> None:
    # Random play slips all the time, so only what reads take for facts (a hand passed
    # over held no card of the table's ranks, a hand asked held one) are put to zero:
    # the true hands must still fit, at every table size, in every variant (where the
    # bout's cap is five before the first discard, or only neighbours throw in, a hand
    # the engine passes over for those reasons holds what it likes).
    options, players = variant
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(durak_reads.ODDS, "skipped", 0.0)
        patch.setitem(durak_reads.ODDS, "asked", 0.0)
        game = Durak.new(options, NAMES[:players], dealer=seed % players, seed=seed)
        rng = random.Random(seed)
        events: list[Event] = []
        for _ in range(stop):
            if game.is_finished():
                break
            events.extend(game.apply(rng.choice(game.legal_moves())))
        trump = cards.parse(game.view(0).trump) & 3
        reads = Reads.of(events, players, trump, options)
        for who, hand in enumerate(state(game)["hands"]):
            assert reads.fit(who).weight(hand) > 0, (who, hand)


def bout(dummy_passes: bool) -> list[Event]:
    """Seat 0 leads the seven of hearts at seat 1, who beats it with the nine; then the
    dummy declines to throw in (or is passed over), and so is seat 0."""
    events = [
        Event("bout", {"attacker": 0, "defender": 1}),
        Event("attack", {"seat": 0, "card": "7H"}),
        Event("beat", {"seat": 1, "card": "7H", "with": "9H"}),
    ]
    if dummy_passes:
        events.append(Event("pass", {"seat": "dummy"}))
    return [*events, Event("discarded", {"count": 2})]


def test_a_pass_makes_a_throwable_plain_card_unlikely() -> None:
    dummy = Reads.of(bout(dummy_passes=True), 2, SPADES, SEED_GAME).fit(2)
    trump_seven = dummy.weight([c("7S"), c("KD")])
    # A sensible player keeps a trump seven; a plain seven he would have thrown in, so
    # the pass makes it unlikely, never impossible; and the engine asks only a hand
    # holding a card of a rank on the table.
    assert dummy.weight([c("7C"), c("KD")]) == pytest.approx(trump_seven * ODDS["pass_plain"])
    assert dummy.weight([c("8C"), c("KD")]) == pytest.approx(trump_seven * ODDS["asked"])


def test_a_hand_passed_over_held_no_card_of_the_table_ranks() -> None:
    reads = Reads.of(bout(dummy_passes=False), 2, SPADES, SEED_GAME)
    for who in (0, 2):  # the attacker and the dummy were both passed over
        fit = reads.fit(who)
        assert fit.weight([c("9D")]) == pytest.approx(ODDS["skipped"] * fit.weight([c("8D")]))
    # The defender is never asked to throw in: nothing is read from his silence.
    assert reads.fit(1).weight([c("9D")]) == reads.fit(1).weight([c("8D")])


def test_cards_taken_after_a_choice_do_not_count_against_it() -> None:
    # Seat 0 beats the six of clubs with the ten, then takes the eight of clubs.
    events = [
        Event("bout", {"attacker": 1, "defender": 0}),
        Event("attack", {"seat": 1, "card": "6C"}),
        Event("beat", {"seat": 0, "card": "6C", "with": "10C"}),
        Event("discarded", {"count": 2}),
        Event("bout", {"attacker": 1, "defender": 0}),
        Event("attack", {"seat": 1, "card": "8C"}),
        Event("take_declared", {"seat": 0}),
        Event("took", {"seat": 0, "count": 1}),
    ]
    fit = Reads.of(events, 2, SPADES, SEED_GAME).fit(0)
    plain = fit.weight([c("8C"), c("KD")])
    # The eight came after the ten was spent: holding it now takes nothing from that
    # choice, while a seven held all along would have beaten the six more cheaply.
    assert plain == fit.weight([c("QD"), c("KD")])
    assert fit.weight([c("7C"), c("KD")]) == pytest.approx(plain * ODDS["beat_dear"])


def test_a_take_round_tells_who_had_nothing_more_to_throw_in() -> None:
    # Seat 1 takes the seven of hearts; seat 0 throws in the seven of clubs and is then
    # passed over, the dummy at once: neither held another seven (nor, for the dummy, a
    # seven at all), while a hand that passed may hold one.
    events = [
        Event("bout", {"attacker": 0, "defender": 1}),
        Event("attack", {"seat": 0, "card": "7H"}),
        Event("take_declared", {"seat": 1}),
        Event("throw", {"seat": 0, "card": "7C"}),
        Event("took", {"seat": 1, "count": 2}),
    ]
    reads = Reads.of(events, 2, SPADES, SEED_GAME)
    for who in (0, 2):
        fit = reads.fit(who)
        assert fit.weight([c("7D")]) == pytest.approx(ODDS["skipped"] * fit.weight([c("8D")]))


def test_old_choices_count_for_less_after_a_draw() -> None:
    # The dummy passed over with a seven on the table, then drew two cards to its six:
    # a seven it holds now may be one of them (two chances in eight).
    events = [*bout(dummy_passes=False), Event("drew", {"seat": "dummy", "count": 2})]
    fit = Reads.of(events, 2, SPADES, SEED_GAME).fit(2)
    fade = 2 / 8
    skipped = ODDS["skipped"]
    assert fit.weight([c("7D")]) == pytest.approx(skipped + (1 - skipped) * fade)
    assert fit.weight([c("7D"), c("9C")]) == pytest.approx(skipped + (1 - skipped) * fade**2)
    # Past enough draws a choice says nothing any more.
    many = [*bout(dummy_passes=False), *[Event("drew", {"seat": "dummy", "count": 6})] * 3]
    assert Reads.of(many, 2, SPADES, SEED_GAME).fit(2).weight([c("7D")]) == 1


def late_positions(
    seeds: range, deals: Callable[[Seen], bool]
) -> Iterator[tuple[DurakView, Seen, list[DurakMove], list[Event]]]:
    """Two-player positions, the stock gone, where the seat without the dummy has a
    choice and the deals of the cards it cannot see are as ``deals`` wants, in games
    played by normal."""
    for seed in seeds:
        game = Durak.new(DurakOptions(deck_size=36), NAMES[:2], dealer=seed % 2, seed=seed)
        events: list[Event] = []
        while not game.is_finished():
            _, view, legal = turn(game)
            seen = seen_from_view(view, Memory.of(events))
            late = seen.stock <= 1 and seen.dummy_hand is None and not seen.stalled
            if late and len(legal) > 1 and deals(seen):
                yield view, seen, legal, events
            events.extend(game.apply(choose("durak", view, legal, events, "normal", 1)))


def test_hard_weighs_the_deals_by_what_it_read() -> None:
    # Nothing read weighs every deal alike, and hard then plays as it did before it
    # read anything; what the game shows changes some of its moves. At most eight deals
    # (all searched, as up to MAX_SAMPLES are): hard's search of 20 to 60 took seconds.
    changed = 0
    few = late_positions(range(40), lambda seen: every_world(seen, 8) is not None)
    for count, (view, seen, legal, events) in enumerate(few):
        blank = Reads.of([], 2, seen.trump, SEED_GAME)
        unread = hard(view, seen, legal, 7)
        assert hard(view, seen, legal, 7, reads=blank) == unread
        read = Reads.of(events, 2, seen.trump, SEED_GAME)
        changed += hard(view, seen, legal, 7, reads=read) != unread
        if changed and count >= 2:
            break
    assert changed


def test_where_many_deals_are_left_hard_tries_the_likeliest() -> None:
    def many(seen: Seen) -> bool:
        return every_world(seen, MAX_SAMPLES) is None and every_world(seen, MAX_DEALS) is not None

    checked = 0
    for _, seen, _, events in late_positions(range(40), many):
        fits = Reads.of(events, 2, seen.trump, SEED_GAME).fits(seen)
        deals = every_world(seen, MAX_DEALS)
        assert deals is not None
        kept = likeliest(deals, fits)
        assert len(kept) == MAX_SAMPLES
        key = [[sorted(h) for h in w.hands] for w, _ in kept]
        dropped = [w for w in deals if [sorted(h) for h in w.hands] not in key]
        assert len(dropped) == len(deals) - MAX_SAMPLES
        weights = [fitness(fits, w) for w, _ in kept]
        assert weights == [weight for _, weight in kept]
        # The likeliest come first: the searches against the styles reach them first.
        assert weights == sorted(weights, reverse=True)
        assert weights[-1] >= max(fitness(fits, w) for w in dropped)
        checked += 1
        if checked == 3:
            break
    assert checked == 3
