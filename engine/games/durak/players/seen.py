"""What one durak seat knows, as plain integers: its view plus the public events.

The view already says which cards each hand is publicly known to hold (picked up in a
take, or the face-up trump card once drawn).  What it does not list is the discard pile:
its cards were all seen on the table, so :class:`Memory` follows the table through the
events and remembers which cards went there.  Everything else not in sight is *unseen*:
it lies in the stock or in the other hands, as far as this seat can tell uniformly.

The memory also counts the takes since the table last went to the discard pile.  Once
the stock is gone, cards that only ever change hands can go round for ever among
computer seats (a card led, beaten, a trump thrown on top, all taken, led again); a
long run of takes is the public sign of it, and the players then play for progress
(see :data:`STALL_TAKES`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property

from engine import cards
from engine.base import Event
from engine.cards import Card
from engine.games.durak.view import DurakView

# This many takes in a row, with no bout beaten off, and the game counts as stalled.
STALL_TAKES = 8


def stalled(takes: int) -> bool:
    """Cards have only changed hands for a long while (``takes`` in a row): time to play
    for progress."""
    return takes >= STALL_TAKES


@dataclass
class Memory:
    """The public record of where table cards went, kept up to date event by event."""

    table: list[Card] = field(default_factory=list)
    discard: list[Card] = field(default_factory=list)
    takes: int = 0  # takes since the table last went to the discard pile

    @classmethod
    def of(cls, events: Iterable[Event]) -> Memory:
        memory = cls()
        memory.update(events)
        return memory

    def update(self, events: Iterable[Event]) -> None:
        for event in events:
            kind, data = event.kind, event.data
            if kind in ("attack", "throw"):
                self.table.append(cards.parse(data["card"]))
            elif kind == "beat":
                self.table.append(cards.parse(data["with"]))
            elif kind == "took":
                self.table = []
                self.takes += 1
            elif kind == "discarded":
                self.discard.extend(self.table)
                self.table = []
                self.takes = 0


@dataclass
class Seen:
    """One seat's knowledge at its decision.  Participants are ``0..n-1`` and ``n`` for
    the dummy, as in the engine; ``actor`` is the participant whose cards are played now
    (the seat itself, or the dummy when the seat controls it)."""

    seat: int
    n: int
    actor: int
    hand: list[Card]  # the actor's cards
    own: list[Card]  # the seat's own cards
    dummy_hand: list[Card] | None  # the dummy's cards, for its controller
    trump: int  # suit
    trump_card: Card
    table: list[tuple[Card, Card | None]]
    stock: int
    counts: list[int]  # cards held by each participant (dummy last)
    known: list[set[Card]]  # cards each participant is publicly known to hold
    discard_seen: list[Card]
    discard_count: int
    attacker: int | None
    defender: int | None
    controller: int | None  # None without the dummy
    deck_size: int
    phase: str
    out: list[int]
    takes: int = 0  # takes in a row (Memory.takes)

    @property
    def stalled(self) -> bool:
        return stalled(self.takes)

    @cached_property
    def unseen(self) -> set[Card]:
        """The cards this seat has not seen: in the stock or the other hands' unknown
        part (or in a discard it did not witness)."""
        in_sight = set(self.own)
        in_sight.update(self.discard_seen)
        if self.dummy_hand is not None:
            in_sight.update(self.dummy_hand)
        for a, d in self.table:
            in_sight.add(a)
            if d is not None:
                in_sight.add(d)
        for k in self.known:
            in_sight |= k
        if self.stock:
            in_sight.add(self.trump_card)  # it lies face up under the stock
        return set(full_deck(self.deck_size)) - in_sight

    def unknown_slots(self, who: int) -> int:
        """How many of ``who``'s cards this seat cannot name."""
        if who == self.seat or (who == self.n and self.dummy_hand is not None):
            return 0
        return self.counts[who] - len(self.known[who])


@cache
def full_deck(size: int) -> frozenset[Card]:
    return frozenset(cards.deck(size))


def participant(value: int | str | None, n: int) -> int | None:
    if value is None:
        return None
    return n if value == "dummy" else int(value)


def seen_from_view(view: DurakView, memory: Memory) -> Seen:
    """Everything the view's seat knows, with the discard pile remembered from events."""
    assert view.seat is not None and view.to_act is not None
    n = len(view.players)
    parse = cards.parse
    own = [parse(c) for c in view.hand]
    dummy = None if view.dummy_hand is None else [parse(c) for c in view.dummy_hand]
    known = [{parse(c) for c in k} for k in view.known] + [{parse(c) for c in view.dummy_known}]
    table = [(parse(a), None if d is None else parse(d)) for a, d in view.table]
    trump_card = parse(view.trump)
    actor = n if view.to_act.dummy else view.to_act.player
    return Seen(
        seat=view.seat,
        n=n,
        actor=actor,
        hand=(dummy or []) if actor == n else own,
        own=own,
        dummy_hand=dummy,
        trump=trump_card & 3,
        trump_card=trump_card,
        table=table,
        stock=view.stock,
        counts=[*view.hand_counts, view.dummy_count],
        known=known,
        discard_seen=list(memory.discard),
        discard_count=view.discard,
        attacker=participant(view.attacker, n),
        defender=participant(view.defender, n),
        controller=view.controller,
        deck_size=view.deck_size,
        phase=view.phase,
        out=list(view.out),
        takes=memory.takes,
    )
