"""One load level: the fake Bot API, the bots, the groups, the taps, the figures.

The groups open their tables through the real lobby and tap with human pauses; the
figures are bench/load.py's (its docstring defines each).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from bench.load_bots import SECRET, Bots
from bench.load_meter import (
    HANDS,
    TAPPING,
    Meter,
    Table,
    Tap,
    clock,
    ms,
    quantile,
    stamp_of,
    version_of,
)
from bot.core.callbacks import Action, decode
from bot.core.keys import place_key
from testing.chats import Button, FakeMessage, FakeUser
from testing.fakegram import FakeTelegram
from testing.fakeserver import FakeServer, WebhookHarness
from testing.flood import FloodLimits
from testing.tabletop import PLAY_ACTIONS, action_of, is_action

# (game, players) for group i, cycled: football 2, durak 2-6.
MIX = [("football", 2), ("durak", 2), ("durak", 3), ("durak", 4), ("football", 2), ("durak", 5)]
MIX += [("durak", 2), ("durak", 6)]
QUIET = 2.0  # seconds without a chat-directed call before the tables are judged final
SETUP_TIMEOUT = 120.0  # a group whose lobby does not start in this time is left out
MY_CARDS = "tap “My cards” for your hand"  # the table's line for whose hand waits for it
USE_52 = (Action.OPTION, "d")  # the lobby's offer of the 52-card deck (bot.screens.render_lobby)
LOBBY_TRIES = 4  # taps of one lobby button the bot refuses before a group gives up
# Set in the database while a run uses it: a second bench would flush it under the first.
CLAIM = "load-bench:running"  # for a bot process to set its webhook


@dataclass(frozen=True)
class Level:
    groups: int
    think: float
    processes: int


class Run:
    """One level: the fake, the bots, the groups, the figures."""

    def __init__(self, level: Level, args: argparse.Namespace, logs: Path) -> None:
        self.level = level
        self.args = args
        self.telegram = FakeTelegram(history=False, limits=FloodLimits())
        self.server = FakeServer(
            self.telegram,
            delay=(args.delay[0], args.delay[1]),
            rng=random.Random(args.seed),
            record=False,
        )
        self.meter = Meter()
        self.server.listeners.append(self.meter)
        extra = dict(kv.split("=", 1) for kv in args.bot_env)
        self.bots = Bots(logs, args.redis_url, extra)
        self.h: WebhookHarness | None = None
        self.all_taps: list[Tap] = []
        self.lobby_refusals: Counter[str] = Counter()

    # ----- what a player sees

    def prompt(self, table: Table) -> tuple[FakeUser, FakeMessage, list[Button]] | None:
        """A player asked to act now and the buttons he may tap: a message with move (or
        set-up) buttons of the current game, of the latest position offered, not tapped
        yet as it stands (one of several when football's set-up asks both)."""
        asked = []
        latest = table.offered.get(table.game_id, -1)
        for user in table.players:
            for message in self.hands(table, user):
                version = version_of(message)
                if version in table.tapped:
                    continue
                buttons = [b for b in message.buttons if self._current(table, b, latest)]
                if buttons:
                    asked.append((user, message, buttons))
        return table.rng.choice(asked) if asked else None

    def hands(self, table: Table, user: FakeUser) -> list[FakeMessage]:
        """Where he may find his hand: his private chat, his ephemeral messages in the
        table's group."""
        return self.telegram.screen(user.id) + self.telegram.ephemerals(table.chat_id, user.id)

    def _current(self, table: Table, button: Button, latest: int) -> bool:
        if action_of(button) not in PLAY_ACTIONS or is_action(Action.SETUP, "r")(button):
            return False
        cb = decode(button.callback_data)
        if cb.chat_id != table.chat_id or cb.game_id != table.game_id:
            return False
        return cb.action is not Action.MOVE or stamp_of(cb) == latest

    def again(self, table: Table) -> tuple[FakeMessage, Button] | None:
        """The group's Play again button for the game just over, if shown."""
        for message in self.telegram.screen(table.chat_id):
            version = version_of(message)
            for button in message.buttons:
                if (
                    version not in table.tapped
                    and is_action(Action.AGAIN)(button)
                    and decode(button.callback_data).game_id == table.game_id
                ):
                    return message, button
        return None

    def cards(self, table: Table) -> tuple[FakeUser, FakeMessage, Button] | None:
        """A player whom the group's table asks to tap *My cards* (his hand could not be
        shown in the group), and that button, as he would tap it."""
        found = self.group_button(table, Action.CARDS)
        if found is None or version_of(found[0]) in table.tapped:
            return None
        message, button = found
        asked = [line for line in (message.text or "").splitlines() if MY_CARDS in line]
        for user in table.players:
            if any(user.first_name in line.split(":")[0] for line in asked):
                return user, message, button
        return None

    def group_button(
        self, table: Table, action: Action, arg: str | None = None
    ) -> tuple[FakeMessage, Button] | None:
        for message in reversed(self.telegram.screen(table.chat_id)):
            for button in message.buttons:
                if is_action(action, arg)(button):
                    return message, button
        return None

    async def until(self, table: Table, ready: Callable[[], Any], timeout: float) -> Any:
        """Waits (on the table's changes) until ``ready()`` is truthy; its value, or None
        after ``timeout`` seconds."""
        deadline = clock() + timeout
        while True:
            table.changed.clear()
            value = ready()
            if value or clock() >= deadline:
                return value or None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(table.changed.wait(), deadline - clock())

    # ----- what a player does

    async def press(
        self, table: Table, user: FakeUser, message: FakeMessage, button: Button, kind: str
    ) -> Tap:
        assert self.h is not None
        cb = decode(button.callback_data)
        stamp = stamp_of(cb) if cb.action is Action.MOVE else None
        version = version_of(message)
        tap = Tap(table, kind, cb.game_id, stamp, version)
        table.tapped.add(version)
        if kind == "move":
            table.pending.append(tap)
        self.all_taps.append(tap)
        token = TAPPING.set(tap)
        try:
            await self.h.tap(user, message, lambda b: b == button)
        finally:
            TAPPING.reset(token)
        return tap

    async def answer_of(self, tap: Tap, timeout: float) -> None:
        await self.until(tap.table, lambda: tap.answered is not None, timeout)

    async def lobby_tap(
        self, table: Table, user: FakeUser, action: Action, arg: str | None = None
    ) -> bool:
        """Taps a group button once it is shown, again (a few times, a moment later) when
        the bot refuses it, as people do when told to try again. Whether it was accepted;
        a button gone after a refusal means the refused tap took effect after all."""
        for attempt in range(LOBBY_TRIES):
            wait = 30.0 if attempt == 0 else 3.0
            found = await self.until(table, lambda: self.group_button(table, action, arg), wait)
            if found is None:
                if attempt == 0:
                    raise RuntimeError(f"no {action.name} button")
                return True
            message, button = found
            tap = await self.press(table, user, message, button, "lobby")
            await self.answer_of(tap, 30)
            if tap.accepted:
                return True
            self.lobby_refusals[f"{action.name}: {tap.refusal}"] += 1
            if action is Action.START:
                return False  # the caller sees whether the lobby offers the 52 cards
            await asyncio.sleep(1.0 + attempt)
        return False

    async def open(self, table: Table) -> str | None:
        """The real lobby: /newgame, pick, everyone joins, start (the 52-card deck when
        the 36 are too few). None once the first prompt came, else what went wrong."""
        assert self.h is not None
        await asyncio.sleep(table.index * 0.05)  # groups do not all start in one instant
        creator = table.players[0]
        pick = (Action.PICK, table.kind[0])
        try:
            for _ in range(LOBBY_TRIES):  # /newgame again when no picker comes
                await self.h.command(creator, table.group, "/newgame")
                if await self.until(table, lambda: self.group_button(table, *pick), 10):
                    break
            await self.lobby_tap(table, creator, *pick)
            for user in table.players[1:]:
                await self.lobby_tap(table, user, Action.JOIN)
            for _ in range(LOBBY_TRIES):
                if await self.lobby_tap(table, creator, Action.START):
                    break
                if await self.until(table, lambda: self.group_button(table, *USE_52), 15):
                    await self.lobby_tap(table, creator, *USE_52)
                else:
                    await asyncio.sleep(1.0)
            else:
                return f"group {table.index}: Start refused {LOBBY_TRIES} times"
        except RuntimeError as exc:
            return f"group {table.index}: {exc}"
        if await self.until(table, lambda: self.prompt(table), SETUP_TIMEOUT) is None:
            return f"group {table.index}: no prompt after the start"
        return None

    async def play(self, table: Table, stop_at: float, max_taps: int) -> None:
        """Taps until ``stop_at``: whoever is asked, after thinking; Play again at the end."""
        while clock() < stop_at and table.taps < max_taps:
            seen = await self.until(
                table,
                lambda: self.prompt(table) or self.again(table) or self.cards(table),
                stop_at - clock(),
            )
            if seen is None:
                return
            think = table.rng.expovariate(1 / self.level.think)
            if clock() + think >= stop_at:
                return
            await asyncio.sleep(think)
            table.taps += 1
            asked = self.prompt(table)  # what he sees when he taps
            if asked is not None:
                user, message, buttons = asked
                button = table.rng.choice(buttons)
                kind = "move" if action_of(button) is Action.MOVE else "setup"
                await self.press(table, user, message, button, kind)
            elif (again := self.again(table)) is not None:
                await self.press(table, table.rng.choice(table.players), *again, "again")
            elif (cards := self.cards(table)) is not None:
                await self.press(table, *cards, "cards")

    # ----- final state

    def not_final(self, table: Table) -> str | None:
        """Why the table's messages do not all show its last state (None: they do)."""
        holding = [
            (user, message, cb)
            for user in table.players
            for message in self.hands(table, user)
            for b in message.buttons
            if action_of(b) in PLAY_ACTIONS
            and (cb := decode(b.callback_data)).chat_id == table.chat_id
        ]
        where = f"group {table.index} ({table.kind}, {len(table.players)})"
        if table.game_id in table.ended:
            if holding:
                return f"{where}: the game is over, {len(holding)} move buttons remain"
            return None
        latest = table.offered.get(table.game_id, -1)
        stale = [
            cb
            for _, _, cb in holding
            if cb.game_id != table.game_id or (cb.action is Action.MOVE and stamp_of(cb) != latest)
        ]
        if stale:
            return f"{where}: {len(stale)} buttons of an earlier position or game remain"
        if not holding and self.cards(table) is None:  # (a hand waiting for My cards is
            return f"{where}: nobody is asked to act"  # final: the table says so)
        last = table.last_accepted
        moved = last is not None and last.kind == "move" and last.game_id == table.game_id
        if moved and last is not None and latest <= (last.stamp or 0):
            return f"{where}: the prompt after the last move never came"
        # A set-up step changes only its player's hand; a move (its narration at least)
        # or a new game changes the group's table.
        if table.last_shown is not None and table.group_changed < table.last_shown.posted:
            ago = clock() - table.last_shown.posted
            return f"{where}: nothing in the group changed since the last move {ago:.1f} s ago"
        return None

    async def settle(self, tables: list[Table], stop: float) -> tuple[float | None, list[str]]:
        """Seconds from ``stop`` to the last change, once nothing changed for QUIET
        seconds and every table is final; (None, why not) after ``--settle`` seconds."""
        deadline = stop + self.args.settle
        problems: list[str] = []
        while clock() < deadline:
            last = max(self.meter.last_call, stop)
            if clock() - last >= QUIET:
                problems = [p for t in tables if (p := self.not_final(t)) is not None]
                if not problems:
                    return last - stop, []
            await asyncio.sleep(0.1)
        return None, problems

    # ----- the whole run

    async def execute(self) -> dict[str, Any]:
        level, args = self.level, self.args
        redis = aioredis.Redis.from_url(args.redis_url)
        if not await redis.set(CLAIM, os.getpid(), nx=True, ex=3600):
            holder = await redis.get(CLAIM)
            await redis.aclose()
            raise RuntimeError(
                f"another load bench (pid {holder!r}) is using {args.redis_url}, which each "
                f"run flushes (if none runs, delete the key {CLAIM})"
            )
        await redis.flushdb()
        await redis.set(CLAIM, os.getpid(), ex=3600)  # the flush took it away
        api = await self.server.start()
        try:
            await self.bots.start(level.processes, api, self.meter)
            self.h = WebhookHarness(
                self.telegram, self.bots.hooks, SECRET, on_post=self.meter.posted
            )
            return await self._measure()
        finally:
            if self.h is not None:
                await self.h.close()
            await self.bots.stop()
            await self.server.stop()
            await redis.flushdb()
            await redis.aclose()

    async def _tables(self) -> list[Table]:
        """The groups, each with its kind of hands (HANDS): the players who keep theirs in
        the private chat chose it before (``ct:place``); the others never opened one."""
        assert self.h is not None
        tables = []
        redis = aioredis.Redis.from_url(self.args.redis_url)
        try:
            for i in range(self.level.groups):
                kind, n = MIX[i % len(MIX)]
                hands = HANDS[i % len(HANDS)]
                private = hands == "private"
                players = [
                    self.h.user(f"G{i}P{j}", language_code="en", started=private) for j in range(n)
                ]
                for user in players if private else []:
                    await redis.set(place_key(user.id), b"private")
                group = self.h.group(f"Group {i}", creator=players[0])
                group.bot_is_admin = hands == "group"
                rng = random.Random(self.args.seed * 100_000 + i)
                table = Table(i, kind, players, group, rng, hands)
                self.meter.add(table)
                tables.append(table)
        finally:
            await redis.aclose()
        return tables

    async def _measure(self) -> dict[str, Any]:
        level, args = self.level, self.args
        tables = await self._tables()
        opened = await asyncio.gather(*(self.open(t) for t in tables))
        ready = [t for t, failed in zip(tables, opened, strict=True) if failed is None]
        load = os.getloadavg()[0]
        start, bot_cpu, own_cpu = clock(), self.bots.cpu(), time.process_time()
        stop_at = start + args.duration
        max_taps = math.ceil(args.duration / level.think * 5) + 20
        await asyncio.gather(*(self.play(t, stop_at, max_taps) for t in ready))
        stop = clock()
        bot_cpu, own_cpu = self.bots.cpu() - bot_cpu, time.process_time() - own_cpu
        final, problems = await self.settle(ready, stop)
        end = stop + final if final is not None else clock()

        window = [t for t in self.all_taps if t.kind != "lobby" and start <= t.posted <= stop]
        answers = sorted(t.answered - t.posted for t in window if t.answered is not None)
        moves = [t for t in window if t.accepted and t.kind in ("move", "setup")]
        accepted_moves = [t for t in moves if t.kind == "move"]
        prompts = sorted(t.prompt_after for t in accepted_moves if t.prompt_after is not None)
        calls = [(m, s, w, k) for done, m, s, w, k in self.meter.calls if start <= done <= end]
        by_method = Counter(m for m, s, _, _ in calls if s != 429)
        lobby_429 = sum(1 for d, _, s, _, _ in self.meter.calls if s == 429 and d < start)
        return {
            "groups": level.groups,
            "think_s": level.think,
            "processes": level.processes,
            "groups_started": len(ready),
            "groups_not_started": [why for why in opened if why is not None],
            "lobby_refusals": dict(self.lobby_refusals),
            "seconds": round(stop - start, 1),
            "taps": len(window),
            "moves": len(moves),
            "games_again": sum(1 for t in window if t.kind == "again" and t.accepted),
            "my_cards": sum(1 for t in window if t.kind == "cards"),
            "answer_p50_ms": ms(quantile(answers, 50)),
            "answer_p99_ms": ms(quantile(answers, 99)),
            "unanswered": len(window) - len(answers),
            "prompt_p50_ms": ms(quantile(prompts, 50)),
            "prompt_p99_ms": ms(quantile(prompts, 99)),
            "prompt_missing": sum(
                1 for t in accepted_moves if t.prompt_after is None and not t.ended
            ),
            "refused_taps": dict(Counter(t.refusal for t in window if t.accepted is False)),
            "calls_per_move": round(by_method.total() / len(moves), 2) if moves else None,
            "calls_per_move_by_method": {
                m: round(n / len(moves), 2) for m, n in by_method.most_common()
            }
            if moves
            else {},
            "429": sum(1 for _, s, _, _ in calls if s == 429),
            "429_by": dict(Counter(f"{m} {w}" for m, s, w, _ in calls if s == 429)),
            "429_lobby": lobby_429,
            "final_s": None if final is None else round(final, 1),
            "not_final": problems,
            "bot_cpu_pct": round(bot_cpu / (stop - start) * 100, 1),
            "bench_cpu_pct": round(own_cpu / (stop - start) * 100, 1),
            "load_average": round(load, 2),
            "bot_log": self.bots.log_counts(),
            "by_hands": {hands: by_hands(window, calls, hands) for hands in HANDS},
        }


def by_hands(
    window: list[Tap], calls: list[tuple[str, int, str, str]], hands: str
) -> dict[str, Any]:
    """The run's main figures for the groups of one kind of hands (HANDS)."""
    taps = [t for t in window if t.table.hands == hands]
    answers = sorted(t.answered - t.posted for t in taps if t.answered is not None)
    moves = [t for t in taps if t.accepted and t.kind in ("move", "setup")]
    prompts = sorted(t.prompt_after for t in moves if t.kind == "move" and t.prompt_after)
    made = sum(1 for _, s, _, k in calls if k == hands and s != 429)
    return {
        "moves": len(moves),
        "answer_p99_ms": ms(quantile(answers, 99)),
        "prompt_p99_ms": ms(quantile(prompts, 99)),
        "calls_per_move": round(made / len(moves), 2) if moves else None,
    }
