"""The cost of WAIT: a tap with and without a replica to confirm its write.

The real bot (one process, python-telegram-bot's Application, the fake Bot API with no
latency) plays whole games of durak by taps on redis-server processes of its own
(testing/redis_servers.py, ports of ``REDIS_TEST_PORTS``), in three set-ups:

- ``alone``: a server that never had a replica (no WAIT is sent);
- ``replica, no WAIT``: a primary with a replica, ``REDIS_MIN_REPLICAS=0`` (what the bot
  did before: the replica gets the writes, nothing waits for it);
- ``replica, WAIT``: the same pair with the default (one replica confirms each write
  that acknowledges something: bot.core.replicas).

For each: the tap's time to its answer (median and 90th percentile, real time; the
deliveries the taps set off run alongside), taps a second, and per tap the Redis
commands the primary ran and the WAITs among them (``INFO commandstats``). Then one
write after another, alone and with its WAIT, as bot.core.replicas sends them.

    .venv/bin/python bench/wait.py [--games 3] [--cluster redis://host:port] [--json]

``--cluster``: also one write after another on that cluster, without WAIT and with it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis
from redis.asyncio.cluster import RedisCluster

from bot.core import health
from bot.core.replicas import Replicas
from testing import redis_servers
from testing.clock import Clock
from testing.fakegram import FakeTelegram
from testing.harness import Harness, started_bot, stop_app
from testing.tabletop import playing

SETUPS = ("alone", "replica, no WAIT", "replica, WAIT")


def _commands(port: int) -> tuple[int, int]:
    """Commands the server has run, and WAITs among them."""
    with redis.Redis(port=port) as client:
        stats = client.info("commandstats")
        total = sum(int(v["calls"]) for v in stats.values())
        return total, int(stats.get("cmdstat_wait", {}).get("calls", 0))


class Tally:
    """What one set-up's taps took."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.commands = self.waits = 0

    def figures(self) -> dict[str, float]:
        times = sorted(self.times)
        return {
            "taps": len(times),
            "p50_ms": statistics.median(times) * 1000,
            "p90_ms": times[int(len(times) * 0.9)] * 1000,
            "taps_per_s": len(times) / sum(times),
            "commands_per_tap": self.commands / len(times),
            "waits_per_tap": self.waits / len(times),
        }


async def _game(url: str, port: int, seed: int, overrides: dict[str, Any], tally: Tally) -> None:
    """One game of durak by taps, on a fresh bot process."""
    clock = Clock()
    server = FakeTelegram(clock=clock)
    client = health.client(url)
    app = await started_bot(server, client, clock, computer_delay=0.05, redis_url=url, **overrides)
    h = Harness(server, [app])
    h.redis = client
    rng = random.Random(seed)
    try:
        players = [h.user("Ann"), h.user("Bob")]
        top = await playing(h, "durak", players)
        await top.later(12)
        before = _commands(port)
        while not top.finished():
            started = time.perf_counter()
            _, answer = await top.step(players, rng)
            tally.times.append(time.perf_counter() - started)
            assert answer.text is None, answer.text
            await clock.settle()  # the deliveries it set off, before the next tap
        after = _commands(port)
        tally.commands += after[0] - before[0]
        tally.waits += after[1] - before[1]
    finally:
        await stop_app(app)
        await client.aclose()


async def _writes(url: str, least: int | None, count: int) -> dict[str, float]:
    """One write after another (an INCR, through Replicas.write as the bot's writes go):
    its round trip, with its WAIT when there is one. ``url`` with ``cluster+``: a node of
    a Redis Cluster (the write and its WAIT go to the key's node)."""
    client: Any
    if url.startswith("cluster+"):
        client = RedisCluster.from_url(url.removeprefix("cluster+"))
    else:
        client = health.client(url)
    replicas = Replicas(client, least)
    times: list[float] = []

    def incr(pipe: Any) -> None:
        pipe.incr("bench:wait")

    try:
        for _ in range(count):
            started = time.perf_counter()
            await replicas.write("bench:wait", lambda: client.incr("bench:wait"), incr)
            times.append(time.perf_counter() - started)
    finally:
        await client.aclose()
    times.sort()
    return {
        "p50_ms": statistics.median(times) * 1000,
        "p90_ms": times[int(len(times) * 0.9)] * 1000,
    }


@contextmanager
def _servers() -> Iterator[tuple[redis_servers.Server, redis_servers.Pair]]:
    with ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        alone = stack.enter_context(redis_servers.running(redis_servers.single(directory / "a")))
        pair = stack.enter_context(redis_servers.running(redis_servers.Pair(directory)))
        yield alone, pair


async def on_cluster(url: str) -> dict[str, dict[str, float]]:
    """One write after another on a cluster, without WAIT and with it."""
    return {
        "cluster, no WAIT": await _writes(f"cluster+{url}", 0, 2000),
        "cluster, WAIT": await _writes(f"cluster+{url}", None, 2000),
    }


async def run(games: int) -> dict[str, dict[str, float]]:
    """The set-ups take turns, a game each, so that the machine's other work falls on all
    of them alike."""
    tallies = {name: Tally() for name in SETUPS}
    with _servers() as (alone, pair):
        where = {
            "alone": (alone, {}),
            "replica, no WAIT": (pair.primary, {"redis_min_replicas": 0}),
            "replica, WAIT": (pair.primary, {}),
        }
        for game in range(games):
            for name, (server, overrides) in where.items():
                await _game(server.url, server.port, game, overrides, tallies[name])
        out = {name: tally.figures() for name, tally in tallies.items()}
        for name, (server, overrides) in where.items():
            least = overrides.get("redis_min_replicas")
            out[name] |= {
                f"write_{k}": v for k, v in (await _writes(server.url, least, 2000)).items()
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cluster", help="also writes on this node of a cluster (redis://...)")
    args = parser.parse_args()
    if (why := redis_servers.why_not()) is not None:
        print(f"skipped: {why}")
        return
    started = time.perf_counter()
    result = asyncio.run(run(args.games))
    if args.cluster:
        result |= asyncio.run(on_cluster(args.cluster))
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"a tap through the bot, {args.games} games of durak per set-up")
    for name in SETUPS:
        f = result[name]
        print(
            f"  {name:17} p50 {f['p50_ms']:6.2f} ms  p90 {f['p90_ms']:6.2f} ms  "
            f"{f['taps_per_s']:6.0f} taps/s  {f['commands_per_tap']:5.1f} commands/tap  "
            f"{f['waits_per_tap']:4.1f} WAIT/tap  ({f['taps']:.0f} taps)"
        )
    print("one write (INCR) after another, 2000 of them")
    for name in SETUPS:
        f = result[name]
        print(f"  {name:17} p50 {f['write_p50_ms']:6.3f} ms  p90 {f['write_p90_ms']:6.3f} ms")
    for name in ("cluster, no WAIT", "cluster, WAIT") if args.cluster else ():
        f = result[name]
        print(f"  {name:17} p50 {f['p50_ms']:6.3f} ms  p90 {f['p90_ms']:6.3f} ms")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
