"""Bot speed: many group chats playing at once through the whole handler stack.

Every table is a group whose players tap seeded-random buttons among those they are
shown, exactly as in the end-to-end tests: updates built as Telegram sends them go through
``Update.de_json`` and ``Application.process_update``, game state lives in the real Redis
(``--redis-url``, under a key prefix of the run's own, whose keys are removed afterwards:
anything else in that database, a bot's tables included, is left alone), and the Bot API
is testing/fakegram.py (answering at once, so what is measured is the bot, not the network).

Figures, per *move* (a tap on a move or set-up button in a private hand message):
- moves/s over the wall time of the phase (all its tables at once, one process);
- p50 / p99 of the handling time of one move tap: from its arrival to the end of
  ``process_update``, so that time spent waiting for a busy event loop counts;
- Redis round trips and commands per move, counted by a connection class that sees every
  write to the socket (a pipeline or a Lua call is one round trip), attributed to the
  move taps through a context variable; the server's INFO commandstats delta over the
  whole run is printed beside it as a cross-check (it counts every client of the server);
- Bot API calls per move, in the tap itself and in total (coalesced group edits run later,
  from the pollers), and how many calls Telegram would have refused as changing nothing.

Three phases, because one process has one event loop and a figure means something only
with the load it was taken under:
- ``solo``: one table alone (``--solo-games``): the handling time itself, no queueing;
- ``saturated``: ``--tables`` tables whose players tap again the instant the last tap is
  handled: the most moves per second the process can serve. Its handling times are
  queueing, not work: with every table waiting on one loop, Little's law makes the mean
  tables / throughput however fast a move is;
- ``paced``: the same number of tables for ``--seconds``, players pausing between taps
  (exponentially, as people do) so that together they offer ``--rate`` moves/s: the
  handling time a player sees while the process serves that load.

    .venv/bin/python bench/bot.py [--tables 50] [--games 2] [--solo-games 20]
                                  [--rate 300] [--seconds 20]
                                  [--edit-interval S] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
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
# Read by bot.core.store when it is imported below: every key this run writes starts with it.
os.environ["CARDTABLE_KEY_PREFIX"] = f"ctbench{os.getpid()}"

import redis.asyncio as aioredis
from redis.asyncio.connection import Connection

from bot.app import build_application, freeze_startup_heap
from bot.core.callbacks import Action
from bot.core.config import Settings
from bot.core.keys import KEY_PREFIX
from testing.chats import BOT_TOKEN, FakeUser
from testing.errors import NOT_MODIFIED
from testing.fakegram import ARRIVED, TAG, FakeRequest, FakeTelegram
from testing.harness import Harness, start_app, stop_app
from testing.tabletop import Tabletop

REDIS_URL = "redis://127.0.0.1:6379/15"
# The targets the bot is held to, each checked in the phase it is about (see the module docstring).
TARGETS = {
    "solo": {"p99_ms": "< 20", "redis_round_trips_per_move": "<= 3", "noop_bot_api_calls": "== 0"},
    "saturated": {
        "moves_per_s": ">= 300",
        "redis_round_trips_per_move": "<= 3",
        "noop_bot_api_calls": "== 0",
    },
    "paced": {"p99_ms": "< 20", "redis_round_trips_per_move": "<= 3", "noop_bot_api_calls": "== 0"},
}
# (game, players) for table i, cycled: the mix a busy bot would see.
MIX = [("durak", 2), ("durak", 4), ("football", 2), ("durak", 3)]


class RedisMeter:
    """Round trips and commands per context tag (see ``testing.fakegram.TAG``)."""

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


async def play_paced(
    top: Tabletop, players: list[FakeUser], rng: random.Random, think: float, until: float
) -> int:
    """Plays one game until its end or the time ``until``: the number of taps. Each tap
    arrives an exponential pause (mean ``think`` s) after the one before, but never before
    that one was handled: a player taps what he sees. Its handling time counts from that
    arrival."""
    moves = 0
    arrival = time.perf_counter()
    while not top.finished():
        arrival = max(arrival + rng.expovariate(1 / think), time.perf_counter())
        if arrival >= until:
            break
        await asyncio.sleep(arrival - time.perf_counter())
        token = ARRIVED.set(arrival)
        try:
            _, answer = await top.step(players, rng)
        finally:
            ARRIVED.reset(token)
        assert answer.text is None, f"a legal button was refused: {answer.data}: {answer.text}"
        moves += 1
    return moves


async def run_table(
    h: Harness, index: int, args: argparse.Namespace, counts: collections.Counter[str]
) -> None:
    """Saturated: ``args.games`` games back to back. Paced: games (Play again) until
    ``args.seconds`` have passed."""
    kind, n = MIX[index % len(MIX)]
    players = [h.user(f"T{index}P{i}", language_code=("en", "ru", "uk")[i % 3]) for i in range(n)]
    top = Tabletop(h, h.group(f"Table {index}", creator=players[0]))
    rng = random.Random(args.seed * 1000 + index)
    think = args.tables / args.rate if args.rate else 0.0
    until = time.perf_counter() + args.seconds
    if think:  # groups open their lobbies at different moments, not all in one burst
        await asyncio.sleep(rng.uniform(0, 2 * think))
    await top.setup_game(kind, players)
    for game in itertools.count(1):
        # not `+= await`: that would read the counter before the game
        moves = await (
            play_paced(top, players, rng, think, until) if think else top.play(players, rng)
        )
        counts["moves"] += moves
        if not top.finished():  # paced, and the time is up
            return
        counts["games"] += 1
        if not think and game >= args.games:
            return
        await top.tap_group(players[rng.randrange(n)], Action.AGAIN)


async def remove_own_keys(redis: aioredis.Redis) -> None:
    """Every key of this run (its prefix is its own), and no other."""
    async for key in redis.scan_iter(match=f"{KEY_PREFIX}:*", count=1000):
        await redis.unlink(key)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    pool = aioredis.ConnectionPool.from_url(
        args.redis_url, connection_class=CountingConnection, max_connections=200
    )
    redis = aioredis.Redis(connection_pool=pool)
    server = FakeTelegram(history=False)
    settings = Settings.read(
        telegram_bot_token=BOT_TOKEN,
        redis_url=args.redis_url,
        table_edit_interval=args.edit_interval,
        rate_limit=False,
    )
    app = build_application(settings, redis, request=FakeRequest(server))
    await start_app(app)
    freeze_startup_heap()  # as python -m bot does
    h = Harness(server, [app])
    h.redis = redis
    counts: collections.Counter[str] = collections.Counter()
    RedisMeter.trips.clear()
    RedisMeter.commands.clear()
    server_before = await server_commands(redis)
    load = os.getloadavg()[0]
    cpu = time.process_time()
    started = time.perf_counter()
    try:
        await asyncio.gather(*(run_table(h, i, args, counts) for i in range(args.tables)))
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        await asyncio.sleep(max(args.edit_interval, 0) + 0.2)  # let coalesced edits land
    finally:
        await stop_app(app)
        server_after = await server_commands(redis)
        await remove_own_keys(redis)
    await redis.aclose()
    await pool.disconnect()

    moves = counts["moves"]
    move_times = sorted(d for tag, d in h.durations if tag == "move")
    in_taps: collections.Counter[str] = collections.Counter()
    refused: collections.Counter[str] = collections.Counter()
    for (tag, method, error), n in server.tally.items():
        if tag == "move":
            in_taps[method] += n
        if error:
            refused[error] += n
    p = statistics.quantiles(move_times, n=100, method="inclusive")
    return {
        "phase": args.phase,
        "tables": args.tables,
        "offered_moves_per_s": args.rate or None,
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
        "bot_api_calls_per_move": round(in_taps.total() / moves, 2),
        "bot_api_calls_per_move_total": round(server.tally.total() / moves, 2),
        "bot_api_methods_in_moves": dict(in_taps),
        "noop_bot_api_calls": server.not_modified,
        "refused_bot_api_calls": {k: v for k, v in refused.items() if k != NOT_MODIFIED},
        "edit_interval": args.edit_interval,
        "targets": TARGETS[args.phase],
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
    parser.add_argument(
        "--rate",
        type=float,
        default=300.0,
        help="moves/s the tables offer together in the paced phase (0: no paced phase)",
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the paced phase")
    args = parser.parse_args()
    phases = []
    if args.solo_games > 0:
        phases.append({"phase": "solo", "tables": 1, "games": args.solo_games, "rate": 0.0})
    phases.append({"phase": "saturated", "rate": 0.0})
    if args.rate > 0:
        phases.append({"phase": "paced"})
    for changes in phases:
        result = asyncio.run(bench(argparse.Namespace(**{**vars(args), **changes})))
        if args.json:
            print(json.dumps(result), flush=True)
            continue
        width = max(len(k) for k in result)
        for key, value in result.items():
            target = result["targets"].get(key)
            print(f"{key:<{width}}  {value}" + (f"   (target {target})" if target else ""))
        print(flush=True)


if __name__ == "__main__":
    main()
