"""Football's page data beside the view: the ball's latest run, which the page draws as
its path and steps its ball along (bot/games/football/page.py), checked after every move
of random games against the run the engine's own events tell, all of them kept."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.models import Lobby, Table
from bot.screens import registry
from engine.games.football.game import Football
from engine.games.football.rules import HOME

ENDS = {"goal": "goal", "saved": "saved", "ball_out": "out"}


def _told(run: dict[str, Any] | None, kind: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The run as the group is told it, after one more event."""
    if kind == "entered":
        return {"seat": data["seat"], "cells": [[HOME[data["seat"]], data["column"]]], "end": None}
    if run is not None and kind in ("stepped", "flipped"):
        run["cells"].append([data["row"], data["column"]])
    if run is not None and kind in ENDS and data.get("reason") != "no_entry":
        run["end"], run["ball"], run["said"] = ENDS[kind], data["card"], (kind, data)
    return run


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_the_run_is_the_one_the_events_tell(seed: int) -> None:
    rng = random.Random(seed)
    game = Football.new(None, ["Ann", "Bob"], seed=seed)
    table = Table(game_id="g", chat_id=-1, lobby=Lobby(creator=1), kind="football")
    entry = registry.entry("football")
    told: dict[str, Any] | None = None
    events: list[tuple[str, dict[str, Any]]] = []
    for seat in (0, 1):
        move = game.setup_move(seat, [0, 1, 2, 3, 4])
        table.played.moves.append(game.move_to_record(move))
        table.played.add_events([(e.kind, e.data) for e in game.apply(move)])
    while game.result() is None:
        move = rng.choice(list(game.legal_moves()))
        new = [(e.kind, e.data) for e in game.apply(move)]
        table.played.moves.append(game.move_to_record(move))
        table.played.add_events(new)
        events += new
        for kind, data in new:
            told = _told(told, kind, data)
        for seat in (None, 0, 1):  # the same for every reader: it is public
            view = game.view(seat)
            shown = entry.page.scene(view, registry.ctx(table, "en"))
            assert shown["next"] == len(table.played.moves)
            run = shown["run"]
            assert told is not None and run is not None
            assert (run["seat"], run["cells"]) == (told["seat"], told["cells"])
            assert table.played.moves[run["from"]].get("enter") == told["cells"][0][1]
            if told["end"] is None:
                assert run["end"] is None and run["ball"] == view.ball
            elif told["said"] in table.played.events:
                assert (run["end"], run["ball"]) == (told["end"], told["ball"])
            else:  # its end is no longer among the few events a table keeps
                shot = told["cells"][-1][0] == HOME[1 - told["seat"]]
                assert (run["end"], run["ball"]) == ("shot" if shot else "out", None)
