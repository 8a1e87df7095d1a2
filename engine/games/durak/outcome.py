"""How the standings count a finished durak game (seeds/durak.md §7.1): everyone who is
not the fool ties above him, a drawn game ties all; it counts fools, draws and who went
out first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.ratings import Outcome


@dataclass(frozen=True)
class DurakOutcome(Outcome):
    """``fool`` (None: drawn) and ``first_out`` (who got rid of his cards first, if anyone
    did)."""

    fool: int | None = None
    first_out: int | None = None

    @classmethod
    def of(cls, kind: str, result: Mapping[str, Any], summary: Mapping[str, Any]) -> Outcome:
        """The outcome from the engine's ``result()`` and ``summary()``."""
        players = len(summary["hands"])
        fool = result.get("fool")
        out = [s for s in summary.get("out", []) if isinstance(s, int) and s < players]
        ranks = tuple(2 if seat == fool else 1 for seat in range(players))
        return cls(kind, ranks, fool=fool, first_out=out[0] if out else None)

    def figures(self, seat: int) -> dict[str, int]:
        add = {"n": 1}
        if self.drawn:
            add["draw"] = 1
        elif self.fool == seat:
            add["fool"] = 1
        if self.first_out == seat:
            add["first"] = 1
        return add

    def streak_goes_on(self, seat: int) -> bool:
        """Durak: he was not the fool."""
        return self.fool != seat
