"""The durak computer players: legal, deterministic, fair, and sound in known positions."""

from __future__ import annotations

import functools
import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from engine.base import Event
from engine.cards import Card
from engine.computer import choose, public_events
from engine.games.durak import computer as durak_computer
from engine.games.durak.game import Durak
from engine.games.durak.players import search as search_module
from engine.games.durak.players.endgame import club, plain
from engine.games.durak.players.sampling import Mirror, Position, World, sample_world
from engine.games.durak.players.search import playout
from engine.games.durak.players.seen import Memory, Seen, seen_from_view
from engine.games.durak.rules import EARLY_LIMIT, HAND, DurakMove, DurakOptions
from engine.games.durak.rules import DurakActor as Actor
from engine.records import export
from engine.registry import GAMES
from testing.contract import c
from testing.durak_positions import PEREVODNOY, laid, move, play_levels, seeded, state, turn

# ---------------------------------------------------------------------- legality


def test_levels_are_listed() -> None:
    assert GAMES["durak"].levels == ("easy", "normal", "hard")
    game = seeded(1)
    with pytest.raises(ValueError, match="level"):
        choose("durak", game.view(0), game.legal_moves(), [], "expert", 0)


# ---------------------------------------------------------------------- determinism


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_same_inputs_same_move(level: str) -> None:
    game = seeded(3, 3)
    events, _ = play_levels(game, ["normal"] * 3, 3, stop=9)
    _, view, legal = turn(game)
    picks = {choose("durak", view, legal, events, level, 42) for _ in range(3)}
    assert len(picks) == 1


def test_whole_normal_games_repeat_exactly() -> None:
    first = play_levels(seeded(8, 4), ["normal"] * 4, 8)[1]
    again = play_levels(seeded(8, 4), ["normal"] * 4, 8)[1]
    assert first == again


# ---------------------------------------------------------------------- fairness


def positions(
    count: int, players: int, dummy_plays: bool, options: DurakOptions | None = None
) -> Iterator[tuple[Durak, list[Event]]]:
    """Positions of real games (of :func:`seeded`) with their event history, a few per
    game, made as they are asked for (a test that has seen enough stops early)."""
    seed = 0
    while True:
        game = seeded(seed, players, dummy_plays, options)
        rng = random.Random(seed)
        events: list[Event] = []
        while not game.is_finished():
            _, view, legal = turn(game)
            if len(legal) > 1 and rng.random() < 0.08:
                yield Durak.from_json(game.to_json()), list(events)
                count -= 1
                if count == 0:
                    return
            move = choose("durak", view, legal, events, "normal", seed)
            events.extend(game.apply(move))
        seed += 1


def decisions(
    count: int, players: int, dummy_plays: bool, options: DurakOptions | None = None
) -> Iterator[tuple[Durak, list[Event], Actor, Any, Seen]]:
    """:func:`positions` with who acts there, his view and what his seat knows."""
    for game, events in positions(count, players, dummy_plays, options):
        actor, view, _ = turn(game)
        yield game, events, actor, view, seen_from_view(view, Memory.of(events))


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


def stock_left(full: dict[str, Any]) -> list[Card]:
    """The cards still to draw, top first, the face-up trump card last (none at all when
    the whole deck was dealt): six were dealt to every player, and to the dummy."""
    players, deck = len(full["players"]), full["deck"]
    start = HAND * (players + 1 if full["options"].get("dummy", True) else players)
    stock = [*deck[start + 1 :], deck[start]] if start < len(deck) else []
    return stock[full["drawn"] :]


# Variants the computer plays in (seeds/durak.md §9), by (players, options): perevodnoy, with
# neighbours and five before the first discard, the whole deck dealt (24 cards to four,
# 36 to six), and the seed's game on 24 cards.
VARIANT_TABLES = [
    (2, DurakOptions(dummy=False, transfer=True)),
    (4, DurakOptions(dummy=False, transfer=True, throw_in="neighbours", five_before_discard=True)),
    (4, DurakOptions(dummy=False, deck_size=24)),
    (6, DurakOptions(dummy=False, transfer=True, throw_in="neighbours")),
    (2, DurakOptions(deck_size=24, five_before_discard=True)),
]
SEED_AND_VARIANTS = [
    *((players, dummy_plays, None) for players, dummy_plays in [(2, False), (3, True), (4, True)]),
    *((players, False, options) for players, options in VARIANT_TABLES),
]


@pytest.mark.parametrize(("players", "dummy_plays", "options"), SEED_AND_VARIANTS)
def test_the_true_deal_rebuilds_the_same_game(
    players: int, dummy_plays: bool, options: DurakOptions | None
) -> None:
    # Load the real hands through the determinisation's position builder: the result
    # must be the real game, to the legal moves and every seat's view, in every variant
    # (its options, the transfer, the cap of five and the neighbours' order all come
    # from the view).
    capped = 0
    for game, _, _, view, seen in decisions(10, players, dummy_plays, options):
        full = state(game)
        world = World([list(h) for h in full["hands"]], stock_left(full), list(full["discard"]))
        rebuilt = Position(view, seen).game(world)
        assert rebuilt.legal_moves() == game.legal_moves()
        for seat in range(players):
            assert rebuilt.view(seat) == game.view(seat)
        capped += view.limit == EARLY_LIMIT and not full["discard"]
    if options is not None and options.five_before_discard:
        assert capped  # some of them before the first discard, at the cap of five


SEEN_FIELDS = ["actor", "hand", "own", "dummy_hand", "table", "stock", "counts", "known", "unseen"]
SEEN_FIELDS += ["attacker", "defender", "phase", "controller", "out", "takes"]
IN_ANY_ORDER = {"actor", "hand", "own", "dummy_hand", "stock"}


@pytest.mark.parametrize(
    ("players", "dummy_plays", "options"),
    [(2, True, None), (3, False, None), (4, True, None), *SEED_AND_VARIANTS[3:]],
)
def test_simulated_players_see_what_their_view_shows(
    players: int, dummy_plays: bool, options: DurakOptions | None
) -> None:
    # The playouts read each seat's knowledge off a mirror of the sampled world; it must
    # be exactly what that seat's real view and event memory give.
    for _, events, _, view, seen in decisions(6, players, dummy_plays, options):
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
            for name in SEEN_FIELDS:
                got, want = getattr(mirrored, name), getattr(real, name)
                if isinstance(want, list) and name in IN_ANY_ORDER:
                    got, want = sorted(got), sorted(want)
                assert got == want, name
            legal = sim.legal_moves()
            new = sim.apply(legal[rng.randrange(len(legal))])
            mirror.update(new)
            history.extend(new)


# ---------------------------------------------------------------------- events


def test_public_events_are_what_apply_returned() -> None:
    game = seeded(4, 3)
    events, moves = play_levels(game, ["normal", "easy", "normal"], 4)
    record = export(game, [game.move_to_record(m) for m in moves])
    assert public_events(record) == events
    assert events[-1] == Event("finished", {"fool": game.result()["fool"]})  # type: ignore[index]


# ---------------------------------------------------------------------- heuristics


def normal_move(game: Durak) -> DurakMove:
    _, view, legal = turn(game)
    return choose("durak", view, legal, [], "normal", 0)  # type: ignore[no-any-return]


TAKER = "KD 9C 6C 7C AD/AH 6S 7S 10D JC 8D/"  # the ace of trumps beats the nine of spades
QUEEN = "KD 9C 7C AD 10C/QH 8D 10D JC 6D AC/"
# Positions and what normal plays there: the hands of seat 0, seat 1 and the dummy, the trump
# card, the cards left in the stock, the table (testing.durak_positions.laid) and the move. With
# the stock gone a take is what loses games: then the ace of trumps is spent. Seat 1 took
# 8D and 10D earlier: a 7D thrown in would be beaten for sure, a 9C perhaps not.
# In perevodnoy (hearts trump) passing the nine on is cheaper than any card that beats it,
# and the attacker has two cards to beat then; two sevens only the seven of trumps beats go
# on to the attacker, who must then beat three. A trump passed on may end in the attacker's
# hand, beaten with it is gone for good; the queen of trumps early is worth a take.
HEURISTICS = {
    "lead_low": ("KD 9C 6H 7S AS 10C/6S 8S QC JD 7D AD/", "9H", 10, "", "a7S"),
    "lead_a_trump_if_all_are": ("KH 6H 10H/6S 8S QC JD 7D AD/", "9H", 0, "", "a6H"),
    "beat_cheap": ("KD 9C 6C 7C AD/AS QS 9S 7H 10D JC/", "9H", 10, "8S", "b8S9S"),
    "beat_with_a_low_trump": ("KD 9C 6C 7C AD/KH 6S 7H 10D JC 8D/", "9H", 10, "10S", "b10S7H"),
    "take_rather_than_burn_a_high_trump_early": (TAKER, "9H", 12, "9S", "t"),
    "burn_it_once_the_stock_is_gone": (TAKER, "9H", 0, "9S", "b9SAH"),
    "throw_unbeatable": ("7D 9C KH AS/8D 10D 6S QS JH/", "6H", 8, "7S>9S", None, "/8D 10D/", "w9C"),
    "keep_trumps_early": ("7H KD AS/8D 10D 6S QS JC/", "6H", 8, "7S>9S", "p"),
    "transfer": ("KD 9C 7C AD 10C/9D 10S 7S JC 8D AC/", "6H", 12, "9S", PEREVODNOY, "r9D"),
    "low_trump_on": ("KD 9C 7D AD 10C/7H 8D 10D JD 6D 9D/", "6H", 12, "7S 7C", PEREVODNOY, "r7H"),
    "keep_trump": ("KD 9C 7C AD 10C/7H 8D 10D JC 6D AC/", "6H", 12, "7S", PEREVODNOY, "b7S7H"),
    "take_rather_than_pass_a_queen": (QUEEN, "6H", 12, "QS", PEREVODNOY, "t"),
    "spend_it_once_the_stock_is_gone": (QUEEN, "6H", 0, "QS", PEREVODNOY, "bQSQH"),
}


@pytest.mark.parametrize("row", HEURISTICS.values(), ids=HEURISTICS)
def test_normal_plays_as_a_club_player_would(row: tuple[Any, ...]) -> None:
    *position, token = row
    game = laid(*position)
    assert normal_move(game) == move(game, token)


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
        for choice in game.legal_moves():
            sim, mirror = Position(view, seen).game(world), Mirror(seen, world)
            mirror.update(sim.apply(choice))
            outcomes[choice] = playout(sim, mirror, actor.player, club)[0]
        if len({o == actor.player for o in outcomes.values()}) < 2:
            continue  # every move wins, or every move loses
        chosen = choose("durak", view, game.legal_moves(), events, level, 0)
        assert outcomes[chosen] != actor.player
        checked += 1
        if checked == 3:
            break
    assert checked == 3


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


@pytest.mark.parametrize(
    ("players", "dummy_plays", "options"), [(3, True, None), *SEED_AND_VARIANTS[3:]]
)
def test_hidden_cards_elsewhere_do_not_change_the_move(
    players: int, dummy_plays: bool, options: DurakOptions | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Swap a card the seat cannot see between another hand and the stock (or another
    # hand, when the whole deck was dealt): the seat's view, and so every level's move,
    # must stay the same, in every variant. Hard's searches run cut short: its samples, the
    # deals it tries and its searches against the styles (in full, seconds a move).
    for name, value in {"STYLE_BUDGET": 300, "MAX_SAMPLES": 8}.items():
        monkeypatch.setattr(search_module, name, value)
    quick = functools.partial(search_module.hard, budget=search_module.BUDGET // 10)
    monkeypatch.setattr(durak_computer, "hard", quick)
    swapped = 0
    for game, events in positions(20, players, dummy_plays, options):
        actor, _, _ = turn(game)
        full = state(game)
        mine = {actor.player, players} if full["controller"] == actor.player else {actor.player}
        secrets = [
            (who, x)
            for who in range(players + 1)
            if who not in mine
            for x in full["hands"][who]
            if x not in full["known"][who]
        ]
        stock = stock_left(full)[:-1]  # above the trump card
        if not secrets:
            continue
        who, hand_card = secrets[0]
        elsewhere = [x for other, x in secrets if other != who]
        if not stock and not elsewhere:
            continue
        other_card = stock[-1] if stock else elsewhere[0]
        swap = {hand_card: other_card, other_card: hand_card}
        twin_state = json.loads(json.dumps(full))
        twin_state["hands"] = [[swap.get(x, x) for x in h] for h in full["hands"]]
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
        if swapped == 5:
            break
    assert swapped == 5


def test_hard_finds_the_transfer_that_escapes() -> None:
    # From a game against greedy (seed 86): diamonds trump, the stock gone, seat 0 led
    # the seven of spades.  Beating it, with the ten of spades as normal does, leaves
    # seat 1 the fool against best play; passing it on with the seven of trumps is the
    # only move that escapes, and hard's search, on the engine's own rules, finds it.
    game = laid("7H KC KD/JD AD 7D 10S 6S 8D/", "KD", 0, "7S", PEREVODNOY, "KD//")
    assert normal_move(game) == move(game, "b7S10S")
    assert choose("durak", game.view(1), game.legal_moves(), [], "hard", 0) == move(game, "r7D")
