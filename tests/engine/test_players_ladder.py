"""The durak ladder: the greedy yardstick, easy as a beginner, and games that end.

Strength (easy losing to greedy but not hopelessly, normal and hard beating it) is
measured by ``bench/players.py`` over hundreds of games, each figure held to its target
there; these tests pin down what a person at the table would notice: that the
yardstick plays as described, that easy never plays absurdly, and that a table of
computers never goes round in circles.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import cards
from engine.base import Event
from engine.computer import choose
from engine.games.durak.game import Durak
from engine.games.durak.players import search as search
from engine.games.durak.players.greedy import greedy
from engine.games.durak.players.seen import STALL_TAKES, Memory, seen_from_view
from testing.durak_positions import PEREVODNOY, laid, move, play_levels, seeded, turn

# ---------------------------------------------------------------------- greedy


# Positions and greedy's move there (testing.durak_positions.laid: the hands of seat 0, seat 1
# and the dummy, the trump card, the stock, the table). It never takes while it can beat,
# however dear the card: that is its weakness. Where transfers are played it sheds a card
# of the attack's rank rather than spend one that beats; a trump it keeps, as in throw-ins.
GREEDY = {
    "lead_low": ("KD 7H 6H 9S AS 10C/6S 8S QC JD 7D AD/", "9H", 10, "", "a9S"),
    "beat_even_with_a_trump": ("KD 9C 6C 7C AD/AH KH 7S 10D JC 8D/", "9H", 12, "9S", "b9SKH"),
    "take_only_if_nothing_beats": ("KD 9C 6C 7C AD/6S 7S 10D JC 8D/", "9H", 12, "9S", "t"),
    "throw_in_plain": ("9C 7H KD 9D/8D 10D 6S QS JC/", "6H", 8, "7S>9S", "w9C"),
    "keep_trumps": ("7H KD AS/8D 10D 6S QS JC/", "6H", 8, "7S>9S", "p"),
    "transfer": ("KD 9C 7C AD 10S/9D 9H 7S 10D JC 8D/", "6H", 12, "9S", PEREVODNOY, "r9D"),
    "keep_a_trump": ("KD 9C 7C AD 10S/9H 7S 10D JC 8D AC/", "6H", 12, "9S", PEREVODNOY, "b9S9H"),
}


@pytest.mark.parametrize("row", GREEDY.values(), ids=GREEDY)
def test_greedy_plays_the_obvious_move(row: tuple[Any, ...]) -> None:
    *position, token = row
    game = laid(*position)
    assert greedy(game.legal_moves(), cards.parse(game.view(0).trump) & 3) == move(game, token)


# ---------------------------------------------------------------------- the ladder


def test_easy_never_plays_an_absurd_move() -> None:
    # A beginner errs, but he never takes while he holds a card that beats, and never
    # throws a trump in.
    checked = 0
    for seed in range(10):
        game = seeded(seed, 2 + seed % 3, dummy_plays=seed % 2 == 1)
        events: list[Event] = []
        while not game.is_finished():
            _, view, legal = turn(game)
            trump = cards.parse(view.trump) & 3
            move = choose("durak", view, legal, events, "easy", seed * 1000 + len(events))
            if move.kind == "take":
                assert [m.kind for m in legal] == ["take"]
            if move.kind == "throw":
                assert move.cards[0] & 3 != trump
            checked += len(legal) > 1
            events.extend(game.apply(move))
    assert checked > 250


def test_easy_depends_on_its_seed() -> None:
    game = seeded(2, 3)
    _, view, legal = turn(game)
    picks = {choose("durak", view, legal, [], "easy", seed) for seed in range(40)}
    assert len(picks) > 1


# ---------------------------------------------------------------------- no endless games

# The bot gives up on a game after this many computer moves; no game may come near it.
BOT_CAP = 600


def steps_to_finish(game: Durak, levels: list[str], seed: int) -> int:
    return len(play_levels(game, levels, seed, stop=BOT_CAP)[1])


@pytest.mark.parametrize(("players", "dummy_plays"), [(3, False), (4, True), (5, False), (6, True)])
def test_computer_tables_always_finish(players: int, dummy_plays: bool) -> None:
    # Before the stall rule, one all-normal game in a few hundred went round for ever:
    # a high card led, beaten with a low trump, a trump thrown on top, all taken, the
    # same card led again at the next seat.
    longest = 0
    for seed in range(20):  # 80 tables over the four cases
        game = seeded(seed, players, dummy_plays)
        levels = [("easy", "normal")[(seed >> p) & 1] for p in range(players)]
        longest = max(longest, steps_to_finish(game, levels, seed))
    assert longest < BOT_CAP // 2


def test_the_known_endless_game_now_ends() -> None:
    # Seed 88 at three normal seats used to cycle for ever once the stock ran out.
    assert steps_to_finish(seeded(88, 3), ["normal"] * 3, 88 * 7) < BOT_CAP // 2


def test_hard_tables_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    # A small search budget keeps this quick; the stall rule does not depend on it. (At
    # most four deals tried late in a duel, not 64, where most of its time went.)
    monkeypatch.setattr(search, "BUDGET", 0)
    monkeypatch.setattr(search, "MIN_SAMPLES", 1)
    monkeypatch.setattr(search, "MAX_SAMPLES", 4)
    game = seeded(3, 4, dummy_plays=True)
    assert steps_to_finish(game, ["hard"] * 4, 3) < BOT_CAP // 2
    assert game.is_finished()


def test_a_stalled_game_plays_for_progress() -> None:
    # After many takes in a row, normal stops throwing in and beats whatever it can.
    game = laid("7S KC AD/8D 9D 6S QS JC/", "6C", 0, "7D>10D")
    took = Event("took", {"seat": 1, "count": 2})
    fresh = seen_from_view(game.view(0), Memory.of([took]))
    stalled_memory = Memory.of([took] * STALL_TAKES)
    stalled = seen_from_view(game.view(0), stalled_memory)
    assert not fresh.stalled and stalled.stalled
    legal = game.legal_moves()
    assert choose("durak", game.view(0), legal, [took], "normal", 0).kind == "throw"
    assert choose("durak", game.view(0), legal, [took] * STALL_TAKES, "normal", 0).kind == "pass"
    assert choose("durak", game.view(0), legal, [took] * STALL_TAKES, "easy", 0).kind == "pass"
    # And it beats with the ace of trumps early, where it would rather take otherwise.
    early = laid("KD 9C 6C 7C AD/AH 6S 7S 10D JC 8D/", "9H", 12, "9S")
    legal = early.legal_moves()
    assert choose("durak", early.view(1), legal, [took], "normal", 0).kind == "take"
    beat = choose("durak", early.view(1), legal, [took] * STALL_TAKES, "normal", 0)
    assert beat == move(early, "b9SAH")
