"""Pace: moves a minute of quick players, hands in the group beside private hands (issue 29).

Telegram publishes no limit for ephemeral messages (a hand in the group), so the bot must
play well whether Telegram counts them against their receiver, about one a second as his
private chat (``receiver``), or against the group's 20 a minute (``group``). Here a real
``python -m bot`` (one process, production settings: bench/load_bots.py) plays against the
fake Bot API over HTTP with Telegram's flood control (testing/flood.py, its ``ephemeral``
switch set to each world in turn; each call answered after 30–80 ms), four groups at once
in each world: a 2-player football and a 3-player durak, each once with the hands in the
group (the bot an administrator) and once in the players' private chats. The groups open
their tables through the real lobby; then for ``--duration`` seconds whoever is asked
taps one of his buttons at once (bench/load_run.py's players with a think time of a
millisecond; a finished game gets *Play again*).

Figures, per world, game and hands: ``moves`` made in the window (accepted moves and set-up
steps), ``moves/min``, ``prompt p50`` (a move's tap until the next player's prompt, ms),
``429`` (Telegram's refusals of calls into that group or its players' private chats, from
the lobby on; ``429 in play``: those in the tapping window) and,
for the hands in the group, ``pace``: their moves a minute as a share of the same game's
with private hands. The goal: ``pace`` ≥ 85 % where Telegram counts per receiver; where
it counts against the group, at most two 429s a group (two players' hands teach it:
bot.core.budget.LEARN_FROM), then none.

Usage (the Redis at ``--redis-url`` must answer; that database is FLUSHED)::

    .venv/bin/python bench/pace.py --redis-url redis://127.0.0.1:6379/7
    .venv/bin/python bench/pace.py --duration 30 --bot-root /path/to/an/older/checkout
    .venv/bin/python bench/pace.py --bot-env EPHEMERAL_GROUP_BUDGET=true
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import aligned  # noqa: E402
from bench.load_meter import ms, quantile  # noqa: E402
from bench.load_run import Level, Run, add_run_options  # noqa: E402
from bot.core.budget import LEARN_FROM  # noqa: E402

THINK = 0.001  # seconds: the players tap at once
GOAL = 0.85  # of the private hands' pace, where Telegram counts per receiver
# The four groups of a world: (game, players, where the hands are).
LAYOUT = [("football", 2, "group"), ("football", 2, "private")]
LAYOUT += [("durak", 3, "group"), ("durak", 3, "private")]
WORLDS = ("receiver", "group")


class PaceRun(Run):
    """One world: the four groups of LAYOUT."""

    def layout(self, index: int) -> tuple[str, int, str]:
        return LAYOUT[index]

    async def figures(self) -> list[dict[str, Any]]:
        """Plays (bench.load_run) and gives each group's figures."""
        await self.execute()
        start, stop = self.window
        minutes = (stop - start) / 60
        rows = []
        for index, (game, players, hands) in enumerate(LAYOUT):
            taps = [t for t in self.all_taps if t.table.index == index]
            window = [t for t in taps if start <= t.posted <= stop and t.accepted]
            moves = [t for t in window if t.kind in ("move", "setup")]
            prompts = sorted(t.prompt_after for t in moves if t.prompt_after is not None)
            floods = next(t.floods for t in self.meter.tables.values() if t.index == index)
            rows.append(
                {
                    "world": self.args.world,
                    "game": f"{game} {players}",
                    "hands": hands,
                    "moves": len(moves),
                    "moves_per_min": round(len(moves) / minutes, 1) if minutes else None,
                    "prompt_p50_ms": ms(quantile(prompts, 50)),
                    "429": len(floods),
                    "429_in_play": sum(1 for done, _, _ in floods if done >= start),
                    "429_by": [f"{method} {where}" for _, method, where in floods],
                    "pace": None,  # the group's hands: their share of the private pace
                }
            )
        for row in rows:
            if row["hands"] == "group":
                private = next(
                    r for r in rows if r["game"] == row["game"] and r["hands"] == "private"
                )
                if row["moves_per_min"] is not None and private["moves_per_min"]:
                    row["pace"] = round(row["moves_per_min"] / private["moves_per_min"], 2)
        return rows


COLUMNS = [
    ("world", "world"),
    ("game", "game"),
    ("hands", "hands"),
    ("moves", "moves"),
    ("moves_per_min", "moves/min"),
    ("prompt_p50_ms", "prm p50"),
    ("429", "429"),
    ("429_in_play", "429 in play"),
    ("pace", "pace"),
]


def table_text(rows: list[dict[str, Any]]) -> str:
    return aligned(COLUMNS, rows)


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """The issue's goals, each met or MISSED."""
    out = []
    for row in rows:
        if row["hands"] != "group":
            continue
        name = f"{row['world']} {row['game']}"
        if row["world"] == "receiver":
            pace = row.get("pace")
            ok = pace is not None and pace >= GOAL
            out.append(f"{name}: pace {pace} >= {GOAL} {'ok' if ok else 'MISSED'}")
        else:
            ok = row["429"] <= LEARN_FROM
            verdict = "ok" if ok else "MISSED"
            out.append(f"{name}: {row['429']} x 429 <= {LEARN_FROM} {verdict}")
    return out


async def run_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pace-bench-") as scratch:
        logs_root = Path(args.logs) if args.logs else Path(scratch)
        for world in WORLDS:
            logs = logs_root / world
            logs.mkdir(parents=True, exist_ok=True)
            world_args = argparse.Namespace(**{**vars(args), "world": world})
            level = Level(len(LAYOUT), THINK, 1)
            found = await PaceRun(level, world_args, logs).figures()
            rows += found
            print(table_text(found), flush=True)
    for row in rows:
        if row["429_by"]:
            print(f"429s: {row['world']} {row['game']} {row['hands']}: {row['429_by']}")
    return rows


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    add_run_options(parser, duration=60.0)  # its --world is ignored: both are played
    return parser.parse_args(argv)


def main() -> None:
    args = parse()
    try:
        rows = asyncio.run(run_all(args))
    except KeyboardInterrupt:
        print("interrupted; the bot processes were stopped", file=sys.stderr)
        sys.exit(130)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    print("\n" + table_text(rows))
    print("goals: " + "; ".join(verdicts(rows)))


if __name__ == "__main__":
    main()
