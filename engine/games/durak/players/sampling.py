"""Determinisation for durak: deal the cards a seat cannot see, and set up that world.

A sample keeps everything the seat knows fixed (its own hand, the dummy's if it controls
it, the table, the discard it saw, the cards publicly known to be in a hand, the trump
card under the stock) and shuffles only the unseen cards into the unknown places: the
rest of each other hand, the stock above the trump card, and any discard the seat did
not witness.  So a sample never puts a card the seat has seen into a hidden place.

The world is then loaded into a real :class:`~engine.games.durak.game.Durak` through its
stored-state format (``Durak.from_json``), which validates it whole: the simulation runs on the
engine's own rules, never on a copy of them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, islice
from typing import Any

from engine import cards
from engine.base import CorruptState, Event
from engine.cards import Card
from engine.games.durak.game import Durak
from engine.games.durak.players.seen import Seen, participant
from engine.games.durak.rules import HAND, DurakActor
from engine.games.durak.view import DurakView


@dataclass
class World:
    """One complete deal consistent with a seat's knowledge."""

    hands: list[list[Card]]  # every participant, dummy last
    stock: list[Card]  # top first; the trump card last while the stock lasts
    discard: list[Card]


def hidden_places(seen: Seen) -> list[int]:
    """How many unseen cards each place holds: every hand, the stock above the trump
    card, and the discard this seat did not witness."""
    slots = [seen.unknown_slots(who) for who in range(seen.n + 1)]
    return [*slots, max(seen.stock - 1, 0), seen.discard_count - len(seen.discard_seen)]


def determined(seen: Seen) -> bool:
    """Whether every sample is the same world: the unseen cards all lie in one place."""
    return sum(1 for count in hidden_places(seen) if count) <= 1


def unseen_places(seen: Seen) -> tuple[list[int], int, int, list[Card]]:
    """How many unseen cards each hand, the stock and the discard hold (as
    :func:`hidden_places`), and the unseen cards themselves, in order."""
    *slots, stock_slots, discard_slots = hidden_places(seen)
    pool = sorted(seen.unseen)
    if sum(slots) + stock_slots + discard_slots != len(pool):
        raise ValueError("the view and the events do not add up to one deck")
    return slots, stock_slots, discard_slots, pool


def named(seen: Seen, who: int) -> list[Card]:
    """The cards of ``who``'s hand this seat can name: its own, the dummy it controls,
    or what is publicly known to be there."""
    if who == seen.seat:
        return list(seen.own)
    if who == seen.n and seen.dummy_hand is not None:
        return list(seen.dummy_hand)
    return sorted(seen.known[who])


def sample_world(seen: Seen, rng: random.Random) -> World:
    """Deal the unseen cards at random into every place this seat cannot see."""
    slots, stock_slots, _, pool = unseen_places(seen)
    rng.shuffle(pool)
    hands: list[list[Card]] = []
    at = 0
    for who in range(seen.n + 1):
        hands.append(named(seen, who) + pool[at : at + slots[who]])
        at += slots[who]
    stock = pool[at : at + stock_slots] + ([seen.trump_card] if seen.stock else [])
    at += stock_slots
    discard = list(seen.discard_seen) + pool[at:]
    return World(hands, stock, discard)


def every_world(seen: Seen, most: int) -> list[World] | None:
    """Every deal of the unseen cards, when they lie in hands only and make at most
    ``most`` deals (None otherwise).

    Late in a game a few unseen cards are left between a hand or two (the dummy's, for
    the seat that does not control it): then trying each deal once weighs them all
    alike, where sampling would try some twice and miss others."""
    slots, stock_slots, discard_slots, pool = unseen_places(seen)
    if stock_slots or discard_slots:
        return None
    deals = list(islice(_deals(seen, slots, 0, pool), most + 1))
    if len(deals) > most:
        return None
    stock = [seen.trump_card] if seen.stock else []
    return [World(hands, list(stock), list(seen.discard_seen)) for hands in deals]


def _deals(seen: Seen, slots: list[int], who: int, pool: list[Card]) -> Iterator[list[list[Card]]]:
    """The hands of ``who`` onwards, for every way of dealing ``pool`` into them."""
    if who > seen.n:
        yield []
        return
    for chosen in combinations(pool, slots[who]):
        rest = [c for c in pool if c not in chosen]
        for later in _deals(seen, slots, who + 1, rest):
            yield [named(seen, who) + list(chosen), *later]


class Position:
    """Builds the engine game for a sampled world at the seat's decision."""

    def __init__(self, view: DurakView, seen: Seen) -> None:
        self.view = view
        self.seen = seen
        self._pos: int | None = None

    def state(self, world: World, pos: int) -> dict[str, Any]:
        """The stored-state document of ``world`` (see ``engine.games.durak.codec.Stored``)."""
        view, seen = self.view, self.seen
        n = seen.n
        full = cards.deck(view.deck_size)
        dealt = HAND * (n + 1 if view.dummy else n)
        rest = sorted(set(full) - set(world.stock) - {seen.trump_card})
        # The engine's stock is deck[dealt + 1:] then deck[dealt] (the face-up trump):
        # put the trump there and the sampled stock at the very end of the deck.
        deck = [*rest[:dealt], seen.trump_card, *rest[dealt:], *world.stock[:-1]]
        if view.whole_deck:  # the trump is the dealer's last card dealt; no stock
            deck = [*rest[: dealt - 1], seen.trump_card, *rest[dealt - 1 :]]
        elif not world.stock:
            deck = [*rest[:dealt], seen.trump_card, *rest[dealt:]]
        table = [[a] if d is None else [a, d] for a, d in seen.table]
        pending = [p for p in range(n) if not world.hands[p] and p not in seen.out]
        return {
            "v": 1,
            "options": view.options.model_dump(),
            "players": view.players,
            "dealer": view.dealer,
            "previous_fool": None,
            "deck": deck,
            "drawn": len(full) - dealt - len(world.stock),
            "hands": world.hands,
            "known": [sorted(k & set(h)) for k, h in zip(seen.known, world.hands, strict=True)],
            "discard": world.discard,
            "table": table,
            "phase": view.phase,
            "attacker": participant(view.attacker, n),
            "defender": participant(view.defender, n),
            "pos": pos,
            "limit": view.limit,
            "controller": view.controller,
            "out": view.out,
            "pending": pending,
            "fool": None,
            **self._order(),
        }

    def _order(self) -> dict[str, Any]:
        """The stored throw-in order where the engine keeps one (neighbours)."""
        view = self.view
        if view.options.throw_in != "neighbours" or view.phase == "over":
            return {}
        return {"order": [participant(who, self.seen.n) for who in view.throw_order]}

    def game(self, world: World) -> Durak:
        """The engine game of ``world``, the seat to act exactly as in the view."""
        if self._pos is not None:
            return Durak.from_json(json.dumps(self.state(world, self._pos)))
        actor = self.view.to_act
        assert actor is not None
        for pos in range(self.seen.n + 1):
            try:
                game = Durak.from_json(json.dumps(self.state(world, pos)))
            except CorruptState:
                continue  # nobody at ``pos`` may throw in: not where the round stands
            now = game.to_act()
            if now is not None and (now.player, now.dummy) == (actor.player, actor.dummy):
                self._pos = pos
                return game
        raise ValueError("no throw-in position reproduces the view's actor")


class Mirror:
    """Where every card of a simulated world is, kept up to date from the game's events.

    A simulated player must decide from what its seat would see, and asking the engine
    for a view at every simulated step would cost more than the rest of the playout.
    The world is fully known to the simulation (it dealt it), so this mirror follows the
    cards through the public events alone (the draws come off the world's stock in
    order) and cuts each seat's knowledge out of it, as :func:`seen_from_view` does
    from a real view; the tests check the two agree.
    """

    def __init__(self, seen: Seen, world: World) -> None:
        self.n = seen.n
        self.takes = seen.takes
        self.hands = [list(h) for h in world.hands]
        self.stock = list(world.stock)
        self.discard = list(world.discard)
        self.known = [set(k) for k in seen.known]
        self.att = [a for a, _ in seen.table]
        self.dfn = [d for _, d in seen.table]
        self.taking = seen.phase == "take"
        self.attacker = seen.attacker
        self.defender = seen.defender
        self.controller = seen.controller
        self.out = list(seen.out)
        self.trump_card = seen.trump_card
        self.deck_size = seen.deck_size

    def copy(self) -> Mirror:
        """An independent mirror of the same world, for a search that branches."""
        twin = object.__new__(Mirror)
        twin.__dict__.update(self.__dict__)
        twin.hands = [list(h) for h in self.hands]
        twin.stock = list(self.stock)
        twin.discard = list(self.discard)
        twin.known = [set(k) for k in self.known]
        twin.att = list(self.att)
        twin.dfn = list(self.dfn)
        twin.out = list(self.out)
        return twin

    def who(self, seat: int | str) -> int:
        return self.n if seat == "dummy" else int(seat)

    def update(self, events: Sequence[Event]) -> None:
        for event in events:
            kind, data = event.kind, event.data
            if kind in ("attack", "throw", "beat", "transfer"):
                who = self.who(data["seat"])
                if kind == "beat":
                    attack, card = cards.parse(data["card"]), cards.parse(data["with"])
                    self.dfn[self.att.index(attack)] = card
                else:
                    card = cards.parse(data["card"])
                    self.att.append(card)
                    self.dfn.append(None)
                self.hands[who].remove(card)
                self.known[who].discard(card)
                if kind == "transfer":
                    self.attacker, self.defender = who, self.who(data["defender"])
            elif kind == "take_declared":
                self.taking = True
            elif kind in ("took", "discarded"):
                table = self.att + [d for d in self.dfn if d is not None]
                if kind == "took":
                    who = self.who(data["seat"])
                    self.hands[who].extend(table)
                    self.known[who].update(table)
                    self.takes += 1
                else:
                    self.discard.extend(table)
                    self.takes = 0
                self.att, self.dfn, self.taking = [], [], False
            elif kind == "drew":
                who, count = self.who(data["seat"]), data["count"]
                self.hands[who].extend(self.stock[:count])
                del self.stock[:count]
                if not self.stock:
                    self.known[who].add(self.trump_card)
            elif kind == "bout":
                self.attacker, self.defender = (
                    self.who(data["attacker"]),
                    self.who(data["defender"]),
                )
            elif kind == "out":
                self.out.append(data["seat"])
            elif kind == "control":
                self.controller = data["seat"]

    def phase(self) -> str:
        if self.taking:
            return "take"
        if not self.att:
            return "lead"
        return "defend" if None in self.dfn else "throw"

    def seen(self, actor: DurakActor) -> Seen:
        """What ``actor``'s seat knows now, as its view and memory would tell it."""
        n, seat = self.n, actor.player
        return Seen(
            seat=seat,
            n=n,
            actor=n if actor.dummy else seat,
            hand=self.hands[n if actor.dummy else seat],
            own=self.hands[seat],
            dummy_hand=self.hands[n] if seat == self.controller else None,
            trump=self.trump_card & 3,
            trump_card=self.trump_card,
            table=list(zip(self.att, self.dfn, strict=True)),
            stock=len(self.stock),
            counts=[len(h) for h in self.hands],
            known=self.known,
            discard_seen=self.discard,
            discard_count=len(self.discard),
            attacker=self.attacker,
            defender=self.defender,
            controller=self.controller,
            deck_size=self.deck_size,
            phase=self.phase(),
            out=self.out,
            takes=self.takes,
        )
