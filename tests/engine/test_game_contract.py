"""The contract every registered game keeps, checked over random games (hypothesis) of every
game and option set, the counterpart of OpenSpiel's random simulation test: a game passes
it by being in :mod:`engine.registry`, with no test of its own.

Every allowed combination of a game's options is played (the options model refuses the
others; an option that only picks who leads a later game is drawn by each deal). At every
position of a random game, dealt as a series deals it: the stored state, the record form
and the button token of every legal move read back to the same thing; exactly
one participant acts, every legal move is his, the same move from anyone else is refused
and changes nothing; a seat's view shows at least what the public's does, and no view
names a card beyond what the game says its viewer may know (``known_to``); the
computer's move, at each of its levels in turn, is one of the legal moves; events are JSON
values that the bot has a text for. At the end the record replays to where the game ended,
and a record cut short to where it was then. What is particular to one game (its own
invariants) is in that game's property tests."""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from bot.screens import registry as bot_registry
from engine import cards, computer, registry
from engine.base import Game, IllegalMove, MalformedRecord
from engine.games.durak import computer as durak_computer
from engine.games.durak.players import search as search_module
from engine.games.durak.players.search import BUDGET, hard
from engine.records import export, replay
from engine.series import Carry
from engine.spec import GameSpec
from testing.contract import TWO_GAMES, check_views, combinations

NAMES = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay"]
MAX_DECISIONS = 5000  # far above any game of either kind
# How often a position also asks the computer, at each of its levels in turn (a hard level
# searches, which takes its time).
ASK_COMPUTER = 0.03


# An option that only says who leads a later game of a series (durak's first_move, read
# once, at the deal, and only when there was a previous fool) is drawn by each deal rather
# than made a case: as a case it doubled the games, and a series' first game (hypothesis's
# simplest case of every option set among them) was then the same game twice.
DRAWN = {"durak": "first_move"}


def _values(name: str) -> list[Any]:
    """The values a deal of game ``name`` draws its drawn option from, its default first."""
    spec = registry.GAMES[name]
    return list(dict.fromkeys(getattr(o, DRAWN[name]) for o in combinations(spec.options)))


CASES = [
    pytest.param(name, options, id=f"{name}-{'-'.join(map(str, options.model_dump().values()))}")
    for name, spec in registry.GAMES.items()
    for options in combinations(spec.options)
    if name not in DRAWN or getattr(options, DRAWN[name]) == _values(name)[0]
]


@st.composite
def deals(draw: st.DrawFn, spec: GameSpec, options: BaseModel) -> tuple[Game, int]:
    """A game with ``options`` as its series would deal it (first or later), and a seed
    for the play."""
    if spec.name in DRAWN:
        drawn = draw(st.sampled_from(_values(spec.name)))
        options = options.model_copy(update={DRAWN[spec.name]: drawn})
    low, high = spec.players(options)
    n = draw(st.integers(low, high))
    first = draw(st.booleans())
    carry = Carry(first, draw(st.integers(0, n - 1)), draw(st.none() | st.integers(0, n - 1)))
    rng = random.Random(draw(st.integers(0, 2**32)))
    game, _ = spec.deal(options, NAMES[:n], carry, rng, draw(st.integers(0, 2**32)))
    return game, draw(st.integers(0, 2**32))


def _check_actor(game: Game, legal: list[Any], records: list[Any], before: str) -> None:
    """One actor: every legal move is his, and the same move by another seat is refused
    without a change (``records``: the legal moves' records; ``before``: the state's JSON)."""
    actor = game.to_act()
    assert actor is not None and legal
    # A move's record names its maker as to_act does (a field left out is false).
    who = actor.record()
    assert all(all(r.get(k, False) == v for k, v in who.items()) for r in records)
    texts = [json.dumps(r, sort_keys=True) for r in records]
    assert len(set(texts)) == len(texts), "a legal move listed twice"
    token = game.move_token(legal[0])
    for other in range(len(game.players)):
        if other == actor.player:
            continue
        with pytest.raises(IllegalMove):
            game.apply(game.move_from_token(token, other))
        assert game.to_json() == before


def _check_codecs(game: Game, legal: list[Any], records: list[Any], text: str) -> None:
    """The state (``text``, its JSON), each move's record and each move's button token read
    back alike."""
    assert type(game).from_json(text).to_json() == text
    actor = game.to_act()
    assert actor is not None
    for move, record in zip(legal, records, strict=True):
        assert game.move_from_record(json.loads(json.dumps(record))) == move
        token = game.move_token(move)
        assert token.isascii() and len(token) <= 40
        assert game.move_from_token(token, actor.player) == move


def _check_computer(
    spec: GameSpec, game: Game, legal: list[Any], events: list[Any], level: str
) -> None:
    """The computer, from the actor's view alone, plays one of the legal moves."""
    actor = game.to_act()
    assert actor is not None
    view = game.view(actor.player)
    move = computer.choose(spec.name, view, legal, events, level, seed=len(events))
    assert move in legal, (level, move)


def _play(spec: GameSpec, game: Game, rng: random.Random) -> list[dict[str, Any]]:
    """Plays ``game`` to its end at random, checking every position; the record's moves."""
    start = type(game).from_json(game.to_json())
    texts = bot_registry.entry(spec.name).texts.events
    moves: list[dict[str, Any]] = []
    events: list[Any] = []
    cut = rng.randrange(80)
    asked = 0
    at_cut: dict[str, Any] | None = None
    for _ in range(MAX_DECISIONS):
        check_views(game)
        legal = list(game.legal_moves())
        if game.is_finished():
            assert game.to_act() is None and legal == [] and game.result() is not None
            break
        assert game.result() is None
        # The state's JSON and the moves' records, made once for both checks and the record.
        text = game.to_json()
        records = [game.move_to_record(m) for m in legal]
        _check_actor(game, legal, records, text)
        _check_codecs(game, legal, records, text)
        if rng.random() < ASK_COMPUTER:
            _check_computer(spec, game, legal, events, spec.levels[asked % len(spec.levels)])
            asked += 1
        if len(moves) == cut:
            at_cut = json.loads(json.dumps(_position(game)))
        pick = rng.randrange(len(legal))  # as rng.choice(legal) picks
        move = legal[pick]
        moves.append(records[pick])
        happened = game.apply(move)
        for event in happened:
            kind, data = json.loads(json.dumps(event.to_json()))
            reason = data.get("reason")
            assert (f"{kind}.{reason}" if isinstance(reason, str) else kind) in texts
        events += happened
    else:
        raise AssertionError("the game did not end")
    record = json.loads(json.dumps(export(start, moves)))
    out = replay(record)
    assert out["ok"] and out["finished"] and out["to_act"] is None and out["legal"] == []
    assert out["summary"] == game.summary() and out["result"] == game.result()
    if at_cut is not None:
        assert _as_set(replay({**record, "moves": moves[:cut]})) == _as_set(at_cut)
    return moves


def _position(game: Game) -> dict[str, Any]:
    actor = game.to_act()
    return {
        "to_act": None if actor is None else actor.record(),
        "legal": [game.move_to_record(m) for m in game.legal_moves()],
        "summary": game.summary(),
    }


def _as_set(described: dict[str, Any]) -> tuple[Any, ...]:
    """A position as docs/records.md §6.3 tells consumers to compare it: moves as a set."""
    legal = frozenset(json.dumps(m, sort_keys=True) for m in described["legal"])
    return described["to_act"], legal, json.dumps(described["summary"], sort_keys=True)


def test_every_allowed_combination_is_played() -> None:
    """The cases below hold each game's default options and nothing its model refuses."""
    for name, spec in registry.GAMES.items():
        played = [options for game, options in (c.values for c in CASES) if game == name]
        assert spec.options() in played
    # Durak: 12 combinations with the dummy, 24 without, each deal drawing first_move.
    assert sum(1 for c in CASES if c.values[0] == "durak") == 36
    assert _values("durak") == ["under", "from_under"]


@pytest.fixture(autouse=True)
def _quick_hard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Durak's hard player searches a tenth of its budget, of its endgame solver's positions
    and of its searches against the styles (they all still run, only cut short; in full
    they were a third of this file's CPU): its move is legal at any budget."""
    monkeypatch.setattr(durak_computer, "hard", functools.partial(hard, budget=BUDGET // 10))
    monkeypatch.setattr(search_module, "NODES", search_module.NODES // 10)
    monkeypatch.setattr(search_module, "STYLE_BUDGET", search_module.STYLE_BUDGET // 10)


@pytest.mark.parametrize(("name", "options"), CASES)
def test_random_games_keep_the_contract(name: str, options: BaseModel) -> None:
    spec = registry.GAMES[name]

    @TWO_GAMES
    @given(deals(spec, options))
    def check(case: tuple[Game, int]) -> None:
        game, seed = case
        _play(spec, game, random.Random(seed))

    check()


@pytest.mark.parametrize("name", list(registry.GAMES))
def test_a_finished_game_counts_for_the_series_and_the_standings(name: str) -> None:
    spec = registry.GAMES[name]
    rng = random.Random(7)
    low, high = spec.players(spec.options())
    for n in range(low, high + 1):
        carry = Carry(first_game=True)
        game, order = spec.deal(spec.options(), NAMES[:n], carry, rng, n)
        assert sorted(order) == list(range(n)) and game.players == [NAMES[i] for i in order]
        while not game.is_finished():
            game.apply(rng.choice(list(game.legal_moves())))
        result = game.result()
        assert result is not None
        scored = spec.finish(carry, result)
        assert scored is None or 0 <= scored < n
        outcome = spec.outcome(name, result, game.summary())
        assert len(outcome.ranks) == n
        for seat in range(n):
            assert all(value >= 0 for value in outcome.figures(seat).values())


def _smallest_deal(spec: GameSpec, seed: int) -> Game:
    """A series' first game of ``spec``'s default options at its smallest table."""
    players = NAMES[: spec.players(spec.options())[0]]
    return spec.deal(spec.options(), players, Carry(True), random.Random(seed), seed)[0]


@pytest.mark.parametrize("name", list(registry.GAMES))
def test_a_token_or_record_of_no_move_is_malformed(name: str) -> None:
    game = _smallest_deal(registry.GAMES[name], 1)
    for token in ("", "?", "x" * 41, "\u00e9"):
        with pytest.raises(MalformedRecord):
            game.move_from_token(token, 0)
    for data in (None, [], {}, {"player": "0"}, {"player": 0, "nothing": True}):
        with pytest.raises(MalformedRecord):
            game.move_from_record(data)


def _football_sees_the_middle(game: Any, seat: int | None, view: Any) -> Any:
    """Football's face-down middle rows, shown to seat 0 (nobody knows them)."""
    rows = [list(row) for row in view.field]
    for pos in range(4, 12):
        rows[pos >> 2][pos & 3] = cards.to_str(game.field[pos])
    return view.model_copy(update={"field": rows}) if seat == 0 else view


def _durak_sees_the_stock(game: Any, seat: int | None, view: Any) -> Any:
    """The next card of durak's stock, shown to seat 0 (nobody knows it)."""
    if seat != 0 or len(game.stock) - game.drawn < 2:
        return view
    return view.model_copy(update={"hand": [*view.hand, cards.to_str(game.stock[game.drawn])]})


def _durak_sees_a_hand(game: Any, seat: int | None, view: Any) -> Any:
    """A durak opponent's hand, shown to seat 0."""
    if seat != 0:
        return view
    return view.model_copy(update={"hand": view.hand + cards.to_strs(game.hands[1])})


LEAKS = {
    "football": _football_sees_the_middle,
    "durak stock": _durak_sees_the_stock,
    "durak hand": _durak_sees_a_hand,
}


@pytest.mark.parametrize("name", list(LEAKS))
def test_a_view_that_leaks_fails_the_contract(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above is not a count of copies: a view broken on purpose, to show one
    seat cards nobody knows or another seat's hand, fails it in every game tried."""
    spec = registry.GAMES[name.split()[0]]
    honest = spec.game.view

    def leaky(game: Any, seat: int | None) -> Any:
        return LEAKS[name](game, seat, honest(game, seat))

    monkeypatch.setattr(spec.game, "view", leaky)
    for seed in range(5):
        game = _smallest_deal(spec, seed)
        with pytest.raises(AssertionError, match="may not know"):
            _play(spec, game, random.Random(seed))
