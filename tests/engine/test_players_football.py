"""The football computer player: legal, deterministic, fair, and its odds exact."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest

from engine import cards
from engine.cards import Card, matches
from engine.computer import choose, public_events
from engine.games.football.computer import best_shot, pitch_of, pool_of
from engine.games.football.game import Football
from engine.games.football.odds import Pitch, advance_chance, chance_from, reachable
from engine.games.football.rules import HOME, FootballOptions, Move
from engine.games.football.view import FootballView
from engine.records import export
from engine.registry import GAMES
from testing.contract import c


def brute(pitch: Pitch, ball: Card, row: int, col: int, pool: Counter[Card]) -> Fraction:
    """The scoring chance by enumerating which card lies under every face-down card.

    It knows nothing of the counting argument the player uses: every face-down card is
    drawn card by card from ``pool``, the field is updated with it, and the attacker
    picks his best way on after seeing it.
    """
    total = sum(pool.values())
    if row == 3:
        if pitch.keeper is not None:
            return Fraction(int(matches(pitch.keeper, ball)))
        return sum((Fraction(n, total) for k, n in pool.items() if matches(k, ball)), Fraction(0))
    best: Fraction | None = None
    for nxt in reachable(col):
        value = brute_step(pitch, ball, row + 1, nxt, pool)
        if value is not None and (best is None or value > best):
            best = value
    return best if best is not None else Fraction(0)


def brute_step(
    pitch: Pitch, ball: Card, row: int, col: int, pool: Counter[Card]
) -> Fraction | None:
    card = pitch.rows[row][col]
    if card is not None:
        return brute(pitch, ball, row, col, pool) if matches(card, ball) else None
    total = sum(pool.values())
    value = Fraction(0)
    for under, n in pool.items():
        if not matches(under, ball):
            continue
        rows = [list(r) for r in pitch.rows]
        rows[row][col] = under
        turned = Pitch(tuple(tuple(r) for r in rows), pitch.keeper)
        value += Fraction(n, total) * brute(turned, ball, row, col, pool - Counter([under]))
    return value


def small_pool() -> Counter[Card]:
    return Counter(c(t) for t in ["6S", "7S", "8H", "9H", "6D", "JD", "QC", "KC", "AH", "10S"])


# (rows from the attacker's side, "." face down; keeper; ball; (row, column) the ball is on)
CONSTRUCTED = [
    ("6H 7C 8D 9S/. . KS ./. QH . ./. . . .", None, "7H", (0, 0)),
    ("6H 7C 8D 9S/AS . . 10C/. . . ./JC . . .", None, "9C", (0, 1)),
    ("6H 7C 8D 9S/. . . ./6C . KD ./. QS . .", "AS", "8S", (1, 2)),
    ("6H 7C 8D 9S/7D . . 7S/. QD . ./. . . .", "10D", "7D", (0, 3)),
]


def pitch(rows: str, keeper: str | None = None) -> Pitch:
    return Pitch(
        tuple(tuple(None if x == "." else c(x) for x in row.split()) for row in rows.split("/")),
        None if keeper is None else c(keeper),
    )


@pytest.mark.parametrize(("rows", "keeper", "ball", "at"), CONSTRUCTED)
def test_chance_equals_brute_force_enumeration(
    rows: str, keeper: str | None, ball: str, at: tuple[int, int]
) -> None:
    field = pitch(rows, keeper)
    pool = small_pool()
    exact = chance_from(field, c(ball), at[0], at[1], pool)
    assert exact == brute(field, c(ball), at[0], at[1], pool)
    assert 0 < exact < 1
    for col in reachable(at[1]):
        step = advance_chance(field, c(ball), at[0], col, pool)
        assert step == brute_step(field, c(ball), at[0] + 1, col, pool)


def test_duplicate_cards_count_by_multiplicity() -> None:
    # With several decks a face-down card may be a copy of a card already seen.
    field = pitch("6H 7C 8D 9S/. . . ./. . . ./. . . .")
    pool = Counter({c("6S"): 3, c("7D"): 2, c("KH"): 1, c("AC"): 2})
    for col in range(4):
        assert chance_from(field, c("6H"), 0, col, pool) == brute(field, c("6H"), 0, col, pool)


def positions(games: int, decks: int = 1) -> list[tuple[Football, FootballView]]:
    """Real decisions of play, reached by random play."""
    found = []
    for seed in range(games):
        game = Football.new(FootballOptions(decks=decks), ["A", "B"], seed=seed)
        rng = random.Random(seed)
        while not game.is_finished():
            actor = game.to_act()
            assert actor is not None
            legal = game.legal_moves()
            if legal[0].kind != "setup":
                found.append((Football.from_json(game.to_json()), game.view(actor.player)))
            game.apply(legal[rng.randrange(len(legal))])
    return found


def test_normal_takes_the_best_chance_by_brute_force() -> None:
    checked = 0
    for game, view in positions(6)[::7]:
        seat = game.to_act().player  # type: ignore[union-attr]
        legal = list(game.legal_moves())
        pitch, pool = pitch_of(view, seat), pool_of(view)
        ball = cards.parse(view.ball)  # type: ignore[arg-type]
        if view.ball_at is None:
            hidden = sum(x is None for r in pitch.rows for x in r)
            if hidden > 6:
                continue  # the enumeration would take too long
            odds = {m: brute(pitch, ball, 0, m.column, pool) for m in legal}
        else:
            row = abs(view.ball_at[0] - HOME[seat])
            odds = {
                m: brute_step(pitch, ball, row + 1, m.column, pool) or Fraction(0) for m in legal
            }
        chosen = best_shot(view, legal)
        assert odds[chosen] == max(odds.values())
        checked += 1
    assert checked >= 20


def test_pool_is_exactly_the_cards_the_seat_cannot_see() -> None:
    for game, view in positions(3, decks=2)[::11]:
        seat = game.to_act().player  # type: ignore[union-attr]
        places = game.places()
        hidden: list[Card] = [*places["pile0"], *places["pile1"]]
        for pos, card in enumerate(places["field"]):
            if pos >> 2 != HOME[seat] and not view.face_up[pos >> 2][pos & 3]:
                hidden.append(card)
        if not view.keepers_up[1 - seat]:
            hidden.append(places["keepers"][1 - seat])
        assert pool_of(view) == Counter(hidden)


def self_play(seed: int, levels: tuple[str, str], decks: int = 1) -> tuple[Football, list[Move]]:
    game = Football.new(FootballOptions(decks=decks), ["A", "B"], seed=seed)
    chosen: list[Move] = []
    step = 0
    while not game.is_finished():
        actor = game.to_act()
        assert actor is not None
        legal = game.legal_moves()
        move = choose("football", game.view(actor.player), legal, [], levels[actor.player], step)
        assert move in legal
        chosen.append(move)
        game.apply(move)
        step += 1
    return game, chosen


@pytest.mark.parametrize("level", GAMES["football"].levels)
def test_every_level_plays_only_legal_moves(level: str) -> None:
    for seed in range(8):
        game, _ = self_play(seed, (level, "easy"), decks=1 + seed % 3)
        assert game.result() is not None


def test_same_inputs_same_moves() -> None:
    for level in ("easy", "normal"):
        assert self_play(5, (level, level))[1] == self_play(5, (level, level))[1]


def test_football_offers_no_hard_level() -> None:
    # Normal already plays the exact odds: a "hard" would be normal under another name.
    assert GAMES["football"].levels == ("easy", "normal")
    game = Football.new(FootballOptions(), ["A", "B"], seed=1)
    with pytest.raises(ValueError, match="level"):
        choose("football", game.view(0), game.legal_moves(), [], "hard", 0)


def test_easy_depends_on_its_seed() -> None:
    game = Football.new(FootballOptions(), ["A", "B"], seed=1)
    view, legal = game.view(0), game.legal_moves()
    picks = {choose("football", view, legal, [], "easy", s) for s in range(20)}
    assert len(picks) > 1


def test_public_events_replay_the_record() -> None:
    game, moves = self_play(7, ("normal", "easy"))
    record = export(game, [game.move_to_record(m) for m in moves])
    events = public_events(record)
    assert events[-1].kind == "finished"
    assert events[-1].data["goals"] == game.result()["goals"]  # type: ignore[index]
    goals = [e for e in events if e.kind == "goal"]
    assert len(goals) == sum(game.result()["goals"])  # type: ignore[index]


def table_view(field: list[list[str | None]], up: list[list[bool]], ball: str) -> FootballView:
    """Seat 0 to enter ``ball``, nothing else known but ``field``'s named cards."""
    return FootballView(
        seat=0,
        players=["A", "B"],
        options=FootballOptions(),
        phase="play",
        turn=0,
        setup_done=[True, True],
        hand=[],
        field=field,
        face_up=up,
        keepers=["AS", None],
        keepers_up=[False, False],
        ball=ball,
        ball_at=None,
        piles=[8, 9],
        goals=[[], []],
        discarded=[],
        result=None,
    )


HIDDEN: list[str | None] = [None, None, None, None]
DOWN = [False] * 4


# From column 1 the ball can walk onto a face-up QH in row 1 for sure.
@pytest.mark.parametrize(("row1", "chosen"), [(HIDDEN, 0), ([None, None, "QH", None], 1)])
def test_better_odds_win_and_equal_odds_go_to_the_entry_that_shows_nothing(
    row1: list[str | None], chosen: int
) -> None:
    view = table_view(
        [["6H", "7H", "8D", "9S"], row1, HIDDEN, HIDDEN],
        [[True, False, False, False], [x is not None for x in row1], DOWN, DOWN],
        "10H",
    )
    pitch, pool = pitch_of(view, 0), pool_of(view)
    equal = chance_from(pitch, c("10H"), 0, 0, pool) == chance_from(pitch, c("10H"), 0, 1, pool)
    assert equal == (chosen == 0)
    legal = [Move(0, "enter", 0), Move(0, "enter", 1)]
    assert choose("football", view, legal, [], "normal", 0) == Move(0, "enter", chosen)
