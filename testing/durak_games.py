"""Durak games for the computer players' tests: the seed's game, a position built
card by card (or laid out from text), every variant with each number of players it seats,
and a game played on by the computer's levels.
"""

from __future__ import annotations

import json
from typing import Any

from engine import cards
from engine.base import Event
from engine.cards import Card
from engine.computer import choose
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakActor, DurakMove, DurakOptions, seating
from engine.games.durak.view import DurakView
from testing.contract import combinations
from testing.durak_positions import NAMES


def c(text: str) -> Card:
    return cards.parse(text)


def new_game(
    seed: int, players: int = 2, dummy_plays: bool = False, options: DurakOptions | None = None
) -> Durak:
    """The seed's game (``dummy_plays`` or not), or the variant ``options`` make."""
    if options is None:
        options = DurakOptions(deck_size=36 if players <= 4 else 52, dummy_plays=dummy_plays)
    return Durak.new(options, NAMES[:players], dealer=seed % players, seed=seed)


def play_levels(
    game: Durak, levels: list[str], seed: int, stop: int | None = None
) -> tuple[list[Event], list[DurakMove]]:
    """Play with the given computer level per seat (to the end, or ``stop`` decisions)."""
    events: list[Event] = []
    moves: list[DurakMove] = []
    while not game.is_finished() and (stop is None or len(moves) < stop):
        actor, view, legal = turn(game)
        move = choose("durak", view, legal, events, levels[actor.player], seed + len(moves))
        assert move in legal
        moves.append(move)
        events.extend(game.apply(move))
    return events, moves


def turn(game: Durak) -> tuple[DurakActor, DurakView, list[DurakMove]]:
    """Who is to act (the game not over), his view and his legal moves."""
    actor = game.to_act()
    assert actor is not None
    return actor, game.view(actor.player), game.legal_moves()


def state(game: Durak) -> dict[str, Any]:
    """The full stored state (the tests may look at everything; the players may not)."""
    return json.loads(game.to_json())  # type: ignore[no-any-return]


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
    options: dict[str, Any] | None = None,
) -> Durak:
    """A position (hands: seat 0, seat 1, ..., the dummy's, empty in a game without one);
    unplaced cards are in the stock (the trump card last) and then the discard.
    ``options`` go beyond the 36-card deck (``{"dummy": False, "transfer": True}``)."""
    n = len(hands) - 1
    options = {"deck_size": 36, **(options or {})}
    dummy, size = options.get("dummy", True), options["deck_size"]
    placed = [c(x) for h in hands for x in h] + [c(x) for p in table for x in p if x]
    trump_card = c(trump)
    rest = [x for x in cards.deck(size) if x not in placed and x != trump_card]
    stock_cards = [*rest[: stock - 1], trump_card] if stock else []
    # With the stock gone, the trump card is in the discard pile unless a hand holds it.
    played = [] if trump_card in placed else [trump_card]
    discard = rest[stock - 1 :] if stock else [*rest, *played]
    dealt = 6 * (n + 1 if dummy else n)
    others = [x for x in cards.deck(size) if x not in stock_cards]
    deck = [*others[:dealt], trump_card, *others[dealt:], *stock_cards[:-1]]
    if not stock:
        others.remove(trump_card)
        deck = [*others[:dealt], trump_card, *others[dealt:]]
    document = {
        "v": 1,
        "options": options,
        "players": NAMES[:n],
        "dealer": 1,
        "previous_fool": None,
        "deck": deck,
        "drawn": size - dealt - stock,
        "hands": [[c(x) for x in h] for h in hands],
        "known": [[c(x) for x in k] for k in (known or [[]] * (n + 1))],
        "discard": discard,
        "table": [[c(a)] if d is None else [c(a), c(d)] for a, d in table],
        "phase": phase,
        "attacker": attacker,
        "defender": defender,
        "pos": 0,
        "limit": limit,
        "controller": 0 if dummy else None,
        "out": [],
        "pending": [],
        "fool": None,
    }
    return Durak.from_json(json.dumps(document))


def laid(
    hands: str,
    trump: str,
    stock: int,
    table: str = "",
    options: dict[str, Any] | None = None,
    known: str | None = None,
) -> Durak:
    """:func:`constructed` from text: ``hands`` and ``known`` by seat, the dummy last
    (``"KD 9C/6S 8S/"``); ``table`` the cards on it, ``"7S>9S"`` beaten, ``"8S"`` to beat,
    which makes the phase (nothing: the lead; a card to beat: the defence; else throw-ins)."""
    pairs = [(a, d or None) for a, _, d in (card.partition(">") for card in table.split())]
    phase = "defend" if any(d is None for _, d in pairs) else "throw" if pairs else "lead"
    seen = None if known is None else [k.split() for k in known.split("/")]
    held = [h.split() for h in hands.split("/")]
    return constructed(held, trump, stock, pairs, phase, known=seen, options=options)


# Every allowed combination of options, with each number of players it seats.
VARIANTS = [
    (options, players)
    for options in combinations(DurakOptions)
    for players in range(2, seating(options)[1] + 1)
]
