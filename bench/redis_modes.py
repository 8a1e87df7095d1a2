"""One Redis server and a Redis Cluster side by side, in one run (issue 33).

The run starts both from the same ``redis-server`` on ports of its own
(``REDIS_TEST_PORTS``, testing/redis_servers.py): one server, and a cluster of 3
primaries with a replica each.
On each it measures:

- moves a second and Redis commands a move: ``--tables`` group tables playing ``--games``
  games each at once, through the whole handler stack in this process, players tapping
  again the instant their last tap is handled (bench/bot.py's saturated phase; the fake
  Bot API answers at once). Commands a move are what the primaries executed over the
  phase (deliveries, pollers and set-up taps included) by the moves; on one server the
  commands and round trips of the move taps alone are counted on the bot's connections
  too (bench/bot.py's counting connection: a cluster's client makes its own);
- the polling load of idle processes: ``python -m bot`` processes in webhook mode with
  nothing to do, at 1, 2 and 4 processes; the commands the servers execute a second (INFO
  commandstats summed over the primaries, INFO itself left out), per process.

The cost of WAIT (a replica confirming each acknowledged write) is measured by the
replicas part of issue 33, beside it.

    .venv/bin/python bench/redis_modes.py [--tables 20] [--games 1] [--idle 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis

from bench.bot import CountingConnection, RedisMeter, run_table
from bot.app import build_application
from bot.core import connect
from bot.core.config import RedisSettings, Settings
from testing.botproc import BotProcess
from testing.chats import BOT_TOKEN
from testing.fakegram import FakeRequest, FakeTelegram
from testing.fakeserver import FakeServer
from testing.harness import Harness, start_app, stop_app
from testing.redis_servers import Cluster, running, single, why_not

PROCESSES = (1, 2, 4)
SETTLE = 2.0  # seconds a process is left to start its pollers before it is measured


def _commands(ports: list[int]) -> int:
    """Commands the servers on ``ports`` have executed, INFO left out."""
    total = 0
    for port in ports:
        stats = redis.Redis(port=port, socket_timeout=2).info("commandstats")
        total += sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")
    return total


async def _moves(
    settings: RedisSettings, primaries: list[int], args: argparse.Namespace
) -> dict[str, float]:
    """Moves a second and commands a move (see the module docstring)."""
    client = connect.client(settings, connection_class=CountingConnection)
    await connect.check(client, settings)
    before = _commands(primaries)
    server = FakeTelegram(history=False)
    bot_settings = Settings.read(
        telegram_bot_token=BOT_TOKEN,
        redis_url=settings.redis_url,
        redis_cluster=settings.redis_cluster,
        table_edit_interval=0,
        rate_limit=False,
    )
    app = build_application(bot_settings, client, request=FakeRequest(server))
    await start_app(app)
    h = Harness(server, [app])
    h.redis = client
    counts: collections.Counter[str] = collections.Counter()
    RedisMeter.trips.clear()
    RedisMeter.commands.clear()
    plan = argparse.Namespace(games=args.games, seed=1, tables=args.tables, rate=0, seconds=0)
    started = time.perf_counter()
    try:
        await asyncio.gather(*(run_table(h, i, plan, counts) for i in range(args.tables)))
        elapsed = time.perf_counter() - started
    finally:
        await stop_app(app)
        await client.aclose()
    moves = counts["moves"]
    found = {
        "moves": moves,
        "moves_per_s": round(moves / elapsed, 1),
        "redis_commands_per_move": round((_commands(primaries) - before) / moves, 2),
    }
    if RedisMeter.trips["move"]:  # counted on the client (one server; a cluster's client
        # makes its connections itself)
        found["round_trips_per_move_tap"] = round(RedisMeter.trips["move"] / moves, 2)
        found["commands_per_move_tap"] = round(RedisMeter.commands["move"] / moves, 2)
    return found


async def _idle_load(
    settings: RedisSettings, primaries: list[int], logs: Path, seconds: float
) -> dict[int, float]:
    """Commands a second per idle process, at each count of :data:`PROCESSES`."""
    api = FakeServer(FakeTelegram(), delay=(0.0, 0.0))
    await api.start()
    env = {"REDIS_URL": settings.redis_url.get_secret_value()} if settings.redis_url else {}
    if settings.redis_cluster:
        env["REDIS_CLUSTER"] = "1"
    running: list[BotProcess] = []
    found: dict[int, float] = {}
    try:
        for count in PROCESSES:
            while len(running) < count:
                bot = BotProcess(api.url, logs / f"bot{len(running)}.log", **env)  # type: ignore[arg-type]
                running.append(bot)
                await bot.ready()
            await asyncio.sleep(SETTLE)
            before = _commands(primaries)
            await asyncio.sleep(seconds)
            found[count] = round((_commands(primaries) - before) / seconds / count, 1)
    finally:
        for bot in running:
            bot.kill()
        await api.stop()
    return found


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"load_average_at_start": round(os.getloadavg()[0], 2)}
    with (
        tempfile.TemporaryDirectory() as tmp,
        running(single(Path(tmp) / "one")) as one,
        running(Cluster(Path(tmp) / "cluster")) as cluster,
    ):
        root = Path(tmp)
        modes = {
            "one server": (RedisSettings(_env_file=None, redis_url=one.url), [one.port]),
            "cluster": (
                RedisSettings(_env_file=None, redis_url=cluster.url, redis_cluster=True),
                cluster.primary_ports(),
            ),
        }
        for name, (settings, primaries) in modes.items():
            figures: dict[str, Any] = await _moves(settings, primaries, args)
            logs = root / f"logs-{name.replace(' ', '-')}"
            logs.mkdir()
            figures["idle_commands_per_s_per_process"] = await _idle_load(
                settings, primaries, logs, args.idle
            )
            results[name] = figures
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=20, help="group tables playing at once")
    parser.add_argument("--games", type=int, default=1, help="games per table")
    parser.add_argument(
        "--idle", type=float, default=5.0, help="seconds each idle load is measured"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args()
    if (why := why_not()) is not None:
        raise SystemExit(f"bench/redis_modes.py: {why}")
    results = asyncio.run(bench(args))
    if args.json:
        print(json.dumps(results))
        return
    print(f"{'':12} {'moves/s':>8} {'cmds/move':>10}  idle commands/s per process")
    for name, f in results.items():
        if not isinstance(f, dict):
            print(f"{name}: {f}")
            continue
        idle = "  ".join(f"{n} proc: {v}" for n, v in f["idle_commands_per_s_per_process"].items())
        print(f"{name:12} {f['moves_per_s']:>8} {f['redis_commands_per_move']:>10}  {idle}")


if __name__ == "__main__":
    main()
