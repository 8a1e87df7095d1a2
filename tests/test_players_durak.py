"""The durak computer players: legal, deterministic, fair, and sound in known positions."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from engine import cards
from engine.base import Event
from engine.cards import Card
from engine.computer import choose, public_events
from engine.games.durak.game import Durak
from engine.games.durak.players.endgame import club, plain
from engine.games.durak.players.sampling import Mirror, Position, World, sample_world
from engine.games.durak.players.search import hard, playout
from engine.games.durak.players.seen import Memory, Seen, seen_from_view
from engine.games.durak.rules import HAND, DurakMove, DurakOptions
from engine.games.durak.rules import DurakActor as Actor
from engine.records import export
from engine.registry import GAMES

NAMES = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay"]


def c(text: str) -> Card:
    return cards.parse(text)


def new_game(seed: int, players: int = 2, dummy_plays: bool = False) -> Durak:
    options = DurakOptions(deck_size=36 if players <= 4 else 52, dummy_plays=dummy_plays)
    return Durak.new(options, NAMES[:players], dealer=seed % players, seed=seed)


def play(
    game: Durak, levels: list[str], seed: int, stop: int | None = None
) -> tuple[list[Event], list[DurakMove]]:
    """Play with the given level per seat (to the end, or ``stop`` decisions)."""
    events: list[Event] = []
    moves: list[DurakMove] = []
    while not game.is_finished() and (stop is None or len(moves) < stop):
        actor = game.to_act()
        assert actor is not None
        legal = game.legal_moves()
        move = choose(
            "durak", game.view(actor.player), legal, events, levels[actor.player], seed + len(moves)
        )
        assert move in legal
        moves.append(move)
        events.extend(game.apply(move))
    return events, moves


def state(game: Durak) -> dict[str, Any]:
    """The full stored state (the tests may look at everything; the players may not)."""
    return json.loads(game.to_json())  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- legality


@pytest.mark.parametrize(
    ("players", "dummy_plays"), [(2, False), (2, True), (3, False), (4, True), (6, False)]
)
def test_easy_and_normal_play_whole_games_legally(players: int, dummy_plays: bool) -> None:
    for seed in range(12):
        levels = [("easy", "normal")[(seed + p) % 2] for p in range(players)]
        game = new_game(seed, players, dummy_plays)
        play(game, levels, seed)
        assert game.is_finished()


def test_hard_plays_whole_games_legally() -> None:
    # A small search budget keeps this quick; the move is legal whatever the budget.
    for seed, (players, dummy_plays) in enumerate([(2, False), (3, True), (2, True)]):
        game = new_game(seed, players, dummy_plays)
        events: list[Event] = []
        while not game.is_finished():
            actor = game.to_act()
            assert actor is not None
            legal = game.legal_moves()
            view = game.view(actor.player)
            if actor.player == 0 and len(legal) > 1:
                seen = seen_from_view(view, Memory.of(events))
                move = hard(view, seen, legal, seed, budget=150)
            else:
                move = choose("durak", view, legal, events, "normal", seed)
            assert move in legal
            events.extend(game.apply(move))


def test_hard_through_choose_at_real_positions() -> None:
    for seed in range(4):
        game = new_game(seed, 2 + seed % 2)
        events, _ = play(game, ["normal"] * 4, seed, stop=10 + 7 * seed)
        actor = game.to_act()
        assert actor is not None
        legal = game.legal_moves()
        move = choose("durak", game.view(actor.player), legal, events, "hard", seed)
        assert move in legal


def test_levels_are_listed() -> None:
    assert GAMES["durak"].levels == ("easy", "normal", "hard")
    game = new_game(1)
    with pytest.raises(ValueError, match="level"):
        choose("durak", game.view(0), game.legal_moves(), [], "expert", 0)


# ---------------------------------------------------------------------- determinism


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_same_inputs_same_move(level: str) -> None:
    game = new_game(3, 3)
    events, _ = play(game, ["normal"] * 3, 3, stop=9)
    actor = game.to_act()
    assert actor is not None
    view, legal = game.view(actor.player), game.legal_moves()
    picks = {choose("durak", view, legal, events, level, 42) for _ in range(3)}
    assert len(picks) == 1


def test_whole_normal_games_repeat_exactly() -> None:
    first = play(new_game(8, 4), ["normal"] * 4, 8)[1]
    again = play(new_game(8, 4), ["normal"] * 4, 8)[1]
    assert first == again


# ---------------------------------------------------------------------- fairness


def positions(count: int, players: int, dummy_plays: bool) -> list[tuple[Durak, list[Event]]]:
    """Positions of real games with their event history, a few per game."""
    found = []
    seed = 0
    while len(found) < count:
        game = new_game(seed, players, dummy_plays)
        rng = random.Random(seed)
        events: list[Event] = []
        while not game.is_finished():
            legal = game.legal_moves()
            if len(legal) > 1 and rng.random() < 0.08:
                found.append((Durak.from_json(game.to_json()), list(events)))
            actor = game.to_act()
            assert actor is not None
            move = choose("durak", game.view(actor.player), legal, events, "normal", seed)
            events.extend(game.apply(move))
        seed += 1
    return found[:count]


def decisions(
    count: int, players: int, dummy_plays: bool
) -> Iterator[tuple[Durak, list[Event], Actor, Any, Seen]]:
    """:func:`positions` with who acts there, his view and what his seat knows."""
    for game, events in positions(count, players, dummy_plays):
        actor = game.to_act()
        assert actor is not None
        view = game.view(actor.player)
        yield game, events, actor, view, seen_from_view(view, Memory.of(events))


@pytest.mark.parametrize(("players", "dummy_plays"), [(2, False), (3, True), (5, False)])
def test_a_view_holds_no_other_hand(players: int, dummy_plays: bool) -> None:
    for game, _ in positions(15, players, dummy_plays):
        full = state(game)
        for seat in range(players):
            view = game.view(seat)
            assert sorted(map(c, view.hand)) == sorted(full["hands"][seat])
            if seat == full["controller"]:
                assert sorted(map(c, view.dummy_hand or [])) == sorted(full["hands"][players])
            else:
                assert view.dummy_hand is None
            shown = json.dumps(view.model_dump())
            for other in range(players + 1):
                visible = other == seat or (other == players and seat == full["controller"])
                if visible:
                    continue
                secret = set(full["hands"][other]) - set(full["known"][other])
                for card in secret:
                    assert f'"{cards.to_str(card)}"' not in shown


@pytest.mark.parametrize(("players", "dummy_plays"), [(2, False), (3, True), (4, False)])
def test_samples_never_move_a_seen_card(players: int, dummy_plays: bool) -> None:
    for game, _, actor, view, seen in decisions(12, players, dummy_plays):
        full = state(game)
        seat = actor.player
        # Every discarded card went there face up, so the seat knows the whole discard.
        assert sorted(seen.discard_seen) == sorted(full["discard"])
        rng = random.Random(1)
        for _ in range(10):
            world = sample_world(seen, rng)
            everything = [x for h in world.hands for x in h] + world.stock + world.discard
            everything += [x for pair in full["table"] for x in pair]
            assert Counter(everything) == Counter(full["deck"])
            assert sorted(world.hands[seat]) == sorted(full["hands"][seat])
            if seat == full["controller"]:
                assert sorted(world.hands[players]) == sorted(full["hands"][players])
            for who in range(players + 1):
                # Known cards stay where they are known to be; only unseen cards move.
                assert set(full["known"][who]) <= set(world.hands[who])
                hidden = set(world.hands[who]) - set(full["known"][who])
                if who != seat and not (who == players and seat == full["controller"]):
                    assert hidden <= seen.unseen
            assert sorted(world.discard) == sorted(full["discard"])
            assert len(world.stock) == view.stock
            if view.stock:
                assert world.stock[-1] == c(view.trump)
                assert set(world.stock[:-1]) <= seen.unseen


def dealt(players: int) -> int:
    """Cards dealt before the trump card: six to every player and to the dummy."""
    return HAND * (players + 1)


@pytest.mark.parametrize(("players", "dummy_plays"), [(2, False), (3, True), (4, True)])
def test_the_true_deal_rebuilds_the_same_game(players: int, dummy_plays: bool) -> None:
    # Load the real hands through the determinisation's position builder: the result
    # must be the real game, to the legal moves and every seat's view.
    for game, _, _, view, seen in decisions(10, players, dummy_plays):
        full = state(game)
        start = dealt(players)
        stock = [*full["deck"][start + 1 :], full["deck"][start]]
        world = World(
            [list(h) for h in full["hands"]], stock[full["drawn"] :], list(full["discard"])
        )
        rebuilt = Position(view, seen).game(world)
        assert rebuilt.legal_moves() == game.legal_moves()
        for seat in range(players):
            assert rebuilt.view(seat) == game.view(seat)


@pytest.mark.parametrize(("players", "dummy_plays"), [(2, True), (3, False), (4, True)])
def test_simulated_players_see_what_their_view_shows(players: int, dummy_plays: bool) -> None:
    # The playouts read each seat's knowledge off a mirror of the sampled world; it must
    # be exactly what that seat's real view and event memory give.
    for _, events, _, view, seen in decisions(6, players, dummy_plays):
        world = sample_world(seen, random.Random(5))
        sim = Position(view, seen).game(world)
        mirror = Mirror(seen, world)
        history = list(events)
        rng = random.Random(6)
        while not sim.is_finished():
            now = sim.to_act()
            assert now is not None
            mirrored = mirror.seen(now)
            real = seen_from_view(sim.view(now.player), Memory.of(history))
            for name in ("actor", "hand", "own", "dummy_hand", "table", "stock", "counts"):
                got, want = getattr(mirrored, name), getattr(real, name)
                if isinstance(want, list) and name != "table" and name != "counts":
                    got, want = sorted(got), sorted(want)
                assert got == want, name
            assert mirrored.known == real.known
            assert mirrored.unseen == real.unseen
            assert (mirrored.attacker, mirrored.defender, mirrored.phase) == (
                real.attacker,
                real.defender,
                real.phase,
            )
            assert mirrored.controller == real.controller and mirrored.out == real.out
            assert mirrored.takes == real.takes
            legal = sim.legal_moves()
            new = sim.apply(legal[rng.randrange(len(legal))])
            mirror.update(new)
            history.extend(new)


# ---------------------------------------------------------------------- events


def test_public_events_are_what_apply_returned() -> None:
    game = new_game(4, 3)
    events, moves = play(game, ["normal", "easy", "normal"], 4)
    record = export(game, [game.move_to_record(m) for m in moves])
    assert public_events(record) == events
    assert events[-1] == Event("finished", {"fool": game.result()["fool"]})  # type: ignore[index]


# ---------------------------------------------------------------------- heuristics


def constructed(
    hands: list[list[str]],
    trump: str,
    stock: int,
    table: list[tuple[str, str | None]] = (),  # type: ignore[assignment]
    phase: str = "lead",
    attacker: int = 0,
    defender: int = 1,
    known: list[list[str]] | None = None,
    limit: int = 6,
) -> Durak:
    """A two-player position (hands: seat 0, seat 1, dummy); unplaced cards are in the
    stock (the trump card last) and then the discard."""
    n = len(hands) - 1
    placed = [c(x) for h in hands for x in h] + [c(x) for p in table for x in p if x]
    trump_card = c(trump)
    rest = [x for x in cards.deck(36) if x not in placed and x != trump_card]
    stock_cards = [*rest[: stock - 1], trump_card] if stock else []
    discard = rest[stock - 1 :] if stock else [*rest, trump_card]
    dealt = 6 * (n + 1)
    others = [x for x in cards.deck(36) if x not in stock_cards]
    deck = [*others[:dealt], trump_card, *others[dealt:], *stock_cards[:-1]]
    if not stock:
        others.remove(trump_card)
        deck = [*others[:dealt], trump_card, *others[dealt:]]
    document = {
        "v": 1,
        "options": {"deck_size": 36},
        "players": NAMES[:n],
        "dealer": 1,
        "previous_fool": None,
        "deck": deck,
        "drawn": 36 - dealt - stock,
        "hands": [[c(x) for x in h] for h in hands],
        "known": [[c(x) for x in k] for k in (known or [[]] * (n + 1))],
        "discard": discard,
        "table": [[c(a)] if d is None else [c(a), c(d)] for a, d in table],
        "phase": phase,
        "attacker": attacker,
        "defender": defender,
        "pos": 0,
        "limit": limit,
        "controller": 0,
        "out": [],
        "pending": [],
        "fool": None,
    }
    return Durak.from_json(json.dumps(document))


def normal_move(game: Durak) -> DurakMove:
    actor = game.to_act()
    assert actor is not None
    return choose("durak", game.view(actor.player), game.legal_moves(), [], "normal", 0)  # type: ignore[no-any-return]


def test_leads_the_lowest_plain_card() -> None:
    game = constructed(
        [["KD", "9C", "6H", "7S", "AS", "10C"], ["6S", "8S", "QC", "JD", "7D", "AD"], []],
        trump="9H",
        stock=10,
    )
    assert normal_move(game) == DurakMove(0, False, "attack", (c("7S"),))


def test_leads_a_trump_only_when_it_holds_nothing_else() -> None:
    game = constructed(
        [["KH", "6H", "10H"], ["6S", "8S", "QC", "JD", "7D", "AD"], []], trump="9H", stock=0
    )
    assert normal_move(game) == DurakMove(0, False, "attack", (c("6H"),))


def test_beats_with_the_cheapest_card() -> None:
    game = constructed(
        [["KD", "9C", "6C", "7C", "AD"], ["AS", "QS", "9S", "7H", "10D", "JC"], []],
        trump="9H",
        stock=10,
        table=[("8S", None)],
        phase="defend",
    )
    assert normal_move(game) == DurakMove(1, False, "beat", (c("8S"), c("9S")))


def test_beats_with_the_lowest_trump_when_it_must() -> None:
    game = constructed(
        [["KD", "9C", "6C", "7C", "AD"], ["KH", "6S", "7H", "10D", "JC", "8D"], []],
        trump="9H",
        stock=10,
        table=[("10S", None)],
        phase="defend",
    )
    assert normal_move(game) == DurakMove(1, False, "beat", (c("10S"), c("7H")))


def test_takes_rather_than_burn_a_high_trump_early() -> None:
    hands = [["KD", "9C", "6C", "7C", "AD"], ["AH", "6S", "7S", "10D", "JC", "8D"], []]
    early = constructed(hands, trump="9H", stock=12, table=[("9S", None)], phase="defend")
    assert normal_move(early) == DurakMove(1, False, "take")
    # With the stock gone a take is what loses games: now the ace of trumps is spent.
    late = constructed(hands, trump="9H", stock=0, table=[("9S", None)], phase="defend")
    assert normal_move(late) == DurakMove(1, False, "beat", (c("9S"), c("AH")))


def test_throws_in_the_rank_the_defender_cannot_beat() -> None:
    # Seat 1 took 8D and 10D earlier: a 7D would be beaten for sure, a 9C perhaps not.
    game = constructed(
        [["7D", "9C", "KH", "AS"], ["8D", "10D", "6S", "QS", "JH"], []],
        trump="6H",
        stock=8,
        table=[("7S", "9S")],
        phase="throw",
        known=[[], ["8D", "10D"], []],
    )
    assert normal_move(game) == DurakMove(0, False, "throw", (c("9C"),))


def test_passes_rather_than_throw_in_a_trump_early() -> None:
    game = constructed(
        [["7H", "KD", "AS"], ["8D", "10D", "6S", "QS", "JC"], []],
        trump="6H",
        stock=8,
        table=[("7S", "9S")],
        phase="throw",
    )
    assert normal_move(game) == DurakMove(0, False, "pass")


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_finds_the_escape_in_an_open_endgame(level: str) -> None:
    # With the stock gone and the dummy in the seat's own hand, the only hidden hand is
    # the opponent's, and it is exactly the unseen cards: every sample is the truth.  If
    # some move lets the seat escape being the fool (everyone playing on as normal's
    # heuristics do), normal and hard must each find one such move.
    checked = 0
    for game, events, actor, view, seen in decisions(200, 2, False):
        if view.stock or view.dummy_hand is None or len(game.legal_moves()) < 2:
            continue
        full = state(game)
        world = World([list(h) for h in full["hands"]], [], list(full["discard"]))
        outcomes = {}
        for move in game.legal_moves():
            sim, mirror = Position(view, seen).game(world), Mirror(seen, world)
            mirror.update(sim.apply(move))
            outcomes[move] = playout(sim, mirror, actor.player, club)[0]
        if len({o == actor.player for o in outcomes.values()}) < 2:
            continue  # every move wins, or every move loses
        chosen = choose("durak", view, game.legal_moves(), events, level, 0)
        assert outcomes[chosen] != actor.player
        checked += 1
    assert checked >= 3


def test_a_playout_plays_the_others_in_the_style_given() -> None:
    # Hard's playouts judge each move against a style of play for the others (the club
    # player's or the beginner's, by turns): the style decides the others' choices,
    # the dummy's too when another seat controls it, and never one of the seat's own.
    asked: list[Actor] = []

    def beginner(mirror: Mirror, who: Actor, legal: Sequence[DurakMove]) -> DurakMove:
        asked.append(who)
        return plain(mirror, who, legal)

    dummy_asked = 0
    for _, _, actor, view, seen in decisions(20, 2, False):
        world = sample_world(seen, random.Random(0))
        sim, mirror = Position(view, seen).game(world), Mirror(seen, world)
        asked.clear()
        playout(sim, mirror, actor.player, beginner)
        assert asked
        assert all(who.player != actor.player for who in asked)
        dummy_asked += any(who.dummy for who in asked)
    assert dummy_asked


def test_hidden_cards_elsewhere_do_not_change_the_move() -> None:
    # Swap a card the seat cannot see between another hand and the stock: the seat's
    # view, and so every level's move, must stay the same.
    swapped = 0
    for game, events in positions(30, 3, True):
        actor = game.to_act()
        assert actor is not None
        full = state(game)
        other = next(
            p
            for p in range(4)
            if p != actor.player and not (p == 3 and full["controller"] == actor.player)
        )
        secret = [x for x in full["hands"][other] if x not in full["known"][other]]
        start = dealt(3)
        stock = [*full["deck"][start + 1 :], full["deck"][start]]
        if not secret or len(stock) - full["drawn"] < 2:
            continue
        hand_card, stock_card = secret[0], stock[-2]  # -2: just above the trump card
        swap = {hand_card: stock_card, stock_card: hand_card}
        twin_state = json.loads(json.dumps(full))
        twin_state["hands"][other] = [swap.get(x, x) for x in full["hands"][other]]
        twin_state["deck"] = [swap.get(x, x) for x in full["deck"]]
        twin = Durak.from_json(json.dumps(twin_state))
        assert twin.view(actor.player) == game.view(actor.player)
        assert state(twin)["hands"] != full["hands"]
        view, legal = game.view(actor.player), game.legal_moves()
        for level in ("easy", "normal", "hard"):
            ours = choose("durak", view, legal, events, level, 9)
            theirs = choose("durak", twin.view(actor.player), twin.legal_moves(), events, level, 9)
            assert ours == theirs
        swapped += 1
    assert swapped >= 5
