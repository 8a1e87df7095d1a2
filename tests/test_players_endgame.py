"""The endgame solver: exact in open endgames, on the engine's own rules.

Hard searches the move tree once every card is known; these tests hold the search (with
its cuts and its memory of positions) to a plain look at every line of tiny endgames,
the copies it plays on to the engine itself, and hard to a sure escape when one exists.
"""

from __future__ import annotations

import json
import random

import pytest

from engine import cards
from engine.base import Event
from engine.computer import choose
from engine.durak import Durak
from engine.players.durak_endgame import OutOfNodes, Solver
from tests.test_players_durak import constructed, new_game, state

# What decides the rest of a game besides the hands (whose order does not matter).
PLAY = ("table", "phase", "attacker", "defender", "pos", "limit", "controller", "out")


def brute(game: Durak, seat: int, line: frozenset[str] = frozenset()) -> bool:
    """Whether ``seat`` escapes being the fool, by trying every line of play; a line
    back to a position already on it counts as no escape, as in the solver."""
    actor = game.to_act()
    if actor is None:
        return game.result()["fool"] != seat  # type: ignore[index]
    document = state(game)
    key = json.dumps([sorted(h) for h in document["hands"]] + [document[k] for k in PLAY])
    if key in line:
        return False
    outcomes = []
    for move in game.legal_moves():
        child = game.copy()
        child.apply(move)
        outcomes.append(brute(child, seat, line | {key}))
    return any(outcomes) if actor.player == seat else all(outcomes)


def tiny_endgame(rng: random.Random) -> Durak:
    """One to three cards a player, up to two in the dummy, the stock gone."""
    deck = cards.deck(36)
    rng.shuffle(deck)
    sizes = [rng.randint(1, 3), rng.randint(1, 3), rng.randint(0, 2)]
    hands, at = [], 0
    for size in sizes:
        hands.append([cards.to_str(x) for x in deck[at : at + size]])
        at += size
    attacker = rng.randint(0, 1)
    return constructed(
        hands,
        trump=cards.to_str(deck[at]),
        stock=0,
        attacker=attacker,
        defender=1 - attacker,
        limit=min(6, sizes[1 - attacker]),
    )


def witnessed(game: Durak) -> list[Event]:
    """Events that show the whole discard pile going there, as a seat would remember."""
    pile = [cards.to_str(x) for x in state(game)["discard"]]
    return [
        *(Event("attack", {"seat": 0, "card": x}) for x in pile),
        Event("discarded", {"count": len(pile)}),
    ]


def test_the_solver_agrees_with_every_line_tried() -> None:
    rng = random.Random(12)
    outcomes = set()
    for _ in range(150):
        game = tiny_endgame(rng)
        trump = cards.parse(game.view(None).trump) & 3
        for seat in (0, 1):
            truth = brute(game, seat)
            assert Solver(seat, trump).escapes(game) == truth
            outcomes.add(truth)
    assert outcomes == {True, False}


def test_hard_escapes_whenever_an_escape_exists() -> None:
    # Seat 0 controls the dummy and sees every card: if some move escapes against every
    # reply, hard plays one such move; and a move proved to lose it plays only when all do.
    rng = random.Random(5)
    checked = 0
    for _ in range(120):
        game = tiny_endgame(rng)
        if game.to_act().player != 0 or len(game.legal_moves()) < 2:  # type: ignore[union-attr]
            continue
        escapes = {}
        for move in game.legal_moves():
            child = game.copy()
            child.apply(move)
            escapes[move] = brute(child, 0)
        if len(set(escapes.values())) < 2:
            continue
        move = choose("durak", game.view(0), game.legal_moves(), witnessed(game), "hard", 3)
        assert escapes[move]
        checked += 1
    assert checked >= 10


def test_the_solver_gives_up_past_its_budget() -> None:
    game = new_game(7)  # the opening: far too big a tree
    with pytest.raises(OutOfNodes):
        Solver(0, 0, nodes=50).escapes(game)


@pytest.mark.parametrize(("players", "dummy_plays"), [(2, False), (2, True), (4, True)])
def test_a_copy_plays_on_exactly_as_the_stored_game(players: int, dummy_plays: bool) -> None:
    # The solver plays on copies: each must follow the rules as the engine does, and
    # leave the game it was copied from alone.
    rng = random.Random(players)
    for seed in range(20):
        game = new_game(seed, players, dummy_plays)
        while not game.is_finished():
            twin, stored, before = game.copy(), Durak.from_json(game.to_json()), game.to_json()
            assert twin.position() == stored.position()
            for _ in range(rng.randint(1, 6)):
                if twin.is_finished():
                    break
                move = rng.choice(twin.legal_moves())
                assert stored.legal_moves() == twin.legal_moves()
                assert twin.apply(move) == stored.apply(move)
            assert twin.to_json() == stored.to_json()
            assert game.to_json() == before
            game.apply(rng.choice(game.legal_moves()))
