"""The rules of durak (seeds/durak.md) behind one class, :class:`DurakRules`: the state
(:mod:`.state`) with the play's functions (:mod:`.play`, :mod:`.bout`) as its methods, for
the seed's game with a dummy and for the variants its options make (no dummy, transfers,
throw-in by neighbours, five before the first discard, 24 cards). The names the rest of
the project imports from the rules are here too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from engine import cards
from engine.cards import Card
from engine.games.durak import play
from engine.games.durak.bout import deal
from engine.games.durak.moves import (
    ATTACK,
    BEAT,
    PASS,
    TAKE_KIND,
    THROW_KIND,
    TRANSFER,
    DurakActor,
    DurakMove,
    Seat,
    beats,
)
from engine.games.durak.options import (
    HAND,
    MOST_PLAYERS,
    NEEDS_DUMMY,
    DurakOptions,
    SeatingError,
    refusal,
    seating,
    unwritten,
)
from engine.games.durak.state import (
    BOUT_LIMIT,
    DEFEND,
    EARLY_LIMIT,
    LEAD,
    OVER,
    PHASES,
    TAKE,
    THROW,
    DurakState,
    Phase,
)

__all__ = [
    "ATTACK",
    "BEAT",
    "BOUT_LIMIT",
    "DEFEND",
    "EARLY_LIMIT",
    "HAND",
    "LEAD",
    "MOST_PLAYERS",
    "NEEDS_DUMMY",
    "OVER",
    "PASS",
    "PHASES",
    "TAKE",
    "TAKE_KIND",
    "THROW",
    "THROW_KIND",
    "TRANSFER",
    "DurakActor",
    "DurakMove",
    "DurakOptions",
    "DurakRules",
    "Phase",
    "Seat",
    "SeatingError",
    "beats",
    "refusal",
    "seating",
    "unwritten",
]


class DurakRules(DurakState):
    """One game's state and its rules: who acts, the legal moves, apply (the functions of
    :mod:`.play`, bound as methods). Its codecs (:class:`.codec.DurakCodec`) and views
    (:class:`.view.DurakViewer`) read the state's fields, and :class:`.game.Durak` joins
    the three."""

    __slots__ = ()

    @classmethod
    def new(
        cls,
        options: DurakOptions,
        players: list[str],
        dealer: int,
        previous_fool: int | None = None,
        seed: int | str | None = None,
        deck: Sequence[Card] | None = None,
    ) -> Self:
        """Shuffle (by ``seed``) or take ``deck``, deal and find the first attacker."""
        cls.check_setup(options, players, dealer, previous_fool, deck)
        if deck is None:
            deck = cards.shuffled(options.deck_size, 1, seed)
        game = cls.set_up(options, players, dealer, previous_fool, deck)
        deal(game)
        return game

    @property
    def players(self) -> list[str]:
        return list(self.names)

    to_act = play.to_act
    is_finished = play.is_finished
    result = play.result
    legal_moves = play.legal_moves
    apply = play.apply
