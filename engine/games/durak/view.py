"""What one seat may see of a durak game (its view) and what a record's replay shows
of it (its summary): both built from the state, never handing it out."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from engine import cards
from engine.cards import Card
from engine.games.durak.rules import OVER, PHASES, DurakRules, Phase, Seat


class ActorView(BaseModel):
    player: int
    dummy: bool


class DurakView(BaseModel):
    """What one seat (``None``: the group) may know; the bot renders only from this.

    Seats are player indices; ``"dummy"`` where the dummy can stand (attacker, defender).
    """

    seat: int | None  # whose view this is; None: the public (group) view
    players: list[str]
    dealer: int
    deck_size: int
    dummy_plays: bool
    trump: str  # the face-up trump card (its suit is trump), even after it is drawn
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
    controller: int  # who plays the dummy's cards
    out: list[int]  # players who got rid of their cards, in that order
    limit: int | None  # attack cards this bout may hold; None when finished
    attack_cards: int  # attack cards on the table now
    finished: bool
    fool: int | None  # when finished: the fool, or None for a drawn game


def _table_pairs(game: DurakRules) -> list[tuple[str, str | None]]:
    return [
        (cards.to_str(a), cards.to_str(d) if d >= 0 else None)
        for a, d in zip(game._att, game._dfn, strict=True)
    ]


def summary(game: DurakRules) -> dict[str, Any]:
    """docs/records.md §6.5: what everyone at the table sees."""
    over = game._phase == OVER
    n = game._n
    return {
        "trump": cards.to_str(game._trump_card),
        "stock": len(game._stock) - game._drawn,
        "hands": [len(h) for h in game._hands[:n]],
        "dummy": len(game._hands[n]),
        "discard": len(game._discard),
        "table": [list(pair) for pair in _table_pairs(game)],
        "attacker": None if over else game._seat(game._attacker),
        "defender": None if over else game._seat(game._defender),
        "controller": game._controller,
        "out": list(game._out),
    }


def _sorted(game: DurakRules, hand: Iterable[Card]) -> list[str]:
    return cards.to_strs(sorted(hand, key=cards.sort_key_by_suit(game._trump)))


def view(game: DurakRules, seat: int | None) -> DurakView:
    """Own hand; the dummy's only for its controller; of the others only what is public."""
    n = game._n
    if seat is not None and (type(seat) is not int or not 0 <= seat < n):
        raise ValueError(f"no seat {seat!r}")
    over = game._phase == OVER
    actor = game.to_act()
    return DurakView(
        seat=seat,
        players=list(game._names),
        dealer=game._dealer,
        deck_size=game.options.deck_size,
        dummy_plays=game._dummy_plays,
        trump=cards.to_str(game._trump_card),
        hand=[] if seat is None else _sorted(game, game._hands[seat]),
        dummy_hand=_sorted(game, game._hands[n]) if seat == game._controller else None,
        hand_counts=[len(h) for h in game._hands[:n]],
        dummy_count=len(game._hands[n]),
        known=[_sorted(game, k) for k in game._known[:n]],
        dummy_known=_sorted(game, game._known[n]),
        table=_table_pairs(game),
        stock=len(game._stock) - game._drawn,
        discard=len(game._discard),
        phase=PHASES[game._phase],
        attacker=None if over else game._seat(game._attacker),
        defender=None if over else game._seat(game._defender),
        to_act=None if actor is None else ActorView(player=actor.player, dummy=actor.dummy),
        controller=game._controller,
        out=list(game._out),
        limit=None if over else game._limit,
        attack_cards=len(game._att),
        finished=over,
        fool=game._fool,
    )
