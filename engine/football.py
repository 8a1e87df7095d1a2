"""Belarusian football (seeds/football.md): state, legal moves, apply.

The field is 16 positions ``row * 4 + col`` in absolute coordinates (row 0 is A's own
row, row 3 is B's; columns 0..3 from A's left) plus the two goalkeepers.  Seat 0 (A)
attacks upwards, seat 1 (B) downwards.  Face-up cards are one bit mask: bits 0..15 the
field, bit 16 A's goalkeeper, bit 17 B's.

Everything the rules do by themselves happens inside :meth:`Football.apply` (and
:meth:`Football.new` is already at a decision too): the draw at the start of a turn, a
ball that cannot enter or is stopped, the shot at the goalkeeper, passing the turn and the
final reveal.  So after every call the state waits for a real choice, or is finished.

Moves (:class:`Move`): ``setup`` (goalkeeper and own row), ``enter`` (a column of one's
own row), ``advance`` (a column of the next row).

Events returned by :meth:`Football.apply`, in order (the bot's catalogue key is
``event.football.<kind>``; seats are ints, cards in record notation; ``with`` is always the
ball when another card is named under ``card``):

========== ==================================================================================
kind       data
========== ==================================================================================
setup_done ``seat``: that player has placed his goalkeeper and row
started    ``{}``: both have set up, play begins (A moves first)
drew       ``seat``, ``card`` (the ball, public from now on), ``pile`` (cards left in it)
ball_out   ``seat``, ``card`` (the ball), ``reason``: ``no_entry`` (nothing in his row
           matches), ``no_match`` (the card turned up did not match), ``dead_end`` (every
           reachable card is face up and none matches)
entered    ``seat``, ``column``, ``card`` (the own-row card the ball steps onto), ``with``
           (the ball), ``flipped`` (true when that card was face down until now)
flipped    ``seat``, ``row``, ``column``, ``card`` (the card turned up), ``with``, ``match``
           (true: the ball stands on it; false: a ``ball_out`` ``no_match`` follows)
stepped    ``seat``, ``row``, ``column``, ``card`` (a face-up card the ball steps onto),
           ``with``
keeper     ``seat`` (whose goalkeeper), ``card``, ``flipped`` (true when turned up now)
goal       ``seat`` (the scorer), ``card`` (the ball), ``with`` (the goalkeeper), ``goals``
           ([a, b] after it)
saved      ``seat`` (the shooter), ``card`` (the ball), ``with`` (the goalkeeper); the
           ball is out of the game
finished   ``goals`` ([a, b]), ``winner`` (seat or null for a draw)
========== ==================================================================================
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import permutations
from typing import Any, ClassVar, Literal, NamedTuple, Self, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import to_json

from engine import cards
from engine.base import (
    Actor,
    CorruptState,
    Event,
    IllegalMove,
    MalformedRecord,
    first_error,
    read_header,
)
from engine.cards import Card, matches

SETUP, PLAY, FINISHED = 0, 1, 2
PHASES: tuple[Literal["setup", "play", "finished"], ...] = ("setup", "play", "finished")
KINDS = ("setup", "enter", "advance")

PLAYERS = 2
HAND = 5  # cards dealt to each player: his goalkeeper and his row
HOME = (0, 3)  # each seat's own row
STEP = (1, -1)  # the direction each seat attacks in
KEEPER_BIT = (1 << 16, 1 << 17)


def ahead(seat: int, row: int) -> int:
    """The row ``seat``'s ball advances into from ``row`` (towards the other goal)."""
    return row + STEP[seat]


ALL_UP = (1 << 18) - 1
DEALT = 8 + PLAYERS * HAND  # the middle cards and the hands are dealt before the piles

# The columns of the next row reachable from column c: straight ahead and diagonally.
REACH = tuple(tuple(n for n in (c - 1, c, c + 1) if 0 <= n < 4) for c in range(4))

_to_str = cards.to_str


class FootballOptions(BaseModel):
    """Lobby options (seeds/football.md §1); strict: unknown keys and wrong types refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    decks: int = Field(default=1, ge=1, le=cards.MAX_DECKS)
    deck_size: Literal[36, 52] = 36

    @field_validator("deck_size", mode="before")
    @classmethod
    def _integer_deck_size(cls, value: object) -> object:
        # A Literal accepts 36.0 and True == 1 alike even in strict mode; records may not.
        if type(value) is not int:
            raise ValueError("deck_size must be the integer 36 or 52")
        return value


class Move(NamedTuple):
    """One choice.  ``column`` for enter/advance; ``cards`` for setup: goalkeeper first,
    then the own row by absolute column."""

    player: int
    kind: str
    column: int = -1
    cards: tuple[Card, ...] = ()


# Listing the legal enter/advance moves is one lookup by (seat, kind) and column mask.
_BY_MASK = {
    (p, k): tuple(tuple(Move(p, k, c) for c in range(4) if m >> c & 1) for m in range(16))
    for p in (0, 1)
    for k in KINDS[1:]
}

_PERMS5 = tuple(permutations(range(5)))


@lru_cache(maxsize=64)
def _distinct_perms(pattern: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The arrangements of five sorted cards whose equality ``pattern`` (index of each
    card's first equal) is given, listed once per distinct outcome."""
    seen: set[tuple[int, ...]] = set()
    kept = []
    for perm in _PERMS5:
        outcome = tuple(pattern[i] for i in perm)
        if outcome not in seen:
            seen.add(outcome)
            kept.append(perm)
    return tuple(kept)


class SetupMoves(Sequence[Move]):
    """Every set-up of one seat's five cards, built on demand.

    A hand has up to 120 arrangements; building them all for each new game would cost
    more than the rest of the game, and a caller usually wants one of them.
    """

    __slots__ = ("_hand", "_perms", "_player")

    def __init__(self, player: int, hand: Sequence[Card]) -> None:
        self._player = player
        self._hand = tuple(sorted(hand))
        pattern = tuple(self._hand.index(c) for c in self._hand)
        self._perms = _PERMS5 if pattern == (0, 1, 2, 3, 4) else _distinct_perms(pattern)

    def __len__(self) -> int:
        return len(self._perms)

    @overload
    def __getitem__(self, index: int) -> Move: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Move]: ...
    def __getitem__(self, index: int | slice) -> Move | Sequence[Move]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self._perms))[index]]
        hand = self._hand
        return Move(self._player, "setup", -1, tuple(hand[i] for i in self._perms[index]))

    def __iter__(self) -> Iterator[Move]:
        for i in range(len(self._perms)):
            yield self[i]

    def __contains__(self, move: object) -> bool:
        return (
            isinstance(move, Move)
            and move.player == self._player
            and move.kind == "setup"
            and tuple(sorted(move.cards)) == self._hand
        )


class FootballResult(BaseModel):
    """docs/records.md §6.4 ``result``: goals per seat, the winner's seat or None for a draw."""

    model_config = ConfigDict(frozen=True)

    goals: list[int]
    winner: int | None


class FootballView(BaseModel):
    """What one seat (or, with ``seat`` None, the public) may know; seeds/football.md §4.

    Coordinates are absolute (row 0 is A's own row); the bot mirrors them for B.
    ``None`` in ``field``/``keepers`` is a card this viewer may not know.
    """

    model_config = ConfigDict(frozen=True)

    seat: int | None
    players: list[str]
    options: FootballOptions
    phase: Literal["setup", "play", "finished"]
    turn: int | None  # who moves (play phase only)
    setup_done: list[bool]
    hand: list[str]  # the viewer's five dealt cards until he has set up
    field: list[list[str | None]]  # [row][col]
    face_up: list[list[bool]]  # [row][col]: turned up for everyone
    keepers: list[str | None]  # [A's, B's]
    keepers_up: list[bool]
    ball: str | None
    ball_at: list[int] | None  # [row, col]; None while the ball is in hand or there is none
    piles: list[int]  # cards left in each draw pile
    goals: list[list[str]]  # each seat's goals pile (public)
    discarded: list[str]  # balls out of the game, in the order they went out
    result: FootballResult | None


class _StateModel(BaseModel):
    """The stored state.  The middle rows, hands and piles are all parts of ``deck``, so
    only what the players changed is kept."""

    model_config = ConfigDict(extra="forbid", strict=True)

    v: Literal[1]
    options: FootballOptions
    players: list[str] = Field(min_length=PLAYERS, max_length=PLAYERS)
    deck: list[int]
    setup: list[list[int]] = Field(min_length=2, max_length=2)  # [keeper, c0..c3] or []
    up: int = Field(ge=0, le=ALL_UP)
    drawn: list[int] = Field(min_length=2, max_length=2)
    goals: list[list[int]] = Field(min_length=2, max_length=2)
    out: list[int]
    at: int = Field(ge=-1, le=15)
    turn: int = Field(ge=0, le=1)
    phase: int = Field(ge=SETUP, le=FINISHED)


@lru_cache(maxsize=8)
def _sorted_deck(size: int, decks: int) -> list[Card]:
    return sorted(cards.deck(size, decks))


class Football:
    """One game of Belarusian football between two seats."""

    name: ClassVar[str] = "football"

    __slots__ = (
        "_at",
        "_ball",
        "_deck",
        "_drawn",
        "_field",
        "_goals",
        "_keepers",
        "_mask",
        "_options",
        "_out",
        "_phase",
        "_pile",
        "_players",
        "_setup",
        "_turn",
        "_up",
    )

    _options: FootballOptions
    _players: list[str]
    _deck: list[Card]
    _field: list[Card]  # -1 where a row has not been placed yet
    _keepers: list[Card]
    _setup: list[tuple[Card, ...] | None]
    _up: int
    _pile: int  # cards in each draw pile at the start
    _drawn: list[int]
    _goals: list[list[Card]]
    _out: list[Card]
    _ball: Card  # -1: none
    _at: int  # -1: in hand (or none); else the field position the ball stands on
    _turn: int
    _phase: int
    _mask: int  # the columns the actor may choose now (enter/advance)

    # ----------------------------------------------------------------- creation

    @classmethod
    def new(
        cls,
        options: FootballOptions | None,
        players: list[str],
        seed: int | str | None = None,
        deck: list[Card] | None = None,
    ) -> Self:
        """A new game, dealt from ``deck`` or from the options' deck shuffled by ``seed``."""
        options = options or FootballOptions()
        if len(players) != PLAYERS:
            raise MalformedRecord(f"football is for {PLAYERS} players, not {len(players)}")
        if deck is None:
            deck = cards.shuffled(options.deck_size, options.decks, seed)
        elif sorted(deck) != _sorted_deck(options.deck_size, options.decks):
            raise MalformedRecord(
                f"the deck is not exactly {options.decks}×{options.deck_size} cards"
            )
        game = cls.__new__(cls)
        game._options = options
        game._players = list(players)
        game._deck = list(deck)
        game._field = [-1] * 4 + game._deck[0:8] + [-1] * 4
        game._keepers = [-1, -1]
        game._setup = [None, None]
        game._up = 0
        game._pile = (len(deck) - DEALT) // 2
        game._drawn = [0, 0]
        game._goals = [[], []]
        game._out = []
        game._ball = -1
        game._at = -1
        game._turn = 0
        game._phase = SETUP
        game._mask = 0
        return game

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Self:
        options, players, deck = read_header(record, FootballOptions)
        return cls.new(options, players, deck=deck)

    def header(self) -> dict[str, Any]:
        return {
            "game": self.name,
            "options": self._options.model_dump(),
            "players": list(self._players),
            "deck": cards.to_strs(self._deck),
        }

    # ----------------------------------------------------------------- queries

    @property
    def players(self) -> list[str]:
        return list(self._players)

    @property
    def options(self) -> FootballOptions:
        return self._options

    def is_finished(self) -> bool:
        return self._phase == FINISHED

    def to_act(self) -> Actor | None:
        if self._phase == PLAY:
            return Actor(self._turn)
        if self._phase == SETUP:
            return Actor(0 if self._setup[0] is None else 1)
        return None

    def hand(self, seat: int) -> list[Card]:
        """The five cards dealt to ``seat`` (his goalkeeper and row come from these)."""
        start = 8 + HAND * seat
        return self._deck[start : start + HAND]

    def complete_setup(self, picks: list[int]) -> list[int]:
        """Set-up picks (indexes into :meth:`hand`, goalkeeper first, then the row from
        the player's own left) with the last card placed by itself: once one card is
        left it has one place to go."""
        if len(picks) == HAND - 1:
            return [*picks, *(i for i in range(HAND) if i not in picks)]
        return picks

    def setup_move(self, seat: int, picks: Sequence[int]) -> Move:
        """``seat``'s set-up from his picks among his dealt cards (indexes into
        :meth:`hand`): goalkeeper first, then his row from his own left. B faces A, so
        his left is column 3 and his row goes in mirrored."""
        hand = self.hand(seat)
        row = [hand[i] for i in picks[1:]]
        if seat == 1:
            row.reverse()
        return Move(seat, "setup", -1, (hand[picks[0]], *row))

    def legal_moves(self) -> Sequence[Move]:
        if self._phase == PLAY:
            return _BY_MASK[self._turn, "enter" if self._at < 0 else "advance"][self._mask]
        if self._phase == SETUP:
            seat = 0 if self._setup[0] is None else 1
            return SetupMoves(seat, self.hand(seat))
        return ()

    def result(self) -> dict[str, Any] | None:
        if self._phase != FINISHED:
            return None
        a, b = len(self._goals[0]), len(self._goals[1])
        return {"goals": [a, b], "winner": 0 if a > b else 1 if b > a else None}

    def _piles(self) -> list[int]:
        return [self._pile - self._drawn[0], self._pile - self._drawn[1]]

    def summary(self) -> dict[str, Any]:
        face_up: dict[str, str] = {}
        for pos in range(16):
            if self._up >> pos & 1:
                face_up[f"r{pos >> 2}c{pos & 3}"] = _to_str(self._field[pos])
        for seat in (0, 1):
            if self._up & KEEPER_BIT[seat]:
                face_up[f"keeper{seat}"] = _to_str(self._keepers[seat])
        return {
            "piles": self._piles(),
            "goals": [len(self._goals[0]), len(self._goals[1])],
            "ball": None if self._ball < 0 else _to_str(self._ball),
            "ball_at": None if self._at < 0 else [self._at >> 2, self._at & 3],
            "face_up": face_up,
        }

    def view(self, seat: int | None) -> FootballView:
        if seat is not None and seat not in (0, 1):
            raise ValueError(f"no seat {seat!r} in football")
        up = self._up
        field: list[list[str | None]] = []
        face_up: list[list[bool]] = []
        for row in range(4):
            own = seat is not None and HOME[seat] == row
            cells: list[str | None] = []
            flags: list[bool] = []
            for col in range(4):
                pos = row * 4 + col
                card = self._field[pos]
                shown = (up >> pos & 1 or own) and card >= 0
                cells.append(_to_str(card) if shown else None)
                flags.append(bool(up >> pos & 1))
            field.append(cells)
            face_up.append(flags)
        keepers: list[str | None] = []
        for k in (0, 1):
            known = up & KEEPER_BIT[k] or seat == k
            keepers.append(_to_str(self._keepers[k]) if known and self._keepers[k] >= 0 else None)
        result = self.result()
        return FootballView(
            seat=seat,
            players=list(self._players),
            options=self._options,
            phase=PHASES[self._phase],
            turn=self._turn if self._phase == PLAY else None,
            setup_done=[s is not None for s in self._setup],
            hand=(
                cards.to_strs(self.hand(seat))
                if seat is not None and self._setup[seat] is None
                else []
            ),
            field=field,
            face_up=face_up,
            keepers=keepers,
            keepers_up=[bool(up & KEEPER_BIT[0]), bool(up & KEEPER_BIT[1])],
            ball=None if self._ball < 0 else _to_str(self._ball),
            ball_at=None if self._at < 0 else [self._at >> 2, self._at & 3],
            piles=self._piles(),
            goals=[cards.to_strs(g) for g in self._goals],
            discarded=cards.to_strs(self._out),
            result=None if result is None else FootballResult(**result),
        )

    def places(self) -> dict[str, list[Card]]:
        """Where every card is, hidden ones included (for tests and debugging only: a
        player's screen is built from :meth:`view`)."""
        piles = []
        for seat in (0, 1):
            start = DEALT + seat * self._pile + self._drawn[seat]
            piles.append(self._deck[start : DEALT + (seat + 1) * self._pile])
        hands = [self.hand(s) if self._setup[s] is None else [] for s in (0, 1)]
        return {
            "field": [c for c in self._field if c >= 0],
            "keepers": [k for k in self._keepers if k >= 0],
            "hand0": hands[0],
            "hand1": hands[1],
            "pile0": piles[0],
            "pile1": piles[1],
            "ball": [] if self._ball < 0 else [self._ball],
            "goals0": list(self._goals[0]),
            "goals1": list(self._goals[1]),
            "out": list(self._out),
        }

    # ----------------------------------------------------------------- moves

    def apply(self, move: Move) -> list[Event]:
        """Validate and play ``move``, then every forced step up to the next decision."""
        if self._phase == PLAY:
            if (
                move.player == self._turn
                and move.kind == ("enter" if self._at < 0 else "advance")
                and type(move.column) is int
                and 0 <= move.column < 4
                and self._mask >> move.column & 1
            ):
                events: list[Event] = []
                if self._at < 0:
                    self._enter(move.column, events)
                else:
                    self._advance(move.column, events)
                return events
            raise self._why_illegal(move)
        if self._phase == SETUP:
            return self._apply_setup(move)
        raise IllegalMove("game_over", "The game is over.")

    def _apply_setup(self, move: Move) -> list[Event]:
        seat = move.player
        if move.kind not in KINDS:
            raise _unknown_kind(move.kind)
        if move.kind != "setup":
            raise IllegalMove(
                "not_in_setup", "Play has not started: both players must set up first."
            )
        if seat not in (0, 1) or type(seat) is not int:
            raise IllegalMove("no_such_seat", f"There is no seat {seat} in this game.", seat=seat)
        if self._setup[seat] is not None:
            raise IllegalMove("already_set_up", "You have already set up.")
        if len(move.cards) != HAND or sorted(move.cards) != sorted(self.hand(seat)):
            raise IllegalMove(
                "setup_cards_mismatch",
                "A set-up uses exactly your five dealt cards: one goalkeeper and four in your row.",
                cards=cards.to_strs(self.hand(seat)),
            )
        self._setup[seat] = move.cards
        self._keepers[seat] = move.cards[0]
        row = HOME[seat] * 4
        self._field[row : row + 4] = move.cards[1:]
        events = [Event("setup_done", {"seat": seat})]
        if self._setup[1 - seat] is not None:
            self._phase = PLAY
            events.append(Event("started", {}))
            self._turn = 1  # so that the turn passes to A
            self._next_turn(events)
        return events

    def _why_illegal(self, move: Move) -> IllegalMove:
        """The reason a move that failed the fast check is illegal (play phase)."""
        seat, kind, col = move.player, move.kind, move.column
        if kind not in KINDS:
            return _unknown_kind(kind)
        if type(seat) is not int or seat not in (0, 1):
            return IllegalMove("no_such_seat", f"There is no seat {seat} in this game.", seat=seat)
        if kind == "setup":
            return IllegalMove("setup_over", "Both players have already set up.")
        if seat != self._turn:
            return IllegalMove("not_your_turn", "It is not your turn.")
        if kind == "advance" and self._at < 0:
            return IllegalMove("must_enter", "The ball is not on the field yet: enter it first.")
        if kind == "enter" and self._at >= 0:
            return IllegalMove("must_advance", "The ball is already on the field: advance it.")
        if type(col) is not int or not 0 <= col < 4:
            return IllegalMove("no_such_column", f"There is no column {col}.", column=col)
        ball = _to_str(self._ball)
        if kind == "enter":
            card = _to_str(self._field[HOME[seat] * 4 + col])
            return IllegalMove(
                "cannot_enter",
                f"The ball {ball} cannot step onto {card}: same suit or same rank needed.",
                column=col,
                card=card,
                ball=ball,
            )
        if col not in REACH[self._at & 3]:
            return IllegalMove(
                "not_reachable",
                f"From column {self._at & 3} the ball can only go to the column straight "
                "ahead or a diagonal neighbour.",
                column=col,
                **{"from": self._at & 3},
            )
        card = _to_str(self._field[ahead(seat, self._at >> 2) * 4 + col])
        return IllegalMove(
            "face_up_no_match",
            f"The ball {ball} cannot step onto the face-up {card}: same suit or same rank needed.",
            column=col,
            card=card,
            ball=ball,
        )

    # ----------------------------------------------------------------- the rules

    def _enter(self, col: int, events: list[Event]) -> None:
        seat = self._turn
        pos = HOME[seat] * 4 + col
        bit = 1 << pos
        flipped = not self._up & bit
        self._up |= bit
        events.append(
            Event(
                "entered",
                {
                    "seat": seat,
                    "column": col,
                    "card": _to_str(self._field[pos]),
                    "with": _to_str(self._ball),
                    "flipped": flipped,
                },
            )
        )
        self._stand(pos, events)

    def _advance(self, col: int, events: list[Event]) -> None:
        seat, ball = self._turn, self._ball
        row = ahead(seat, self._at >> 2)
        pos = row * 4 + col
        card = self._field[pos]
        bit = 1 << pos
        data = {"seat": seat, "row": row, "column": col, "card": _to_str(card)}
        data["with"] = _to_str(ball)
        if self._up & bit:
            events.append(Event("stepped", data))
            self._stand(pos, events)
            return
        self._up |= bit
        match = matches(card, ball)
        data["match"] = match
        events.append(Event("flipped", data))
        if match:
            self._stand(pos, events)
        else:
            self._ball_out("no_match", events)

    def _stand(self, pos: int, events: list[Event]) -> None:
        """The ball now stands on ``pos``: shoot from the opponent's row, else look ahead."""
        seat = self._turn
        self._at = pos
        row = pos >> 2
        if row == HOME[1 - seat]:
            self._shoot(events)
            return
        mask = self._advance_mask(pos)
        if mask:
            self._mask = mask
        else:
            self._ball_out("dead_end", events)

    def _advance_mask(self, pos: int) -> int:
        """The columns of the next row the ball on ``pos`` may go to: face down, or face up
        and matching."""
        seat, ball, field, up = self._turn, self._ball, self._field, self._up
        start = ahead(seat, pos >> 2) * 4
        mask = 0
        for col in REACH[pos & 3]:
            p = start + col
            card = field[p]
            if not up >> p & 1 or matches(card, ball):
                mask |= 1 << col
        return mask

    def _entry_mask(self) -> int:
        """The columns of the mover's own row that match the ball in his hand."""
        ball, field = self._ball, self._field
        start = HOME[self._turn] * 4
        mask = 0
        for col in range(4):
            card = field[start + col]
            if matches(card, ball):
                mask |= 1 << col
        return mask

    def _shoot(self, events: list[Event]) -> None:
        seat, ball = self._turn, self._ball
        other = 1 - seat
        keeper = self._keepers[other]
        bit = KEEPER_BIT[other]
        flipped = not self._up & bit
        self._up |= bit
        shown = _to_str(keeper)
        events.append(Event("keeper", {"seat": other, "card": shown, "flipped": flipped}))
        if matches(keeper, ball):
            self._goals[seat].append(ball)
            goals = [len(self._goals[0]), len(self._goals[1])]
            data = {"seat": seat, "card": _to_str(ball), "with": shown, "goals": goals}
            events.append(Event("goal", data))
        else:
            self._out.append(ball)
            events.append(Event("saved", {"seat": seat, "card": _to_str(ball), "with": shown}))
        self._next_turn(events)

    def _ball_out(self, reason: str, events: list[Event]) -> None:
        self._out.append(self._ball)
        events.append(
            Event("ball_out", {"seat": self._turn, "card": _to_str(self._ball), "reason": reason})
        )
        self._next_turn(events)

    def _next_turn(self, events: list[Event]) -> None:
        """Pass the turn and draw, discarding balls that cannot enter, until a player has a
        choice or both piles are empty."""
        deck, pile = self._deck, self._pile
        self._at = -1
        while True:
            seat = 1 - self._turn
            drawn = self._drawn[seat]
            if drawn == pile:
                self._finish(events)
                return
            ball = deck[DEALT + seat * pile + drawn]
            self._drawn[seat] = drawn + 1
            self._turn, self._ball = seat, ball
            shown = _to_str(ball)
            events.append(Event("drew", {"seat": seat, "card": shown, "pile": pile - drawn - 1}))
            mask = self._entry_mask()
            if mask:
                self._mask = mask
                return
            self._out.append(ball)
            events.append(Event("ball_out", {"seat": seat, "card": shown, "reason": "no_entry"}))

    def _finish(self, events: list[Event]) -> None:
        self._phase = FINISHED
        self._ball = -1
        self._mask = 0
        self._up = ALL_UP
        result = self.result()
        assert result is not None
        events.append(Event("finished", result))

    # ----------------------------------------------------------------- records, tokens

    def move_to_record(self, move: Move) -> dict[str, Any]:
        if move.kind == "setup":
            return {
                "player": move.player,
                "setup": {
                    "goalkeeper": _to_str(move.cards[0]),
                    "row": cards.to_strs(move.cards[1:]),
                },
            }
        return {"player": move.player, move.kind: move.column}

    def move_from_record(self, data: object) -> Move:
        if not isinstance(data, dict) or len(data) != 2 or not _is_int(data.get("player")):
            raise MalformedRecord(f"not a football move: {_short(data)}")
        player = data["player"]
        if "setup" in data:
            setup = data["setup"]
            if (
                not isinstance(setup, dict)
                or set(setup) != {"goalkeeper", "row"}
                or not isinstance(setup["row"], list)
                or len(setup["row"]) != 4
            ):
                raise MalformedRecord(f"not a football set-up: {_short(data)}")
            try:
                chosen = (cards.parse(setup["goalkeeper"]), *cards.parse_many(setup["row"]))
            except ValueError as exc:
                raise MalformedRecord(str(exc)) from None
            return Move(player, "setup", -1, chosen)
        for kind in ("enter", "advance"):
            if kind in data:
                if not _is_int(data[kind]):
                    raise MalformedRecord(f"a column must be an integer: {_short(data)}")
                return Move(player, kind, data[kind])
        raise MalformedRecord(f"not a football move: {_short(data)}")

    def move_token(self, move: Move) -> str:
        if move.kind == "setup":
            return "s" + ".".join(cards.to_strs(move.cards))
        return move.kind[0] + str(move.column)

    def move_from_token(self, token: str, player: int) -> Move:
        if len(token) == 2 and token[0] in "ea" and token[1] in "0123":
            return Move(player, "enter" if token[0] == "e" else "advance", int(token[1]))
        if token.startswith("s") and len(token) <= 40:
            parts = token[1:].split(".")
            if len(parts) == 5:
                try:
                    return Move(player, "setup", -1, tuple(cards.parse(p) for p in parts))
                except ValueError:
                    pass
        raise MalformedRecord(f"not a football move token: {token[:40]!r}")

    # ----------------------------------------------------------------- storage

    def to_json(self) -> str:
        # pydantic-core's serialiser is several times faster than json.dumps here.
        return to_json(
            {
                "v": 1,
                "options": {"decks": self._options.decks, "deck_size": self._options.deck_size},
                "players": self._players,
                "deck": self._deck,
                "setup": [list(s) if s else [] for s in self._setup],
                "up": self._up,
                "drawn": self._drawn,
                "goals": self._goals,
                "out": self._out,
                "at": self._at,
                "turn": self._turn,
                "phase": self._phase,
            }
        ).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        try:
            state = _StateModel.model_validate_json(text)
        except ValidationError as exc:
            raise CorruptState(f"football state: {first_error(exc)}") from None
        try:
            game = cls.new(state.options, state.players, deck=state.deck)
        except MalformedRecord as exc:
            raise CorruptState(f"football state: {exc}") from None
        game._restore(state)
        return game

    def _restore(self, state: _StateModel) -> None:
        """Bring a freshly dealt game to ``state``, checking every rule a stored state must
        satisfy; raises CorruptState."""

        def bad(why: str) -> CorruptState:
            return CorruptState(f"football state: {why}")

        phase, pile, drawn, turn = state.phase, self._pile, state.drawn, state.turn
        for seat, chosen in enumerate(state.setup):
            if chosen:
                if sorted(chosen) != sorted(self.hand(seat)):
                    raise bad(f"seat {seat}'s set-up is not his five dealt cards")
                self._setup[seat] = tuple(chosen)
                self._keepers[seat] = chosen[0]
                self._field[HOME[seat] * 4 : HOME[seat] * 4 + 4] = chosen[1:]
            elif phase != SETUP:
                raise bad(f"seat {seat} has not set up but play has started")
        if not all(0 <= d <= pile for d in drawn):
            raise bad(f"drawn counts {drawn} out of range 0..{pile}")
        if phase == SETUP:
            if drawn != [0, 0] or state.up or state.at != -1 or turn != 0:
                raise bad("play has happened during set-up")
            if None not in self._setup:
                raise bad("both have set up but play has not started")
        elif phase == FINISHED:
            if drawn != [pile, pile] or state.up != ALL_UP or state.at != -1:
                raise bad("a finished game with cards left or hidden")
        elif drawn[0] - drawn[1] != (1 if turn == 0 else 0) or drawn[turn] < 1:
            raise bad(f"drawn counts {drawn} do not fit seat {turn}'s turn")
        # Every drawn card is the ball, in a goals pile or out of the game, exactly once.
        taken = [self._deck[DEALT + s * pile : DEALT + s * pile + drawn[s]] for s in (0, 1)]
        ball = taken[turn][-1] if phase == PLAY else -1
        placed = sorted([*state.goals[0], *state.goals[1], *state.out] + ([ball] * (ball >= 0)))
        if placed != sorted(taken[0] + taken[1]):
            raise bad("the drawn cards are not exactly the ball, the goals and the discards")
        for seat in (0, 1):
            rest = sorted(taken[seat])
            for card in state.goals[seat]:
                if card not in rest:
                    raise bad(f"seat {seat} has a goal {card} he never drew")
                rest.remove(card)
            if state.goals[seat] and not state.up & KEEPER_BIT[1 - seat]:
                raise bad(f"seat {seat} scored past a goalkeeper still face down")
        self._up = state.up
        self._drawn = list(drawn)
        self._goals = [list(g) for g in state.goals]
        self._out = list(state.out)
        self._turn = turn
        self._phase = phase
        self._ball = ball
        self._at = state.at
        if phase != PLAY:
            return
        # The ball waits at a real decision: in hand with an entry, or standing on a
        # face-up matching card of a row it can have reached, with somewhere to go.
        at = state.at
        if at < 0:
            self._mask = self._entry_mask()
            if not self._mask:
                raise bad("the ball in hand cannot enter, yet play waits for it")
            return
        steps = ((at >> 2) - HOME[turn]) * STEP[turn]
        if (
            not 0 <= steps <= 2
            or not state.up >> at & 1
            or not cards.matches(self._field[at], ball)
        ):
            raise bad(f"the ball cannot stand on position {at}")
        self._mask = self._advance_mask(at)
        if not self._mask:
            raise bad(f"the ball on position {at} has nowhere to go, yet play waits for it")


def _unknown_kind(kind: object) -> IllegalMove:
    return IllegalMove("unknown_move", f"Unknown kind of move: {kind!r}.", kind=kind)


def _is_int(value: object) -> bool:
    return type(value) is int


def _short(data: object) -> str:
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
