"""What one seat may see of a football game (its view) and what a record's replay shows
of it (its summary, docs/records.md §6.5): both built from the state, never handing it
out."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from engine import cards
from engine.games.football.rules import (
    HOME,
    KEEPER_BIT,
    PHASES,
    PLAY,
    FootballOptions,
    FootballRules,
)

_to_str = cards.to_str


class FootballResult(BaseModel):
    """docs/records.md §6.4 ``result``: goals per seat, the winner's seat or None for a draw."""

    model_config = ConfigDict(frozen=True)

    goals: list[int]
    winner: int | None


class FootballView(BaseModel):
    """What one seat (or, with ``seat`` None, the public) may know; seeds/football.md §4.

    Coordinates are absolute (row 0 is A's own row); the bot mirrors them for B.
    ``None`` in ``field``/``keepers`` is a card this viewer may not know.
    """

    model_config = ConfigDict(frozen=True)

    seat: int | None
    players: list[str]
    options: FootballOptions
    phase: Literal["setup", "play", "finished"]
    turn: int | None  # who moves (play phase only)
    setup_done: list[bool]
    hand: list[str]  # the viewer's five dealt cards until he has set up
    field: list[list[str | None]]  # [row][col]
    face_up: list[list[bool]]  # [row][col]: turned up for everyone
    keepers: list[str | None]  # [A's, B's]
    keepers_up: list[bool]
    ball: str | None
    ball_at: list[int] | None  # [row, col]; None while the ball is in hand or there is none
    piles: list[int]  # cards left in each draw pile
    goals: list[list[str]]  # each seat's goals pile (public)
    discarded: list[str]  # balls out of the game, in the order they went out
    result: FootballResult | None


class FootballViewer(FootballRules):
    """What the rules show: a seat's view and the replay's summary (the module doc)."""

    __slots__ = ()

    def summary(self) -> dict[str, Any]:
        face_up: dict[str, str] = {}
        for pos in range(16):
            if self.up >> pos & 1:
                face_up[f"r{pos >> 2}c{pos & 3}"] = _to_str(self.field[pos])
        for seat in (0, 1):
            if self.up & KEEPER_BIT[seat]:
                face_up[f"keeper{seat}"] = _to_str(self.keepers[seat])
        return {
            "piles": self.piles(),
            "goals": [len(self.goals[0]), len(self.goals[1])],
            "ball": None if self.ball < 0 else _to_str(self.ball),
            "ball_at": None if self.at < 0 else [self.at >> 2, self.at & 3],
            "face_up": face_up,
        }

    def known_to(self, seat: int | None) -> Counter[str]:
        """seeds/football.md §4: the face-up cards, the ball, the goals piles and the
        balls out of the game are everyone's; a seat knows besides his own row and
        goalkeeper, and his five dealt cards until he has placed them."""
        own = [] if seat is None else [HOME[seat] * 4 + col for col in range(4)]
        known = [c for pos, c in enumerate(self.field) if self.up >> pos & 1 or pos in own]
        known += [c for k, c in enumerate(self.keepers) if self.up & KEEPER_BIT[k] or seat == k]
        known += [self.ball, *self.out, *self.goals[0], *self.goals[1]]
        if seat is not None and self.setup[seat] is None:
            known += self.hand(seat)
        return Counter(cards.to_strs([c for c in known if c >= 0]))

    def view(self, seat: int | None) -> FootballView:
        """seeds/football.md §4: his own row and goalkeeper, and what is face up."""
        if seat is not None and seat not in (0, 1):
            raise ValueError(f"no seat {seat!r} in football")
        up = self.up
        field: list[list[str | None]] = []
        face_up: list[list[bool]] = []
        for row in range(4):
            own = seat is not None and HOME[seat] == row
            cells: list[str | None] = []
            flags: list[bool] = []
            for col in range(4):
                pos = row * 4 + col
                card = self.field[pos]
                shown = (up >> pos & 1 or own) and card >= 0
                cells.append(_to_str(card) if shown else None)
                flags.append(bool(up >> pos & 1))
            field.append(cells)
            face_up.append(flags)
        keepers: list[str | None] = []
        for k in (0, 1):
            known = up & KEEPER_BIT[k] or seat == k
            keepers.append(_to_str(self.keepers[k]) if known and self.keepers[k] >= 0 else None)
        result = self.result()
        return FootballView(
            seat=seat,
            players=list(self.names),
            options=self.options,
            phase=PHASES[self.phase],
            turn=self.turn if self.phase == PLAY else None,
            setup_done=[s is not None for s in self.setup],
            hand=(
                cards.to_strs(self.hand(seat))
                if seat is not None and self.setup[seat] is None
                else []
            ),
            field=field,
            face_up=face_up,
            keepers=keepers,
            keepers_up=[bool(up & KEEPER_BIT[0]), bool(up & KEEPER_BIT[1])],
            ball=None if self.ball < 0 else _to_str(self.ball),
            ball_at=None if self.at < 0 else [self.at >> 2, self.at & 3],
            piles=self.piles(),
            goals=[cards.to_strs(g) for g in self.goals],
            discarded=cards.to_strs(self.out),
            result=None if result is None else FootballResult(**result),
        )
