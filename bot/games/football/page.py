"""What football's page draws beside the view: the ball's latest run (its path across
the field and how it ended), which the view, a snapshot of the position, does not hold.

It is read from the record's moves (an entry and the advances after it: columns, which
the group is told as they are played) and the table's recent events (how the run ended,
as the group was told too): public, whoever reads it. The page steps its ball along
the run's cells as they come (:attr:`bot.screens.game.Page.scene`)."""

from __future__ import annotations

from typing import Any

from bot.screens.render import Ctx
from engine.games.football.rules import HOME, ahead
from engine.games.football.view import FootballView

# The events that end a run, by what the page shows of the end.
_ENDS = {"goal": "goal", "saved": "saved", "ball_out": "out"}


def _run(moves: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]] | None:
    """(index of its entry in ``moves``, its moves) of the latest run: the last entry
    and the advances after it."""
    start = len(moves)
    while start > 0 and "advance" in moves[start - 1]:
        start -= 1
    if start == 0 or "enter" not in moves[start - 1]:
        return None
    return start - 1, moves[start - 1 :]


def _end(ctx: Ctx, seat: int, last: list[int]) -> tuple[str, str | None]:
    """How ``seat``'s finished run ended ("goal", "saved", "out"), and its ball's card:
    the latest such event of his, if the table still holds it (it keeps a few); else
    what the field tells: "shot" when the run reached the other row, where the goalkeeper
    was shot at, else "out"."""
    for kind, data in reversed(ctx.table.played.events):
        if kind in _ENDS and data.get("seat") == seat and data.get("reason") != "no_entry":
            return _ENDS[kind], data.get("card")
    return ("shot" if last[0] == HOME[1 - seat] else "out"), None


def scene(view: FootballView, ctx: Ctx) -> dict[str, Any]:
    """``run``: the latest run, or None before the first. ``from``: its entry's index among
    the moves (a ball keeps that as its identity from the hand to the goal: ``next`` is
    the index the ball in hand will enter with); ``seat``: whose; ``cells``: the cells it
    stood on or tried, entry first ([row, column], absolute as in the view); ``end``: None
    while the ball runs, else "goal", "saved", "out", or "shot" (at the goalkeeper, how it
    ended no longer known); ``ball``: its card when known."""
    moves = ctx.table.played.moves
    found = _run(moves)
    shown: dict[str, Any] = {"next": len(moves), "run": None}
    if found is None:
        return shown
    start, run = found
    seat = run[0]["player"]
    row = HOME[seat]
    cells = [[row, run[0]["enter"]]]
    for move in run[1:]:
        row = ahead(seat, row)
        cells.append([row, move["advance"]])
    running = view.phase == "play" and view.turn == seat and view.ball_at == cells[-1]
    end, ball = (None, view.ball) if running else _end(ctx, seat, cells[-1])
    shown["run"] = {"from": start, "seat": seat, "cells": cells, "end": end, "ball": ball}
    return shown
