"""Durak invariants over random games: every table size, every deck, every allowed
combination of options (the seed's game with the dummy and the variants without it)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import cards
from engine.base import CorruptState
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions, seating
from testing.contract import TWO_GAMES, combinations
from testing.durak_positions import NAMES

MAX_DECISIONS = 5000  # far above any game: 52 cards cannot circulate for ever


# Every combination of options the rules allow (first_move is drawn by each game).
ALLOWED = [options for options in combinations(DurakOptions) if options.first_move == "under"]


def _name(options: DurakOptions) -> str:
    return "-".join(f"{k}={v}" for k, v in options.model_dump().items() if k != "first_move")


@st.composite
def games(draw: st.DrawFn, variant: DurakOptions | None = None) -> tuple[Durak, int]:
    chosen = variant or draw(st.sampled_from(ALLOWED))
    first_move = draw(st.sampled_from(["under", "from_under"]))
    options = chosen.model_copy(update={"first_move": first_move})
    n = draw(st.integers(*seating(options)))
    dealer = draw(st.integers(0, n - 1))
    previous_fool = draw(st.none() | st.integers(0, n - 1))
    seed = draw(st.integers(0, 2**32))
    game = Durak.new(options, NAMES[:n], dealer, previous_fool, seed=seed)
    return game, draw(st.integers(0, 2**32))


def _as_set(moves: list[dict[str, Any]]) -> set[str]:
    """Record moves compared as a set, as docs/records.md §6.3 tells consumers to."""
    texts = [json.dumps(m, sort_keys=True) for m in moves]
    assert len(set(texts)) == len(texts)
    return set(texts)


def _state(game: Durak, text: str | None = None) -> dict[str, Any]:
    """The stored state (``text``, when the caller has it), its options whole (the state
    leaves the variants' defaults out)."""
    state: dict[str, Any] = json.loads(game.to_json() if text is None else text)
    state["options"] = game.options.model_dump()
    return state


def _check_conservation(game: Durak, state: dict[str, Any] | None = None) -> None:
    state = _state(game) if state is None else state
    n = len(state["players"])
    deck = state["deck"]
    dealt = 6 * (n + 1) if state["options"]["dummy"] else 6 * n
    # The whole deck dealt leaves no stock; else the face-up trump card is drawn last.
    stock = [] if dealt == len(deck) else [*deck[dealt + 1 :], deck[dealt]][state["drawn"] :]
    everything = [c for h in state["hands"] for c in h] + [c for p in state["table"] for c in p]
    assert Counter(everything + stock + state["discard"]) == Counter(deck)
    summary = game.summary()
    on_table = sum(1 if d is None else 2 for _, d in summary["table"])
    counted = sum(summary["hands"]) + summary["dummy"] + summary["stock"] + summary["discard"]
    assert counted + on_table == len(deck)


class PublicKnowledge:
    """What the table has seen each hand receive: taken cards, and the face-up trump card,
    until played again. Built from the summary and the events only, the way a spectator
    would, so it checks the engine's own bookkeeping of known cards."""

    def __init__(self, game: Durak) -> None:
        self.n = len(game.players)
        self.trump = game.summary()["trump"]
        self.seen: dict[int | str, set[str]] = {p: set() for p in [*range(self.n), "dummy"]}
        if game.summary()["stock"] == 0:  # the whole deck dealt: the dealer's face-up card
            self.seen[game.view(None).dealer].add(self.trump)

    def update(self, before: dict[str, Any], move: dict[str, Any], events: list[Any]) -> None:
        table = {c for pair in before["table"] for c in pair if c is not None}
        table |= {move[k] for k in ("attack", "throw", "with") if k in move}
        stock = before["stock"]
        for event in events:
            kind, data = event.kind, event.data
            if kind in ("attack", "throw", "transfer"):
                self.seen[data["seat"]].discard(data["card"])
            elif kind == "beat":
                self.seen[data["seat"]].discard(data["with"])
            elif kind == "took":
                assert data["count"] == len(table)
                self.seen[data["seat"]] |= table
            elif kind == "drew":
                assert set(data) == {"seat", "count"}  # never which cards
                stock -= data["count"]
                if stock == 0:
                    self.seen[data["seat"]].add(self.trump)


def _check_legal(game: Durak, state: dict[str, Any]) -> None:
    """The legal moves, worked out again from the rules and the stored ``state``."""
    view = game.view(None)
    actor = game.to_act()
    assert actor is not None and view.to_act is not None
    n = len(state["players"])
    trump = cards.suit(cards.parse(view.trump))
    phase, table = view.phase, view.table
    if phase == "lead":
        who = state["attacker"]
    elif phase == "defend":
        who = state["defender"]
    else:
        who = n if actor.dummy else actor.player
    hand = cards.to_strs(state["hands"][who])
    ranks = {cards.rank(cards.parse(c)) for pair in table for c in pair if c is not None}

    def beats(c: str, a: str) -> bool:
        card, attack = cards.parse(c), cards.parse(a)
        if cards.suit(card) == cards.suit(attack):
            return cards.rank(card) > cards.rank(attack)
        return cards.suit(card) == trump

    if phase == "lead":
        expected = [{"attack": c} for c in hand]
    elif phase == "defend":
        unbeaten = [a for a, d in table if d is None]
        expected = [{"beat": a, "with": c} for a in unbeaten for c in hand if beats(c, a)]
        expected += [{"transfer": c} for c in _transfers(state, table, hand)]
        expected.append({"take": True})
    else:
        expected = [{"throw": c} for c in hand if cards.rank(cards.parse(c)) in ranks]
        assert expected and len(table) < (view.limit or 0)  # else passed automatically
        expected.append({"pass": True})
    extra = {"dummy": True} if actor.dummy else {}
    expected = [{"player": actor.player, **m, **extra} for m in expected]
    got = [game.move_to_record(m) for m in game.legal_moves()]
    assert _as_set(got) == _as_set(expected)


def _next_holder(state: dict[str, Any], seat: int) -> int | None:
    """The next player clockwise after ``seat`` who holds cards (no dummy to skip)."""
    n = len(state["players"])
    return next((p for p in [(seat + k) % n for k in range(1, n)] if state["hands"][p]), None)


def _transfers(state: dict[str, Any], table: list[Any], hand: list[str]) -> list[str]:
    """The cards the defender may transfer with (seeds/durak.md §12), from the state."""
    if not state["options"]["transfer"] or any(d is not None for _, d in table):
        return []
    new = _next_holder(state, state["defender"])
    if new is None or len(table) + 1 > len(state["hands"][new]):
        return []
    rank = cards.rank(cards.parse(table[0][0]))
    return [c for c in hand if cards.rank(cards.parse(c)) == rank]


def _check_bout_start(game: Durak, discarded: bool) -> None:
    """At a bout's start (the deal's first one too) or a transfer: the limit (six, or five
    before the first discard with five_before_discard, never more than the defender holds)
    and who may throw in (everyone, or the defender's two neighbours, §13)."""
    state, view = _state(game), game.view(None)
    options = state["options"]
    defender, attacker = state["defender"], state["attacker"]
    cap = 5 if options["five_before_discard"] and not discarded else 6
    assert view.limit == min(cap, len(state["hands"][defender]))
    if options["throw_in"] == "neighbours":
        after = _next_holder(state, defender)
        assert view.throw_order == [attacker] + ([after] if after not in (attacker, None) else [])


def _check_automatic_passes(game: Durak, move: Any, events: list[Any]) -> None:
    """Everyone the right to throw in went past since ``move`` had nothing to throw, so
    was passed automatically (seeds/durak.md §4.6), worked out from the rules alone."""
    view = game.view(None)
    if any(e.kind in ("bout", "finished") for e in events) or view.phase not in (
        "throw",
        "take",
    ):
        return
    state = _state(game)
    n = len(state["players"])
    attacker, defender, dealer = state["attacker"], state["defender"], state["dealer"]
    ring = [*range(dealer + 1, n), *range(dealer + 1), n]  # the dummy right after the dealer
    if not state["options"]["dummy"]:
        ring.remove(n)
    ring = ring[ring.index(attacker) :] + ring[: ring.index(attacker)]
    order = [p for p in ring if p != defender]
    if state["options"]["throw_in"] == "neighbours":
        order = [int(p) for p in view.throw_order]  # fixed at the bout's start or transfer
    actor = game.to_act()
    assert actor is not None
    now = n if actor.dummy else actor.player
    if move.kind == "pass":
        start = order.index(n if move.dummy else move.player) + 1
    elif move.kind == "throw":  # in the take round he may go on throwing
        start = order.index(n if move.dummy else move.player)
    else:  # a beat or a take: the round starts again at the lead attacker
        start = 0
    ranks = {cards.rank(cards.parse(c)) for pair in view.table for c in pair if c is not None}
    assert order.index(now) >= start  # the right only goes on round the table
    for p in order[start : order.index(now)]:
        skipped = p == n and view.controller == defender
        throwable = [c for c in state["hands"][p] if cards.rank(c) in ranks]
        assert skipped or not throwable, f"{p} could throw {throwable} but was passed"


def _check_views(game: Durak, public: PublicKnowledge, state: dict[str, Any]) -> None:
    n = len(state["players"])
    hands = [set(cards.to_strs(h)) for h in state["hands"]]
    summary = game.summary()
    table = {c for pair in summary["table"] for c in pair if c is not None}
    for seat in [None, *range(n)]:
        view = game.view(seat)
        assert [set(k) for k in view.known] == [public.seen[p] for p in range(n)]
        assert set(view.dummy_known) == public.seen["dummy"]
        allowed = table | {summary["trump"]} | set().union(*public.seen.values())
        if seat is not None:
            assert set(view.hand) == hands[seat]
            allowed |= hands[seat]
        if seat is not None and seat == summary["controller"]:
            assert view.dummy_hand is not None and set(view.dummy_hand) == hands[n]
            allowed |= hands[n]
        else:
            assert view.dummy_hand is None
        # The engine's own account of what the seat may know is what the table saw; the
        # contract holds every view to it (testing.contract.check_views).
        assert set(game.known_to(seat)) == allowed, seat


@pytest.mark.parametrize("variant", ALLOWED, ids=_name)
def test_random_games_keep_every_invariant(variant: DurakOptions) -> None:
    @TWO_GAMES  # the contract plays every combination again
    @given(games(variant))
    def check(case: tuple[Durak, int]) -> None:
        _play_checked(*case)

    check()


def _play_checked(game: Durak, seed: int) -> None:
    # What every game keeps (round trips, one actor, replays) is tests/engine/test_game_contract.py.
    rng = random.Random(seed)
    public = PublicKnowledge(game)
    discarded = False
    _check_bout_start(game, discarded)
    for _ in range(MAX_DECISIONS):
        # The stored state, read once for the position's checks.
        text = game.to_json()
        assert len(text.encode()) < 2048  # a whole 6-player game fits a small value
        state = _state(game, text)
        _check_conservation(game, state)
        _check_views(game, public, state)
        if game.is_finished():
            break
        _check_legal(game, state)
        move = rng.choice(game.legal_moves())
        record = game.move_to_record(move)
        before = game.summary()
        events = game.apply(move)
        public.update(before, record, events)
        kinds = {e.kind for e in events}
        discarded = discarded or "discarded" in kinds
        if "finished" not in kinds and {"bout", "transfer"} & kinds:
            _check_bout_start(game, discarded)
        _check_automatic_passes(game, move, events)
    else:
        raise AssertionError("the game did not end")
    result = game.result()
    assert result is not None and set(result) == {"fool"}
    end = game.summary()
    holders = [p for p, count in enumerate(end["hands"]) if count]
    if holders:  # one player kept cards: he is the fool
        assert holders == [result["fool"]] and result["fool"] not in end["out"]
    elif end["dummy"]:  # only the dummy: the fool is who got rid of his cards last
        assert result["fool"] == end["out"][-1]
    else:  # nothing anywhere: drawn
        assert result["fool"] is None


def test_many_quick_games_end_with_a_fool_from_every_seat() -> None:
    """Without the per-step checks: many games, each option, all end; fools vary."""
    fools: Counter[int | None] = Counter()
    for seed in range(240):
        options = ALLOWED[seed % len(ALLOWED)]
        low, high = seating(options)
        n = low + seed % (high - low + 1)
        game = Durak.new(options, NAMES[:n], dealer=seed % n, seed=seed)
        rng = random.Random(seed)
        for _ in range(MAX_DECISIONS):
            if game.is_finished():
                break
            game.apply(rng.choice(game.legal_moves()))
        assert game.is_finished()
        result = game.result()
        assert result is not None
        fools[result["fool"]] += 1
        text = game.to_json()  # every kind of ending stores and loads
        assert Durak.from_json(text).to_json() == text
    assert {0, 1, 2, 3} <= set(fools)


@st.composite
def tampered_states(draw: st.DrawFn) -> str:
    """The stored state of a random position with one thing changed, as a bad store or a
    bad hand-edit would: a card moved, a seat or counter changed, a phase swapped."""
    game, seed = draw(games())
    rng = random.Random(seed)
    for _ in range(draw(st.integers(0, 120))):
        if game.is_finished():
            break
        game.apply(rng.choice(game.legal_moves()))
    state = _state(game)
    n = len(state["players"])
    what = draw(st.sampled_from(["card", "int", "phase", "seats"]))
    if what == "card":
        places = [h for h in state["hands"] if h] + ([state["discard"]] if state["discard"] else [])
        if places:
            source = draw(st.sampled_from(places))
            card = source.pop(draw(st.integers(0, len(source) - 1)))
            target = draw(st.sampled_from([*state["hands"], state["discard"]]))
            target.append(card)
    elif what == "int":
        key = draw(st.sampled_from(["attacker", "defender", "controller", "pos", "limit", "fool"]))
        state[key] = draw(st.integers(-1, n + 2))
    elif what == "phase":
        state["phase"] = draw(st.sampled_from(["lead", "defend", "throw", "take", "over"]))
    else:
        key = draw(st.sampled_from(["out", "pending"]))
        state[key] = draw(st.lists(st.integers(0, n), max_size=3))
    return json.dumps(state)


@settings(max_examples=60, deadline=None, database=None)
@given(tampered_states(), st.integers(0, 2**32))
def test_a_tampered_state_is_refused_or_plays_on_by_the_rules(text: str, seed: int) -> None:
    try:
        game = Durak.from_json(text)
    except CorruptState:
        return
    rng = random.Random(seed)
    for _ in range(MAX_DECISIONS):
        _check_conservation(game)
        if game.is_finished():
            assert game.result() is not None and game.to_act() is None
            return
        legal = game.legal_moves()
        actor = game.to_act()
        assert legal and actor is not None
        assert all((m.player, m.dummy) == actor for m in legal)
        game.apply(rng.choice(legal))
    raise AssertionError("the game did not end")
