"""The Redis commands an idle bot process makes a second (its pollers and the inbox's
reads), counted by the server itself (INFO commandstats).

``python -m bench.idle_load --redis-port 7410 --processes 1 --seconds 20`` starts a
redis-server of its own on that port, a fake Telegram, and that many ``python -m bot``
processes in webhook mode (testing/botproc.py); once they run it resets the server's
statistics, waits, and prints the commands a second per process, by command.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
from pathlib import Path

import redis

from testing import redis_servers
from testing.botproc import BotProcess
from testing.fakegram import FakeTelegram
from testing.fakeserver import FakeServer


async def measure(
    port: int, processes: int, seconds: float, delay: float = 1.0
) -> dict[str, float]:
    """Commands a second per process, by command (and ``all``)."""
    telegram = FakeTelegram()
    served = FakeServer(telegram, delay=(0.0, 0.0))
    api = await served.start()
    bots: list[BotProcess] = []
    logs = Path(tempfile.mkdtemp(prefix="idle-load-"))
    probe = redis.Redis(port=port)
    try:
        for i in range(processes):
            url = f"redis://127.0.0.1:{port}/0"
            log = logs / f"bot{i}.log"
            bots.append(BotProcess(api, log, REDIS_URL=url, COMPUTER_DELAY=str(delay)))
        for bot in bots:
            await bot.ready()
        await asyncio.sleep(3.0)  # past the start-up's own commands
        probe.config_resetstat()
        await asyncio.sleep(seconds)
        stats = probe.info("commandstats")
    finally:
        for bot in bots:
            bot.kill()
        await served.stop()
        probe.close()
    per = {
        name.removeprefix("cmdstat_"): int(v["calls"]) / seconds / processes
        for name, v in stats.items()
        if name not in ("cmdstat_config", "cmdstat_info")
    }
    per["all"] = sum(per.values())
    return per


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.idle_load")
    parser.add_argument("--redis-port", type=int, default=7410)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--computer-delay", type=float, default=1.0, help="COMPUTER_DELAY")
    args = parser.parse_args()
    # The fake Telegram's connections, cancelled at its stop, are reported by asyncio's
    # default handler (Python 3.11); they say nothing of the bot.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    if (why := redis_servers.why_not()) is not None:
        raise SystemExit(f"bench/idle_load.py: {why}")
    directory = Path(tempfile.mkdtemp(prefix="idle-redis-"))
    port = args.redis_port
    server = redis_servers.Server(port, directory, *redis_servers.data_args(port))
    with redis_servers.running(server):
        per = asyncio.run(measure(port, args.processes, args.seconds, args.computer_delay))
    for name, rate in sorted(per.items(), key=lambda x: -x[1]):
        print(f"{name:24} {rate:8.1f}/s per process")


if __name__ == "__main__":
    main()
