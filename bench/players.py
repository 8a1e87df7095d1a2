"""Strength and speed of the computer players, measured over seeded games.

Every figure comes with its 95 % confidence interval (Wilson for rates, the normal
approximation for means, order statistics for the decision-time percentiles), next to
the target it is held to (the limits and rates are set in this file).  Durak levels are
measured against a fixed yardstick, the greedy player (:mod:`engine.games.durak.players.greedy`),
so that a stronger level shows as a lower fool rate rather than as a moving comparison.
Decision times are the deciding process's CPU time: on a quiet machine that is the
time a player waits, and on a shared one it leaves out the time the neighbours take.
Seats rotate between games so that no level profits from moving first; game ``i`` is dealt
from seed ``i``, counted from ``--first-seed`` (0): a change tuned on the usual seeds can
be checked on fresh ones.

    .venv/bin/python bench/players.py [--quick] [--games N] [--hard-games N] [--jobs J]
                                      [--first-seed S] [--timing-games N] [--json]
                                      [--only TITLE] [--timing-only KEY]

The defaults (1000 games per easy/normal matchup, 300 per matchup with hard) take the
better part of an hour on two idle cores, the hard matchups nearly all of it; --quick
gives a rough look in under two minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import cards
from engine.base import Event, Game
from engine.computer import choose
from engine.games.durak.game import Durak
from engine.games.durak.players.greedy import greedy
from engine.games.durak.rules import DurakOptions
from engine.games.durak.view import DurakView
from engine.games.football.game import Football
from engine.games.football.rules import FootballOptions

NAMES = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay"]
# The durak variants measured (seeds/durak.md §9), by the options beyond the deck.
VARIANTS: dict[str, dict[str, Any]] = {
    "dummy": {},  # the seed's game
    "dummy_plays": {"dummy_plays": True},
    "podkidnoy": {"dummy": False},
    "perevodnoy": {"dummy": False, "transfer": True},
    "perevodnoy neighbours five": {
        "dummy": False,
        "transfer": True,
        "throw_in": "neighbours",
        "five_before_discard": True,
    },
}
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
    """One measured seat (rotating) at ``level`` against ``others`` everywhere else."""

    title: str
    game: str
    players: int
    level: str
    others: str
    variant: str = "dummy"  # a key of VARIANTS
    hard: bool = False
    deck: int = 0  # the deck's size; 0: 36 cards up to four players, 52 above


@dataclass
class Outcome:
    seat: int
    result: dict[str, Any]
    times: dict[str, list[float]] = field(default_factory=dict)


def new_game(m: Matchup, seed: int) -> Game:
    if m.game == "football":
        return Football.new(FootballOptions(), NAMES[:2], seed=seed)
    deck = m.deck or (36 if m.players <= 4 else 52)
    options = DurakOptions(deck_size=deck, **VARIANTS[m.variant])  # type: ignore[arg-type]
    return Durak.new(options, NAMES[: m.players], dealer=seed % m.players, seed=seed)


def play_one(args: tuple[Matchup, int]) -> Outcome:
    m, seed = args
    game = new_game(m, seed)
    measured = seed % m.players
    events: list[Event] = []
    times: dict[str, list[float]] = {}
    step = 0
    while not game.is_finished():
        if step >= MAX_DECISIONS:
            return Outcome(measured, {"fool": None, "unfinished": True}, times)
        actor = game.to_act()
        assert actor is not None
        level = m.level if actor.player == measured else m.others
        legal = game.legal_moves()
        view = game.view(actor.player)
        start = time.process_time()
        if level == "greedy":
            assert isinstance(view, DurakView)
            move = greedy(legal, cards.parse(view.trump) & 3)
        else:
            move = choose(m.game, view, legal, events, level, seed * 100_003 + step)
        times.setdefault(level, []).append(time.process_time() - start)
        events.extend(game.apply(move))
        step += 1
    result = game.result()
    assert result is not None
    return Outcome(measured, result, times)


def run(m: Matchup, games: int, jobs: int, first: int = 0) -> list[Outcome]:
    tasks = [(m, seed) for seed in range(first, first + games)]
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
        diffs.append(goals[o.seat] - goals[1 - o.seat])
        wins += o.result["winner"] == o.seat
        losses += o.result["winner"] == 1 - o.seat
    n = len(outcomes)
    mean = mean_interval(diffs)
    return [
        figure(
            f"{m.title}: mean goal difference", mean, n, "> 0, interval clear of 0", mean[1] > 0
        ),
        figure(f"{m.title}: win rate", wilson(wins, n), n, "", None),
        figure(f"{m.title}: loss rate (the rest are draws)", wilson(losses, n), n, "", None),
    ]


def durak_figures(
    m: Matchup, outcomes: list[Outcome], target: tuple[float, float]
) -> list[dict[str, Any]]:
    """The fool rate of the measured seat, checked interval and all against ``target``
    (a range for easy, which should lose to greedy but not hopelessly)."""
    n = len(outcomes)
    fools = sum(o.result["fool"] == o.seat for o in outcomes)
    rate = wilson(fools, n)
    low, high = target
    wanted = f"< {high:.0%}" if low == 0 else f"in [{low:.0%}, {high:.0%}]"
    fair = f" (even share {1 / m.players:.0%})" if m.players > 2 else ""
    unfinished = sum(bool(o.result.get("unfinished")) for o in outcomes)
    return [
        figure(
            f"{m.title}: fool rate of {m.level}",
            rate,
            n,
            wanted + fair,
            low <= rate[1] and rate[2] < high,
        ),
        figure(f"{m.title}: unfinished (cycling) games", wilson(unfinished, n), n, "", None),
    ]


def time_figures(times: dict[str, list[float]]) -> list[dict[str, Any]]:
    """p50 and p95 per game and level; ``times`` is keyed ``"durak hard"`` etc."""
    # Hard may think up to 300 ms a move.  Durak's normal was held to 5 ms as a
    # pure heuristic; it now plays the game out in endgames it can see whole (a few
    # ms, rarely tens), which nobody notices with a second between computer moves.
    limits = {"football normal": 0.005, "durak normal": 0.050, "durak hard": 0.300}
    rows = []
    for key in sorted(times):
        values = [t * 1000 for t in times[key]]
        game, *_, level = key.split()  # "durak perevodnoy 36 hard": a variant's time
        for q, label in ((0.5, "p50"), (0.95, "p95")):
            limit = limits.get(f"{game} {level}") if label == "p95" else None
            est = quantile_interval(values, q)
            ok = None if limit is None else est[2] < limit * 1000
            target = "" if limit is None else f"< {limit * 1000:g} ms"
            rows.append(figure(f"decision time {key} {label} (ms)", est, len(values), target, ok))
    return rows


TIMED = [
    Matchup("timing", "football", 2, "normal", "easy"),
    Matchup("timing", "durak", 2, "hard", "normal"),
    Matchup("timing", "durak", 4, "hard", "easy", "dummy_plays"),
    Matchup("timing", "durak", 2, "normal", "greedy"),
    Matchup("timing", "durak", 3, "normal", "greedy"),
    Matchup("timing", "durak", 2, "hard", "normal", "perevodnoy"),
    Matchup("timing", "durak", 2, "hard", "normal", "podkidnoy"),
    Matchup("timing", "durak", 2, "hard", "normal", "perevodnoy", deck=24),
    Matchup("timing", "durak", 4, "hard", "easy", "perevodnoy neighbours five"),
]

# Durak tables: (players, variant, deck; 0 by the players).  Every level meets the greedy
# reference in each.
TABLES = [
    (2, "dummy", 0),
    (2, "dummy_plays", 0),
    (3, "dummy", 0),
    (4, "dummy", 0),
    (2, "perevodnoy", 0),
    (2, "podkidnoy", 0),
    (2, "perevodnoy", 24),
    (2, "podkidnoy", 24),
    (4, "perevodnoy", 0),
    (4, "perevodnoy neighbours five", 0),
]


def table_name(players: int, variant: str, deck: int) -> str:
    """``durak 2p``, ``durak 2p perevodnoy 24``: the table a matchup plays at."""
    name = f"durak {players}p" + ("" if variant == "dummy" else f" {variant}")
    return name + (f" {deck}" if deck else "")


def timing_key(m: Matchup, level: str) -> str:
    """``durak hard``, ``durak perevodnoy 24 hard``: whose decision times pool together."""
    variant = table_name(m.players, m.variant, m.deck).split(maxsplit=2)[2:]
    return " ".join([m.game, *variant, level])


Summary = Callable[[list[Outcome]], list[dict[str, Any]]]


def durak_plan() -> list[tuple[Matchup, Summary]]:
    """Every durak level against the greedy reference, and hard against normal, at
    every table size, each held to the target set beside it."""
    plan: list[tuple[Matchup, Summary]] = []
    for players, variant, deck in TABLES:
        table = table_name(players, variant, deck)
        # Easy should lose to greedy, but not hopelessly; at a bigger table, losing
        # more than the even share is what being weaker means.
        easy = (0.55, 0.75) if players == 2 else (1 / players, 0.75)
        for level, others, target in (
            ("easy", "greedy", easy),
            ("normal", "greedy", (0.0, 0.40)),
            ("hard", "greedy", (0.0, 0.15)),
            ("hard", "normal", (0.0, 0.35)),
        ):
            title = f"{table} {level} vs {others}"
            m = Matchup(title, "durak", players, level, others, variant, level == "hard", deck)
            plan.append((m, partial(durak_figures, m, target=target)))
    return plan


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games per easy/normal matchup")
    parser.add_argument("--hard-games", type=int, default=300, help="games per matchup with hard")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--first-seed", type=int, default=0, help="the seed of the first game of every matchup"
    )
    parser.add_argument(
        "--timing-games", type=int, default=12, help="games per level timed in one process"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a rough look in under two minutes (100 and 10 games, 2 timed games)",
    )
    parser.add_argument("--only", default="", help="only the matchups whose title has this")
    parser.add_argument(
        "--timing-only",
        default="",
        help="time only the levels whose key has this (durak hard, durak perevodnoy hard, ...)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.hard_games, args.timing_games = 100, 10, 2

    fb = Matchup("football normal vs easy", "football", 2, "normal", "easy")
    plan: list[tuple[Matchup, Summary]] = [(fb, partial(football_figures, fb)), *durak_plan()]
    plan = [(m, summarise) for m, summarise in plan if args.only in m.title]

    rows: list[dict[str, Any]] = []
    for m, summarise in plan:
        started = time.perf_counter()
        games = args.hard_games if m.hard else args.games
        if games == 0:
            continue  # --games 0 --hard-games 0: the decision times only
        outcomes = run(m, games, args.jobs, args.first_seed)
        new = summarise(outcomes)
        rows.extend(new)
        if not args.json:
            for row in new:
                print(render(row), flush=True)
            print(
                f"    ({len(outcomes)} games in {time.perf_counter() - started:.0f} s)", flush=True
            )
    # Decision times come from games played one at a time, so that parallel games do
    # not slow each other down; durak 2p and 4p, hard against normal or easy, in the
    # seed's game and the variants.
    times: dict[str, list[float]] = {}
    for m in TIMED:
        if args.timing_only not in timing_key(m, m.level):
            continue
        for o in run(m, args.timing_games, 1):
            for level, values in o.times.items():
                times.setdefault(timing_key(m, level), []).extend(values)
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
