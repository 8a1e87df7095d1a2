"""How the standings count a finished football game (seeds/football.md §7.1): the winner
ranks above the loser, a draw ties both; it counts wins, draws, losses and goals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.ratings import Outcome


@dataclass(frozen=True)
class FootballOutcome(Outcome):
    """``goals``: per seat."""

    goals: tuple[int, ...] = ()

    @classmethod
    def of(cls, kind: str, result: Mapping[str, Any], summary: Mapping[str, Any]) -> Outcome:
        """The outcome from the engine's ``result()`` (the summary adds nothing)."""
        goals = tuple(int(g) for g in result["goals"])
        winner = result.get("winner")
        ranks = tuple(1 if winner in (None, seat) else 2 for seat in range(len(goals)))
        return cls(kind, ranks, goals=goals)

    def figures(self, seat: int) -> dict[str, int]:
        mine, theirs = self.goals[seat], sum(self.goals) - self.goals[seat]
        key = "draw" if self.drawn else "won" if self.ranks[seat] == 1 else "lost"
        return {"n": 1, key: 1, "gf": mine, "ga": theirs}

    def streak_goes_on(self, seat: int) -> bool:
        """Football: he won."""
        return not self.drawn and self.ranks[seat] == 1
