"""The greedy durak player: the simplest sensible strategy, a fixed yardstick.

It looks at nothing but the legal moves and the trump suit: lead the lowest card
(plain cards before trumps), pass the attack on with a plain card whenever the variant
allows a transfer (it sheds a card without spending one that beats), else beat with the
cheapest card that beats, take only when nothing beats, throw in the cheapest plain
card and never a trump.  That is how most
people play their first games, so the levels are measured against it
(``bench/players.py``): easy should lose to it more often than not, normal and hard
should beat it clearly.  It is deliberately independent of the levels' heuristics, so
that improving a level never moves the yardstick.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import Card
from engine.games.durak.rules import DurakMove

# A trump outranks every plain card: its cost is its rank plus this.
TRUMP_COST = 13


def cost(card: Card, trump: int) -> int:
    """What giving ``card`` away costs: its rank, every trump above every plain card."""
    return (card >> 2) + (TRUMP_COST if card & 3 == trump else 0)


def greedy(legal: Sequence[DurakMove], trump: int) -> DurakMove:
    """The greedy move among ``legal`` (all of one kind of decision, as the engine gives)."""
    transfers = [m for m in legal if m.kind == "transfer" and m.cards[0] & 3 != trump]
    if transfers:
        return min(transfers, key=lambda m: m.cards[0])
    plays = [m for m in legal if m.kind in ("attack", "beat", "throw")]
    if any(m.kind == "pass" for m in legal):  # a throw-in: trumps are kept
        plays = [m for m in plays if m.cards[0] & 3 != trump]
    if not plays:  # nothing beats (take), or nothing plain to throw in (pass)
        return next(m for m in legal if m.kind in ("take", "pass"))
    return min(plays, key=lambda m: (cost(m.cards[-1], trump), m.cards[-1]))
