"""The rules of durak (seeds/durak.md): the state, who acts, the legal moves and how a move
changes the game, for the seed's game with a dummy and for the variants its options make
(no dummy, transfers, throw-in by neighbours, five before the first discard, 24 cards).

Participants are numbered ``0 .. n-1`` for the players and ``n`` for the dummy, which sits
right after the dealer; ``_nxt`` is the clockwise ring over all of them. Without the dummy
its hand ``n`` stays empty and the ring never reaches it.  Everything the
rules do by themselves (automatic passes, the end of a bout, the draw, the next attacker,
going out, the end) runs inside :meth:`DurakRules.apply`, so between two calls the game is
always at a real decision of exactly one participant, or finished.

A bout moves through four phases: ``lead`` (the attacker plays a card), ``defend`` (the
defender beats an unbeaten card or declares take), ``throw`` (every card is beaten; the
right to throw in goes round the priority order) and ``take`` (the extra round after a
take, in which each holder of the right may add several cards before passing).

Events (``Event.kind`` → ``data``; seats are ints or ``"dummy"``, cards in record notation)
are public narration: they never name a drawn card.

========================  ==========================================================
``bout``                  ``{"attacker": seat, "defender": seat}``: a bout begins
``attack``                ``{"seat": seat, "card": C}``: lead card
``beat``                  ``{"seat": seat, "card": A, "with": C}``
``take_declared``         ``{"seat": seat}``: the defender will take
``transfer``              ``{"seat": seat, "card": C, "defender": seat}``: the defender
                          passed the attack on with C; the new defender
``throw``                 ``{"seat": seat, "card": C}``: a throw-in
``pass``                  ``{"seat": seat}``: gave up the right to throw in (chosen, not
                          automatic)
``took``                  ``{"seat": seat, "count": k}``: the defender took the table
``discarded``             ``{"count": k}``: the table went to the discard pile
``drew``                  ``{"seat": seat, "count": k}``: drew k cards from the stock
``out``                   ``{"seat": seat}``: a player got rid of his cards, he is safe
``control``               ``{"seat": seat}``: control of the dummy passed to this player
``finished``              ``{"fool": seat | null}``
========================  ==========================================================

When the controller acts for the dummy, ``seat`` is ``"dummy"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Annotated, Any, Literal, NamedTuple, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from engine import cards
from engine.base import Event, IllegalMove
from engine.cards import Card

HAND = 6  # cards dealt to every hand, and what the draw fills up to
BOUT_LIMIT = 6  # attack cards a bout may hold at most
EARLY_LIMIT = 5  # ... before the first discard, with five_before_discard (seeds/durak.md §14)
MIN_PLAYERS = 2
MOST_PLAYERS = 6  # at any table, whatever the deck

LEAD, DEFEND, THROW, TAKE, OVER = range(5)
Phase = Literal["lead", "defend", "throw", "take", "over"]
PHASES: tuple[Phase, ...] = ("lead", "defend", "throw", "take", "over")

ATTACK, BEAT, TAKE_KIND, THROW_KIND, PASS = "attack", "beat", "take", "throw", "pass"
TRANSFER = "transfer"
_ARITY = {ATTACK: 1, BEAT: 2, TAKE_KIND: 0, THROW_KIND: 1, PASS: 0, TRANSFER: 1}

Seat = int | Literal["dummy"]


class DurakOptions(BaseModel):
    """The lobby settings (seeds/durak.md §1, §3.4, §3.2 and the variants of §9): the
    deck, the dummy and whether it plays, the rematch lead, transfers, who throws in and
    five before the first discard. The defaults are the seed's game."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    deck_size: Annotated[Literal[36, 52, 24], BeforeValidator(cards.integer_deck_size)] = 36
    dummy_plays: bool = False
    first_move: Literal["under", "from_under"] = "under"
    dummy: bool = True
    transfer: bool = False
    throw_in: Literal["all", "neighbours"] = "all"
    five_before_discard: bool = False

    @model_validator(mode="after")
    def _allowed(self) -> Self:
        why = refusal(self)
        if why is not None:
            raise ValueError(why)
        return self


VARIANTS = ("dummy", "transfer", "throw_in", "five_before_discard")


def unwritten(options: DurakOptions) -> frozenset[str]:
    """The variants' options left at their default, which a record or a stored state
    leaves out: the seed's game is written exactly as before the variants existed (and
    an older engine still reads it)."""
    fields = DurakOptions.model_fields
    return frozenset(k for k in VARIANTS if getattr(options, k) == fields[k].default)


# What each option needs (§9): the dummy on or off, for any value but its default. The
# engine refuses the rest; the lobby offers an option only where its dummy is chosen.
NEEDS_DUMMY: dict[str, bool] = {"dummy_plays": True, "transfer": False, "throw_in": False}


def refusal(options: DurakOptions) -> str | None:
    """Why a combination of options is no game (what each option needs, §9), or None."""
    fields = DurakOptions.model_fields
    for name, dummy in NEEDS_DUMMY.items():
        value = getattr(options, name)
        if options.dummy != dummy and value != fields[name].default:
            shown = name if isinstance(value, bool) else f"{name}: {value}"
            return f"{shown} needs dummy: {'true' if dummy else 'false'}"
    return None


def seating(options: DurakOptions) -> tuple[int, int]:
    """(fewest, most) players a game with these options seats (§1, §10.2): six cards to
    each hand; with the dummy, six to it too and one card left over for the trump."""
    size = options.deck_size
    most = (size - 1) // HAND - 1 if options.dummy else size // HAND
    return MIN_PLAYERS, min(MOST_PLAYERS, most)


class SeatingError(ValueError):
    """Too many or too few players for the deck and options; names a larger deck that
    seats them, if one does."""

    def __init__(self, players: int, options: DurakOptions) -> None:
        _, most = seating(options)
        game = f"a {options.deck_size}-card game" + ("" if options.dummy else " without the dummy")
        larger = [
            (size, seating(options.model_copy(update={"deck_size": size}))[1])
            for size in (36, 52)
            if size > options.deck_size
        ]
        fits = [f" (the {s}-card deck takes up to {m})" for s, m in larger if m >= players]
        hint = fits[0] if fits and players > most else ""
        super().__init__(f"{game} takes {MIN_PLAYERS} to {most} players, not {players}{hint}")
        self.players = players
        self.deck_size = options.deck_size
        self.most = most


class DurakActor(NamedTuple):
    """Who must act: a seat, and whether he acts for the dummy (as its controller)."""

    player: int
    dummy: bool = False

    def record(self) -> dict[str, Any]:
        return {"player": self.player, "dummy": self.dummy}


class DurakMove(NamedTuple):
    """One choice: ``cards`` is ``(C,)`` for attack/throw/transfer, ``(A, C)`` for beat,
    else ``()``.

    ``player`` is the seat that taps; ``dummy`` is true when he acts for the dummy.
    """

    player: int
    dummy: bool
    kind: str
    cards: tuple[Card, ...] = ()


# Event((kind, data)) without NamedTuple's Python-level __new__: events are made in the
# hot loop.
_event = partial(tuple.__new__, Event)


def beats(card: Card, attack: Card, trump: int) -> bool:
    """A higher card of the same suit, or any trump against a non-trump."""
    s = attack & 3
    return (card & 3 == s and card > attack) or (card & 3 == trump != s)


def _name(card: object) -> str:
    """Notation of a card, or the raw value of something that is none."""
    return cards.to_str(card) if isinstance(card, int) and card in _ALL_CARDS else repr(card)


_ALL_CARDS = frozenset(cards.deck(52))
_STR = [cards.to_str(c) if c in _ALL_CARDS else "" for c in range(60)]  # hot-path notation


class _MoveTable:
    """Every move object one actor can make, built once: the hot loop only looks them up."""

    __slots__ = ("_key", "_rows", "attack", "pass_", "take", "throw", "transfer")

    def __init__(self, player: int, dummy: bool) -> None:
        self._key = (player, dummy)
        self.attack = [DurakMove(player, dummy, ATTACK, (c,)) for c in range(60)]
        self.throw = [DurakMove(player, dummy, THROW_KIND, (c,)) for c in range(60)]
        self.transfer = [DurakMove(player, dummy, TRANSFER, (c,)) for c in range(60)]
        self.take = DurakMove(player, dummy, TAKE_KIND)
        self.pass_ = DurakMove(player, dummy, PASS)
        self._rows: list[list[DurakMove] | None] = [None] * 60

    def beats(self, a: Card) -> list[DurakMove]:
        """The moves beating ``a`` with each card (a row by card, built on first use)."""
        row = self._rows[a]
        if row is None:
            row = self._rows[a] = [DurakMove(*self._key, BEAT, (a, c)) for c in range(60)]
        return row


_TABLES: dict[tuple[int, bool], _MoveTable] = {}

# Sets of cards, so that the hot loop filters a hand at C speed (filter, isdisjoint).
# _BEATERS[trump][a]: the cards that beat attack card a.
_BEATERS = [
    tuple(frozenset(c for c in _ALL_CARDS if beats(c, a, trump)) for a in range(60))
    for trump in range(4)
]
_RANK_CARDS: dict[int, frozenset[Card]] = {}


def _cards_of_ranks(mask: int) -> frozenset[Card]:
    """The cards whose rank bit is set in ``mask`` (what may be thrown in), cached."""
    found = _RANK_CARDS.get(mask)
    if found is None:
        found = _RANK_CARDS[mask] = frozenset(c for c in _ALL_CARDS if mask >> (c >> 2) & 1)
    return found


def _moves_for(player: int, dummy: bool) -> _MoveTable:
    table = _TABLES.get((player, dummy))
    if table is None:
        table = _TABLES[player, dummy] = _MoveTable(player, dummy)
    return table


class DurakRules:
    """One game's state and its rules: who acts, the legal moves, apply and the steps the
    rules take by themselves. Its codecs (:class:`engine.games.durak.codec.DurakCodec`) and
    views (:class:`engine.games.durak.view.DurakViewer`) read these attributes, and
    :class:`engine.games.durak.game.Durak` joins the three."""

    __slots__ = (
        "_att",
        "_attacker",
        "_beaters",
        "_controller",
        "_dealer",
        "_deck",
        "_deckset",
        "_defender",
        "_dfn",
        "_discard",
        "_drawn",
        "_dummy_plays",
        "_events",
        "_five",
        "_fool",
        "_hands",
        "_known",
        "_limit",
        "_mask",
        "_n",
        "_names",
        "_neighbours",
        "_nxt",
        "_order",
        "_orders",
        "_out",
        "_pending",
        "_phase",
        "_pos",
        "_previous_fool",
        "_ring",
        "_stock",
        "_tables",
        "_transfer",
        "_trump",
        "_trump_card",
        "options",
    )

    # ------------------------------------------------------------------ creation

    def __init__(
        self,
        options: DurakOptions,
        players: Sequence[str],
        dealer: int,
        previous_fool: int | None,
        deck: Sequence[Card],
    ) -> None:
        """The fixed part of a game; callers validate first and then deal or load."""
        n = len(players)
        self.options = options
        self._names = list(players)
        self._n = n
        self._dealer = dealer
        self._previous_fool = previous_fool
        self._deck = tuple(deck)
        self._deckset = frozenset(deck)
        self._dummy_plays = options.dummy_plays
        self._transfer = options.transfer
        self._neighbours = options.throw_in == "neighbours"
        self._five = options.five_before_discard
        ring = [(p + 1) % n for p in range(n)] + [(dealer + 1) % n]
        if options.dummy:
            ring[dealer] = n  # the dummy sits right after the dealer
        self._nxt = tuple(ring)
        self._ring = n + 1 if options.dummy else n  # participants round the table
        dealt = HAND * self._ring
        if dealt == len(deck):  # the whole deck dealt: the dealer's sixth card is trump
            self._trump_card = deck[dealt - 1]
            self._stock: tuple[Card, ...] = ()
        else:  # the face-up card goes under the stock: it is drawn last
            self._trump_card = deck[dealt]
            self._stock = (*deck[dealt + 1 :], deck[dealt])
        self._trump = self._trump_card & 3
        self._beaters = _BEATERS[self._trump]
        self._tables = [_moves_for(p, False) for p in range(n)]
        self._drawn = 0
        self._hands: list[list[Card]] = [[] for _ in range(n + 1)]
        self._known: list[set[Card]] = [set() for _ in range(n + 1)]
        self._discard: list[Card] = []
        self._att: list[Card] = []
        self._dfn: list[Card] = []  # -1: not beaten yet
        self._mask = 0  # bit r set: rank r lies on the table
        self._phase = LEAD
        self._attacker = self._defender = self._controller = 0
        self._order: tuple[int, ...] = ()
        self._orders: dict[int, tuple[int, ...]] = {}  # throw orders by attacker, defender
        self._pos = 0
        self._limit = 0
        self._out: list[int] = []
        self._pending: list[int] = []  # emptied while the stock still had cards
        self._fool: int | None = None
        self._events: list[Event] = []

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

    @classmethod
    def new(
        cls,
        options: DurakOptions,
        players: list[str],
        dealer: int,
        previous_fool: int | None = None,
        seed: int | str | None = None,
        deck: Sequence[Card] | None = None,
    ) -> Self:
        """Shuffle (by ``seed``) or take ``deck``, deal and find the first attacker."""
        cls.check_setup(options, players, dealer, previous_fool, deck)
        if deck is None:
            deck = cards.shuffled(options.deck_size, 1, seed)
        game = cls(options, players, dealer, previous_fool, deck)
        game._deal()
        return game

    def _deal(self) -> None:
        n, deck = self._n, self._deck
        for k in range(n):  # from the dealer's neighbour round to the dealer
            self._hands[(self._dealer + 1 + k) % n] = list(deck[HAND * k : HAND * (k + 1)])
        if self.options.dummy:
            self._hands[n] = list(deck[HAND * n : HAND * (n + 1)])
        elif not self._stock:  # the dealer's face-up sixth card: everyone saw it go to him
            self._known[self._dealer].add(self._trump_card)
        first = self._first_attacker()
        self._controller = first if self.options.dummy else -1  # -1: no dummy to control
        self._start_bout(first)
        self._events = []

    def _first_attacker(self) -> int:
        """seeds/durak.md §3.1 and §8.3; the dummy's cards count as the dealer's."""
        n, hands = self._n, self._hands
        if self._previous_fool is not None:
            step = -1 if self.options.first_move == "under" else 1
            return (self._previous_fool + step) % n
        seats = [(self._dealer + 1 + k) % n for k in range(n)]  # dealer last

        def held(seat: int) -> list[Card]:
            return hands[seat] + hands[n] if seat == self._dealer else hands[seat]

        trumps = [(c, seat) for seat in seats for c in held(seat) if c & 3 == self._trump]
        if trumps:
            return min(trumps)[1]
        lowest = [min(c >> 2 for c in held(seat)) for seat in seats]
        return seats[lowest.index(min(lowest))]  # ties: first clockwise

    # ------------------------------------------------------------------ search support

    def copy(self) -> Self:
        """An independent game at the same point, for players that search the move tree:
        far cheaper than a round trip through the stored state, which validates all."""
        twin = object.__new__(type(self))
        # Shared: never changed after creation, changed only by reassignment, or caches.
        twin._attacker = self._attacker
        twin._beaters = self._beaters
        twin._controller = self._controller
        twin._dealer = self._dealer
        twin._deck = self._deck
        twin._deckset = self._deckset
        twin._defender = self._defender
        twin._drawn = self._drawn
        twin._dummy_plays = self._dummy_plays
        twin._five = self._five
        twin._fool = self._fool
        twin._limit = self._limit
        twin._mask = self._mask
        twin._n = self._n
        twin._names = self._names
        twin._neighbours = self._neighbours
        twin._nxt = self._nxt
        twin._order = self._order
        twin._orders = self._orders
        twin._phase = self._phase
        twin._pos = self._pos
        twin._previous_fool = self._previous_fool
        twin._ring = self._ring
        twin._stock = self._stock
        twin._tables = self._tables
        twin._transfer = self._transfer
        twin._trump = self._trump
        twin._trump_card = self._trump_card
        twin.options = self.options
        twin._hands = [list(h) for h in self._hands]
        twin._known = [set(k) for k in self._known]
        twin._discard = list(self._discard)
        twin._att = list(self._att)
        twin._dfn = list(self._dfn)
        twin._out = list(self._out)
        twin._pending = list(self._pending)
        twin._events = []
        return twin

    def safe(self, seat: int) -> bool:
        """Whether ``seat`` can no longer be the fool: it is out while another player
        still holds cards (who then goes out after it, or is the fool)."""
        hands = self._hands
        return seat in self._out and any(hands[p] for p in range(self._n) if p != seat)

    def position(self) -> tuple[object, ...]:
        """Everything the rest of the game depends on, hashable: two games with equal
        positions play on alike (the order of cards in a hand and the discard pile, and
        what is publicly known, change no move)."""
        return (
            tuple(map(frozenset, self._hands)),
            tuple(self._att),
            tuple(self._dfn),
            self._phase,
            self._pos,
            self._attacker,
            self._defender,
            self._order,
            self._controller,
            self._limit,
            self._drawn,
            tuple(self._out),
            tuple(self._pending),
        )

    # ------------------------------------------------------------------ queries

    @property
    def players(self) -> list[str]:
        return list(self._names)

    def _who(self) -> int:
        """The participant to act (the dummy is ``n``)."""
        phase = self._phase
        if phase == LEAD:
            return self._attacker
        if phase == DEFEND:
            return self._defender
        return self._order[self._pos]

    def to_act(self) -> DurakActor | None:
        if self._phase == OVER:
            return None
        who = self._who()
        return DurakActor(self._controller, True) if who == self._n else DurakActor(who, False)

    def is_finished(self) -> bool:
        return self._phase == OVER

    def result(self) -> dict[str, Any] | None:
        return {"fool": self._fool} if self._phase == OVER else None

    def legal_moves(self) -> list[DurakMove]:
        phase = self._phase
        if phase == OVER:
            return []
        who = self._who()
        table = _moves_for(self._controller, True) if who == self._n else self._tables[who]
        hand = self._hands[who]
        if phase == LEAD:
            return list(map(table.attack.__getitem__, hand))
        if phase == DEFEND:
            if self._transfer:
                return self._defences(table, hand)
            a = self._att[-1]  # without transfers exactly one card is unbeaten: the latest
            moves = list(
                map(table.beats(a).__getitem__, filter(self._beaters[a].__contains__, hand))
            )
            moves.append(table.take)
            return moves
        throwable = _cards_of_ranks(self._mask).__contains__
        moves = list(map(table.throw.__getitem__, filter(throwable, hand)))
        moves.append(table.pass_)
        return moves

    def _defences(self, table: _MoveTable, hand: list[Card]) -> list[DurakMove]:
        """The defender's moves where transfers are played (§12): beat any unbeaten card,
        transfer while nothing is beaten, or take."""
        moves: list[DurakMove] = []
        beaters = self._beaters
        for a, d in zip(self._att, self._dfn, strict=True):
            if d < 0:
                moves += map(table.beats(a).__getitem__, filter(beaters[a].__contains__, hand))
        if self._transfer_target(self._defender) >= 0:
            rank = self._att[0] >> 2
            moves += [table.transfer[c] for c in hand if c >> 2 == rank]
        moves.append(table.take)
        return moves

    def _cap(self) -> int:
        """Attack cards a bout may hold before the defender's hand counts (§4.5, §14)."""
        return EARLY_LIMIT if self._five and not self._discard else BOUT_LIMIT

    def _next_holder(self, seat: int) -> int:
        """The next player clockwise after ``seat`` who holds cards; -1 if nobody does."""
        nxt, hands = self._nxt, self._hands
        who = nxt[seat]
        while who != seat:
            if hands[who]:
                return who
            who = nxt[who]
        return -1

    def _transfer_target(self, defender: int) -> int:
        """Who would defend after a transfer by ``defender`` now, or -1 if none may be
        made (§12): a card is beaten already, or the new defender holds fewer cards than
        the attack cards would then be (never more than four: the bout's cap of five or
        six cannot stop it)."""
        if max(self._dfn) >= 0:
            return -1
        new = self._next_holder(defender)
        if new < 0 or len(self._att) + 1 > len(self._hands[new]):
            return -1
        return new

    # ------------------------------------------------------------------ apply

    def apply(self, move: DurakMove) -> list[Event]:
        """Check the move's shape and who makes it, then play it by its kind (each kind's
        own method checks the phase and the cards); the forced steps follow in it."""
        phase = self._phase
        if phase == OVER:
            raise IllegalMove("game_over", "The game is over.")
        try:
            player, dummy, kind, cs = move
            arity_ok = _ARITY[kind] == len(cs)
        except (TypeError, ValueError, KeyError):
            arity_ok = False
        if not arity_ok:
            raise IllegalMove("unknown_move", f"There is no such move: {move!r}.")
        who = self._who()
        if (
            (dummy is not True or player != self._controller)
            if who == self._n
            else (dummy is not False or player != who)
        ):
            raise self._not_your_turn(player, dummy, who)
        events: list[Event] = []
        self._events = events
        _STEPS[kind](self, kind, phase, who, cs)
        return events

    def _beat(self, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
        if phase != DEFEND:
            raise IllegalMove("cannot_beat_now", "There is no card to beat now.")
        a, c = cs
        dfn = self._dfn
        i = -1  # the latest card: the only unbeaten one without transfers
        if a != self._att[-1] or dfn[-1] >= 0:
            i = self._unbeaten_index(a)
        hand = self._hands[who]
        if c not in hand:
            raise self._not_held(c, who)
        if c not in self._beaters[a]:
            raise IllegalMove(
                "cannot_beat",
                f"{_STR[c]} does not beat {_STR[a]}.",
                card=_STR[a],
                with_card=_STR[c],
            )
        hand.remove(c)
        dfn[i] = c
        self._mask |= 1 << (c >> 2)
        seat: Seat = "dummy" if who == self._n else who
        self._events.append(_event(("beat", {"seat": seat, "card": _STR[a], "with": _STR[c]})))
        if self._known[who] or not hand:
            self._played(who, hand, c)
        if self._transfer and -1 in dfn:
            return  # more cards to beat, in any order (§12)
        self._phase = THROW
        self._pos = 0
        self._advance()

    def _lay(self, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
        """An attack (the bout's lead card) or a throw-in: a card added to the table."""
        if (phase != LEAD) if kind == ATTACK else (phase < THROW):
            raise IllegalMove(
                f"cannot_{kind}_now",
                "A bout is already under way."
                if kind == ATTACK
                else "Nobody may throw in now: the defender must act.",
            )
        c = cs[0]
        hand = self._hands[who]
        if c not in hand:
            raise self._not_held(c, who)
        if kind == THROW_KIND and not self._mask >> (c >> 2) & 1:
            raise IllegalMove(
                "rank_not_on_table",
                f"No card of the rank of {_STR[c]} is on the table.",
                card=_STR[c],
            )
        hand.remove(c)
        self._att.append(c)
        self._dfn.append(-1)
        self._mask |= 1 << (c >> 2)
        seat: Seat = "dummy" if who == self._n else who
        self._events.append(_event((kind, {"seat": seat, "card": _STR[c]})))
        if self._known[who] or not hand:
            self._played(who, hand, c)
        if phase == TAKE:
            self._advance()
        else:
            self._phase = DEFEND

    def _transfer_move(self, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
        """The defender passes the attack on with a card of the rank on the table (§12)."""
        if phase != DEFEND or not self._transfer:
            raise IllegalMove(
                "cannot_transfer_now",
                "No transfer now: only the defender transfers, in a game with transfers.",
            )
        c = cs[0]
        hand = self._hands[who]
        if c not in hand:
            raise self._not_held(c, who)
        att = self._att
        if max(self._dfn) >= 0:
            raise IllegalMove(
                "transfer_after_beat", "A card on the table is beaten already: no transfer now."
            )
        if c >> 2 != att[0] >> 2:
            raise IllegalMove(
                "transfer_rank",
                f"{_STR[c]} is not of the rank of the cards on the table.",
                card=_STR[c],
            )
        # The attack cards are one rank, four at most: the cap (five or six) never stops
        # a transfer, the new defender's hand may.
        count = len(att) + 1
        new = self._next_holder(who)
        if new < 0:
            raise IllegalMove("cannot_transfer_now", "Nobody else holds cards to defend.")
        if count > len(self._hands[new]):
            held = len(self._hands[new])
            raise IllegalMove(
                "transfer_too_few",
                f"{self._names[new]} holds {held} cards, too few to face {count}.",
                seat=new,
                held=held,
                count=count,
            )
        hand.remove(c)
        att.append(c)
        self._dfn.append(-1)
        self._events.append(_event((TRANSFER, {"seat": who, "card": _STR[c], "defender": new})))
        if self._known[who] or not hand:
            self._played(who, hand, c)
        # He is now the bout's lead attacker; the limit counts from the new defender's hand.
        self._attacker = who
        self._defender = new
        self._order = self._throw_order(who, new)
        self._limit = min(self._cap(), len(self._hands[new]))
        self._pos = 0

    def _take(self, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
        if phase != DEFEND:
            raise IllegalMove("cannot_take_now", "Only the defender takes, facing a card.")
        self._events.append(_event(("take_declared", {"seat": self._seat(who)})))
        self._phase = TAKE
        self._pos = 0
        self._advance()

    def _pass(self, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
        if phase < THROW:
            raise IllegalMove("cannot_pass_now", "There is no right to throw in to pass.")
        self._events.append(_event(("pass", {"seat": self._seat(who)})))
        self._pos += 1
        self._advance()

    def _not_your_turn(self, player: object, dummy: object, who: int) -> IllegalMove:
        if type(player) is not int or not 0 <= player < self._n:
            return IllegalMove("no_such_seat", f"There is no seat {player!r}.", seat=player)
        if who == self._n:
            name = self._names[self._controller]
            return IllegalMove(
                "not_your_turn",
                f"It is {name}'s turn, for the dummy.",
                seat=self._controller,
                dummy=True,
            )
        name = self._names[who]
        if dummy and player == who:
            return IllegalMove(
                "not_your_turn", f"It is {name}'s own turn, not the dummy's.", seat=who, dummy=False
            )
        return IllegalMove("not_your_turn", f"It is {name}'s turn.", seat=who, dummy=False)

    def _not_held(self, c: object, who: int) -> IllegalMove:
        if c not in self._deckset:
            return IllegalMove(
                "not_in_game",
                f"There is no {_name(c)} in a {len(self._deck)}-card deck.",
                card=_name(c),
            )
        whose = "The dummy does" if who == self._n else "You do"
        return IllegalMove("not_in_hand", f"{whose} not hold {_name(c)}.", card=_name(c))

    def _unbeaten_index(self, a: object) -> int:
        """Where unbeaten attack card ``a`` lies on the table; raises if it does not."""
        for i, (x, d) in enumerate(zip(self._att, self._dfn, strict=True)):
            if x == a and d < 0:
                return i
        raise self._not_unbeaten(a)

    def _not_unbeaten(self, a: object) -> IllegalMove:
        if a not in self._deckset:
            return self._not_held(a, self._defender)
        return IllegalMove(
            "not_on_table", f"{_name(a)} is not an unbeaten card on the table.", card=_name(a)
        )

    # ------------------------------------------------------------------ forced steps

    def _played(self, who: int, hand: list[Card], c: Card) -> None:
        """After ``who`` played ``c``: it is no longer known to be his; out if he is done.

        Callers skip the call when his hand is neither known nor empty (the hot loop)."""
        self._known[who].discard(c)
        if not hand and who != self._n:
            if self._drawn == len(self._stock):
                self._go_out(who)
            else:
                self._pending.append(who)

    def _go_out(self, seat: int) -> None:
        self._out.append(seat)
        self._events.append(_event(("out", {"seat": seat})))
        if seat == self._controller:
            n, hands = self._n, self._hands
            for k in range(1, n):
                other = (seat + k) % n
                if hands[other]:
                    self._controller = other
                    self._events.append(_event(("control", {"seat": other})))
                    return
            # Nobody else holds cards: control stays where it is.

    def _can_throw(self, who: int) -> bool:
        if who == self._n and self._controller == self._defender:
            return False  # the dummy is skipped while its controller defends
        return not _cards_of_ranks(self._mask).isdisjoint(self._hands[who])

    def _advance(self) -> None:
        """Pass automatically everyone who may not throw in; end the round when all have.

        (:meth:`_can_throw` inlined: this runs after almost every move.)"""
        if len(self._att) < self._limit:
            order, hands = self._order, self._hands
            disjoint = _cards_of_ranks(self._mask).isdisjoint
            skip = self._n if self._controller == self._defender else -1
            pos = self._pos
            while pos < len(order):
                who = order[pos]
                if who != skip and not disjoint(hands[who]):
                    self._pos = pos
                    return
                pos += 1
        self._end_bout(self._phase == TAKE)

    def _end_bout(self, taken: bool) -> None:
        n, hands, events = self._n, self._hands, self._events
        defender = self._defender
        if taken:
            table = self._att + [d for d in self._dfn if d >= 0]
            hands[defender].extend(table)
            self._known[defender].update(table)
            seat: Seat = "dummy" if defender == n else defender
            events.append(_event(("took", {"seat": seat, "count": len(table)})))
        else:
            table = self._att + self._dfn  # every card was beaten
            self._discard.extend(table)
            events.append(_event(("discarded", {"count": len(table)})))
        self._att = []
        self._dfn = []
        self._mask = 0
        if self._drawn < len(self._stock):
            self._draw()
        if self._pending:
            for who in self._pending:
                if not hands[who]:
                    self._go_out(who)
            self._pending = []
        if self._drawn == len(self._stock):  # with stock left, every hand holds six
            holders = [p for p in range(n) if hands[p]]
            if len(holders) <= 1:
                self._finish(holders)
                return
        self._start_bout(self._rotate(self._nxt[defender] if taken else defender))

    def _finish(self, holders: list[int]) -> None:
        if holders:
            self._fool = holders[0]
        elif self._hands[self._n]:
            self._fool = self._out[-1]  # the player who got rid of his cards last
        else:
            self._fool = None  # nothing anywhere: a drawn game
        self._phase = OVER
        self._events.append(_event(("finished", {"fool": self._fool})))

    def _draw(self) -> None:
        """Lead attacker first, then clockwise; the dummy at its seat."""
        stock, drawn = self._stock, self._drawn
        total = len(stock)
        hands, nxt, n = self._hands, self._nxt, self._n
        who = self._attacker
        for _ in range(self._ring):
            hand = hands[who]
            want = HAND - len(hand)
            if want > 0:
                got = stock[drawn : drawn + want]
                hand.extend(got)
                drawn += len(got)
                seat: Seat = "dummy" if who == n else who
                self._events.append(_event(("drew", {"seat": seat, "count": len(got)})))
                if drawn == total:  # the face-up trump card: everyone saw who got it
                    self._known[who].add(self._trump_card)
                    break
            who = nxt[who]
        self._drawn = drawn

    def _seat(self, who: int) -> Seat:
        return "dummy" if who == self._n else who

    def _rotate(self, who: int) -> int:
        """The first participant from ``who`` on, clockwise, who may attack or defend:
        one holding cards, and the dummy only with dummy_plays."""
        hands, nxt = self._hands, self._nxt
        skip = -1 if self._dummy_plays else self._n
        while who == skip or not hands[who]:
            who = nxt[who]
        return who

    def _start_bout(self, attacker: int) -> None:
        n = self._n
        defender = self._rotate(self._nxt[attacker])
        self._attacker = attacker
        self._defender = defender
        self._order = self._throw_order(attacker, defender)
        self._limit = min(self._cap(), len(self._hands[defender]))
        self._phase = LEAD
        self._pos = 0
        seats = ("dummy" if attacker == n else attacker, "dummy" if defender == n else defender)
        self._events.append(_event(("bout", {"attacker": seats[0], "defender": seats[1]})))

    def _throw_order(self, attacker: int, defender: int) -> tuple[int, ...]:
        """Priority order of the right to throw in: the lead attacker, then clockwise; with
        throw-in by neighbours (§13), the lead attacker and the first player after the
        defender who holds cards, fixed now (at the start of a bout, or a transfer)."""
        if self._neighbours:
            after = self._next_holder(defender)
            return (attacker,) if after in (attacker, -1) else (attacker, after)
        key = attacker * 8 + defender
        order = self._orders.get(key)
        if order is None:
            found = []
            who = attacker
            for _ in range(self._ring):
                if who != defender:
                    found.append(who)
                who = self._nxt[who]
            order = self._orders[key] = tuple(found)
        return order


# How each kind of move is played (DurakRules.apply).
_STEPS: dict[str, Callable[[DurakRules, str, int, int, tuple[Card, ...]], None]] = {
    BEAT: DurakRules._beat,
    ATTACK: DurakRules._lay,
    THROW_KIND: DurakRules._lay,
    TAKE_KIND: DurakRules._take,
    PASS: DurakRules._pass,
    TRANSFER: DurakRules._transfer_move,
}
