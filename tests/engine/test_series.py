"""Series rules: who starts a football rematch, who deals the next durak game."""

import random

from engine.games.football import series as football_series
from engine.registry import GAMES
from engine.series import Carry


def test_football_first_game_draws_the_first_player_by_lot() -> None:
    firsts = {football_series.seating(["Ann", "Bob"], True, random.Random(s))[0] for s in range(40)}
    assert firsts == {"Ann", "Bob"}


def test_a_game_scores_for_the_winner_in_football_and_the_fool_in_durak() -> None:
    football, durak = GAMES["football"].finish, GAMES["durak"].finish
    assert football(Carry(False), {"winner": 1, "goals": [0, 1]}) == 1
    assert football(Carry(False), {"winner": None, "goals": [1, 1]}) is None
    carry = Carry(False, dealer=0)
    assert durak(carry, {"fool": 2}) == 2
    assert (carry.dealer, carry.previous_fool) == (2, 2)  # finishing hands the deal to the fool
    carry = Carry(False, dealer=1, previous_fool=2)
    assert durak(carry, {"fool": None}) is None
    assert (carry.dealer, carry.previous_fool) == (1, None)  # after a draw the same dealer deals


def test_a_series_first_durak_game_draws_the_dealer_and_forgets_the_previous_fool() -> None:
    spec = GAMES["durak"]
    options = spec.options.model_validate({})
    dealers = set()
    for s in range(40):
        carry = Carry(True, dealer=1, previous_fool=1)
        spec.deal(options, ["A", "B", "C"], carry, random.Random(s), s)
        assert carry.previous_fool is None
        dealers.add(carry.dealer)
    assert dealers == {0, 1, 2}


def test_a_football_rematch_deals_the_other_player_first() -> None:
    spec = GAMES["football"]
    game, order = spec.deal(
        spec.options.model_validate({}), ["Ann", "Bob"], Carry(False), random.Random(0), 1
    )
    assert order == [1, 0] and game.players == ["Bob", "Ann"]
