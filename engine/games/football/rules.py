"""The rules of Belarusian football (seeds/football.md) over its state (:mod:`.state`, which
says how the field is numbered): who acts, the legal moves and how a move changes the
game. Seat 0 (A) attacks upwards, seat 1 (B) downwards. The moves are :mod:`.moves`.

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

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal, Self

from engine import cards
from engine.base import Event, IllegalMove, MalformedRecord
from engine.cards import Card, matches
from engine.games.football.moves import BY_MASK, KINDS, Move, SetupMoves, Turn
from engine.games.football.options import FootballOptions
from engine.games.football.state import FootballState

__all__ = [
    "ALL_UP",
    "DEALT",
    "FINISHED",
    "HAND",
    "HOME",
    "KEEPER_BIT",
    "KINDS",
    "PHASES",
    "PLAY",
    "PLAYERS",
    "SETUP",
    "STEP",
    "FootballOptions",
    "FootballRules",
    "Move",
    "Turn",
    "ahead",
]

SETUP, PLAY, FINISHED = 0, 1, 2
PHASES: tuple[Literal["setup", "play", "finished"], ...] = ("setup", "play", "finished")

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


@lru_cache(maxsize=8)
def _sorted_deck(size: int, decks: int) -> list[Card]:
    return sorted(cards.deck(size, decks))


class FootballRules(FootballState):
    """One game's state and its rules: who acts, the legal moves, apply and the steps the
    rules take by themselves. Its codecs
    (:class:`engine.games.football.codec.FootballCodec`) and views
    (:class:`engine.games.football.view.FootballViewer`) read the state's fields, and
    :class:`engine.games.football.game.Football` joins the three."""

    __slots__ = ()

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
        game = cls.__new__(cls)  # straight assignments: a keyword call took twice as long
        game.options = options
        game.names = list(players)
        game.deck = list(deck)
        game.field = [-1] * 4 + game.deck[0:8] + [-1] * 4
        game.keepers = [-1, -1]
        game.setup = [None, None]
        game.up = 0
        game.pile = (len(deck) - DEALT) // 2
        game.drawn = [0, 0]
        game.goals = [[], []]
        game.out = []
        game.ball = -1
        game.at = -1
        game.turn = 0
        game.phase = SETUP
        game.mask = 0
        return game

    # ----------------------------------------------------------------- queries

    @property
    def players(self) -> list[str]:
        return list(self.names)

    def is_finished(self) -> bool:
        return self.phase == FINISHED

    def to_act(self) -> Turn | None:
        if self.phase == PLAY:
            return Turn(self.turn)
        if self.phase == SETUP:
            return Turn(0 if self.setup[0] is None else 1)
        return None

    def hand(self, seat: int) -> list[Card]:
        """The five cards dealt to ``seat`` (his goalkeeper and row come from these)."""
        start = 8 + HAND * seat
        return self.deck[start : start + HAND]

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
        if self.phase == PLAY:
            return BY_MASK[self.turn, "enter" if self.at < 0 else "advance"][self.mask]
        if self.phase == SETUP:
            seat = 0 if self.setup[0] is None else 1
            return SetupMoves(seat, self.hand(seat))
        return ()

    def result(self) -> dict[str, Any] | None:
        if self.phase != FINISHED:
            return None
        a, b = len(self.goals[0]), len(self.goals[1])
        return {"goals": [a, b], "winner": 0 if a > b else 1 if b > a else None}

    def piles(self) -> list[int]:
        """Cards left in each draw pile."""
        return [self.pile - self.drawn[0], self.pile - self.drawn[1]]

    def places(self) -> dict[str, list[Card]]:
        """Where every card is, hidden ones included (for tests and debugging only: a
        player's screen is built from :meth:`view`)."""
        piles = []
        for seat in (0, 1):
            start = DEALT + seat * self.pile + self.drawn[seat]
            piles.append(self.deck[start : DEALT + (seat + 1) * self.pile])
        hands = [self.hand(s) if self.setup[s] is None else [] for s in (0, 1)]
        return {
            "field": [c for c in self.field if c >= 0],
            "keepers": [k for k in self.keepers if k >= 0],
            "hand0": hands[0],
            "hand1": hands[1],
            "pile0": piles[0],
            "pile1": piles[1],
            "ball": [] if self.ball < 0 else [self.ball],
            "goals0": list(self.goals[0]),
            "goals1": list(self.goals[1]),
            "out": list(self.out),
        }

    # ----------------------------------------------------------------- moves

    def apply(self, move: Move) -> list[Event]:
        """Validate and play ``move``, then every forced step up to the next decision."""
        if self.phase == PLAY:
            if (
                move.player == self.turn
                and move.kind == ("enter" if self.at < 0 else "advance")
                and type(move.column) is int
                and 0 <= move.column < 4
                and self.mask >> move.column & 1
            ):
                events: list[Event] = []
                if self.at < 0:
                    self._enter(move.column, events)
                else:
                    self._advance(move.column, events)
                return events
            raise self._why_illegal(move)
        if self.phase == SETUP:
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
        if self.setup[seat] is not None:
            raise IllegalMove("already_set_up", "You have already set up.")
        if len(move.cards) != HAND or sorted(move.cards) != sorted(self.hand(seat)):
            raise IllegalMove(
                "setup_cards_mismatch",
                "A set-up uses exactly your five dealt cards: one goalkeeper and four in your row.",
                cards=cards.to_strs(self.hand(seat)),
            )
        self.setup[seat] = move.cards
        self.keepers[seat] = move.cards[0]
        row = HOME[seat] * 4
        self.field[row : row + 4] = move.cards[1:]
        events = [Event("setup_done", {"seat": seat})]
        if self.setup[1 - seat] is not None:
            self.phase = PLAY
            events.append(Event("started", {}))
            self.turn = 1  # so that the turn passes to A
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
        if seat != self.turn:
            return IllegalMove("not_your_turn", "It is not your turn.")
        if kind == "advance" and self.at < 0:
            return IllegalMove("must_enter", "The ball is not on the field yet: enter it first.")
        if kind == "enter" and self.at >= 0:
            return IllegalMove("must_advance", "The ball is already on the field: advance it.")
        if type(col) is not int or not 0 <= col < 4:
            return IllegalMove("no_such_column", f"There is no column {col}.", column=col)
        ball = _to_str(self.ball)
        if kind == "enter":
            card = _to_str(self.field[HOME[seat] * 4 + col])
            return IllegalMove(
                "cannot_enter",
                f"The ball {ball} cannot step onto {card}: same suit or same rank needed.",
                column=col,
                card=card,
                ball=ball,
            )
        if col not in REACH[self.at & 3]:
            return IllegalMove(
                "not_reachable",
                f"From column {self.at & 3} the ball can only go to the column straight "
                "ahead or a diagonal neighbour.",
                column=col,
                **{"from": self.at & 3},
            )
        card = _to_str(self.field[ahead(seat, self.at >> 2) * 4 + col])
        return IllegalMove(
            "face_up_no_match",
            f"The ball {ball} cannot step onto the face-up {card}: same suit or same rank needed.",
            column=col,
            card=card,
            ball=ball,
        )

    # ----------------------------------------------------------------- the rules

    def _enter(self, col: int, events: list[Event]) -> None:
        seat = self.turn
        pos = HOME[seat] * 4 + col
        bit = 1 << pos
        flipped = not self.up & bit
        self.up |= bit
        events.append(
            Event(
                "entered",
                {
                    "seat": seat,
                    "column": col,
                    "card": _to_str(self.field[pos]),
                    "with": _to_str(self.ball),
                    "flipped": flipped,
                },
            )
        )
        self._stand(pos, events)

    def _advance(self, col: int, events: list[Event]) -> None:
        seat, ball = self.turn, self.ball
        row = ahead(seat, self.at >> 2)
        pos = row * 4 + col
        card = self.field[pos]
        bit = 1 << pos
        data = {"seat": seat, "row": row, "column": col, "card": _to_str(card)}
        data["with"] = _to_str(ball)
        if self.up & bit:
            events.append(Event("stepped", data))
            self._stand(pos, events)
            return
        self.up |= bit
        match = matches(card, ball)
        data["match"] = match
        events.append(Event("flipped", data))
        if match:
            self._stand(pos, events)
        else:
            self._ball_out("no_match", events)

    def _stand(self, pos: int, events: list[Event]) -> None:
        """The ball now stands on ``pos``: shoot from the opponent's row, else look ahead."""
        seat = self.turn
        self.at = pos
        row = pos >> 2
        if row == HOME[1 - seat]:
            self._shoot(events)
            return
        mask = self._advance_mask(pos)
        if mask:
            self.mask = mask
        else:
            self._ball_out("dead_end", events)

    def _advance_mask(self, pos: int) -> int:
        """The columns of the next row the ball on ``pos`` may go to: face down, or face up
        and matching."""
        seat, ball, field, up = self.turn, self.ball, self.field, self.up
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
        ball, field = self.ball, self.field
        start = HOME[self.turn] * 4
        mask = 0
        for col in range(4):
            card = field[start + col]
            if matches(card, ball):
                mask |= 1 << col
        return mask

    def _shoot(self, events: list[Event]) -> None:
        seat, ball = self.turn, self.ball
        other = 1 - seat
        keeper = self.keepers[other]
        bit = KEEPER_BIT[other]
        flipped = not self.up & bit
        self.up |= bit
        shown = _to_str(keeper)
        events.append(Event("keeper", {"seat": other, "card": shown, "flipped": flipped}))
        if matches(keeper, ball):
            self.goals[seat].append(ball)
            goals = [len(self.goals[0]), len(self.goals[1])]
            data = {"seat": seat, "card": _to_str(ball), "with": shown, "goals": goals}
            events.append(Event("goal", data))
        else:
            self.out.append(ball)
            events.append(Event("saved", {"seat": seat, "card": _to_str(ball), "with": shown}))
        self._next_turn(events)

    def _ball_out(self, reason: str, events: list[Event]) -> None:
        self.out.append(self.ball)
        events.append(
            Event("ball_out", {"seat": self.turn, "card": _to_str(self.ball), "reason": reason})
        )
        self._next_turn(events)

    def _next_turn(self, events: list[Event]) -> None:
        """Pass the turn and draw, discarding balls that cannot enter, until a player has a
        choice or both piles are empty."""
        deck, pile = self.deck, self.pile
        self.at = -1
        while True:
            seat = 1 - self.turn
            drawn = self.drawn[seat]
            if drawn == pile:
                self._finish(events)
                return
            ball = deck[DEALT + seat * pile + drawn]
            self.drawn[seat] = drawn + 1
            self.turn, self.ball = seat, ball
            shown = _to_str(ball)
            events.append(Event("drew", {"seat": seat, "card": shown, "pile": pile - drawn - 1}))
            mask = self._entry_mask()
            if mask:
                self.mask = mask
                return
            self.out.append(ball)
            events.append(Event("ball_out", {"seat": seat, "card": shown, "reason": "no_entry"}))

    def _finish(self, events: list[Event]) -> None:
        self.phase = FINISHED
        self.ball = -1
        self.mask = 0
        self.up = ALL_UP
        result = self.result()
        assert result is not None
        events.append(Event("finished", result))


def _unknown_kind(kind: object) -> IllegalMove:
    return IllegalMove("unknown_move", f"Unknown kind of move: {kind!r}.", kind=kind)
