"""``python -m bot`` in a process of its own, in webhook mode, against testing/fakeserver.py:
what a deployment runs, driven as Telegram drives it (tests of bot.runner, bot.inbox,
bot.endpoints and the installed wheel).

:class:`BotProcess` starts one (any Python: the source tree's, or a venv's with the wheel
installed), waits until its ``/healthz`` answers, stops it with SIGTERM or kills it. One
of the source tree is forked from a server that has imported the bot once (:class:`Forked`):
importing it is half of a start's CPU, some thirty starts in the suite; what the process
then runs is ``python -m bot``'s :func:`bot.__main__.main`, on its own environment; one
that sets otherwise than the server's environment what is read at import or at Python's
start is started as a new Python.
:class:`ProcHarness` posts each update to a webhook and then waits on real events, not
on time (:meth:`ProcHarness.settle`).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from multiprocessing import forkserver
from pathlib import Path
from typing import Any, ClassVar, Protocol

import httpx

from bot.core import config
from testing.chats import BOT_TOKEN
from testing.fakegram import FakeTelegram
from testing.fakeserver import SECRET_HEADER, WebhookHarness
from testing.metrics import sample

ROOT = Path(__file__).resolve().parent.parent
SECRET = "proc-test-secret"
START_WITHIN = 30.0  # seconds for a process to answer /healthz
SETTLE_WITHIN = 20.0
# Seconds without a Bot API call before the bot is asked whether it is done. Only how often
# /metrics is read hangs on it, not whether the answer is right: a handler marks the table
# it delivers before it takes the update off the stream. 5 ms, not 20: a tap through a
# process took 37 ms, now 22 (median of about 40 each, one process, durak).
LULL = 0.005
# Settings named in the environment that the tests' process must not pass on.
_SETTINGS = {name.upper() for name in config.names()}


# What the fork server imports before it forks a bot: all that ``python -m bot`` imports
# (fakeredis only without REDIS_URL; httpcore once the bot makes its HTTP client, and with
# it trio, which the tests' environment has; the HTTP server's protocols once it serves),
# this module, whose :func:`_bot_main` a fork runs, and last testing/forkwarm.py.
_PRELOAD = ["bot.__main__", "fakeredis", "httpcore", "uvicorn.protocols.http.h11_impl"]
_PRELOAD += ["uvicorn.protocols.websockets.wsproto_impl", "uvicorn.lifespan.on"]
_PRELOAD += ["anyio._backends._asyncio", "encodings.idna", __name__, "testing.forkwarm"]
# Read by the bot at import (bot.core.keys): a process whose environment sets them
# otherwise than the fork server's is started as a new Python, not forked.
_READ_AT_IMPORT = ("CARDTABLE_KEY_PREFIX",)


class Running(Protocol):
    """What a test does with a bot process: :class:`subprocess.Popen`'s, or :class:`Forked`'s."""

    pid: int

    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


def _bot_main(env: dict[str, str], cwd: str, log: str) -> None:
    """In the fork: ``python -m bot`` with ``env`` as its environment, in ``cwd``, its
    stdout and stderr appended to ``log``."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    from bot.__main__ import main

    sys.exit(main())


def forks_as_started(env: Mapping[str, str], server: Mapping[str, str]) -> bool:
    """Whether a fork of a server started in the environment ``server`` runs the bot as
    a new Python given ``env`` would: what the bot reads at import (:data:`_READ_AT_IMPORT`)
    and the interpreter at its start (``PYTHON*``) is the same in both. Not PYTHONPATH,
    which names where the bot is imported from: the server imported the source tree's,
    on the tests' own path."""
    python = {n for n in (*env, *server) if n.startswith("PYTHON") and n != "PYTHONPATH"}
    return all(env.get(n) == server.get(n) for n in (*_READ_AT_IMPORT, *python))


class Forked:
    """A bot process forked from multiprocessing's fork server (one per test worker, the
    bot imported in it once), with :class:`subprocess.Popen`'s ways of stopping and
    waiting for it."""

    _context: Any = None
    _started_in: ClassVar[dict[str, str]] = {}  # the environment the server started with

    def __init__(self, env: dict[str, str], cwd: Path, log: Path) -> None:
        self._process = Forked.server().Process(
            target=_bot_main,
            args=(env, str(cwd), str(log)),
            daemon=True,  # gone with the worker
        )
        self._process.start()
        self.pid: int = self._process.pid

    @staticmethod
    def server() -> Any:
        """multiprocessing's fork-server context, its server started at the first call."""
        if Forked._context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
            Forked._started_in = dict(os.environ)
            forkserver.ensure_running()  # in this environment, read once
            Forked._context = context
        return Forked._context

    @staticmethod
    def runs_as_started(env: Mapping[str, str]) -> bool:
        """Whether a fork runs the bot as ``python -m bot`` in ``env`` would
        (:func:`forks_as_started`), the server started now if it was not."""
        Forked.server()
        return forks_as_started(env, Forked._started_in)

    def poll(self) -> int | None:
        code: int | None = self._process.exitcode
        return code

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if (code := self.poll()) is None:
            raise subprocess.TimeoutExpired("python -m bot", timeout or 0.0)
        return code

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class BotProcess:
    """One bot process on a free port, in webhook mode unless ``webhook`` is False."""

    def __init__(
        self,
        api: str,
        logs: Path,
        *,
        python: str = sys.executable,
        cwd: Path = ROOT,
        source_tree: bool = True,
        webhook: bool = True,
        **env: str,
    ) -> None:
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.hook = f"{self.root}/hook"
        self.logs = logs
        environ = {k: v for k, v in os.environ.items() if k.upper() not in _SETTINGS}
        environ.pop("PYTHONPATH", None)
        if source_tree:
            environ["PYTHONPATH"] = str(ROOT)
        environ.update(
            TELEGRAM_BOT_TOKEN=BOT_TOKEN,
            TELEGRAM_BASE_URL=api,
            PORT=str(self.port),
            TABLE_EDIT_INTERVAL="0",
            RATE_LIMIT="false",
            COMPUTER_DELAY="0.05",
        )
        if webhook:
            environ.update(WEBHOOK_URL=self.hook, WEBHOOK_SECRET=SECRET)
        environ.update(env)
        forks = python == sys.executable and source_tree and cwd == ROOT
        if forks and Forked.runs_as_started(environ):
            self.process: Running = Forked(environ, cwd, logs)
        else:
            with logs.open("ab") as out:  # the process has its own copy
                self.process = subprocess.Popen(
                    [python, "-m", "bot"], env=environ, cwd=cwd, stdout=out, stderr=out
                )

    async def ready(self) -> None:
        """Wait until /healthz answers (or fail with the process's log)."""
        deadline = time.monotonic() + START_WITHIN
        async with httpx.AsyncClient(verify=False) as c:  # plain HTTP: no certificates to load
            while time.monotonic() < deadline:
                assert self.process.poll() is None, f"the bot exited:\n{self.log()}"
                with contextlib.suppress(httpx.TransportError):
                    if (await c.get(f"{self.root}/healthz")).status_code == 200:
                        return
                await asyncio.sleep(0.01)  # a process starting: nothing to wait on but HTTP
        raise AssertionError(f"the bot did not start:\n{self.log()}")

    def log(self) -> str:
        return self.logs.read_text(errors="replace")

    async def stopped(self, within: float) -> int:
        """Its exit code, waiting at most ``within`` seconds (else its log says where it is)."""
        try:
            return await asyncio.to_thread(self.process.wait, within)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the bot ran on {within} s:\n{self.log()}") from None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


class ProcHarness(WebhookHarness):
    """A harness whose updates go to a bot process's webhook (see the module docstring)."""

    def __init__(self, telegram: FakeTelegram, bot: BotProcess) -> None:
        super().__init__(telegram, [bot.hook], SECRET)
        self.bot = bot
        self.settling = True  # False: a delivery posts and waits for nothing

    def serve_by(self, bot: BotProcess) -> None:
        """From now on updates go to ``bot`` (another process took over)."""
        self.bot = bot

    async def post(self, data: dict[str, Any]) -> httpx.Response:
        """One post as Telegram makes it, whatever the response."""
        self.server.update_ids.add(data["update_id"])
        return await self.client.post(self.bot.hook, json=data, headers={SECRET_HEADER: SECRET})

    async def deliver(self, data: dict[str, Any], app: Any = None) -> None:
        response = await self.post(data)
        response.raise_for_status()
        if not self.settling:
            return
        query = data.get("callback_query")
        await self.settle(query["id"] if query else None)

    async def settle(self, query_id: str | None = None) -> None:
        """Wait until the tap ``query_id`` (if any) is answered and the process has done
        with every update: none is left in the webhook's stream, and no table is being
        delivered (its /metrics, read as the operator reads them). They are read once the
        bot has made no Bot API call for :data:`LULL` seconds, so as to read them seldom."""
        deadline = time.monotonic() + SETTLE_WITHIN
        seen, since, answer = -1, time.monotonic(), None
        while time.monotonic() < deadline:
            answer = self.server.queries.get(query_id) if query_id else None
            if len(self.server.calls) != seen:
                seen, since = len(self.server.calls), time.monotonic()
            elif time.monotonic() - since >= LULL and (answer is None or answer.answered):
                if await self.done_with(self.bot):
                    return
                since = time.monotonic()
            await asyncio.sleep(0.005)
        answered = None if answer is None else answer.answered
        raise AssertionError(
            f"the bot did not settle: tap answered {answered}, {await self._pending()}"
        )

    async def _pending(self) -> str:
        """What the process still says it has to do (its /metrics), for a failure's message."""
        with contextlib.suppress(httpx.HTTPError):
            page = (await self.client.get(f"{self.bot.root}/metrics")).text
            return f"backlog {sample(page, _BACKLOG)}, delivering {sample(page, _DELIVERING)}"
        return "its /metrics not answering"

    async def done_with(self, bot: BotProcess) -> bool:
        """Whether ``bot`` has done with every update and delivers no table."""
        page = (await self.client.get(f"{bot.root}/metrics")).text
        assert f"\n{_BACKLOG} " in page, page
        return sample(page, _BACKLOG) == 0 and sample(page, _DELIVERING) == 0


_BACKLOG, _DELIVERING = "cardtable_inbox_backlog", "cardtable_tables_delivering"


class Bots:
    """A test's bot processes and their harnesses, each process's log in ``logs``; all
    closed and killed by :meth:`close`."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self._processes: list[BotProcess] = []
        self._harnesses: list[ProcHarness] = []

    async def start(self, api: str, name: str = "bot", **options: Any) -> BotProcess:
        """A :class:`BotProcess` on ``api``, once ready."""
        bot = BotProcess(api, self.logs / f"{name}.log", **options)
        self._processes.append(bot)
        await bot.ready()
        return bot

    def harness(self, telegram: FakeTelegram, bot: BotProcess) -> ProcHarness:
        h = ProcHarness(telegram, bot)
        self._harnesses.append(h)
        return h

    async def close(self) -> None:
        for h in self._harnesses:
            await h.close()
        for bot in self._processes:
            bot.kill()
