"""Load: many groups playing at once against real ``python -m bot`` processes over HTTP,
with Telegram's limits enforced, as a deployment meets them (issue 9).

bench/bot.py measures the handler stack in-process against a Bot API that answers at
once; it cannot show what players wait for when the bot is popular: the network, the rate
limiter, Telegram refusing calls, several processes. Here everything is real but
Telegram, and only on 127.0.0.1:

- a fake Bot API: testing/fakeserver.py serving testing/fakegram.py's ``FakeTelegram``. Each
  call is applied after a uniform ``--delay`` (30–80 ms), and refused with a 429 and
  ``retry_after`` where Telegram's flood control would refuse it (``FloodLimits``: token
  buckets of 30/s burst 30 for the whole bot, 1/s burst 3 per chat, 20/min burst 3 per
  group, on chat-directed calls only: send*, edit*, delete*... naming a ``chat_id``;
  answerCallbackQuery, getMe, getChatMember, setWebhook are never limited);
- one or two bot processes, ``python -m bot`` with the production defaults (rate
  limiter on, TABLE_EDIT_INTERVAL 3 s, ...; nothing of the environment that names a bot
  setting is passed on but what ``--bot-env`` adds) in webhook mode, Redis ``--redis-url``
  (database 10: FLUSHED before and after every run). The bot's webhook server is made to
  listen on 127.0.0.1 instead of every interface (the only change to its start-up);
- updates POSTed to the webhooks round-robin, with the secret header, as Telegram does.

A run: N groups (football 2 players; durak 2–6, in a fixed mix) open their tables
through the real lobby (/newgame, pick, join, start; the 52-card deck for 5–6). Where the
hands are goes round the groups too (``HANDS``): ``private``, every player's hand in his
private chat (he chose it: ``ct:place`` is set before the run); ``group``, hands in the
group as ephemeral messages (docs/ephemeral.md), the bot an administrator there;
``group-tap``, hands in the group, the bot not an administrator (a hand is sent only in
answer to its player's tap, and edited afterwards). Players of the two group kinds never
opened a private chat. Then for ``--duration`` seconds, in each group, whoever is asked
to act looks at his newest prompt (the message with move buttons of the table's current
game and latest position, in his private chat or his ephemeral messages in the group)
and, an exponential think time later (mean ``--think``), taps one of its buttons at
random; a finished game gets *Play again*, and a player whom the table asks to tap *My
cards* (his hand could not be shown in the group) taps it. Then tapping stops, and the
run waits until every message is final.

Figures per run (times are the fake server's clock; "posted" is when the bench sent the
update to the webhook):

- ``answer``: p50/p99 of tap posted → answerCallbackQuery for it applied by the fake;
  every tap of the tapping window (moves, set-up steps, Play again). ``unanswered``:
  taps never answered.
- ``prompt``: p50/p99 of a move tap posted → the first send or edit applied in a
  player's private chat, or to one player in the group (an ephemeral message), that shows
  move buttons of a later position of the same game (buttons carry the position's move
  count): the next player's prompt. Taps the bot
  refused and moves that ended the game are left out; ``missing`` counts accepted moves
  that got neither a next prompt nor the end of the game.
- ``calls/move``: chat-directed calls the fake received from the start of tapping until
  the run was final, by method, per move (an accepted tap on a move or a football set-up
  button in the window); calls refused with 429 are not in it (they are the next
  figure), calls refused otherwise are. Play again's new messages count too, as they are
  part of playing on.
- ``429``: flood-control refusals in that time, by method and chat kind (``429 lobby``:
  during the set-up). ``lobby refused``: answers to lobby taps that refused them, which
  the bench taps again a few times, as people do; a group whose lobby never starts is
  left out of the run (``not started``).
- ``final``: seconds from the end of tapping to the last chat-directed call, once there
  has been none for 2 s and every table is final. Either its game is over (the group
  shows Play again for it) and no private message still carries its move buttons; or
  some player holds move buttons, every move button left in the players' chats is of
  the current game and of the latest position offered (none of an earlier position or
  game), that position is later than the last accepted move's, and a message in the
  group was sent or edited after the last accepted move or Play again (each move
  changes the table's text, its narration at least). ``None`` when that is not so
  within ``--settle`` seconds (the tables that are not, and why, are printed).
- ``by hands``: answer p99, prompt p99 and calls/move of each kind of group (``HANDS``);
  an ephemeral call counts as a call to the group.
- ``bot CPU``: user+system CPU of the bot processes during the tapping window, percent of
  one core (summed); ``bench CPU``: this process (fake Telegram and players) likewise;
  ``load``: the machine's 1-minute load average when tapping started.

Usage (the Redis at 127.0.0.1:6379 must answer)::

    .venv/bin/python bench/load.py          # groups 10 25 50 100 x think 3 0.5 x processes 1 2
    .venv/bin/python bench/load.py --quick  # 10 groups, think 3 s, one process, 10 s
    .venv/bin/python bench/load.py --groups 10 50 --think 3 --processes 1 2 --duration 30
    .venv/bin/python bench/load.py --bot-env RATE_LIMIT=false --json

Each run starts fresh bot processes, a fresh fake and an empty database. Ctrl-C stops the
run and its processes. ``--logs DIR`` keeps the bots' logs (their warnings, errors and
tracebacks are counted in the figures either way).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import random
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis.asyncio as aioredis  # noqa: E402

from bot.core.callbacks import STAMP_LEN, Action, BadCallback, Callback, decode  # noqa: E402
from bot.core.config import Settings  # noqa: E402
from bot.core.store import place_key  # noqa: E402
from testing.fakegram import BOT_TOKEN, Button, FakeGroup, FakeMessage, FakeTelegram, FakeUser  # noqa: E402
from testing.fakeserver import FakeServer, Served, WebhookHarness  # noqa: E402
from testing.flood import FloodLimits, chat_directed  # noqa: E402
from testing.tabletop import PLAY_ACTIONS, action_of, is_action  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/10"
SECRET = "load-bench-secret"
# (game, players) for group i, cycled: football 2, durak 2-6.
MIX = [("football", 2), ("durak", 2), ("durak", 3), ("durak", 4), ("football", 2), ("durak", 5)]
MIX += [("durak", 2), ("durak", 6)]
QUIET = 2.0  # seconds without a chat-directed call before the tables are judged final
SETUP_TIMEOUT = 120.0  # a group whose lobby does not start in this time is left out
# Where each group's hands are, by group, cycled (see the docstring).
HANDS = ["private", "group", "group-tap"]
EPHEMERAL_KEYS = ("ephemeral_message_parameters", "receiver_user_id")  # a call to one player
MY_CARDS = "tap “My cards” for your hand"  # the table's line for whose hand waits for it
USE_52 = (Action.OPTION, "d")  # the lobby's offer of the 52-card deck (bot.screens.render_lobby)
LOBBY_TRIES = 4  # taps of one lobby button the bot refuses before a group gives up
READY_TIMEOUT = 60.0
# Set in the database while a run uses it: a second bench would flush it under the first.
CLAIM = "load-bench:running"  # for a bot process to set its webhook
# The bot's start-up, but its webhook server listens on 127.0.0.1 only (bot/__main__.py
# listens on every interface, as a deployment behind a load balancer must).
LAUNCH = """
import sys
import bot.__main__ as entry
import bot.webapp.server as web
web.HOST = "127.0.0.1"
sys.exit(entry.main())
"""
TARGETS = {
    "answer_p99_ms": "< 250 at every level",
    "429": "== 0",
    "prompt_p99_ms": "< 2000 at 50 groups x 3 s",
    "calls_per_move": "<= 2.5 at 50 groups",
    "final_s": "<= 10",
}


def clock() -> float:
    return time.monotonic()


def quantile(values: list[float], q: int) -> float | None:
    """The q-th percentile (inclusive method), None without two values."""
    if len(values) < 2:
        return values[0] if values else None
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


# --------------------------------------------------------------------------- the tables


@dataclass(eq=False)
class Tap:
    """One tap as the bench made it, and what came of it."""

    table: Table
    kind: str  # move, setup, again, lobby, cards (My cards, where the table asks for it)
    game_id: str
    stamp: int | None  # a move button's position (moves made before it)
    version: tuple[int, int, int, int]  # what was tapped (see version_of)
    posted: float = 0.0
    answered: float | None = None
    accepted: bool | None = None
    refusal: str | None = None  # the answer's text when the bot refused the tap
    prompt_after: float | None = None  # seconds to the next player's prompt
    ended: bool = False  # the move ended the game: no next prompt to wait for


def version_of(message: FakeMessage) -> tuple[int, int, int, int]:
    """(chat, receiver of an ephemeral message or 0, message, edits): a message as it
    stood when it was tapped."""
    return (message.chat_id, message.receiver_id or 0, message.message_id, message.edits)


# The tap being posted: set around Harness.tap, read by Meter.posted in the same task.
TAPPING: ContextVar[Tap | None] = ContextVar("load_tapping", default=None)


@dataclass(eq=False)
class Table:
    """One group's table as the bench follows it (from the calls the fake receives)."""

    index: int
    kind: str
    players: list[FakeUser]
    group: FakeGroup
    rng: random.Random
    hands: str = "private"  # one of HANDS
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    game_id: str = ""
    games_seen: set[str] = field(default_factory=set)
    offered: dict[str, int] = field(default_factory=dict)  # game -> latest position offered
    ended: set[str] = field(default_factory=set)  # games whose end the group was shown
    pending: list[Tap] = field(default_factory=list)  # move taps awaiting the next prompt
    tapped: set[tuple[int, int, int, int]] = field(default_factory=set)
    last_accepted: Tap | None = None  # the latest accepted tap
    last_shown: Tap | None = None  # the latest accepted move or Play again: the group shows it
    group_changed: float = 0.0  # when a message in the group was last sent or edited
    taps: int = 0

    @property
    def chat_id(self) -> int:
        return self.group.id


def _callbacks(params: dict[str, Any]) -> Iterator[Callback]:
    """The decodable callback data of the buttons a send or edit carries."""
    markup = params.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    for row in markup.get("inline_keyboard", []):
        for button in row:
            with contextlib.suppress(BadCallback):
                yield decode(button.get("callback_data"))


def _stamp(cb: Callback) -> int:
    return int(cb.arg[:STAMP_LEN], 36)


class Meter:
    """Listens to every call the fake applies: answers to taps, prompts, calls by method,
    the webhooks set; wakes the table a call concerns."""

    def __init__(self) -> None:
        self.tables: dict[int, Table] = {}  # by chat: the group and each player
        self.taps: dict[str, Tap] = {}  # by callback query id
        # chat-directed: (done, method, status, "group", "ephemeral" or "private", the
        # calling table's HANDS or "")
        self.calls: list[tuple[float, str, int, str, str]] = []
        self.last_call = 0.0
        self.webhooks: set[str] = set()

    def add(self, table: Table) -> None:
        self.tables[table.chat_id] = table
        for user in table.players:
            self.tables[user.id] = table

    def posted(self, update: dict[str, Any]) -> None:
        tap = TAPPING.get()
        if tap is not None and "callback_query" in update:
            tap.posted = clock()
            self.taps[update["callback_query"]["id"]] = tap

    def __call__(self, served: Served) -> None:
        if served.method == "setWebhook" and served.ok:
            self.webhooks.add(str(served.params.get("url")))
        if served.method == "answerCallbackQuery":
            self._answered(served)
        if not chat_directed(served.method, served.params):
            return
        where = "group" if str(served.params["chat_id"]).startswith("-") else "private"
        to_one = any(
            k in served.params for k in ("ephemeral_message_parameters", "receiver_user_id")
        )
        if to_one:
            where = "ephemeral"
        try:
            chat = int(served.params["chat_id"])
        except (TypeError, ValueError):
            chat = 0
        table = self.tables.get(chat)
        hands = table.hands if table is not None else ""
        self.calls.append((served.done, served.method, served.status, where, hands))
        if table is None:
            return
        self.last_call = served.done
        table.changed.set()
        if not served.ok or not served.method.startswith(("send", "edit")):
            return
        if chat == table.chat_id and not to_one:
            table.group_changed = served.done
        self._shown(table, chat == table.chat_id and not to_one, served)

    def _answered(self, served: Served) -> None:
        tap = self.taps.get(str(served.params.get("callback_query_id")))
        if tap is None or not served.ok or tap.answered is not None:
            return
        table = tap.table
        table.changed.set()
        tap.answered = served.done
        tap.accepted = "text" not in served.params  # a refusal always says why
        tap.refusal = served.params.get("text")
        if not tap.accepted:
            table.tapped.discard(tap.version)  # he may tap it again
            if tap in table.pending:
                table.pending.remove(tap)
            return
        if table.last_accepted is None or tap.posted > table.last_accepted.posted:
            table.last_accepted = tap
        if tap.kind in ("move", "again") and (
            table.last_shown is None or tap.posted > table.last_shown.posted
        ):
            table.last_shown = tap

    def _shown(self, table: Table, public: bool, served: Served) -> None:
        """A message now shows these buttons: a new game, a new position, an end
        (``public``: the group's own message; else a player's hand)."""
        positions: dict[str, int] = {}
        for cb in _callbacks(served.params):
            if cb.chat_id != table.chat_id:
                continue
            if cb.game_id not in table.games_seen:
                table.games_seen.add(cb.game_id)
                table.game_id = cb.game_id
            if cb.action is Action.MOVE:
                positions[cb.game_id] = max(positions.get(cb.game_id, -1), _stamp(cb))
            if cb.action is Action.AGAIN and public:
                table.ended.add(cb.game_id)
        for game, position in positions.items():
            table.offered[game] = max(table.offered.get(game, -1), position)
        for tap in list(table.pending):
            reached = positions.get(tap.game_id, -1) > (tap.stamp or 0)
            if (reached and not public) or tap.game_id in table.ended:
                tap.prompt_after = served.done - tap.posted if reached else None
                tap.ended = not reached
                table.pending.remove(tap)


# ---------------------------------------------------------------------- the bot processes


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

    def __init__(self, logs: Path, redis_url: str, extra_env: dict[str, str]) -> None:
        self.logs = logs
        self.redis_url = redis_url
        self.extra_env = extra_env
        self.procs: list[asyncio.subprocess.Process] = []
        self.hooks: list[str] = []
        self._files: list[IO[bytes]] = []

    def _env(self, api: str, hook: str, port: int) -> dict[str, str]:
        settings = {name.upper() for name in Settings.model_fields}
        env = {k: v for k, v in os.environ.items() if k.upper() not in settings}
        env.update(
            PYTHONPATH=str(ROOT),
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
        while not set(self.hooks) <= meter.webhooks:
            dead = [p for p in self.procs if p.returncode is not None]
            if dead or clock() > deadline:
                raise RuntimeError(f"a bot did not start; see {self.logs}")
            await asyncio.sleep(0.1)

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


# ------------------------------------------------------------------------------- a run


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
        return cb.action is not Action.MOVE or _stamp(cb) == latest

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
        stamp = _stamp(cb) if cb.action is Action.MOVE else None
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
            if cb.game_id != table.game_id or (cb.action is Action.MOVE and _stamp(cb) != latest)
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
        the private chat chose it before (``ct:place``)."""
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


# ------------------------------------------------------------------------------ output


def verdicts(result: dict[str, Any]) -> list[str]:
    """The issue's targets that apply to this level, each met or MISSED."""
    out = []

    def check(name: str, ok: bool) -> None:
        out.append(f"{name} {'ok' if ok else 'MISSED'}")

    p99 = result["answer_p99_ms"]
    check("answer p99<250ms", p99 is not None and p99 < 250)
    check("no 429", result["429"] == 0)
    if result["groups"] == 50 and result["think_s"] == 3.0:
        prompt = result["prompt_p99_ms"]
        check("prompt p99<2s", prompt is not None and prompt < 2000)
    if result["groups"] == 50:
        calls = result["calls_per_move"]
        check("calls/move<=2.5", calls is not None and calls <= 2.5)
    check("final<=10s", result["final_s"] is not None and result["final_s"] <= 10)
    return out


COLUMNS = [
    ("groups", "groups"),
    ("think_s", "think"),
    ("processes", "procs"),
    ("moves", "moves"),
    ("answer_p50_ms", "ans p50"),
    ("answer_p99_ms", "ans p99"),
    ("prompt_p50_ms", "prm p50"),
    ("prompt_p99_ms", "prm p99"),
    ("prompt_missing", "prm miss"),
    ("calls_per_move", "calls/mv"),
    ("429", "429"),
    ("final_s", "final s"),
    ("bot_cpu_pct", "bot CPU%"),
    ("load_average", "load"),
]


HAND_COLUMNS = [
    ("groups", "groups"),
    ("think_s", "think"),
    ("processes", "procs"),
    ("hands", "hands"),
    ("moves", "moves"),
    ("answer_p99_ms", "ans p99"),
    ("prompt_p99_ms", "prm p99"),
    ("calls_per_move", "calls/mv"),
]


def table_text(results: list[dict[str, Any]]) -> str:
    """The runs' figures, then each run's by kind of hands."""
    kinds = [{**r, **f, "hands": hands} for r in results for hands, f in r["by_hands"].items()]
    return _table(COLUMNS, results) + "\n\n" + _table(HAND_COLUMNS, kinds)


def _table(columns: list[tuple[str, str]], results: list[dict[str, Any]]) -> str:
    rows = [[label for _, label in columns]]
    rows += [["-" if r[k] is None else str(r[k]) for k, _ in columns] for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines = [" | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def report(result: dict[str, Any]) -> str:
    methods = ", ".join(f"{m} {n}" for m, n in result["calls_per_move_by_method"].items())
    lines = [
        f"== {result['groups']} groups, think {result['think_s']} s, "
        f"{result['processes']} process(es): {result['groups_started']} started, "
        f"{result['taps']} taps, {result['moves']} moves in {result['seconds']} s, "
        f"{result['games_again']} games again, {result['my_cards']} taps on My cards",
        f"   answer p50/p99 {result['answer_p50_ms']}/{result['answer_p99_ms']} ms "
        f"({result['unanswered']} unanswered; refused: {result['refused_taps']})",
        f"   next prompt p50/p99 {result['prompt_p50_ms']}/{result['prompt_p99_ms']} ms "
        f"({result['prompt_missing']} missing)",
        f"   calls/move {result['calls_per_move']}: {methods}",
        f"   429s {result['429']} {result['429_by']} (lobby {result['429_lobby']}); final after "
        f"{result['final_s']} s; bot CPU {result['bot_cpu_pct']} %, bench CPU "
        f"{result['bench_cpu_pct']} %, load {result['load_average']}; bot log {result['bot_log']}",
        "   targets: " + "; ".join(verdicts(result)),
    ]
    for hands, figures in result["by_hands"].items():
        lines.append(
            f"   hands {hands}: {figures['moves']} moves, answer p99 "
            f"{figures['answer_p99_ms']} ms, prompt p99 {figures['prompt_p99_ms']} ms, "
            f"calls/move {figures['calls_per_move']}"
        )
    if result["groups_not_started"] or result["lobby_refusals"]:
        lines.append(f"   lobby refused {result['lobby_refusals']}")
    lines += [f"   not started: {p}" for p in result["groups_not_started"][:10]]
    lines += [f"   not final: {p}" for p in result["not_final"][:10]]
    return "\n".join(lines)


async def run_all(levels: list[Level], args: argparse.Namespace) -> list[dict[str, Any]]:
    task = asyncio.current_task()
    assert task is not None
    # SIGTERM stops the bots too, as Ctrl-C does (the finally clauses run).
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    results = []
    with tempfile.TemporaryDirectory(prefix="load-bench-") as scratch:
        logs_root = Path(args.logs) if args.logs else Path(scratch)
        for n, level in enumerate(levels):
            logs = logs_root / f"run{n}-{level.groups}g-{level.think}s-{level.processes}p"
            logs.mkdir(parents=True, exist_ok=True)
            result = await Run(level, args, logs).execute()
            results.append(result)
            print(json.dumps(result) if args.json else report(result), flush=True)
    return results


def parse(argv: list[str] | None = None) -> tuple[list[Level], argparse.Namespace]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 25, 50, 100])
    parser.add_argument("--think", type=float, nargs="+", default=[3.0, 0.5], help="mean s")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of tapping")
    parser.add_argument(
        "--quick", action="store_true", help="10 groups, think 3 s, one process, 10 s"
    )
    parser.add_argument("--delay", type=float, nargs=2, default=[0.03, 0.08], help="low high s")
    parser.add_argument("--settle", type=float, default=30.0, help="max s to wait for final")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--redis-url", default=REDIS_URL, help="FLUSHED before and after")
    parser.add_argument("--bot-env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--logs", help="keep the bots' logs in this directory")
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args(argv)
    if args.quick:
        args.groups, args.think, args.processes, args.duration = [10], [3.0], [1], 10.0
    levels = [
        Level(g, t, p) for p, t, g in itertools.product(args.processes, args.think, args.groups)
    ]
    return levels, args


def main() -> None:
    levels, args = parse()
    try:
        results = asyncio.run(run_all(levels, args))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted; the bot processes were stopped", file=sys.stderr)
        sys.exit(130)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    if not args.json:
        print("\n" + table_text(results))
        print("targets: " + "; ".join(f"{k} {v}" for k, v in TARGETS.items()))


if __name__ == "__main__":
    main()
