"""Pace of a game played in inline mode (issue 34), beside the same game in a group.

Through the real bot (one process, python-telegram-bot's Application, the in-process
store, its own rate limiter on as deployed) against the fake Bot API with Telegram's
flood limits, inline edits counted against their chat (testing/flood.py ``inline="chat"``:
one a second in a one-to-one chat, 20 a minute in a group), on the bot's test clock:

- ``inline football 2``: football in a one-to-one chat between the players, posted with
  ``@bot``; every move picked from the player's own inline query;
- ``inline durak 3``: durak for three in a group the bot is not in;
- ``group football 2`` and ``group durak 3``: the same games in a group with the bot,
  each move tapped on the player's hand once it shows his buttons.

Each player moves ``--think`` seconds after he could; ``--games`` games are played in a
row (*Play again*). Figures: ``moves`` (moves and set-up steps taken), ``moves/min`` (on
the bot's clock), ``calls/move`` (the bot's Bot API calls, inline answers included, per
move) and ``429`` (Telegram's refusals).

    .venv/bin/python bench/inline_pace.py [--games 3] [--think 1.0] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fakeredis

from bot.core.callbacks import Action
from bot.core.i18n import plain
from testing.chats import FakeMessage
from testing.clock import Clock
from testing.fakegram import FakeTelegram
from testing.flood import FloodLimits
from testing.harness import Chat, Harness, started_bot, stop_app
from testing.tabletop import Tabletop, is_action

HAND = plain("en", "btn.inline_hand")
STEP = 0.25  # seconds the clock moves while nobody may act
Scenario = Callable[[Harness, Clock, argparse.Namespace], Awaitable[int]]


def _label(message: FakeMessage, key: str) -> bool:
    return plain("en", key) in [b.text for b in message.buttons]


async def _inline(h: Harness, clock: Clock, args: argparse.Namespace, game: str, n: int) -> int:
    names = ["Ann", "Bob", "Cid"][:n]
    users = [h.user(name) for name in names]
    chat: Chat = h.dialog(users[0], users[1]) if n == 2 else h.group(bot=False)
    seen = await h.inline(users[0], chat, "")
    table = await h.pick(users[0], seen, lambda r: r["title"] == plain("en", game))
    for user in users[1:]:
        await h.tap(user, table, plain("en", "btn.join"))
    await h.tap(users[0], table, plain("en", "btn.start"))
    rng, moves = random.Random(1), 0
    for played in range(args.games):
        while _label(table, "btn.inline_hand"):
            moved = False
            for user in users:
                if not _label(table, "btn.inline_hand"):
                    break
                seen = await h.switch(user, table, HAND)
                if seen.results[1:]:
                    await clock.advance(args.think)
                    line = await h.pick(user, seen, rng.choice(seen.results[1:])["id"])
                    moved = True
                    moves += "not played" not in (line.text or "")  # not overtaken
            if not moved:
                await clock.advance(STEP)
        if played + 1 < args.games:
            await h.tap(users[0], table, plain("en", "btn.again"))
    return moves


async def _group(h: Harness, clock: Clock, args: argparse.Namespace, game: str, n: int) -> int:
    users = [h.user(name) for name in ["Ann", "Bob", "Cid"][:n]]
    top = Tabletop(h, h.group())
    await top.setup_game(game, users)
    rng, moves = random.Random(1), 0
    for played in range(args.games):
        while not top.finished():
            if any(top.prompt(u) for u in users):
                await clock.advance(args.think)
            else:
                await clock.advance(STEP)
                continue
            if any(top.prompt(u) for u in users):  # still asked once he chose
                _, answer = await top.step(users, rng)
                moves += answer.text is None
        if played + 1 < args.games:
            again = await top.shown(Action.AGAIN)
            await h.tap(users[0], again, is_action(Action.AGAIN))
            while top.finished():  # the next game's message is on its way
                await clock.advance(STEP)
    return moves


SCENARIOS: dict[str, tuple[Callable[..., Awaitable[int]], str, int]] = {
    "inline football 2": (_inline, "game.football", 2),
    "inline durak 3": (_inline, "game.durak", 3),
    "group football 2": (_group, "football", 2),
    "group durak 3": (_group, "durak", 3),
}


async def one(name: str, args: argparse.Namespace) -> dict[str, Any]:
    play, game, n = SCENARIOS[name]
    clock = Clock()
    server = FakeTelegram(clock=clock, limits=FloodLimits(clock=clock, inline="chat"))
    redis = fakeredis.FakeAsyncRedis()
    app = await started_bot(
        server, redis, clock, rate_limit=True, table_edit_interval=3, computer_delay=1.0
    )
    h = Harness(server, [app])
    h.redis = redis
    try:
        started = clock()
        moves = await play(h, clock, args, game, n)
        minutes = (clock() - started) / 60
    finally:
        await stop_app(app)
        await redis.aclose()
    calls = [c for c in server.calls if c.method.lower() != "getupdates"]
    floods = [c for c in calls if c.error and "Too Many Requests" in c.error]
    return {
        "moves": moves,
        "moves_per_min": round(moves / minutes, 1) if minutes else None,
        "calls_per_move": round(len(calls) / moves, 2) if moves else None,
        "429": len(floods),
    }


async def run(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    return {name: await one(name, args) for name in SCENARIOS}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="games in a row at each table")
    parser.add_argument("--think", type=float, default=1.0, help="seconds a player takes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"{args.games} games a table, {args.think:g} s a move, Telegram's flood limits")
    print(f"  {'':18} {'moves':>6} {'moves/min':>10} {'calls/move':>11} {'429':>4}")
    for name, f in result.items():
        row = f"{f['moves']:>6} {f['moves_per_min']!s:>10} {f['calls_per_move']!s:>11}"
        print(f"  {name:18} {row} {f['429']:>4}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
