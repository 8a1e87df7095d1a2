"""What the load bench sees of each table: its taps, and what came of each of them.

Read from the calls the fake Bot API applies (:class:`Meter` listens to every one), so
that a figure is what a player would have seen, whichever bot process made the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import statistics
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from bot.core.callbacks import STAMP_LEN, Action, BadCallback, Callback, decode
from testing.chats import FakeGroup, FakeMessage, FakeUser
from testing.fakeserver import Served
from testing.flood import chat_directed


def clock() -> float:
    return time.monotonic()


def quantile(values: list[float], q: int) -> float | None:
    """The q-th percentile (inclusive method), None without two values."""
    if len(values) < 2:
        return values[0] if values else None
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


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


# Where each group's hands are, by group, cycled (bench/load.py's docstring): in the
# players' private chats; in the group, the bot an administrator; in the group, not one.
HANDS = ["private", "group", "group-tap"]
EPHEMERAL_KEYS = ("ephemeral_message_parameters", "receiver_user_id")  # a call to one player


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
    # When Telegram said 429 to a call of the table, to which method and kind of chat.
    floods: list[tuple[float, str, str]] = field(default_factory=list)

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


def stamp_of(cb: Callback) -> int:
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
        to_one = any(k in served.params for k in EPHEMERAL_KEYS)
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
        if served.status == 429:
            table.floods.append((served.done, served.method, where))
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
                positions[cb.game_id] = max(positions.get(cb.game_id, -1), stamp_of(cb))
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
