"""Streams flood: what 2,000 event-stream attempts cost a real ``python -m bot`` (issue 20).

One bot process (bench/load.py's start-up: webhook mode, the page served on its port,
loopback only) against testing/fakeserver.py's fake Bot API, on the real Redis
(``--redis-url``, under a key prefix of the run's own, removed afterwards). A durak game
of two players runs in a group; all along, every ``--tap-every`` seconds the player to act
taps a move of his newest prompt (else anyone taps a button of the group's table), and the
bench times tap posted -> answerCallbackQuery applied by the fake.

Two floods of ``--attempts`` stream attempts each (``GET /app/api/events``, as many at once
as ``--concurrency``), every stream admitted held open until the flood is over, as an
attacker would:

- ``one session``: a single initData traded once, its token used for every attempt;
- ``N users``: ``--users`` users, each with his own session, sharing the attempts.

Figures: the bot's resident memory (VmRSS) and open files (/proc/<pid>/fd) before the
flood, at its height (every attempt made, the admitted streams still open) and after (the
streams closed, ``--settle`` seconds later); the attempts' answers by status; tap ->
answer p50/p99 during the flood. The fake answers at once (``--delay`` 0): what is timed
is the bot.

    .venv/bin/python bench/streams.py [--attempts 2000] [--users 50] [--json]

``--token-in-query`` also puts the token in the stream's URL (``?s=``), as the page did
before issue 20, and ``--bot-root DIR`` runs the bot from another checkout, to measure
the code before (``git archive 1edbc9a | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402

from bench.load_bots import SECRET, Bots  # noqa: E402
from bench.load_meter import Meter, quantile  # noqa: E402
from bot.core import callbacks  # noqa: E402
from testing.chats import FakeUser  # noqa: E402
from testing.fakegram import FakeTelegram  # noqa: E402
from testing.fakeserver import FakeServer, Served, WebhookHarness  # noqa: E402
from testing.tabletop import PLAY_ACTIONS, Tabletop, action_of  # noqa: E402
from testing.webapp import init_data  # noqa: E402

PAGE = "https://cards.example.org/app/"
PREFIX = f"ctstreams{os.getpid()}"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Taps:
    """A player tapping all along, and the time to each answer."""

    def __init__(self, h: WebhookHarness, top: Tabletop, players: list[FakeUser]) -> None:
        self.h, self.top, self.players = h, top, players
        self.posted: dict[str, float] = {}
        self.latencies: list[float] = []
        self.window: tuple[float, float] = (0.0, 0.0)
        self.rng = random.Random(1)

    def on_post(self, update: dict[str, Any]) -> None:
        if "callback_query" in update:
            self.posted[update["callback_query"]["id"]] = time.monotonic()

    def __call__(self, served: Served) -> None:
        if served.method != "answerCallbackQuery":
            return
        sent = self.posted.pop(str(served.params.get("callback_query_id")), None)
        start, stop = self.window
        if sent is not None and start <= sent <= (stop or float("inf")):
            self.latencies.append(served.done - sent)

    async def run(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            for user in self.players:
                prompt = self.top.prompt(user)
                if prompt is not None:
                    moves = [b for b in prompt.buttons if action_of(b) in PLAY_ACTIONS]
                    await self.h.tap(user, prompt, self.rng.choice(moves).text)
                    break
            else:
                table = self.top.table_message()
                if any(b.callback_data for b in table.buttons):
                    pressed = next(b for b in table.buttons if b.callback_data)
                    await self.h.tap(self.players[0], table, pressed.text)


async def _until(ready: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ready()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise RuntimeError("the bot did not answer in time")


async def _group_tap(h: WebhookHarness, top: Tabletop, user: FakeUser, action: Any) -> None:
    def button() -> Any:
        with contextlib.suppress(AssertionError):  # nothing posted yet
            message = top.table_message()
            if any(action_of(b) is action for b in message.buttons):
                return message
        return None

    message = await _until(button)
    await h.tap(user, message, lambda b: action_of(b) is action)


async def _game(h: WebhookHarness, players: list[FakeUser]) -> tuple[Tabletop, str]:
    """A durak game of two in a new group, opened through the real lobby; its page parameter."""
    group = h.group(creator=players[0])
    top = Tabletop(h, group)
    await h.command(players[0], group, "/newgame")
    await _group_tap(h, top, players[0], callbacks.Action.PICK)
    await _group_tap(h, top, players[1], callbacks.Action.JOIN)
    await _group_tap(h, top, players[0], callbacks.Action.START)
    await _until(lambda: any(top.prompt(u) for u in players))
    links = [b.url for b in top.table_message().buttons if b.url and "startapp=" in b.url]
    if links:
        return top, links[0].split("startapp=", 1)[1]
    pages = [b.web_app for m in h.screen(players[0]) for b in m.buttons if b.web_app]
    return top, pages[-1].split("?t=", 1)[1]


async def _session(c: httpx.AsyncClient, user: FakeUser, param: str) -> str:
    headers = {"Authorization": f"tma {init_data(user)}"}
    r = await c.post("/app/api/session", params={"t": param}, headers=headers)
    r.raise_for_status()
    token: str = r.json()["token"]
    return token


async def flood(
    c: httpx.AsyncClient,
    tokens: list[str],
    param: str,
    attempts: int,
    concurrency: int,
    in_query: bool,
) -> tuple[dict[int, int], contextlib.AsyncExitStack]:
    """``attempts`` stream attempts, the tokens in turn; the admitted ones left open (in the
    returned stack). The answers by status."""
    statuses: dict[int, int] = {}
    held = contextlib.AsyncExitStack()
    gate = asyncio.Semaphore(concurrency)

    async def attempt(i: int) -> None:
        token = tokens[i % len(tokens)]
        params = {"t": param, **({"s": token} if in_query else {})}
        headers = {"Authorization": f"Bearer {token}"}
        async with gate:  # how many are being opened at once; the opened stay open
            try:
                r = await held.enter_async_context(
                    c.stream("GET", "/app/api/events", params=params, headers=headers)
                )
                if r.status_code != 200:
                    await r.aread()
            except httpx.HTTPError:
                r = None
            status = 0 if r is None else r.status_code
            statuses[status] = statuses.get(status, 0) + 1

    await asyncio.gather(*(attempt(i) for i in range(attempts)))
    return statuses, held


def _figures(pid: int) -> dict[str, float]:
    return {"rss_mb": round(rss_mb(pid), 1), "files": open_files(pid)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    telegram = FakeTelegram()
    server = FakeServer(telegram, delay=(args.delay, args.delay))
    meter = Meter()
    server.listeners.append(meter)
    api = await server.start()
    logs = Path(tempfile.mkdtemp(prefix="bench-streams-"))
    env = {"WEBAPP_URL": PAGE, "CARDTABLE_KEY_PREFIX": PREFIX}
    if args.bot_root:
        env["PYTHONPATH"] = str(Path(args.bot_root).resolve())
    bots = Bots(logs, args.redis_url, env)
    redis = aioredis.Redis.from_url(args.redis_url)
    h: WebhookHarness | None = None
    result: dict[str, Any] = {"attempts": args.attempts, "users": args.users}
    try:
        await bots.start(1, api, meter)
        pid = bots.procs[0].pid
        root = bots.hooks[0].removesuffix("/hook")
        h = WebhookHarness(telegram, bots.hooks, SECRET)
        players = [h.user("Ann"), h.user("Bob")]
        top, param = await _game(h, players)
        taps = Taps(h, top, players)
        h.on_post = taps.on_post
        server.listeners.append(taps)
        tapping = asyncio.create_task(taps.run(args.tap_every))
        # No pool limit: an admitted stream holds its connection (and a file) till the end.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=args.concurrency)
        async with httpx.AsyncClient(base_url=root, timeout=30, limits=limits) as c:
            await asyncio.sleep(1.0)  # the game is under way, the bot warm
            for name, users in (("one session", 1), (f"{args.users} users", args.users)):
                viewers = [h.user(f"Viewer {i}") for i in range(users)]
                tokens = [await _session(c, user, param) for user in viewers]
                before = _figures(pid)
                taps.window = (time.monotonic(), 0.0)
                statuses, held = await flood(
                    c, tokens, param, args.attempts, args.concurrency, args.token_in_query
                )
                during = _figures(pid)
                taps.window = (taps.window[0], time.monotonic())
                await held.aclose()
                await asyncio.sleep(args.settle)
                after = _figures(pid)
                lat = sorted(taps.latencies)
                taps.latencies = []
                result[name] = {
                    "before": before,
                    "during": during,
                    "after": after,
                    "statuses": dict(sorted(statuses.items())),
                    "taps": len(lat),
                    "tap_p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
                    "tap_p99_ms": round(1000 * (quantile(lat, 99) or 0), 1) if lat else None,
                }
        tapping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await tapping
        result["bot log"] = bots.log_counts()
    finally:
        if h is not None:
            await h.close()
        await bots.stop()
        await server.stop()
        keys = [key async for key in redis.scan_iter(match=f"{PREFIX}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
    return result


def report(result: dict[str, Any]) -> str:
    lines = [f"{result['attempts']} stream attempts per flood, one bot process"]
    for name in ("one session", f"{result['users']} users"):
        r = result[name]
        b, d, a = r["before"], r["during"], r["after"]
        lines.append(
            f"{name:>12}: RSS {b['rss_mb']} -> {d['rss_mb']} -> {a['rss_mb']} MB, "
            f"open files {b['files']} -> {d['files']} -> {a['files']}; "
            f"answers {r['statuses']}; tap -> answer p50 {r['tap_p50_ms']} ms, "
            f"p99 {r['tap_p99_ms']} ms over {r['taps']} taps"
        )
    lines.append(f"bot log: {result['bot log']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attempts", type=int, default=2000)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--tap-every", type=float, default=0.1)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/2")
    parser.add_argument("--token-in-query", action="store_true")
    parser.add_argument("--bot-root", help="run the bot from this checkout")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    print(json.dumps(result, indent=2) if args.json else report(result))


if __name__ == "__main__":
    main()
