"""A durak game's state as data (:class:`DurakState`): the set-up, the hands, the stock, the
bout, the turn and the options, in one place. Each field says how a copy takes it (shared,
or copied by the function its metadata names) and whether it is stored as it is, so that
copying (:meth:`DurakState.copy`) and the stored form (:mod:`.codec`) follow from the
definition: a new field is one line here.

Participants are numbered ``0 .. n-1`` for the players and ``n`` for the dummy, which sits
right after the dealer; ``nxt`` is the clockwise ring over all of them. Without the dummy
its hand ``n`` stays empty and the ring never reaches it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal, Self

from engine import cards
from engine.base import Event
from engine.cards import Card
from engine.games.durak.moves import BEATERS, MoveTable, Seat, moves_for
from engine.games.durak.options import HAND, DurakOptions, SeatingError, seating

BOUT_LIMIT = 6  # attack cards a bout may hold at most
EARLY_LIMIT = 5  # ... before the first discard, with five_before_discard (seeds/durak.md §14)

LEAD, DEFEND, THROW, TAKE, OVER = range(5)
Phase = Literal["lead", "defend", "throw", "take", "over"]
PHASES: tuple[Phase, ...] = ("lead", "defend", "throw", "take", "over")


# Each field's metadata: "copy", how a copy takes it (absent: the copy shares it, as it is
# never changed in place: fixed, replaced whole, or a cache), and "stored", whether the
# stored form keeps it under its name as it is.
_STORE = {"stored": True}


def _lists(value: list[list[Card]]) -> list[list[Card]]:
    return list(map(list, value))


def _sets(value: list[set[Card]]) -> list[set[Card]]:
    return list(map(set, value))


_LIST = {"copy": list}
_STORE_LIST = {"copy": list, "stored": True}


@dataclass(slots=True, eq=False, repr=False, kw_only=True)
class DurakState:
    """Everything one game of durak is at a point between two moves (the module doc).

    ``stored`` fields go to the stored form under their own name and unchanged; the codec
    writes the others (the names, the deck, the known cards, the table, the phase, the
    controller and the throw-in order) in a form of their own, and works out the rest."""

    # The set-up, fixed at the deal.
    options: DurakOptions = field(metadata=_STORE)
    names: list[str]
    n: int  # players; the dummy's participant number
    dealer: int = field(metadata=_STORE)
    previous_fool: int | None = field(metadata=_STORE)
    deck: tuple[Card, ...]
    deckset: frozenset[Card]
    dummy_plays: bool
    transfer: bool
    neighbours: bool  # throw-in by neighbours (§13)
    five: bool  # five before the first discard (§14)
    nxt: tuple[int, ...]  # the next participant clockwise
    ring: int  # participants round the table
    trump_card: Card
    trump: int
    stock: tuple[Card, ...]  # the trump card last
    beaters: tuple[frozenset[Card], ...]  # by attack card: the cards that beat it
    tables: list[MoveTable]  # each player's moves, for himself
    orders: dict[int, tuple[int, ...]] = field(default_factory=dict)  # by attacker, defender
    # The cards.
    drawn: int = field(default=0, metadata=_STORE)  # cards of the stock gone
    hands: list[list[Card]] = field(metadata={"copy": _lists, "stored": True})  # dummy's last
    known: list[set[Card]] = field(metadata={"copy": _sets})  # known to be in each hand
    discard: list[Card] = field(default_factory=list, metadata=_STORE_LIST)
    att: list[Card] = field(default_factory=list, metadata=_LIST)  # the attack cards
    # Their defence cards, -1 where not beaten yet.
    dfn: list[Card] = field(default_factory=list, metadata=_LIST)
    mask: int = 0  # bit r set: rank r lies on the table
    # The bout and the turn.
    phase: int = LEAD
    attacker: int = field(default=0, metadata=_STORE)
    defender: int = field(default=0, metadata=_STORE)
    controller: int = 0  # who plays the dummy's cards; -1: no dummy
    order: tuple[int, ...] = ()  # the right to throw in, by priority
    pos: int = field(default=0, metadata=_STORE)  # the holder of that right, in order
    limit: int = field(default=0, metadata=_STORE)  # attack cards this bout may hold
    # Who is out, and the end.
    out: list[int] = field(default_factory=list, metadata=_STORE_LIST)
    # Emptied their hands while the stock had cards: out after the draw if it gives none.
    pending: list[int] = field(default_factory=list, metadata=_STORE_LIST)
    fool: int | None = field(default=None, metadata=_STORE)
    # What the move being applied did: replaced whole as each move begins (a copy shares
    # it until its own first move).
    events: list[Event] = field(default_factory=list)

    @classmethod
    def set_up(
        cls,
        options: DurakOptions,
        players: Sequence[str],
        dealer: int,
        previous_fool: int | None,
        deck: Sequence[Card],
    ) -> Self:
        """The set-up of a game with empty hands; callers validate first and then deal or
        load. The fields with defaults take them from their definition (:func:`_defaulter`):
        a keyword call of ``__init__`` with all the others took twice as long."""
        n = len(players)
        ring = [(p + 1) % n for p in range(n)] + [(dealer + 1) % n]
        if options.dummy:
            ring[dealer] = n  # the dummy sits right after the dealer
        dealt = HAND * (n + 1 if options.dummy else n)
        stock: tuple[Card, ...] = ()
        if dealt == len(deck):  # the whole deck dealt: the dealer's sixth card is trump
            trump_card = deck[dealt - 1]
        else:  # the face-up card goes under the stock: it is drawn last
            trump_card, stock = deck[dealt], (*deck[dealt + 1 :], deck[dealt])
        game = cls.__new__(cls)
        game.options = options
        game.names = list(players)
        game.n = n
        game.dealer = dealer
        game.previous_fool = previous_fool
        game.deck = tuple(deck)
        game.deckset = frozenset(deck)
        game.dummy_plays = options.dummy_plays
        game.transfer = options.transfer
        game.neighbours = options.throw_in == "neighbours"
        game.five = options.five_before_discard
        game.nxt = tuple(ring)
        game.ring = n + 1 if options.dummy else n
        game.trump_card = trump_card
        game.trump = trump_card & 3
        game.stock = stock
        game.beaters = BEATERS[trump_card & 3]
        game.tables = [moves_for(p, False) for p in range(n)]
        game.hands = [[] for _ in range(n + 1)]
        game.known = [set() for _ in range(n + 1)]
        _DEFAULTS(game)
        return game

    @staticmethod
    def check_setup(
        options: DurakOptions,
        players: Sequence[str],
        dealer: int,
        previous_fool: int | None,
        deck: Sequence[Card] | None,
    ) -> None:
        """Raise ValueError (SeatingError for the player count) unless a game can start."""
        n = len(players)
        low, high = seating(options)
        if not low <= n <= high:
            raise SeatingError(n, options)
        if type(dealer) is not int or not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}, not {dealer!r}")
        if previous_fool is not None and (
            type(previous_fool) is not int or not 0 <= previous_fool < n
        ):
            raise ValueError(f"previous_fool must be null or a seat 0..{n - 1}")
        if deck is not None and not cards.is_deck_of(deck, options.deck_size):
            raise ValueError(f"the deck is not exactly the {options.deck_size}-card pack")

    def copy(self) -> Self:
        """An independent game at the same point, for players that search the move tree:
        far cheaper than a round trip through the stored state, which validates all.
        Made from the fields' metadata (:func:`_copier`)."""
        twin: Self = _COPY(self)
        return twin

    def position(self) -> tuple[object, ...]:
        """Everything the rest of the game depends on, hashable: two games with equal
        positions play on alike (the order of cards in a hand and the discard pile, and
        what is publicly known, change no move)."""
        return (
            tuple(map(frozenset, self.hands)),
            tuple(self.att),
            tuple(self.dfn),
            self.phase,
            self.pos,
            self.attacker,
            self.defender,
            self.order,
            self.controller,
            self.limit,
            self.drawn,
            tuple(self.out),
            tuple(self.pending),
        )

    def safe(self, seat: int) -> bool:
        """Whether ``seat`` can no longer be the fool: it is out while another player
        still holds cards (who then goes out after it, or is the fool)."""
        hands = self.hands
        return seat in self.out and any(hands[p] for p in range(self.n) if p != seat)

    def who(self) -> int:
        """The participant to act (the dummy is ``n``)."""
        phase = self.phase
        if phase == LEAD:
            return self.attacker
        if phase == DEFEND:
            return self.defender
        return self.order[self.pos]

    def seat(self, who: int) -> Seat:
        """How events and views name a participant: the dummy by name."""
        return "dummy" if who == self.n else who


STORED = tuple(f.name for f in fields(DurakState) if f.metadata.get("stored"))


def compiled(name: str, lines: list[str], scope: dict[str, Any]) -> Callable[..., Any]:
    """The function ``name`` defined by ``lines``, written out as straight code from the
    fields' metadata (the way dataclasses writes ``__init__``): a game is copied at every
    node of a search and written and read after every move, and a loop over the fields
    took up to twice as long."""
    exec("\n".join(lines), scope)
    made: Callable[..., Any] = scope[name]
    return made


def _copier(cls: type[DurakState]) -> Callable[[DurakState], Any]:
    """The copy of ``cls``'s fields, each taken as its metadata says."""
    scope: dict[str, Any] = {"new": object.__new__}
    lines = ["def copy(self):", "    twin = new(type(self))"]
    for f in fields(cls):
        how = f.metadata.get("copy")
        if how is None:
            lines.append(f"    twin.{f.name} = self.{f.name}")
        else:
            scope[f"copy_{f.name}"] = how
            lines.append(f"    twin.{f.name} = copy_{f.name}(self.{f.name})")
    return compiled("copy", [*lines, "    return twin"], scope)


_COPY = _copier(DurakState)


def _defaulter(cls: type[DurakState]) -> Callable[[DurakState], None]:
    """The setting of ``cls``'s fields that have a default to that default."""
    scope: dict[str, Any] = {}
    lines = ["def defaults(self):"]
    for f in fields(cls):
        if f.default_factory is not MISSING:
            scope[f"make_{f.name}"] = f.default_factory
            lines.append(f"    self.{f.name} = make_{f.name}()")
        elif f.default is not MISSING:
            scope[f"default_{f.name}"] = f.default
            lines.append(f"    self.{f.name} = default_{f.name}")
    return compiled("defaults", lines, scope)


_DEFAULTS = _defaulter(DurakState)

take_stored: Callable[[DurakState, Any], None] = compiled(
    "take_stored",
    ["def take_stored(state, source):", *(f"    state.{n} = source.{n}" for n in STORED)],
    {},
)
"""Set the ``stored`` fields of a state from the same-named attributes of ``source`` (the
stored form read back)."""
