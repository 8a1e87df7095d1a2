"""Exact durak endgames: once a seat can tell where every card is, search the move tree.

With the stock gone (or down to the face-up trump card, whose taker everyone sees) and
every hidden card in one place, the position is open: in a two-player game the
opponent's hand is exactly the cards this seat has not seen.  The game is then a finite
tree of moves, and whether the seat can avoid being the fool against any reply is a
question alpha-beta answers exactly: a seat's own moves (and its dummy's) are OR nodes,
everyone else's AND nodes (at a bigger table the others count as one side, so a move
found this way escapes whatever they do).  Two values only, escape or not, so most
branches are cut after one child.

Positions repeat (cards go round in takes); a move back to a position on the current
line counts as no escape, so a line found escaping really ends.  The search runs on the
engine's own rules (:meth:`Durak.copy`, :meth:`Durak.apply`), with a transposition table
keyed on :meth:`Durak.position`, and within a fixed number of positions, so that equal
inputs give equal answers on any machine; past it the caller falls back to sampling.
"""

from __future__ import annotations

from engine.durak import Durak, DurakMove
from engine.players.durak import value

# Positions one decision may visit: about 80 ms on an idle core of this machine.
NODES = 5000


# A line this long is taken for one that goes round (and Python's stack is spared).
DEPTH = 300


class OutOfNodes(Exception):
    """The tree is bigger than the budget: the answer is unknown."""


class Solver:
    """Can ``seat`` avoid being the fool from a position, everyone else against it."""

    def __init__(self, seat: int, trump: int, nodes: int = NODES) -> None:
        self.seat = seat
        self.trump = trump
        self.left = nodes
        self.known: dict[tuple[object, ...], bool] = {}
        self.line: set[tuple[object, ...]] = set()

    def _order(self, move: DurakMove) -> int:
        """Cheap cards first, giving in (take, pass) last: the likeliest good move first,
        which the cuts depend on (in open endgames it halves the positions visited)."""
        return value(move.cards[-1], self.trump) if move.cards else 99

    def escapes(self, game: Durak) -> bool:
        """Whether the seat escapes with best play; raises OutOfNodes past the budget."""
        return self._value(game)[0]

    def _value(self, game: Durak) -> tuple[bool, bool]:
        """(escapes, sound): an escape never rests on a repetition (that counts as no
        escape), but no escape may, and is then not remembered: elsewhere it may be
        wrong."""
        actor = game.to_act()
        if actor is None:
            result = game.result()
            assert result is not None
            return result["fool"] != self.seat, True
        if game.safe(self.seat):
            return True, True
        key = game.position()
        found = self.known.get(key)
        if found is not None:
            return found, True
        if key in self.line or len(self.line) > DEPTH:
            return False, False
        self.left -= 1
        if self.left < 0:
            raise OutOfNodes
        mine = actor.player == self.seat
        self.line.add(key)
        sound = True
        value = not mine
        for move in sorted(game.legal_moves(), key=self._order):
            child = game.copy()
            child.apply(move)
            escapes, clean = self._value(child)
            sound = sound and clean
            if escapes == mine:
                value = mine
                break
        self.line.discard(key)
        sound = sound or value
        if sound:
            self.known[key] = value
        return value, sound
