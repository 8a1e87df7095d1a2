"""Durak endgames searched move by move: exactly against best play, or against a style.

With the stock gone (or down to the face-up trump card, whose taker everyone sees) and
every hidden card in one place, the position is open: in a two-player game the
controller of the dummy sees every card, since what he has not seen is the opponent's
hand.  The game is then a finite tree of moves, and whether the seat can avoid being the
fool against any reply is a question alpha-beta answers exactly (:class:`Solver`): a
seat's own moves (and its dummy's) are OR nodes, everyone else's AND nodes (at a bigger
table the others count as one side, so a move found this way escapes whatever they
do).  Two values only, escape or not, so most branches are cut after one child.

When no move escapes best play, :class:`Versus` asks the next question: which moves
escape if the others play in a given style (the club player's, the beginner's).  Their
moves are then fixed, so only the seat's own choices branch.

Positions repeat (cards go round in takes); a move back to a position on the current
line counts as no escape, so a line found escaping really ends.  The searches run on the
engine's own rules (:meth:`Durak.copy`, :meth:`Durak.apply`), with a transposition table
keyed on :meth:`Durak.position`, and within a fixed number of positions, so that equal
inputs give equal answers on any machine; past it the caller falls back to sampling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.games.durak.game import Durak
from engine.games.durak.players.greedy import greedy
from engine.games.durak.players.heuristics import normal, value
from engine.games.durak.players.sampling import Mirror
from engine.games.durak.rules import DurakActor, DurakMove

# Positions one decision may visit: about 80 ms on an idle core of this machine.
NODES = 5000


# Positions a search against one style may visit, per move and world: a few ms.
STYLE_NODES = 500

# A line this long is taken for one that goes round (and Python's stack is spared).
DEPTH = 300


class OutOfNodes(Exception):
    """The tree is bigger than the budget: the answer is unknown."""


class _Search:
    """What both searches share: the end of a line, and the memory of positions."""

    def __init__(self, seat: int, trump: int, nodes: int) -> None:
        self.seat = seat
        self.trump = trump
        self.left = nodes
        self.known: dict[tuple[object, ...], bool] = {}
        self.line: set[tuple[object, ...]] = set()

    def _end(self, game: Durak, actor: DurakActor | None) -> bool | None:
        """Whether the seat escapes, where nothing is left to search (None elsewhere);
        ``actor`` is who acts in ``game``, which the caller has asked already."""
        if actor is None:
            result = game.result()
            assert result is not None
            return bool(result["fool"] != self.seat)
        return True if game.safe(self.seat) else None

    def _enter(self, key: tuple[object, ...]) -> tuple[bool, bool] | None:
        """The answer for a position already settled or going round (None for one to
        search, which is then on the line); raises OutOfNodes past the budget."""
        found = self.known.get(key)
        if found is not None:
            return found, True
        if key in self.line or len(self.line) > DEPTH:
            return False, False
        self.left -= 1
        if self.left < 0:
            raise OutOfNodes
        self.line.add(key)
        return None

    def _leave(self, key: tuple[object, ...], escapes: bool, sound: bool) -> tuple[bool, bool]:
        """(escapes, sound): an escape never rests on a repetition (that counts as no
        escape), but no escape may, and is then not remembered: elsewhere it may be
        wrong."""
        self.line.discard(key)
        sound = sound or escapes
        if sound:
            self.known[key] = escapes
        return escapes, sound


class Solver(_Search):
    """Can ``seat`` avoid being the fool from a position, everyone else against it."""

    def __init__(self, seat: int, trump: int, nodes: int = NODES) -> None:
        super().__init__(seat, trump, nodes)

    def escapes(self, game: Durak) -> bool:
        """Whether the seat escapes with best play; raises OutOfNodes past the budget."""
        return self._value(game)[0]

    def _value(self, game: Durak) -> tuple[bool, bool]:
        """(escapes, sound), as :meth:`_Search._leave` says."""
        actor = game.to_act()
        end = self._end(game, actor)
        if end is not None or actor is None:
            return bool(end), True
        key = game.position()
        settled = self._enter(key)
        if settled is not None:
            return settled
        mine = actor.player == self.seat
        sound = True
        value = not mine
        for move in sorted(game.legal_moves(), key=lambda m: cheap_first(m, self.trump)):
            child = game.copy()
            child.apply(move)
            escapes, clean = self._value(child)
            sound = sound and clean
            if escapes == mine:
                value = mine
                break
        return self._leave(key, value, sound)


def cheap_first(move: DurakMove, trump: int) -> int:
    """Cheap cards first, giving in (take, pass) last: the likeliest good move first,
    which the cuts depend on (in open endgames it halves the positions visited)."""
    return value(move.cards[-1], trump) if move.cards else 99


# How the others may play: a choice from what the actor's seat would see.
Style = Callable[[Mirror, DurakActor, Sequence[DurakMove]], DurakMove]


def club(mirror: Mirror, actor: DurakActor, legal: Sequence[DurakMove]) -> DurakMove:
    """The sound club player: the normal level."""
    return normal(mirror.seen(actor), legal)


def plain(mirror: Mirror, actor: DurakActor, legal: Sequence[DurakMove]) -> DurakMove:
    """The simplest sensible play, as most people's first games go: the greedy player."""
    return greedy(legal, mirror.trump_card & 3)


# The styles a lost-looking endgame is still tried against.
STYLES: tuple[Style, ...] = (club, plain)


class Versus(_Search):
    """Can ``seat`` avoid being the fool when everyone else plays in one ``style``.

    When best play by the others would make the seat the fool, the game is not over
    yet: people do not play endgames perfectly.  Against a known style of play the
    others' moves are fixed, so only the seat's own choices branch, and the search is
    far smaller than :class:`Solver`'s.  A move that escapes against more styles is the
    better hope.  Positions are remembered by :meth:`Durak.position`, which leaves out
    what is publicly known about the hands and how many takes came in a row: the club
    style reads both, so two equal positions reached by different lines may, rarely, be
    played differently."""

    def __init__(self, seat: int, trump: int, style: Style, nodes: int = STYLE_NODES) -> None:
        super().__init__(seat, trump, nodes)
        self.style = style

    def escapes(self, game: Durak, mirror: Mirror) -> bool:
        """Whether some line of the seat's escapes; changes ``game`` and ``mirror``, and
        raises OutOfNodes past the budget."""
        return self._value(game, mirror)[0]

    def _value(self, game: Durak, mirror: Mirror) -> tuple[bool, bool]:
        """(escapes, sound), as :meth:`_Search._leave` says."""
        while True:  # the others' moves, and any forced one, are played straight on
            actor = game.to_act()
            end = self._end(game, actor)
            if end is not None or actor is None:
                return bool(end), True
            legal = game.legal_moves()
            if actor.player == self.seat and len(legal) > 1:
                break
            move = legal[0] if len(legal) == 1 else self.style(mirror, actor, legal)
            mirror.update(game.apply(move))
        key = game.position()
        settled = self._enter(key)
        if settled is not None:
            return settled
        # Normal's own choice first, then the cheap cards: the likeliest escape first.
        first = normal(mirror.seen(actor), legal)
        rest = sorted((m for m in legal if m != first), key=lambda m: cheap_first(m, self.trump))
        escapes, sound = False, True
        for move in [first, *rest]:
            child, twin = game.copy(), mirror.copy()
            twin.update(child.apply(move))
            escapes, clean = self._value(child, twin)
            sound = sound and clean
            if escapes:
                break
        return self._leave(key, escapes, sound)
