"""The endgame searches: exact in open endgames, on the engine's own rules.

Hard searches the move tree once every card is known; these tests hold the searches
(with their cuts and their memory of positions) to a plain look at every line of tiny
endgames, the copies they play on to the engine itself, hard to a sure escape when one
exists and to an escape against the styles of play when none does, and the deals it
tries to every deal the seat cannot rule out.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from engine import cards
from engine.base import Event
from engine.computer import choose
from engine.games.durak.game import Durak
from engine.games.durak.players.endgame import (
    STYLE_NODES,
    STYLES,
    OutOfNodes,
    Solver,
    Style,
    Versus,
)
from engine.games.durak.players.sampling import Mirror, World, every_world, hidden_places
from engine.games.durak.players.search import unescaped
from engine.games.durak.players.seen import Memory, seen_from_view
from engine.games.durak.rules import DurakMove
from testing.durak_positions import position, seeded, state

# What decides the rest of a game besides the hands (whose order does not matter).
PLAY = ("table", "phase", "attacker", "defender", "pos", "limit", "controller", "out")


def brute(
    game: Durak,
    seat: int,
    style: Style | None = None,
    mirror: Mirror | None = None,
    line: frozenset[str] = frozenset(),
) -> bool:
    """Whether ``seat`` escapes being the fool, by trying every line of play (only the
    seat's own, when everyone else plays ``style``, followed on ``mirror``); a line back
    to a position already on it counts as no escape, as in the searches."""
    actor = game.to_act()
    if actor is None:
        return game.result()["fool"] != seat  # type: ignore[index]
    document = state(game)
    key = json.dumps([sorted(h) for h in document["hands"]] + [document[k] for k in PLAY])
    if key in line:
        return False
    legal = game.legal_moves()
    if style is not None and actor.player != seat and len(legal) > 1:
        assert mirror is not None
        legal = [style(mirror, actor, legal)]
    outcomes = []
    for move in legal:
        child, twin = game.copy(), None if mirror is None else mirror.copy()
        events = child.apply(move)
        if twin is not None:
            twin.update(events)
        outcomes.append(brute(child, seat, style, twin, line | {key}))
    return any(outcomes) if actor.player == seat else all(outcomes)


def mirrored(game: Durak, seat: int) -> Mirror:
    """The true world of ``game`` as ``seat``'s playouts follow it."""
    full = state(game)
    seen = seen_from_view(game.view(seat), Memory.of(witnessed(game)))
    world = World([list(h) for h in full["hands"]], [], list(full["discard"]))
    return Mirror(seen, world)


def tiny_endgame(rng: random.Random) -> Durak:
    """One to three cards a player, up to two in the dummy, the stock gone."""
    deck = cards.deck(36)
    rng.shuffle(deck)
    sizes = [rng.randint(1, 3), rng.randint(1, 3), rng.randint(0, 2)]
    hands, at = [], 0
    for size in sizes:
        hands.append(" ".join(cards.to_strs(deck[at : at + size])))
        at += size
    attacker = rng.randint(0, 1)
    trump = cards.to_str(deck[at])
    return position(hands[:2], hands[2], attacker, 1 - attacker, controller=0, trump=trump)


def deciding(seed: int, seat: int, tries: int) -> Iterator[Durak]:
    """Tiny endgames in which ``seat`` acts and has a choice."""
    rng = random.Random(seed)
    for _ in range(tries):
        game = tiny_endgame(rng)
        actor = game.to_act()
        if actor is not None and actor.player == seat and len(game.legal_moves()) > 1:
            yield game


def witnessed(game: Durak) -> list[Event]:
    """Events that show the whole discard pile going there, as a seat would remember."""
    pile = [cards.to_str(x) for x in state(game)["discard"]]
    return [
        *(Event("attack", {"seat": 0, "card": x}) for x in pile),
        Event("discarded", {"count": len(pile)}),
    ]


def test_the_searches_agree_with_every_line_tried() -> None:
    # Against a fixed style only the seat's own moves branch; a sure escape (against best
    # play) is an escape against every style, and some endgames lost against best play
    # are won against a style.
    rng = random.Random(12)
    outcomes: Counter[tuple[bool, bool]] = Counter()
    for _ in range(30):
        game = tiny_endgame(rng)
        trump = cards.parse(game.view(None).trump) & 3
        for seat in (0, 1):
            sure = brute(game, seat)
            assert Solver(seat, trump).escapes(game) == sure
            for style in STYLES:
                truth = brute(game, seat, style, mirrored(game, seat))
                found = Versus(seat, trump, style).escapes(game.copy(), mirrored(game, seat))
                assert found == truth
                assert truth or not sure
                outcomes[sure, truth] += 1
    assert outcomes[True, True] and outcomes[False, True] and outcomes[False, False]


def test_hard_escapes_whenever_an_escape_exists() -> None:
    # Seat 0 controls the dummy and sees every card: if some move escapes against every
    # reply, hard plays one such move; and a move proved to lose it plays only when all do.
    checked = 0
    for game in deciding(5, 0, 120):
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
        if checked == 10:
            break
    assert checked == 10


def test_the_solver_gives_up_past_its_budget() -> None:
    game = seeded(7)  # the opening: far too big a tree
    with pytest.raises(OutOfNodes):
        Solver(0, 0, nodes=50).escapes(game)


@pytest.mark.parametrize(("players", "dummy_plays"), [(2, False), (2, True), (4, True)])
def test_a_copy_plays_on_exactly_as_the_stored_game(players: int, dummy_plays: bool) -> None:
    # The solver plays on copies: each must follow the rules as the engine does, and
    # leave the game it was copied from alone.
    rng = random.Random(players)
    for seed in range(20):
        game = seeded(seed, players, dummy_plays)
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


def escapes_per_move(game: Durak, seat: int) -> dict[DurakMove, tuple[bool, int]]:
    """For each move: whether it escapes best play, and how many styles it escapes."""
    trump = cards.parse(game.view(None).trump) & 3
    found = {}
    for move in game.legal_moves():
        child, mirror = game.copy(), mirrored(game, seat)
        mirror.update(child.apply(move))
        styles = sum(brute(child, seat, s, mirror) for s in STYLES)
        found[move] = (Solver(seat, trump).escapes(child.copy()), styles)
    return found


def test_hard_plays_on_for_the_styles_when_best_play_would_win() -> None:
    # Seat 0 controls the dummy and sees every card.  When no move escapes best play,
    # hard does not give up: it plays a move that escapes against as many styles of
    # play as any move does.
    checked = 0
    for game in deciding(8, 0, 400):
        found = escapes_per_move(game, 0)
        if any(sure for sure, _ in found.values()):
            continue
        styles = {count for _, count in found.values()}
        if len(styles) < 2:
            continue
        move = choose("durak", game.view(0), game.legal_moves(), witnessed(game), "hard", 3)
        assert found[move][1] == max(styles)
        checked += 1
        if checked == 5:
            break
    assert checked == 5


def test_every_deal_the_seat_cannot_rule_out_is_tried_once() -> None:
    # Seat 1 does not see the dummy: late in the game the unseen cards lie between the
    # dummy and seat 0's hand, and every way of dealing them is one world, the true one
    # among them.
    rng = random.Random(4)
    checked = 0
    for _ in range(60):
        game = tiny_endgame(rng)
        full = state(game)
        seen = seen_from_view(game.view(1), Memory.of(witnessed(game)))
        worlds = every_world(seen, 10_000)
        assert worlds is not None
        slots = hidden_places(seen)
        assert len(worlds) == math.comb(len(seen.unseen), slots[0])
        deals = {tuple(tuple(sorted(h)) for h in w.hands) for w in worlds}
        assert len(deals) == len(worlds)
        assert tuple(tuple(sorted(h)) for h in full["hands"]) in deals
        for world in worlds:
            assert sorted(world.hands[1]) == sorted(full["hands"][1])
            assert [len(h) for h in world.hands] == [len(h) for h in full["hands"]]
            assert sorted(world.discard) == sorted(full["discard"])
            # Exactly the unseen cards are dealt, each once, beside what is known.
            dealt = [x for who in (0, 2) for x in world.hands[who] if x not in full["known"][who]]
            assert sorted(dealt) == sorted(seen.unseen)
            assert set(full["known"][0]) <= set(world.hands[0])
        if len(worlds) > 1:
            assert every_world(seen, len(worlds) - 1) is None
            checked += 1
        if checked == 20:
            break
    assert checked == 20


def test_trying_the_styles_leaves_the_position_alone() -> None:
    # Hard tries every move against the styles in the same world, one after another:
    # each try must start from the position as it is.
    checked = 0
    for game in deciding(3, 0, 40):
        seen = seen_from_view(game.view(0), Memory.of(witnessed(game)))
        mirror = mirrored(game, 0)
        mirror.update(game.apply(game.legal_moves()[0]))  # as hard tries a move
        before, mirrored_before = game.to_json(), copy.deepcopy(vars(mirror))
        unescaped(seen, game, mirror, STYLE_NODES)
        assert game.to_json() == before
        assert vars(mirror) == mirrored_before
        checked += 1
        if checked == 10:
            break
    assert checked == 10


def test_hard_in_the_endgame_depends_only_on_what_the_seat_sees() -> None:
    # Swap a card between seat 0's hand and the dummy, which seat 1 cannot see: seat 1's
    # view is the same, and so must be hard's move.
    swapped = 0
    for game in deciding(6, 1, 200):
        full = state(game)
        if not full["hands"][2]:
            continue
        twin_state = json.loads(json.dumps(full))
        hand, dummy = twin_state["hands"][0], twin_state["hands"][2]
        hand[0], dummy[0] = dummy[0], hand[0]
        twin = Durak.from_json(json.dumps(twin_state))
        assert twin.view(1) == game.view(1)
        ours = choose("durak", game.view(1), game.legal_moves(), witnessed(game), "hard", 3)
        theirs = choose("durak", twin.view(1), twin.legal_moves(), witnessed(twin), "hard", 3)
        assert ours == theirs
        swapped += 1
        if swapped == 10:
            break
    assert swapped == 10
