"""Tap to answer: how long the taps that used to wait for Telegram keep a player waiting.

A tap is answered as soon as its change is stored; the messages it sets off follow apart
from it. This measures, through the real bot (one process, python-telegram-bot's
Application, the in-process store) against the fake Bot API with Telegram's flood limits
and its own rate limiter on, each call taking ``--latency`` seconds, the time from a tap
to the fake applying its answerCallbackQuery, for:

- ``pick (private)``: picking a game in a private chat (the picker was just sent there,
  so a message to that chat must wait for the per-chat limit);
- ``record (private)``: Record after a game against the computer in a private chat;
- ``record (group)``: Record in a group right after the game's result;
- ``join (group)``: Join in a group's lobby.

Each figure is the median and the largest of ``--rounds`` fresh tables. Setting a table
up runs on the bot's test clock, moved on instead of waited for; the measured tap itself
runs in real time.

    .venv/bin/python bench/taps.py [--rounds 5] [--latency 0.05] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fakeredis

from bot.core.callbacks import Action
from testing.chats import FakeUser
from testing.clock import Clock
from testing.computers import lobby_with_computers, play_people
from testing.fakegram import FakeTelegram
from testing.flood import FloodLimits
from testing.harness import Harness, started_bot, stop_app
from testing.tabletop import Tabletop, is_action

Scenario = Callable[[Harness, Clock], Awaitable[float]]


class Stopwatch:
    """When the fake applied each callback query's answer (the bot's clock)."""

    def __init__(self, server: FakeTelegram, clock: Clock) -> None:
        self.answered: dict[str, float] = {}
        handle = server.handle

        def timed(method: str, params: dict[str, Any], files: dict[str, Any]) -> Any:
            result = handle(method, params, files)
            if method.lower() == "answercallbackquery":
                self.answered.setdefault(str(params["callback_query_id"]), clock())
            return result

        server.handle = timed  # type: ignore[method-assign]


async def timed_tap(h: Harness, clock: Clock, tap: Callable[[], Awaitable[Any]]) -> float:
    """Seconds from the tap to its answer (the tap's own handling and what it set off
    run meanwhile, in real time)."""
    watch: Stopwatch = h.watch  # type: ignore[attr-defined]
    before = set(watch.answered)
    started = clock()
    await tap()
    new = [when for query, when in watch.answered.items() if query not in before]
    assert new, "the tap was never answered"
    return min(new) - started


async def tap_when_shown(
    h: Harness, clock: Clock, top: Tabletop, user: FakeUser, action: Action
) -> float:
    """Once the button is shown (the bot's clock moved on until it is), the tap on it."""
    message = await top.shown(action)
    return await timed_tap(h, clock, lambda: h.tap(user, message, is_action(action)))


async def pick_private(h: Harness, clock: Clock) -> float:
    """A newcomer: /start, /help, /newgame, and his pick (three messages to his chat
    just before it, as many as its burst allows)."""
    ann = h.user("Ann")
    for command in ("/start", "/help", "/newgame"):
        await h.private(ann, command)
    top = Tabletop(h, ann)  # type: ignore[arg-type]  # a private chat is a table too
    return await tap_when_shown(h, clock, top, ann, Action.PICK)


async def record_private(h: Harness, clock: Clock) -> float:
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "football", 1)
    await top.start(ann)
    await play_people(h, top, [ann], random.Random(1))
    return await tap_when_shown(h, clock, top, ann, Action.RECORD)


async def record_group(h: Harness, clock: Clock) -> float:
    ann, bob = h.user("Ann"), h.user("Bob")
    top = Tabletop(h, h.group())
    await top.setup_game("football", [ann, bob])
    await top.play_paced([ann, bob], random.Random(2))
    return await tap_when_shown(h, clock, top, bob, Action.RECORD)


async def join_group(h: Harness, clock: Clock) -> float:
    ann, bob = h.user("Ann"), h.user("Bob")
    top = Tabletop(h, h.group())
    await top.open(ann, "durak")
    return await tap_when_shown(h, clock, top, bob, Action.JOIN)


SCENARIOS: dict[str, Scenario] = {
    "pick (private)": pick_private,
    "record (private)": record_private,
    "record (group)": record_group,
    "join (group)": join_group,
}


async def one(scenario: Scenario, latency: float) -> float:
    clock = Clock()
    server = FakeTelegram(clock=clock, limits=FloodLimits(clock=clock))
    redis = fakeredis.FakeAsyncRedis()
    app = await started_bot(
        server,
        redis,
        clock,
        latency=latency,
        rate_limit=True,
        table_edit_interval=3,
        computer_delay=0.05,
    )
    h = Harness(server, [app])
    h.redis = redis
    h.watch = Stopwatch(server, clock)  # type: ignore[attr-defined]
    try:
        return await scenario(h, clock)
    finally:
        await stop_app(app)
        await redis.aclose()


async def run(rounds: int, latency: float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, scenario in SCENARIOS.items():
        times = [await one(scenario, latency) for _ in range(rounds)]
        out[name] = {"p50_ms": statistics.median(times) * 1000, "max_ms": max(times) * 1000}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per Bot API call")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    result = asyncio.run(run(args.rounds, args.latency))
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"tap -> answer, {args.rounds} rounds, {args.latency * 1000:.0f} ms per Bot API call")
    for name, figures in result.items():
        print(f"  {name:18} p50 {figures['p50_ms']:7.0f} ms   max {figures['max_ms']:7.0f} ms")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
