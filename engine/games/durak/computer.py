"""The durak computer's levels, each from the seat's view and the public events only:
easy and normal are heuristics (:mod:`engine.games.durak.players.heuristics`), hard searches
(:mod:`engine.games.durak.players.search`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from engine import cards
from engine.base import Event
from engine.games.durak.players.heuristics import easy, normal, progress
from engine.games.durak.players.reads import Reads
from engine.games.durak.players.sampling import determined
from engine.games.durak.players.search import hard, search
from engine.games.durak.players.seen import Memory, seen_from_view, stalled
from engine.games.durak.rules import DurakMove
from engine.games.durak.view import DurakView


def choose(
    view: BaseModel, legal: Sequence[Any], events: Sequence[Event], level: str, seed: int
) -> DurakMove:
    if not isinstance(view, DurakView):
        raise TypeError("durak needs a DurakView")
    if len(legal) == 1:
        return legal[0]  # type: ignore[no-any-return]
    memory = Memory.of(events)
    if level == "easy":
        trump = cards.parse(view.trump) & 3
        if stalled(memory.takes):
            return progress(legal, trump)
        return easy(legal, trump, random.Random(seed))
    seen = seen_from_view(view, memory)
    if level == "hard":
        reads = Reads.of(events, seen.n, seen.trump, view.options)
        return hard(view, seen, legal, seed, reads=reads)
    # Normal too plays the game out once it can tell where every card is (the opponent's
    # hand, late in a two-player game): one playout per move is then exact, and cheap.
    # It does not solve the endgame, nor try the styles of play: that is hard's.
    return search(view, seen, legal, seed) if determined(seen) else normal(seen, legal)
