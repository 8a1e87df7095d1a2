"""Durak games for the rules' and the computer players' tests, built where each test
needs them: a deal that gives the hands a test names, or a game in the middle of play
through the engine's own validated state loader, so each scenario starts where its rule
matters."""

from __future__ import annotations

import json
from typing import Any

from engine import cards
from engine.base import Event
from engine.computer import choose
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakActor, DurakMove, DurakOptions, seating
from engine.games.durak.view import DurakView
from testing.contract import c, combinations, cs

NAMES = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay"]
PEREVODNOY: dict[str, Any] = {"dummy": False, "transfer": True}  # transfers, no dummy


def deck_for(
    n: int,
    dealer: int,
    hands: dict[int, str],
    dummy_cards: str = "",
    trump: str = "6S",
    stock: str = "",
    deck_size: int = 36,
    with_dummy: bool = True,
) -> list[int]:
    """A deck whose deal gives each seat the cards named (hands not named, or named short,
    are filled with the lowest cards left); ``stock`` names the top of the stock. Without
    the dummy no dummy's hand is dealt; where the whole deck is dealt, the trump is the
    dealer's sixth card (``trump`` is then "")."""
    named = [c for text in [*hands.values(), dummy_cards, trump, stock] for c in cs(text)]
    assert len(named) == len(set(named)), "a card named twice"
    left = [c for c in sorted(cards.deck(deck_size), key=lambda c: (c >> 2, c & 3))]
    left = [c for c in left if c not in named]

    def fill(text: str) -> list[int]:
        block = cs(text)
        while len(block) < 6:
            block.append(left.pop(0))
        return block

    deck: list[int] = []
    for k in range(n):
        deck += fill(hands.get((dealer + 1 + k) % n, ""))
    if with_dummy:
        deck += fill(dummy_cards)
    deck += cs(trump)
    deck += cs(stock) + left
    return deck


def new_game(
    n: int,
    dealer: int,
    hands: dict[int, str],
    dummy_cards: str = "",
    trump: str = "6S",
    stock: str = "",
    previous_fool: int | None = None,
    **options: Any,
) -> Durak:
    opts = DurakOptions(**options)
    deck = deck_for(n, dealer, hands, dummy_cards, trump, stock, opts.deck_size, opts.dummy)
    return Durak.new(opts, NAMES[:n], dealer, previous_fool, deck=deck)


def position(
    hands: list[str],
    dummy_cards: str = "",
    attacker: int = 0,
    defender: int = 1,
    controller: int | None = None,
    trump: str = "6S",
    stock: str | None = None,
    dealer: int = 0,
    order: list[int] | None = None,
    table: str = "",
    known: list[str] | None = None,
    limit: int | None = None,
    **options: Any,
) -> Durak:
    """A game in the middle of a bout, so a scenario starts where its rule matters.

    ``hands`` by seat, ``dummy_cards`` the dummy's cards (attacker/defender ``len(hands)``
    is the dummy; its controller, unless named, the attacker, in a game with the dummy).
    ``stock``: the cards still in the stock above the face-up trump card, top first;
    ``None``: the stock is used up and the trump card is wherever the hands say (or in the
    discard). ``table``: the cards on it, ``"7S>9S"`` beaten, ``"8S"`` to beat, which makes
    the phase (nothing: the lead; a card to beat: the defence; else throw-ins). ``known``:
    what each hand has shown, by seat, the dummy's last. ``limit``: the bout's, unless
    named the defender's hand up to the cap. Every other card is in the discard pile."""
    n = len(hands)
    opts = DurakOptions(**options)
    if controller is None and opts.dummy:
        controller = attacker
    trump_card = cards.parse(trump)
    held = [cs(h) for h in hands] + [cs(dummy_cards)]
    pairs = [cs(pair.replace(">", " ")) for pair in table.split()]
    phase = "defend" if any(len(p) == 1 for p in pairs) else "throw" if pairs else "lead"
    in_stock = [] if stock is None else cs(stock)
    taken = {c for h in held + pairs for c in h} | set(in_stock)
    assert stock is None or trump_card not in taken
    pool = [c for c in cards.deck(opts.deck_size) if c not in in_stock and c != trump_card]
    dealt = 6 * (n + 1) if opts.dummy else 6 * n
    # Above the trump card: the cards drawn so far, then what is still in the stock.
    deck = [*pool[:dealt], trump_card, *pool[dealt:], *in_stock]
    total = len(deck) - dealt
    drawn = total if stock is None else total - len(in_stock) - 1
    remaining = set() if stock is None else {*in_stock, trump_card}
    discard = [c for c in deck if c not in taken and c not in remaining]
    if limit is None:
        limit = min(5 if opts.five_before_discard and not discard else 6, len(held[defender]))
    state = {
        "v": 1,
        "options": opts.model_dump(),
        "players": NAMES[:n],
        "dealer": dealer,
        "previous_fool": None,
        "deck": deck,
        "drawn": drawn,
        "hands": held,
        "known": [cs(k) for k in known] if known else [[] for _ in held],
        "discard": discard,
        "table": pairs,
        "phase": phase,
        "attacker": attacker,
        "defender": defender,
        "pos": 0,
        "limit": limit,
        "controller": controller,
        "out": [],
        "pending": [],
        "fool": None,
    }
    if order is not None:  # the throw-in order the neighbours fixed (throw_in: neighbours)
        state["order"] = order
    return Durak.from_json(json.dumps(state))


def move(game: Durak, token: str) -> DurakMove:
    """The actor's move from its token (``a7H``, ``b7H9H``, ``t``, ``w7S``, ``p``, ``d…``)."""
    actor = game.to_act()
    assert actor is not None
    return game.move_from_token(token, actor.player)


def play(game: Durak, *tokens: str) -> list[tuple[str, dict[str, Any]]]:
    """Apply the actor's moves in turn; the events of all of them, as (kind, data)."""
    events = []
    for token in tokens:
        events += [(e.kind, e.data) for e in game.apply(move(game, token))]
    return events


def hand(game: Durak, seat: int) -> set[str]:
    return set(game.view(seat).hand)


def dummy_hand(game: Durak) -> set[str]:
    view = game.view(game.view(None).controller)
    assert view.dummy_hand is not None
    return set(view.dummy_hand)


def seeded(
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


def laid(
    hands: str,
    trump: str,
    stock: int,
    table: str = "",
    options: dict[str, Any] | None = None,
    known: str | None = None,
) -> Durak:
    """:func:`position` from text, for positions written one a line: ``hands`` and
    ``known`` by seat, the dummy last (``"KD 9C/6S 8S/"``); ``stock`` the number of cards
    in it, the trump card one of them, the others the lowest left."""
    held = hands.split("/")
    options = options or {}
    placed = {c(x) for x in [*hands.replace("/", " ").split(), *table.replace(">", " ").split()]}
    size = options.get("deck_size", 36)
    rest = [x for x in cards.deck(size) if x not in placed and x != c(trump)]
    above = " ".join(cards.to_str(x) for x in rest[: stock - 1]) if stock else None
    seen = None if known is None else known.split("/")
    return position(
        held[:-1], held[-1], trump=trump, stock=above, table=table, known=seen, limit=6, **options
    )


# Every allowed combination of options, with each number of players it seats.
VARIANTS = [
    (options, players)
    for options in combinations(DurakOptions)
    for players in range(2, seating(options)[1] + 1)
]
