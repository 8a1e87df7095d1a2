"""What one seat may see of a durak game (its view) and what a record's replay shows of
it (its summary, docs/records.md §6.5): both built from the state, never handing it out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from engine import cards
from engine.cards import Card
from engine.games.durak.bout import transfer_target
from engine.games.durak.rules import DEFEND, OVER, PHASES, DurakOptions, DurakRules, Phase, Seat


class ActorView(BaseModel):
    player: int
    dummy: bool


class DurakView(BaseModel):
    """What one seat (``None``: the group) may know; the bot renders only from this.

    Seats are player indices; ``"dummy"`` where the dummy can stand (attacker, defender).
    Without the dummy (``dummy`` false) its hand, count and known cards stay empty and
    ``controller`` is None. The legal moves (``Durak.legal_moves``) may hold transfers
    where ``options.transfer`` is on.
    """

    seat: int | None  # whose view this is; None: the public (group) view
    players: list[str]
    dealer: int
    options: DurakOptions  # the variant played (seeds/durak.md §9)
    deck_size: int
    dummy: bool  # whether there is a dummy at all
    dummy_plays: bool
    trump: str  # the face-up trump card (its suit is trump), even after it is drawn
    # The seat known to hold the face-up trump card (the dealer's when the whole deck was
    # dealt, §10.3, or whoever drew it), until he plays it; None while it is under the
    # stock or once played.
    trump_held_by: Seat | None
    whole_deck: bool  # the whole deck was dealt: no stock, trump in the dealer's hand
    hand: list[str]  # own hand, sorted by suit, trumps last; [] for the public
    dummy_hand: list[str] | None  # the dummy's cards, for its controller only
    hand_counts: list[int]  # cards in each player's hand, by seat
    dummy_count: int
    # Cards each hand is publicly known to hold: picked up in a take, or the face-up trump
    # card drawn, and not played since. Everybody saw them; they are in every view.
    known: list[list[str]]
    dummy_known: list[str]
    table: list[tuple[str, str | None]]  # (attack card, defence card or None) in order
    stock: int  # cards left to draw, the face-up trump card included
    discard: int  # cards in the discard pile (never which)
    phase: Phase  # lead | defend | throw | take (after "take") | over
    attacker: Seat | None  # the lead attacker of the bout; None when finished
    defender: Seat | None
    to_act: ActorView | None  # who must act now (dummy: the controller acts for it)
    controller: int | None  # who plays the dummy's cards; None without the dummy
    out: list[int]  # players who got rid of their cards, in that order
    limit: int | None  # attack cards this bout may hold; None when finished
    # Who has the right to throw in this bout, in priority order (the defender's
    # neighbours only with throw_in "neighbours"); [] when finished.
    throw_order: list[Seat]
    attack_cards: int  # attack cards on the table now
    # Who would defend were the defender to transfer now (§12): public, from the table and
    # the hands' sizes, whether or not he holds a card of the rank; None when no transfer
    # may be made (no transfers in this game, not the defence, a card beaten, too few cards).
    transfer_to: Seat | None
    finished: bool
    fool: int | None  # when finished: the fool, or None for a drawn game


class DurakViewer(DurakRules):
    """What the rules show: a seat's view and the replay's summary (the module doc)."""

    __slots__ = ()

    def _table_pairs(self) -> list[tuple[str, str | None]]:
        return [
            (cards.to_str(a), cards.to_str(d) if d >= 0 else None)
            for a, d in zip(self.att, self.dfn, strict=True)
        ]

    def summary(self) -> dict[str, Any]:
        over = self.phase == OVER
        n = self.n
        return {
            "trump": cards.to_str(self.trump_card),
            "stock": len(self.stock) - self.drawn,
            "hands": [len(h) for h in self.hands[:n]],
            "dummy": len(self.hands[n]),
            "discard": len(self.discard),
            "table": [list(pair) for pair in self._table_pairs()],
            "attacker": None if over else self.seat(self.attacker),
            "defender": None if over else self.seat(self.defender),
            "controller": self.controller if self.controller >= 0 else None,
            "out": list(self.out),
        }

    def _sorted(self, hand: Iterable[Card]) -> list[str]:
        return cards.to_strs(sorted(hand, key=cards.sort_key_by_suit(self.trump)))

    def known_to(self, seat: int | None) -> Counter[str]:
        """seeds/durak.md: the face-up trump card, the cards on the table and the cards
        each hand is known to hold (picked up, the trump card drawn, or dealt face up to
        the dealer when the whole deck is dealt) are everyone's;
        a seat knows besides his own hand, and the dummy's while he controls it. Never
        the stock's order or the discard pile."""
        known = [self.trump_card, *self.att, *(d for d in self.dfn if d >= 0)]
        known += [c for hand in self.known for c in hand]
        if seat is not None:
            known += self.hands[seat]
            if seat == self.controller:
                known += self.hands[self.n]
        return Counter(cards.to_strs(known))

    def _trump_holder(self) -> Seat | None:
        """The participant everyone knows holds the face-up trump card, if one does."""
        card = self.trump_card
        for who, known in enumerate(self.known):
            if card in known:
                return self.seat(who)
        return None

    def _open_transfer(self) -> Seat | None:
        """Who would face a transfer made now, if the position allows one (§12)."""
        if self.phase != DEFEND or not self.transfer:
            return None
        new = transfer_target(self, self.defender)
        return None if new < 0 else self.seat(new)

    def view(self, seat: int | None) -> DurakView:
        """Own hand; the dummy's only for its controller; of the others only what is public."""
        n = self.n
        if seat is not None and (type(seat) is not int or not 0 <= seat < n):
            raise ValueError(f"no seat {seat!r}")
        over = self.phase == OVER
        actor = self.to_act()
        return DurakView(
            seat=seat,
            players=list(self.names),
            dealer=self.dealer,
            options=self.options,
            deck_size=self.options.deck_size,
            dummy=self.options.dummy,
            dummy_plays=self.dummy_plays,
            trump=cards.to_str(self.trump_card),
            trump_held_by=self._trump_holder(),
            whole_deck=not self.stock,
            hand=[] if seat is None else self._sorted(self.hands[seat]),
            dummy_hand=self._sorted(self.hands[n]) if seat == self.controller else None,
            hand_counts=[len(h) for h in self.hands[:n]],
            dummy_count=len(self.hands[n]),
            known=[self._sorted(k) for k in self.known[:n]],
            dummy_known=self._sorted(self.known[n]),
            table=self._table_pairs(),
            stock=len(self.stock) - self.drawn,
            discard=len(self.discard),
            phase=PHASES[self.phase],
            attacker=None if over else self.seat(self.attacker),
            defender=None if over else self.seat(self.defender),
            to_act=None if actor is None else ActorView(player=actor.player, dummy=actor.dummy),
            controller=self.controller if self.controller >= 0 else None,
            out=list(self.out),
            limit=None if over else self.limit,
            throw_order=[] if over else [self.seat(who) for who in self.order],
            attack_cards=len(self.att),
            transfer_to=self._open_transfer(),
            finished=over,
            fool=self.fool,
        )
