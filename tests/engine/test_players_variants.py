"""The durak computer in every variant there is: legal moves at every level, and a seat's
memory of the game exact, whatever the options (seeds/durak.md §9) and the table size."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.base import Event
from engine.computer import choose
from engine.games.durak.players import search
from engine.games.durak.players.seen import Memory, seen_from_view
from engine.games.durak.rules import DurakOptions
from testing.durak_positions import VARIANTS, seeded, state

LEVELS = ("easy", "normal", "hard")
# Computer tables end long before this (the stall rule); a game past it is a bug.
MOST_DECISIONS = 1500


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    variant=st.sampled_from(VARIANTS),
    levels=st.lists(st.sampled_from(LEVELS), min_size=6, max_size=6),
)
def test_every_level_plays_whole_games_legally_in_every_variant(
    seed: int, variant: tuple[DurakOptions, int], levels: list[str]
) -> None:
    # Hard searches with a token budget here (one world per move, and few positions): the
    # move is legal whatever the budget.
    # At every decision the seat to act has seen every card that went to the discard
    # pile (cards passed on in a transfer too), so its memory of it is exact.
    options, players = variant
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search, "BUDGET", 0)
        patch.setattr(search, "MIN_SAMPLES", 1)
        patch.setattr(search, "MAX_SAMPLES", 1)
        patch.setattr(search, "NODES", 100)
        patch.setattr(search, "STYLE_BUDGET", 100)
        game = seeded(seed, players, options=options)
        events: list[Event] = []
        for step in range(MOST_DECISIONS):
            actor = game.to_act()
            if actor is None:
                break
            view, legal = game.view(actor.player), game.legal_moves()
            seen = seen_from_view(view, Memory.of(events))
            assert sorted(seen.discard_seen) == sorted(state(game)["discard"])
            move = choose("durak", view, legal, events, levels[actor.player], seed + step)
            assert move in legal
            events.extend(game.apply(move))
        assert game.is_finished()
