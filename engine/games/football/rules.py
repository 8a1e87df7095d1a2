"""The rules of Belarusian football (seeds/football.md): the state, who acts, the legal
moves and how a move changes the game.

The field is 16 positions ``row * 4 + col`` in absolute coordinates (row 0 is A's own
row, row 3 is B's; columns 0..3 from A's left) plus the two goalkeepers.  Seat 0 (A)
attacks upwards, seat 1 (B) downwards.  Face-up cards are one bit mask: bits 0..15 the
field, bit 16 A's goalkeeper, bit 17 B's.

Everything the rules do by themselves happens inside :meth:`FootballRules.apply` (and
:meth:`FootballRules.new` is already at a decision too): the draw at the start of a turn, a
ball that cannot enter or is stopped, the shot at the goalkeeper, passing the turn and the
final reveal.  So after every call the state waits for a real choice, or is finished.

Moves (:class:`Move`): ``setup`` (goalkeeper and own row), ``enter`` (a column of one's
own row), ``advance`` (a column of the next row).

Events returned by :meth:`FootballRules.apply`, in order (the bot's catalogue key is
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

from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import permutations
from typing import Annotated, Any, Literal, NamedTuple, Self, overload

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from engine import cards
from engine.base import Event, IllegalMove, MalformedRecord
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


class Turn(NamedTuple):
    """Who must act: a seat, always for himself."""

    player: int

    def record(self) -> dict[str, Any]:
        """docs/records.md gives every game's ``to_act`` the same two fields; in football
        nobody acts for another hand, so ``dummy`` is always false."""
        return {"player": self.player, "dummy": False}


class FootballOptions(BaseModel):
    """Lobby options (seeds/football.md §1); strict: unknown keys and wrong types refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    decks: int = Field(default=1, ge=1, le=cards.MAX_DECKS)
    deck_size: Annotated[Literal[36, 52], BeforeValidator(cards.integer_deck_size)] = 36


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


@lru_cache(maxsize=8)
def _sorted_deck(size: int, decks: int) -> list[Card]:
    return sorted(cards.deck(size, decks))


class FootballRules:
    """One game's state and its rules: who acts, the legal moves, apply and the steps the
    rules take by themselves. Its codecs
    (:class:`engine.games.football.codec.FootballCodec`) and views
    (:class:`engine.games.football.view.FootballViewer`) read these attributes, and
    :class:`engine.games.football.game.Football` joins the three."""

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

    # ----------------------------------------------------------------- queries

    @property
    def players(self) -> list[str]:
        return list(self._players)

    @property
    def options(self) -> FootballOptions:
        return self._options

    def is_finished(self) -> bool:
        return self._phase == FINISHED

    def to_act(self) -> Turn | None:
        if self._phase == PLAY:
            return Turn(self._turn)
        if self._phase == SETUP:
            return Turn(0 if self._setup[0] is None else 1)
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

    def piles(self) -> list[int]:
        """Cards left in each draw pile."""
        return [self._pile - self._drawn[0], self._pile - self._drawn[1]]

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


def _unknown_kind(kind: object) -> IllegalMove:
    return IllegalMove("unknown_move", f"Unknown kind of move: {kind!r}.", kind=kind)
