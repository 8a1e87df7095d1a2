"""A tap's walk through the code: the functions, files and calls one move tap passes through.

Issue 32 asks that the path of a tap read as a straight line. This follows one move tap
from ``bot.handlers.play.on_move`` until it returns (its answer sent; the delivery it sets
off runs in a task of its own, counted apart), through the real bot on fakeredis against
the fake Bot API, and counts in the project's own code (``bot/`` and ``engine/``):

- ``stays``: the distinct functions entered;
- ``files``: the distinct files those functions are in;
- ``calls``: every entry, repeated calls included;

each for ``bot/`` alone and for ``bot/`` with ``engine/``; and, "with delivery", every
task's from the tap until the delivery it set off has brought every message up to date.
The figures depend on the code only (the deal is seeded, the moves before the tap too),
not on the machine.

    .venv/bin/python bench/walk.py [--json] [--list]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fakeredis

from bot.core.models import Table
from bot.tables import games
from engine.base import Game
from testing.clock import Clock
from testing.fakegram import FakeTelegram
from testing.harness import Harness, settle, started_bot, stop_app
from testing.tabletop import PLAY_ACTIONS, Tabletop, action_of

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("bot", "engine")
SEED = 32  # the deal's, so that every run walks the same position


@contextmanager
def seeded_deals() -> Iterator[None]:
    """Deal every game from ``SEED``, as the tests do (``games.start(table, rng)``): the bot
    deals from the system's randomness, and a different hand is a different walk."""
    real = games.start

    def start(table: Table, rng: random.Random | None = None) -> Game:
        return real(table, rng or random.Random(SEED))

    games.start = start
    try:
        yield
    finally:
        games.start = real


class Walk:
    """Profiles one task from its entry into ``on_move`` until that returns."""

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.depth = 0
        self.calls: list[tuple[str, str, int]] = []
        self.everything: list[tuple[str, str, int]] = []  # any task's, delivery included
        self.answered = False  # the tap is answered: only the delivery is left

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        code = frame.f_code
        try:
            path = Path(code.co_filename).resolve().relative_to(ROOT)
        except ValueError:
            return
        if path.parts[0] not in PARTS:
            return
        if event == "call":
            self.everything.append((str(path), code.co_qualname, code.co_firstlineno))
        if self.task is None:
            if (
                event == "call"
                and code.co_name == "on_move"
                and path.parts[:2] == ("bot", "handlers")
            ):
                self.task = asyncio.current_task()
            else:
                return
        if self.answered or asyncio.current_task() is not self.task:
            return
        if event == "call":
            self.calls.append((str(path), code.co_qualname, code.co_firstlineno))

    def figures(self, parts: tuple[str, ...], *, delivery: bool = False) -> dict[str, int]:
        calls = self.everything if delivery else self.calls
        mine = [c for c in calls if Path(c[0]).parts[0] in parts]
        return {
            "stays": len(set(mine)),
            "files": len({c[0] for c in mine}),
            "calls": len(mine),
        }


async def measure() -> Walk:
    clock = Clock()
    server = FakeTelegram(clock=clock)
    redis = fakeredis.FakeAsyncRedis()
    app = await started_bot(server, redis, clock)
    h = Harness(server, [app])
    h.redis = redis
    try:
        ann, bob = h.user("Ann"), h.user("Bob")
        top = Tabletop(h, h.group())
        await top.setup_game("durak", [ann, bob])
        rng = random.Random(7)
        for _ in range(3):  # a few moves in, past the game's first position
            await top.caught_up([ann, bob])
            await top.step([ann, bob], rng)
        await top.caught_up([ann, bob])
        user = next(u for u in (ann, bob) if top.prompt(u) is not None)
        message = top.prompt(user)
        assert message is not None
        button = next(b for b in message.buttons if action_of(b) in PLAY_ACTIONS)
        walk = Walk()
        sys.setprofile(walk)
        try:
            answer = await h.tap(user, message, lambda b: b == button)
            walk.answered = True
            await settle(app)  # the delivery it set off, until every message shows the move
        finally:
            sys.setprofile(None)
        assert answer.text is None, answer.text
        return walk
    finally:
        await stop_app(app)
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--list", action="store_true", help="print every function entered")
    args = parser.parse_args()
    random.seed(SEED)  # the store's back-off jitter, and whatever else draws from it
    with seeded_deals():
        walk = asyncio.run(measure())
    result = {
        "bot": walk.figures(("bot",)),
        "bot+engine": walk.figures(PARTS),
        "with delivery": walk.figures(PARTS, delivery=True),
    }
    if args.json:
        print(json.dumps(result))
        return
    print("one move tap, from on_move until its answer (delivery apart)")
    for name, f in result.items():
        print(f"  {name:13} {f['stays']:4} functions in {f['files']:3} files, {f['calls']:5} calls")
    if args.list:  # each function entered, with how often: the tap's, then the rest's
        _print_stays("the tap", walk.calls)
        _print_stays("with delivery, the rest", [c for c in walk.everything if c not in walk.calls])


def _print_stays(title: str, calls: list[tuple[str, str, int]]) -> None:
    """Each function of ``calls`` once, in the order first entered, with its count."""
    seen: dict[tuple[str, str, int], int] = {}
    for c in calls:
        seen[c] = seen.get(c, 0) + 1
    print(title)
    for (path, name, line), n in seen.items():
        print(f"{n:4}  {path}:{line} {name}")


if __name__ == "__main__":
    main()
