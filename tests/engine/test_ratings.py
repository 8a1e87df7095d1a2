"""engine.ratings: what each kind of finished game scores, and the ratings, without Redis."""

from __future__ import annotations

import pytest

from engine import ratings
from engine.ratings import Outcome, Rating
from engine.registry import GAMES
from testing.durak_positions import play, position


def durak_outcome(seat_0: str, dummy_cards: str) -> Outcome:
    """Seat 0 leads 7H and seat 1 beats it with 8H, the last card of one of them at least."""
    game = position([seat_0, "8H"], dummy_cards)
    play(game, "a7H", "b7H8H")
    result = game.result()
    assert result is not None
    return GAMES["durak"].outcome("durak", result, game.summary())


def test_a_durak_fool_ranks_below_everyone_else_and_whoever_went_out_first_is_noted() -> None:
    out = durak_outcome("7H 9C", "AC")
    assert (out.ranks, out.fool, out.first_out, out.drawn) == ((2, 1), 0, 1, False)
    assert out.figures(0) == {"n": 1, "fool": 1}
    assert out.figures(1) == {"n": 1, "first": 1}
    assert ratings.above(out) == [(1, 0)]
    assert not out.streak_goes_on(0) and out.streak_goes_on(1)


def test_the_dummy_left_last_makes_the_last_player_out_the_fool() -> None:
    out = durak_outcome("7H", "AC")
    assert (out.ranks, out.fool, out.first_out) == ((1, 2), 1, 0)
    assert out.figures(1) == {"n": 1, "fool": 1}
    assert out.figures(0) == {"n": 1, "first": 1}


def test_a_drawn_durak_game_ties_everyone_and_breaks_no_streak() -> None:
    out = durak_outcome("7H", "")
    assert out.drawn and out.fool is None and out.ranks == (1, 1)
    assert out.figures(1)["draw"] == 1 and "fool" not in out.figures(1)
    assert ratings.above(out) == []
    assert out.streak_goes_on(0) and out.streak_goes_on(1)


@pytest.mark.parametrize(
    ("goals", "winner", "expected"),
    [
        ([3, 1], 0, [("won", 3, 1), ("lost", 1, 3)]),
        ([0, 2], 1, [("lost", 0, 2), ("won", 2, 0)]),
        ([2, 2], None, [("draw", 2, 2), ("draw", 2, 2)]),
    ],
)
def test_football_scores_a_win_a_loss_or_a_draw_with_the_goals(
    goals: list[int], winner: int | None, expected: list[tuple[str, int, int]]
) -> None:
    out = GAMES["football"].outcome("football", {"goals": goals, "winner": winner}, {})
    for seat, (key, scored, conceded) in enumerate(expected):
        assert out.figures(seat) == {"n": 1, key: 1, "gf": scored, "ga": conceded}
        assert out.streak_goes_on(seat) == (key == "won")
    assert out.drawn == (winner is None)


def test_the_fool_loses_rating_and_the_others_tie_above_him() -> None:
    new = ratings.rate([Rating(), Rating(), Rating()], [1, 2, 1])
    assert new[0] == new[2]
    assert new[1].mu < Rating().mu < new[0].mu
    assert all(r.sigma < Rating().sigma for r in new)


def test_a_draw_between_equals_changes_no_mu_but_makes_both_surer() -> None:
    a, b = ratings.rate([Rating(), Rating()], [1, 1])
    assert a == b and a.mu == pytest.approx(Rating().mu) and a.sigma < Rating().sigma


def test_a_rating_is_a_pure_function_of_the_ratings_and_the_ranks() -> None:
    start = [Rating(27.0, 5.0), Rating(22.0, 7.0)]
    assert ratings.rate(start, [2, 1]) == ratings.rate(list(start), [2, 1])
    # an upset moves the ratings more than the expected result does
    upset = ratings.rate(start, [2, 1])
    expected = ratings.rate(start, [1, 2])
    assert start[0].mu - upset[0].mu > expected[0].mu - start[0].mu


def test_one_lucky_game_shows_a_low_conservative_figure() -> None:
    lucky = ratings.rate([Rating(), Rating()], [1, 2])[0]
    steady = Rating()
    for _ in range(6):
        steady = ratings.rate([steady, Rating()], [1, 2])[0]
    assert lucky.mu > Rating().mu and lucky.shown < steady.shown
    assert Rating().shown == pytest.approx(0.0)


def test_the_trend_spans_the_bars_from_lowest_to_highest() -> None:
    assert ratings.trend([1.0, 2.0, 4.0, 7.0]) == "▁▂▄▇"
    assert ratings.trend([3.0, 3.0]) == "▄▄"
    assert ratings.trend([]) == ""
