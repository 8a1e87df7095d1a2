"""The bot processes of a load run: ``python -m bot`` in webhook mode, watched, stopped.

Started with the production defaults (nothing of the environment that names a bot setting
is passed on but what the run adds), their CPU and their logs read, and stopped whatever
happens to the run.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections import Counter
from pathlib import Path
from typing import IO

import httpx

from bench.load_meter import Meter, clock
from bot.core import config
from testing.chats import BOT_TOKEN

ROOT = Path(__file__).resolve().parent.parent
SECRET = "load-bench-secret"
READY_TIMEOUT = 60.0
# The bot's start-up, but its webhook server listens on 127.0.0.1 only (bot/__main__.py
# listens on every interface, as a deployment behind a load balancer must).
LAUNCH = """
import sys
import bot.__main__ as entry
import bot.webapp.server as web
web.HOST = "127.0.0.1"
sys.exit(entry.main())
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a process so far (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Bots:
    """The bot processes of one run: started, watched, stopped (whatever happens)."""

    def __init__(
        self, logs: Path, redis_url: str, extra_env: dict[str, str], root: Path = ROOT
    ) -> None:
        self.logs = logs
        self.root = root  # the checkout whose bot runs
        self.redis_url = redis_url
        self.extra_env = extra_env
        self.procs: list[asyncio.subprocess.Process] = []
        self.hooks: list[str] = []
        self._files: list[IO[bytes]] = []

    def _env(self, api: str, hook: str, port: int) -> dict[str, str]:
        settings = {name.upper() for name in config.names()}
        env = {k: v for k, v in os.environ.items() if k.upper() not in settings}
        env.update(
            PYTHONPATH=str(self.root),
            TELEGRAM_BOT_TOKEN=BOT_TOKEN,
            TELEGRAM_BASE_URL=api,
            REDIS_URL=self.redis_url,
            WEBHOOK_URL=hook,
            WEBHOOK_SECRET=SECRET,
            PORT=str(port),
        )
        env.update(self.extra_env)
        return env

    async def start(self, count: int, api: str, meter: Meter) -> None:
        for i in range(count):
            port = _free_port()
            hook = f"http://127.0.0.1:{port}/hook"
            log = (self.logs / f"bot{i}.log").open("ab")
            self._files.append(log)
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                LAUNCH,
                env=self._env(api, hook, port),
                cwd=self.logs,  # no .env of a checkout is read
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the bench, which stops them
            )
            self.procs.append(proc)
            self.hooks.append(hook)
        deadline = clock() + READY_TIMEOUT
        while not set(self.hooks) <= meter.webhooks or not await self._serving():
            dead = [p for p in self.procs if p.returncode is not None]
            if dead or clock() > deadline:
                raise RuntimeError(f"a bot did not start; see {self.logs}")
            await asyncio.sleep(0.1)

    async def _serving(self) -> bool:
        """Whether every bot's HTTP server answers (it may set its webhook before it
        listens, and a loaded machine makes that moment long)."""
        async with httpx.AsyncClient(timeout=2.0) as client:
            for hook in self.hooks:
                try:
                    answer = await client.get(hook.removesuffix("/hook") + "/healthz")
                except httpx.HTTPError:
                    return False
                if answer.status_code != 200:
                    return False
        return True

    def cpu(self) -> float:
        return sum(_cpu_seconds(p.pid) for p in self.procs)

    async def stop(self) -> None:
        for proc in self.procs:
            if proc.returncode is None:
                proc.terminate()
        for proc in self.procs:
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        for log in self._files:
            log.close()

    def log_counts(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for path in self.logs.glob("bot*.log"):
            for line in path.read_text(errors="replace").splitlines():
                for word in (" WARNING ", " ERROR ", "Traceback"):
                    counts[word.strip().lower()] += word in line
        return dict(counts)
