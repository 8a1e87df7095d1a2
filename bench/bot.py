"""Bot speed: many group chats playing at once through the whole handler stack.

Every table is a group whose players tap seeded-random buttons among those they are
shown, exactly as in the end-to-end tests: updates built as Telegram sends them go through
``Application.process_update``, game state lives in the real Redis (database 15, flushed
before and after), and the Bot API is tests/fakegram.py (answering at once, so what is
measured is the bot, not the network).

Figures, per *move* (a tap on a move or set-up button in a private hand message):
- moves/s over the wall time of the whole run (all tables at once, one process);
- p50 / p99 of the time spent in ``process_update`` for one move tap;
- Redis round trips and commands per move, counted by a connection class that sees every
  write to the socket (a pipeline or a Lua call is one round trip), attributed to the
  move taps through a context variable; the server's INFO commandstats delta over the
  whole run is printed beside it as a cross-check (it counts every client of the server);
- Bot API calls per move, in the tap itself and in total (coalesced group edits run later,
  from the job queue), and how many calls Telegram would have refused as changing nothing.

The run has two phases: one table alone first (``--solo-games``; the time in
``process_update`` is then the handling time itself), then ``--tables`` tables at once
(that time then includes waiting for the event loop, i.e. latency under load).

    .venv/bin/python bench/bot.py [--tables 50] [--games 2] [--solo-games 20]
                                  [--edit-interval S] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis.asyncio as aioredis
from redis.asyncio.connection import Connection

from bot.app import build_application
from bot.callbacks import Action
from bot.config import Settings
from tests.fakegram import (
    BOT_TOKEN,
    NOT_MODIFIED,
    TAG,
    FakeRequest,
    FakeTelegram,
    Harness,
    start_app,
    stop_app,
)
from tests.tabletop import Tabletop

REDIS_URL = "redis://127.0.0.1:6379/15"
TARGETS = {
    "moves_per_s": ">= 300",
    "p99_ms": "< 20",
    "redis_round_trips_per_move": "<= 3",
    "noop_bot_api_calls": "== 0",
}
# (game, players) for table i, cycled: the mix a busy bot would see.
MIX = [("durak", 2), ("durak", 4), ("football", 2), ("durak", 3)]


class RedisMeter:
    """Round trips and commands per context tag (see ``tests.fakegram.TAG``)."""

    trips: ClassVar[collections.Counter[str | None]] = collections.Counter()
    commands: ClassVar[collections.Counter[str | None]] = collections.Counter()


class CountingConnection(Connection):
    """A redis-py connection that counts what it sends: each ``send_packed_command`` is
    one write to the socket and so one round trip (a pipeline sends all its commands in
    one); each packed command is one command."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        RedisMeter.trips[TAG.get()] += 1
        await super().send_packed_command(command, check_health)

    def pack_command(self, *args: Any) -> list[bytes]:
        RedisMeter.commands[TAG.get()] += 1
        return super().pack_command(*args)

    def pack_commands(self, commands: Iterable[Iterable[Any]]) -> list[bytes]:
        commands = list(commands)
        RedisMeter.commands[TAG.get()] += len(commands)
        return super().pack_commands(commands)


async def server_commands(redis: aioredis.Redis) -> int:
    """Commands the Redis server has executed (all clients), from INFO commandstats."""
    stats = await redis.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


async def run_table(
    h: Harness, index: int, games: int, seed: int, counts: collections.Counter[str]
) -> None:
    kind, n = MIX[index % len(MIX)]
    players = [h.user(f"T{index}P{i}", language_code=("en", "ru", "uk")[i % 3]) for i in range(n)]
    top = Tabletop(h, h.group(f"Table {index}", creator=players[0]))
    rng = random.Random(seed * 1000 + index)
    await top.setup_game(kind, players)
    for game in range(games):
        moves = await top.play(players, rng)  # not `+= await`: that would read first
        counts["moves"] += moves
        counts["games"] += 1
        if game + 1 < games:
            await top.tap_group(players[rng.randrange(n)], Action.AGAIN)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    pool = aioredis.ConnectionPool.from_url(
        args.redis_url, connection_class=CountingConnection, max_connections=200
    )
    redis = aioredis.Redis(connection_pool=pool)
    await redis.flushdb()
    server = FakeTelegram()
    settings = Settings(
        telegram_bot_token=BOT_TOKEN,
        redis_url=args.redis_url,
        table_edit_interval=args.edit_interval,
        rate_limit=False,
    )
    app = build_application(settings, redis, request=FakeRequest(server))
    await start_app(app)
    h = Harness(server, [app])
    h.redis = redis
    counts: collections.Counter[str] = collections.Counter()
    RedisMeter.trips.clear()
    RedisMeter.commands.clear()
    server_before = await server_commands(redis)
    calls_before = len(server.calls)
    load = os.getloadavg()[0]
    cpu = time.process_time()
    started = time.perf_counter()
    try:
        await asyncio.gather(
            *(run_table(h, i, args.games, args.seed, counts) for i in range(args.tables))
        )
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        await asyncio.sleep(max(args.edit_interval, 0) + 0.2)  # let coalesced edits land
    finally:
        await stop_app(app)
    server_after = await server_commands(redis)
    await redis.flushdb()
    await redis.aclose()
    await pool.disconnect()

    moves = counts["moves"]
    move_times = sorted(d for tag, d in h.durations if tag == "move")
    calls = server.calls[calls_before:]
    in_taps = [c for c in calls if c.tag == "move"]
    refused = collections.Counter(c.error for c in calls if c.error)
    p = statistics.quantiles(move_times, n=100, method="inclusive")
    return {
        "tables": args.tables,
        "games": counts["games"],
        "moves": moves,
        "seconds": round(elapsed, 3),
        "moves_per_s": round(moves / elapsed, 1),
        "updates_per_s": round(len(h.durations) / elapsed, 1),
        # CPU of this process (bot + fake Telegram + driver) per move: less sensitive
        # than wall time to other processes on the machine.
        "cpu_ms_per_move": round(cpu / moves * 1000, 2),
        "load_average_at_start": round(load, 2),
        # Time the fake Telegram itself took inside move taps (JSON, HTML parsing, checks):
        # part of the times below, not of the bot.
        "fake_telegram_ms_per_move": round(server.busy.get("move", 0.0) / moves * 1000, 2),
        "p50_ms": round(p[49] * 1000, 2),
        "p99_ms": round(p[98] * 1000, 2),
        "max_ms": round(move_times[-1] * 1000, 2),
        "redis_round_trips_per_move": round(RedisMeter.trips["move"] / moves, 2),
        "redis_commands_per_move": round(RedisMeter.commands["move"] / moves, 2),
        "redis_round_trips_total": sum(RedisMeter.trips.values()),
        "redis_server_commands_delta": server_after - server_before,
        "bot_api_calls_per_move": round(len(in_taps) / moves, 2),
        "bot_api_calls_per_move_total": round(len(calls) / moves, 2),
        "bot_api_methods_in_moves": dict(collections.Counter(c.method for c in in_taps)),
        "noop_bot_api_calls": server.not_modified,
        "refused_bot_api_calls": {k: v for k, v in refused.items() if k != NOT_MODIFIED},
        "edit_interval": args.edit_interval,
        "targets": TARGETS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=50, help="group chats playing at once")
    parser.add_argument("--games", type=int, default=2, help="games per table (Play again)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--edit-interval",
        type=float,
        default=0.0,
        help="table_edit_interval: 0 edits the group table on every move (the worst case)",
    )
    parser.add_argument("--redis-url", default=REDIS_URL)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument(
        "--solo-games",
        type=int,
        default=20,
        help="first play this many games at one table alone: handling time without queueing",
    )
    args = parser.parse_args()
    phases = [("solo", argparse.Namespace(**{**vars(args), "tables": 1, "games": args.solo_games}))]
    phases = [p for p in phases if args.solo_games > 0] + [("concurrent", args)]
    for name, phase_args in phases:
        result = {"phase": name, **asyncio.run(bench(phase_args))}
        if args.json:
            print(json.dumps(result), flush=True)
            continue
        width = max(len(k) for k in result)
        for key, value in result.items():
            target = TARGETS.get(key)
            print(f"{key:<{width}}  {value}" + (f"   (target {target})" if target else ""))
        print(flush=True)


if __name__ == "__main__":
    main()
