"""Strength and speed of the computer players, measured over seeded games.

Every figure comes with its 95 % confidence interval (Wilson for rates, the normal
approximation for means, order statistics for the decision-time percentiles), next to
the target it is held to (the limits and rates are set in this file).  Seats rotate
between games so that no level profits from moving first; game ``i`` is dealt from seed ``i``.

    .venv/bin/python bench/players.py [--games N] [--hard-games N] [--jobs J]
                                      [--timing-games N] [--json]

With the defaults (2000 games per easy/normal matchup, 200 per matchup with hard) it
takes about ten minutes on two cores; the hard matchups are nearly all of it.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.base import Event, Game
from engine.durak import Durak, DurakOptions
from engine.football import Football, FootballOptions
from engine.players import choose

NAMES = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay"]
# Durak can cycle for ever when every seat is a deterministic computer: a game this long
# is stopped and counted as unfinished (nobody the fool).
MAX_DECISIONS = 5000
Z = 1.959963984540054  # the two-sided 95 % normal quantile


# ---------------------------------------------------------------------- statistics


def wilson(hits: int, n: int) -> tuple[float, float, float]:
    """Rate with its Wilson score interval."""
    if n == 0:
        return math.nan, math.nan, math.nan
    p = hits / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return p, centre - half, centre + half


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean with its normal-approximation interval."""
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    half = Z * math.sqrt(var / n)
    return mean, mean - half, mean + half


def quantile_interval(values: Sequence[float], q: float) -> tuple[float, float, float]:
    """The ``q`` quantile with a distribution-free interval from order statistics."""
    ordered = sorted(values)
    n = len(ordered)
    half = Z * math.sqrt(n * q * (1 - q))
    lo = max(0, math.floor(n * q - half))
    hi = min(n - 1, math.ceil(n * q + half))
    return ordered[min(n - 1, int(n * q))], ordered[lo], ordered[hi]


# ---------------------------------------------------------------------- games


@dataclass(frozen=True)
class Matchup:
    """One strong seat (rotating) against the rest at one level."""

    title: str
    game: str
    players: int
    strong: str
    weak: str
    dummy_plays: bool = False
    hard: bool = False


@dataclass
class Outcome:
    strong_seat: int
    result: dict[str, Any]
    times: dict[str, list[float]] = field(default_factory=dict)


def new_game(m: Matchup, seed: int) -> Game:
    if m.game == "football":
        return Football.new(FootballOptions(), NAMES[:2], seed=seed)
    options = DurakOptions(deck_size=36 if m.players <= 4 else 52, dummy_plays=m.dummy_plays)
    return Durak.new(options, NAMES[: m.players], dealer=seed % m.players, seed=seed)


def play_one(args: tuple[Matchup, int]) -> Outcome:
    m, seed = args
    game = new_game(m, seed)
    strong = seed % m.players
    events: list[Event] = []
    times: dict[str, list[float]] = {}
    step = 0
    while not game.is_finished():
        if step >= MAX_DECISIONS:
            return Outcome(strong, {"fool": None, "unfinished": True}, times)
        actor = game.to_act()
        assert actor is not None
        level = m.strong if actor.player == strong else m.weak
        legal = game.legal_moves()
        view = game.view(actor.player)
        start = time.perf_counter()
        move = choose(m.game, view, legal, events, level, seed * 100_003 + step)
        times.setdefault(level, []).append(time.perf_counter() - start)
        events.extend(game.apply(move))
        step += 1
    result = game.result()
    assert result is not None
    return Outcome(strong, result, times)


def run(m: Matchup, games: int, jobs: int) -> list[Outcome]:
    tasks = [(m, seed) for seed in range(games)]
    if jobs <= 1:
        return [play_one(t) for t in tasks]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(play_one, tasks, chunksize=max(1, games // (8 * jobs))))


# ---------------------------------------------------------------------- figures


def figure(
    name: str, estimate: tuple[float, float, float], n: int, target: str, ok: bool | None
) -> dict[str, Any]:
    value, lo, hi = estimate
    return {"figure": name, "value": value, "lo": lo, "hi": hi, "n": n, "target": target, "ok": ok}


def football_figures(m: Matchup, outcomes: list[Outcome]) -> list[dict[str, Any]]:
    diffs = []
    wins = losses = 0
    for o in outcomes:
        goals = o.result["goals"]
        diffs.append(goals[o.strong_seat] - goals[1 - o.strong_seat])
        wins += o.result["winner"] == o.strong_seat
        losses += o.result["winner"] == 1 - o.strong_seat
    n = len(outcomes)
    mean = mean_interval(diffs)
    return [
        figure(
            f"{m.title}: mean goal difference", mean, n, "> 0, interval clear of 0", mean[1] > 0
        ),
        figure(f"{m.title}: win rate", wilson(wins, n), n, "", None),
        figure(f"{m.title}: loss rate (the rest are draws)", wilson(losses, n), n, "", None),
    ]


def durak_figures(m: Matchup, outcomes: list[Outcome], target: float) -> list[dict[str, Any]]:
    n = len(outcomes)
    fools = sum(o.result["fool"] == o.strong_seat for o in outcomes)
    rate = wilson(fools, n)
    fair = 1 / m.players
    unfinished = sum(bool(o.result.get("unfinished")) for o in outcomes)
    return [
        figure(
            f"{m.title}: fool rate of {m.strong}",
            rate,
            n,
            f"< {target:.0%}" + (f" (even share {fair:.0%})" if m.players > 2 else ""),
            rate[2] < target,
        ),
        figure(f"{m.title}: unfinished (cycling) games", wilson(unfinished, n), n, "", None),
    ]


def time_figures(times: dict[str, list[float]]) -> list[dict[str, Any]]:
    """p50 and p95 per game and level; ``times`` is keyed ``"durak hard"`` etc."""
    limits = {"normal": 0.005, "hard": 0.300}
    rows = []
    for key in sorted(times):
        level = key.split()[-1]
        values = [t * 1000 for t in times[key]]
        for q, label in ((0.5, "p50"), (0.95, "p95")):
            limit = limits.get(level) if label == "p95" else None
            est = quantile_interval(values, q)
            ok = None if limit is None else est[2] < limit * 1000
            target = "" if limit is None else f"< {limit * 1000:g} ms"
            rows.append(figure(f"decision time {key} {label} (ms)", est, len(values), target, ok))
    return rows


TIMED = [
    Matchup("timing", "football", 2, "normal", "easy"),
    Matchup("timing", "durak", 2, "hard", "normal"),
    Matchup("timing", "durak", 4, "hard", "easy", True),
    Matchup("timing", "durak", 3, "normal", "easy"),
]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="games per easy/normal matchup")
    parser.add_argument("--hard-games", type=int, default=200, help="games per matchup with hard")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--timing-games", type=int, default=12, help="games per level timed in one process"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)

    plan: list[tuple[Matchup, Callable[[list[Outcome]], list[dict[str, Any]]]]] = []
    fb = Matchup("football normal vs easy", "football", 2, "normal", "easy")
    plan.append((fb, lambda o: football_figures(fb, o)))
    for dummy in (False, True):
        suffix = ", dummy_plays" if dummy else ""
        for m, target in (
            (Matchup(f"durak 2p normal vs easy{suffix}", "durak", 2, "normal", "easy", dummy), 0.2),
            (
                Matchup(
                    f"durak 2p hard vs normal{suffix}", "durak", 2, "hard", "normal", dummy, True
                ),
                0.4,
            ),
            (
                Matchup(
                    f"durak 4p 1 hard vs 3 normal{suffix}",
                    "durak",
                    4,
                    "hard",
                    "normal",
                    dummy,
                    True,
                ),
                0.4,
            ),
        ):
            plan.append((m, functools.partial(durak_figures, m, target=target)))

    rows: list[dict[str, Any]] = []
    for m, summarise in plan:
        started = time.perf_counter()
        outcomes = run(m, args.hard_games if m.hard else args.games, args.jobs)
        new = summarise(outcomes)
        rows.extend(new)
        if not args.json:
            for row in new:
                print(render(row), flush=True)
            print(
                f"    ({len(outcomes)} games in {time.perf_counter() - started:.0f} s)", flush=True
            )
    # Decision times come from games played one at a time, so that parallel games do
    # not slow each other down; durak 2p and 4p, hard against normal against easy.
    times: dict[str, list[float]] = {}
    for m in TIMED:
        for o in run(m, args.timing_games, 1):
            for level, values in o.times.items():
                times.setdefault(f"{m.game} {level}", []).extend(values)
    timing = time_figures(times)
    rows.extend(timing)
    if args.json:
        print(json.dumps({"figures": rows}, indent=2))
    else:
        for row in timing:
            print(render(row))
    return 0


def render(row: dict[str, Any]) -> str:
    verdict = {True: "ok", False: "MISSED", None: ""}[row["ok"]]
    target = f"  target {row['target']}" if row["target"] else ""
    return (
        f"{row['figure']:<52} {row['value']:8.3f}  [{row['lo']:.3f}, {row['hi']:.3f}]"
        f"  n={row['n']}{target}  {verdict}"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
