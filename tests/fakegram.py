"""A fake Telegram Bot API at the HTTP boundary, and a driver that plays users against it.

Why at the HTTP boundary: the bot under test is the real python-telegram-bot Application,
so every ``Bot`` method, its serialisation and PTB's mapping of HTTP errors to exceptions
run for real; only Telegram's servers are replaced. :class:`FakeTelegram` is the server
(chats, messages, users, errors as Telegram words them), :class:`FakeRequest` is the
``BaseRequest`` that PTB sends its calls through, and :class:`Harness` plays the users:
it builds updates exactly as Telegram sends them and feeds them to ``process_update``.

The fake is strict where Telegram is strict, because those are the bugs that only show in
production: an edit that changes nothing (400 "message is not modified", counted in
:attr:`FakeTelegram.not_modified`), callback data over 64 bytes, a callback query answered
twice or never, a message to a user who never opened the bot, HTML that does not parse.
A method the fake does not know is answered with Telegram's 404 and recorded in
:attr:`FakeTelegram.unknown_calls`, so that a test notices. Method names are taken in any
case, as Telegram takes them, and recorded as Telegram documents them (``sendMessage``).

Simulated methods: getMe, sendMessage, editMessageText, editMessageReplyMarkup,
editMessageCaption, deleteMessage(s), sendDocument, answerCallbackQuery, getChat,
getChatMember, getChatAdministrators, pin/unpinChatMessage, sendChatAction,
set/get/deleteMyCommands, setMyDescription, setMyShortDescription, setChatMenuButton,
getUpdates (always empty),
set/deleteWebhook. Errors, worded as Telegram words them: 400 chat not found, message to
edit / delete / be replied not found, message is not modified, message can't be edited,
BUTTON_DATA_INVALID, message is too long, can't parse entities (HTML), query is too old;
403 bot can't initiate conversation with a user, bot was blocked by the user, bot was
kicked from the group; 429 flood control (:meth:`FakeTelegram.flood`, a per-group rate
with ``group_rate_per_minute``, or Telegram's limits on every chat by
:class:`FloodLimits`); a proxy's HTML 502 page (:meth:`FakeTelegram.bad_gateway`);
anything else by :meth:`FakeTelegram.inject`. A :class:`FakeRequest` can also be slowed
(``latency``) or frozen (``hold``); the same server over real HTTP, for a bot in another
process, is tests/fakeserver.py. Group membership: every known user is in every group
except its ``outsiders``; :meth:`Harness.remove_bot` sends the bot's ``my_chat_member``.

:meth:`Harness.problems` lists what a real Telegram would have complained about (edits
that changed nothing, refused calls, unanswered callback queries, unknown methods),
errors the bot logged and catalogue keys shown raw; the ``harness`` fixtures of
tests/conftest.py fail a test that leaves any.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import math
import random
import re
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from telegram import Bot, Update
from telegram.ext import Application
from telegram.request import BaseRequest, RequestData

BOT_ID = 7_000_000_001
BOT_USERNAME = "cardtable_test_bot"
BOT_TOKEN = f"{BOT_ID}:AAFakeTokenForTestsOnly_0123456789abc"

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
BLOCKED = "Forbidden: bot was blocked by the user"
EDIT_NOT_FOUND = "Bad Request: message to edit not found"
DELETE_NOT_FOUND = "Bad Request: message to delete not found"
QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
# What the caller is doing (e.g. "move"): stamped on every Bot API call made meanwhile, so
# that a benchmark can count calls per kind of update even with many updates in flight.
TAG: ContextVar[str | None] = ContextVar("fakegram_tag", default=None)
# When the update the caller is about to deliver reached the bot (``time.perf_counter``),
# if earlier than its delivery: a benchmark pacing taps sets it, so that the time an update
# spent waiting for a busy event loop counts in its handling time.
ARRIVED: ContextVar[float | None] = ContextVar("fakegram_arrived", default=None)
# A line that is nothing but a dotted lowercase key, after any bullet or emoji.
_CATALOGUE_KEY = re.compile(r"^[^\w]*([a-z0-9_]+(?:\.[a-z0-9_]+)+)\s*$")
START_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")
COMMAND = re.compile(r"[a-z0-9_]{1,32}")


class ApiError(Exception):
    """A Bot API error reply: HTTP status, Telegram's description, optional parameters."""

    def __init__(
        self,
        code: int,
        description: str,
        parameters: dict[str, Any] | None = None,
        *,
        body: bytes | None = None,
    ):
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters
        self.raw = body  # sent instead of Telegram's JSON (a proxy's error page)

    def body(self) -> dict[str, Any]:
        """The error as Telegram answers it (the HTTP status is :attr:`code`)."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.parameters:
            body["parameters"] = self.parameters
        return body

    def payload(self) -> bytes:
        """What goes over the wire: Telegram's JSON, or the page a proxy put instead."""
        return self.raw if self.raw is not None else json.dumps(self.body()).encode()


def _bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


# ------------------------------------------------------------------------------ the world


@dataclass
class FakeUser:
    """A Telegram user. ``started``: has opened the private chat with the bot."""

    id: int
    first_name: str
    language_code: str | None = "en"
    username: str | None = None
    last_name: str | None = None
    started: bool = True
    blocked: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        for key in ("last_name", "username", "language_code"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data

    def chat_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": "private", "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        return data


@dataclass
class FakeGroup:
    """A group or supergroup; forum supergroups have topics (``message_thread_id``)."""

    id: int
    title: str
    type: str = "supergroup"
    is_forum: bool = False
    creator: int | None = None
    admins: set[int] = field(default_factory=set)
    topics: dict[int, str] = field(default_factory=dict)
    bot_is_admin: bool = False
    kicked: bool = False  # the bot was removed from the group
    # Known users who are not in the group (getChatMember says "left"); every other
    # known user is a member.
    outsiders: set[int] = field(default_factory=set)
    migrated_to: int | None = None  # upgraded to this supergroup: the old id is refused

    def chat_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type, "title": self.title}
        if self.is_forum:
            data["is_forum"] = True
        return data


@dataclass(frozen=True)
class Button:
    """One inline-keyboard button as a user sees it."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    row: int = 0
    col: int = 0
    web_app: str | None = None  # the Mini App's page


@dataclass
class FakeMessage:
    """A message as it currently stands on Telegram's side (mutated by edits)."""

    chat_id: int
    message_id: int
    date: int
    sender: dict[str, Any]
    chat: dict[str, Any]
    text: str | None = None
    entities: list[dict[str, Any]] = field(default_factory=list)
    reply_markup: dict[str, Any] | None = None
    thread_id: int | None = None
    document: dict[str, Any] | None = None
    document_bytes: bytes | None = None
    caption: str | None = None
    caption_entities: list[dict[str, Any]] = field(default_factory=list)
    edit_date: int | None = None
    edits: int = 0
    deleted: bool = False

    @property
    def from_bot(self) -> bool:
        return self.sender.get("id") == BOT_ID

    @property
    def rows(self) -> list[list[Button]]:
        keyboard = (self.reply_markup or {}).get("inline_keyboard", [])
        return [
            [
                Button(
                    b["text"],
                    b.get("callback_data"),
                    b.get("url"),
                    r,
                    c,
                    (b.get("web_app") or {}).get("url"),
                )
                for c, b in enumerate(row)
            ]
            for r, row in enumerate(keyboard)
        ]

    @property
    def buttons(self) -> list[Button]:
        return [b for row in self.rows for b in row]

    @property
    def shown(self) -> str:
        """Everything a reader sees of it: text or caption and the button labels."""
        labels = " ".join(b.text for b in self.buttons)
        return f"{self.text or self.caption or ''}\n{labels}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "from": self.sender,
            "chat": self.chat,
            "date": self.date,
        }
        if self.thread_id is not None:
            data["message_thread_id"] = self.thread_id
            data["is_topic_message"] = True
        if self.edit_date is not None:
            data["edit_date"] = self.edit_date
        if self.text is not None:
            data["text"] = self.text
            if self.entities:
                data["entities"] = self.entities
        if self.document is not None:
            data["document"] = self.document
        if self.caption is not None:
            data["caption"] = self.caption
            if self.caption_entities:
                data["caption_entities"] = self.caption_entities
        if self.reply_markup is not None:
            data["reply_markup"] = self.reply_markup
        return data


@dataclass
class Call:
    """One Bot API call as the fake received it, and how it ended."""

    method: str
    params: dict[str, Any]
    error: str | None = None
    tag: str | None = None

    @property
    def chat_id(self) -> Any:
        return self.params.get("chat_id")


@dataclass
class Answer:
    """The bot's answer to one callback query."""

    user_id: int
    data: str | None
    answered: bool = False
    text: str | None = None
    show_alert: bool = False


@dataclass
class Fault:
    """An error injected into the next matching calls (flood control, outages...)."""

    method: str | None
    error: ApiError
    times: int = 1
    when: Callable[[dict[str, Any]], bool] | None = None


# ------------------------------------------------------------------------- HTML parsing

_SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


def _utf16_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


_HTML_PIECE = re.compile(r"<[^>]*>?|&[^;&<]*;?|[^<&]+")


def parse_html(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Telegram's HTML parse mode: the plain text and its entities, or Telegram's error.

    Offsets count UTF-16 code units, as Telegram's do.
    """
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    stack: list[tuple[str, int, dict[str, Any]]] = []
    length = 0
    for match in _HTML_PIECE.finditer(source):
        piece = match.group(0)
        if piece[0] == "&":
            name = piece[1:-1] if piece.endswith(";") else ""
            if name in _NAMED_ENTITIES:
                piece = _NAMED_ENTITIES[name]
            elif re.fullmatch(r"#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}", name):
                piece = chr(int(name[2:], 16) if name[1] == "x" else int(name[1:]))
            # else: Telegram keeps an unknown '&...' as text
        elif piece[0] == "<":
            offset = len(source[: match.start()].encode())
            if not piece.endswith(">"):
                raise _bad(f"can't parse entities: Unclosed start tag at byte offset {offset}")
            _close_or_open(piece[1:-1].strip(), offset, length, stack, entities)
            continue
        out.append(piece)
        length += _utf16_len(piece)
    if stack:
        raise _bad(
            f"can't parse entities: Can't find end tag corresponding to start tag "
            f'"{stack[-1][0]}"'
        )
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _close_or_open(
    tag: str,
    offset: int,
    length: int,
    stack: list[tuple[str, int, dict[str, Any]]],
    entities: list[dict[str, Any]],
) -> None:
    if tag.startswith("/"):
        name = tag[1:].strip().lower()
        if not stack or stack[-1][0] != name:
            raise _bad(
                f"can't parse entities: Unmatched end tag at byte offset {offset}, "
                f'expected "</{stack[-1][0] if stack else ""}>", found "</{name}>"'
            )
        _, start, opened = stack.pop()
        if length > start:
            entities.append({**opened, "offset": start, "length": length - start})
        return
    name, _, attrs = tag.partition(" ")
    name = name.lower()
    if name in _SIMPLE_TAGS:
        entity: dict[str, Any] = {"type": _SIMPLE_TAGS[name]}
    elif name == "span" and 'class="tg-spoiler"' in attrs:
        entity = {"type": "spoiler"}
    elif name == "a":
        href = re.search(r'href="([^"]*)"', attrs)
        if href is None:
            raise _bad(f"can't parse entities: Can't find href in <a> at byte {offset}")
        entity = {"type": "text_link", "url": href.group(1)}
    else:
        raise _bad(f'can\'t parse entities: Unsupported start tag "{name}" at byte offset {offset}')
    stack.append((name, length, entity))


def _strip(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Telegram trims leading and trailing whitespace of a message text."""
    stripped = text.lstrip()
    cut = _utf16_len(text) - _utf16_len(stripped)
    stripped = stripped.rstrip()
    total = _utf16_len(stripped)
    kept = []
    for e in entities:
        start = max(e["offset"] - cut, 0)
        end = min(e["offset"] + e["length"] - cut, total)
        if end > start:
            kept.append({**e, "offset": start, "length": end - start})
    return stripped, kept


def _command_entities(text: str) -> list[dict[str, Any]]:
    match = re.match(r"/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?", text)
    if not match:
        return []
    return [{"type": "bot_command", "offset": 0, "length": _utf16_len(match.group(0))}]


# Every Bot API method PTB knows, by its name in lower case: PTB's ``Bot`` has each under
# its documented camelCase name as well as in snake_case.
_DOCUMENTED = {
    name.lower(): name for name in dir(Bot) if name[:1].islower() and name != name.lower()
}


def documented(method: str) -> str:
    """``method`` as the Bot API documents it (``sendmessage`` → ``sendMessage``)."""
    return _DOCUMENTED.get(method.lower(), method)


def method_of(url: str) -> str:
    """The documented name of the method that ``url`` calls."""
    return documented(url.rstrip("/").rsplit("/", 1)[-1])


# ------------------------------------------------------------------- Telegram's limits

# Methods that put something into a chat (or change or remove it) when they name one with
# ``chat_id``: what Telegram's flood control counts. Answering a callback query, reading a
# chat or a member, and setting up the bot (commands, webhook) are not limited.
_CHAT_DIRECTED = ("send", "edit", "delete", "copy", "forward", "pin", "unpin")


def chat_directed(method: str, params: dict[str, Any]) -> bool:
    """Whether a call counts against Telegram's message limits (see :class:`FloodLimits`)."""
    return method.startswith(_CHAT_DIRECTED) and "chat_id" in params


@dataclass
class Bucket:
    """A token bucket: ``burst`` calls at once, refilled at ``rate`` calls a second."""

    rate: float
    burst: float
    tokens: float
    stamp: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self) -> float:
        """Seconds until one call fits (0 when one fits now); call :meth:`refill` first."""
        short = 1 - self.tokens
        return 0.0 if short <= 1e-9 else short / self.rate  # float sums of refills


class FloodLimits:
    """Telegram's flood control as a set of token buckets, so that a bot that outruns it
    gets real 429 answers with ``retry_after`` (Telegram publishes no exact algorithm;
    this is the documented order of magnitude, strict enough to show a bot that ignores
    it). A chat-directed call (:func:`chat_directed`) must find a token in every bucket
    that applies, and takes one from each only when all have one:

    - the whole bot: ``bot_rate`` a second (30), burst ``bot_burst`` (30);
    - each chat, private or group: ``chat_rate`` a second (1), burst ``chat_burst`` (3);
    - each group chat (a negative chat id) besides: ``group_per_minute`` a minute (20),
      burst ``group_burst`` (3).

    A refused call takes nothing; its ``retry_after`` is the wait until every bucket has a
    token, rounded up to whole seconds (at least 1), as Telegram's answers count in whole
    seconds. ``clock``: monotonic seconds, injectable so that tests need no sleeps.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        bot_rate: float = 30.0,
        bot_burst: float = 30.0,
        chat_rate: float = 1.0,
        chat_burst: float = 3.0,
        group_per_minute: float = 20.0,
        group_burst: float = 3.0,
    ) -> None:
        self.clock = clock
        self._shapes = {
            "bot": (bot_rate, bot_burst),
            "chat": (chat_rate, chat_burst),
            "group": (group_per_minute / 60, group_burst),
        }
        self._buckets: dict[tuple[str, Any], Bucket] = {}
        self.refused = 0

    def _bucket(self, kind: str, key: Any, now: float) -> Bucket:
        bucket = self._buckets.get((kind, key))
        if bucket is None:
            rate, burst = self._shapes[kind]
            bucket = self._buckets[kind, key] = Bucket(rate, burst, burst, now)
        bucket.refill(now)
        return bucket

    def admit(self, method: str, params: dict[str, Any]) -> None:
        """Takes the call's tokens, or raises Telegram's 429 with ``retry_after``."""
        if not chat_directed(method, params):
            return
        now = self.clock()
        chat = str(params["chat_id"])
        buckets = [self._bucket("bot", None, now), self._bucket("chat", chat, now)]
        if chat.startswith("-"):
            buckets.append(self._bucket("group", chat, now))
        wait = max(b.wait() for b in buckets)
        if wait > 0:
            self.refused += 1
            retry = max(1, math.ceil(wait))
            raise ApiError(429, f"Too Many Requests: retry after {retry}", {"retry_after": retry})
        for bucket in buckets:
            bucket.tokens -= 1


# ---------------------------------------------------------------------------- the server


class FakeTelegram:
    """The Bot API server: users, chats, messages, callback queries and every call made."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        history: bool = True,
        limits: FloodLimits | None = None,
    ) -> None:
        self.clock = clock
        # Telegram's flood control on every chat-directed call (off unless given).
        self.limits = limits
        # False (the benchmark): forget what tests inspect afterwards (every call, deleted
        # messages, answered queries, delivered updates), so that the memory of the fake
        # does not grow with the run and its garbage collections are not timed as the bot's.
        self.history = history
        self.users: dict[int, FakeUser] = {}
        self.groups: dict[int, FakeGroup] = {}
        self.messages: dict[int, dict[int, FakeMessage]] = {}
        self.calls: list[Call] = []
        # Calls counted by (TAG, method, error), kept with or without ``history``.
        self.tally: collections.Counter[tuple[str | None, str, str | None]] = collections.Counter()
        self.unchanged: list[str] = []  # the edits that changed nothing: which message
        # Seconds spent simulating Telegram, per TAG: the benchmark subtracts it.
        self.busy: dict[str | None, float] = {}
        self.unknown_calls: list[Call] = []
        self.queries: dict[str, Answer] = {}
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.faults: list[Fault] = []
        self.update_ids: set[int] = set()  # every update delivered (the bot keeps them)
        self.group_rate_per_minute: int | None = None
        self._sent_at: dict[int, list[float]] = {}
        self._next_message_id: dict[int, itertools.count[int]] = {}
        self._next_file = itertools.count(1)
        self.bot_json = {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "Card Table",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    # ----- world building

    @property
    def not_modified(self) -> int:
        """How many edits changed nothing (Telegram refused each: "message is not
        modified")."""
        return len(self.unchanged)

    def add_user(self, user: FakeUser) -> FakeUser:
        self.users[user.id] = user
        return user

    def add_group(self, group: FakeGroup) -> FakeGroup:
        self.groups[group.id] = group
        return group

    def chat_json(self, chat_id: int) -> dict[str, Any]:
        if chat_id in self.users:
            return self.users[chat_id].chat_json()
        return self.groups[chat_id].chat_json()

    def new_message(self, chat_id: int, sender: dict[str, Any], **fields: Any) -> FakeMessage:
        counter = self._next_message_id.setdefault(chat_id, itertools.count(1))
        message = FakeMessage(
            chat_id=chat_id,
            message_id=next(counter),
            date=int(self.clock()),
            sender=sender,
            chat=self.chat_json(chat_id),
            **fields,
        )
        self.messages.setdefault(chat_id, {})[message.message_id] = message
        return message

    def age(self, chat_id: int, next_message_id: int) -> None:
        """Makes a chat look long-lived: its next message gets this id."""
        self._next_message_id[chat_id] = itertools.count(next_message_id)

    def inject(
        self,
        method: str | None,
        code: int,
        description: str,
        *,
        times: int = 1,
        retry_after: int | None = None,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """Make the next ``times`` matching calls fail (``method`` None: any method)."""
        parameters = None if retry_after is None else {"retry_after": retry_after}
        self.faults.append(Fault(method, ApiError(code, description, parameters), times, when))

    def bad_gateway(self, method: str | None = None, *, times: int = 1) -> None:
        """A proxy in front of the Bot API answers the next ``times`` matching calls
        with its own HTML 502 page, not Telegram's JSON."""
        page = b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        page += b"<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
        self.faults.append(Fault(method, ApiError(502, "Bad Gateway", body=page), times))

    def flood(
        self,
        method: str | None = None,
        *,
        retry_after: int = 1,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """Telegram's flood control (429) on the next ``times`` matching calls."""
        self.inject(
            method,
            429,
            f"Too Many Requests: retry after {retry_after}",
            times=times,
            retry_after=retry_after,
            when=when,
        )

    # ----- reading what users see

    def screen(self, chat_id: int, thread_id: int | None = None) -> list[FakeMessage]:
        """The live messages of a chat (or of one forum topic), oldest first."""
        return [
            m
            for m in self.messages.get(chat_id, {}).values()
            if not m.deleted and (thread_id is None or m.thread_id == thread_id)
        ]

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and c.error is None]

    @property
    def unanswered(self) -> list[Answer]:
        return [a for a in self.queries.values() if not a.answered]

    # ----- the API

    def handle(self, method: str, params: dict[str, Any], files: dict[str, Any]) -> Any:
        """One call: the result object, or raises :class:`ApiError`."""
        started = time.perf_counter()
        try:
            return self._handle(documented(method), params, files)
        finally:
            self.busy[TAG.get()] = self.busy.get(TAG.get(), 0.0) + time.perf_counter() - started

    def _handle(self, method: str, params: dict[str, Any], files: dict[str, Any]) -> Any:
        call = Call(method, params, tag=TAG.get())
        if self.history:
            self.calls.append(call)
        handler = getattr(self, f"_api_{method.lower()}", None)
        try:
            if handler is None:
                self.unknown_calls.append(call)
                raise ApiError(404, "Not Found")
            self._maybe_fault(method, params)
            return handler(params, files)
        except ApiError as error:
            call.error = error.description
            if error.description == NOT_MODIFIED:
                chat, message = params.get("chat_id"), params.get("message_id")
                self.unchanged.append(f"{method} of message {message} in chat {chat}")
            raise
        finally:
            self.tally[call.tag, method, call.error] += 1

    def _maybe_fault(self, method: str, params: dict[str, Any]) -> None:
        for fault in self.faults:
            if fault.times <= 0 or fault.method not in (None, method):
                continue
            if fault.when is not None and not fault.when(params):
                continue
            fault.times -= 1
            raise fault.error
        self.faults = [f for f in self.faults if f.times > 0]
        if self.limits is not None:
            self.limits.admit(method, params)
        chat_id = params.get("chat_id")
        if (
            self.group_rate_per_minute is not None
            and isinstance(chat_id, int)
            and chat_id in self.groups
            and method.startswith(("send", "edit"))
        ):
            now = self.clock()
            recent = [t for t in self._sent_at.get(chat_id, []) if now - t < 60]
            if len(recent) >= self.group_rate_per_minute:
                retry = max(1, int(60 - (now - recent[0])) + 1)
                raise ApiError(
                    429, f"Too Many Requests: retry after {retry}", {"retry_after": retry}
                )
            self._sent_at[chat_id] = [*recent, now]

    def _chat(self, params: dict[str, Any], *, writing: bool = True) -> int:
        raw = params.get("chat_id")
        if isinstance(raw, str) and re.fullmatch(r"-?\d+", raw):
            raw = int(raw)
        if not isinstance(raw, int):
            raise _bad("chat not found")
        if raw in self.users:
            user = self.users[raw]
            if writing and user.blocked:
                raise ApiError(403, BLOCKED)
            if writing and not user.started:
                raise ApiError(403, CANT_INITIATE)
            return raw
        if raw in self.groups:
            group = self.groups[raw]
            if group.kicked:
                raise ApiError(403, f"Forbidden: bot was kicked from the {group.type} chat")
            if group.migrated_to is not None:
                raise ApiError(
                    400,
                    "Bad Request: group chat was upgraded to a supergroup chat",
                    {"migrate_to_chat_id": group.migrated_to},
                )
            return raw
        raise _bad("chat not found")

    def _text(
        self, params: dict[str, Any], key: str = "text", limit: int = 4096
    ) -> tuple[str, list[dict[str, Any]]]:
        raw = params.get(key)
        if raw is None or raw == "":
            raise _bad(f"message {key} is empty")
        if not isinstance(raw, str):
            raw = str(raw)
        mode = params.get("parse_mode")
        if mode is None:
            entity_key = "entities" if key == "text" else "caption_entities"
            text, entities = raw, list(params.get(entity_key) or [])
        elif str(mode).upper() == "HTML":
            if params.get("entities"):
                raise _bad("can't use parse_mode together with entities")
            text, entities = parse_html(raw)
        else:
            raise ApiError(501, f"fakegram: parse_mode {mode!r} is not simulated")
        text, entities = _strip(text, entities)
        if not text:
            raise _bad(f"message {key} is empty")
        if _utf16_len(text) > limit:
            raise _bad("message is too long" if key == "text" else "message caption is too long")
        return text, entities

    def _markup(self, params: dict[str, Any]) -> dict[str, Any] | None:
        markup = params.get("reply_markup")
        if markup is None:
            return None
        if isinstance(markup, str):
            markup = json.loads(markup)
        if "inline_keyboard" not in markup:
            return None  # reply keyboards are not part of a message's own content
        rows = []
        for row in markup["inline_keyboard"]:
            out_row = []
            for button in row:
                if not button.get("text"):
                    raise _bad("text buttons are unallowed in the inline keyboard")
                kinds = [k for k in button if k != "text"]
                if len(kinds) != 1:
                    raise _bad("can't parse inline keyboard button: exactly one field expected")
                data = button.get("callback_data")
                if data is not None and not (1 <= len(data.encode()) <= 64):
                    raise _bad("BUTTON_DATA_INVALID")
                url = button.get("url")
                if url is not None and not re.match(r"(https?|tg)://", url):
                    raise _bad(f"inline keyboard button URL '{url}' is invalid: Wrong HTTP URL")
                out_row.append(dict(button))
            rows.append(out_row)
        if sum(len(r) for r in rows) > 100:
            raise _bad("reply markup is too long")
        return {"inline_keyboard": rows}

    def _thread(self, chat_id: int, params: dict[str, Any]) -> int | None:
        thread = params.get("message_thread_id")
        group = self.groups.get(chat_id)
        if thread is None or group is None or not group.is_forum:
            return None
        if int(thread) not in group.topics:
            raise _bad("message thread not found")
        return int(thread)

    def _existing(self, params: dict[str, Any], missing: str) -> FakeMessage:
        if "inline_message_id" in params:
            raise ApiError(501, "fakegram: inline messages are not simulated")
        chat_id = self._chat(params)
        message = self.messages.get(chat_id, {}).get(int(params.get("message_id", 0)))
        if message is None or message.deleted:
            raise _bad(missing)
        return message

    # Methods: named _api_<lowercased Bot API method>.

    def _api_getme(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return self.bot_json

    def _api_setmycommands(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        commands = params.get("commands") or []
        if isinstance(commands, str):
            commands = json.loads(commands)
        if len(commands) > 100:
            raise _bad("too many commands")
        for command in commands:
            if not COMMAND.fullmatch(command.get("command", "")):
                raise _bad("BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise _bad("command description is empty or too long")
        scope = json.dumps(params.get("scope", {"type": "default"}), sort_keys=True)
        self.commands[(scope, str(params.get("language_code", "")))] = commands
        return True

    def _api_deletemycommands(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        scope = json.dumps(params.get("scope", {"type": "default"}), sort_keys=True)
        self.commands.pop((scope, str(params.get("language_code", ""))), None)
        return True

    def _api_getmycommands(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        scope = json.dumps(params.get("scope", {"type": "default"}), sort_keys=True)
        return self.commands.get((scope, str(params.get("language_code", ""))), [])

    def _api_setmydescription(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return True

    def _api_setmyshortdescription(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return True

    def _api_setchatmenubutton(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return True

    def _api_setwebhook(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return True

    def _api_deletewebhook(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return True

    def _api_getupdates(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return []  # a poller's: the tests hand their updates to the bot another way

    def _api_sendchataction(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._chat(params)
        return True

    def _reply_ok(self, chat_id: int, params: dict[str, Any]) -> None:
        reply = params.get("reply_parameters")
        if isinstance(reply, str):
            reply = json.loads(reply)
        if not reply or reply.get("chat_id") not in (None, chat_id):
            return
        target = self.messages.get(chat_id, {}).get(int(reply.get("message_id", 0)))
        if (target is None or target.deleted) and not reply.get("allow_sending_without_reply"):
            raise _bad("message to be replied not found")

    def _api_sendmessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params)
        self._reply_ok(chat_id, params)
        text, entities = self._text(params)
        message = self.new_message(
            chat_id,
            self.bot_json_short(),
            text=text,
            entities=entities,
            reply_markup=self._markup(params),
            thread_id=self._thread(chat_id, params),
        )
        return message.to_json()

    def bot_json_short(self) -> dict[str, Any]:
        return {k: self.bot_json[k] for k in ("id", "is_bot", "first_name", "username")}

    def _api_editmessagetext(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._existing(params, "message to edit not found")
        if not message.from_bot:
            raise _bad("message can't be edited")
        if message.text is None:
            raise _bad("there is no text in the message to edit")
        text, entities = self._text(params)
        markup = self._markup(params)
        if (text, entities, markup) == (message.text, message.entities, message.reply_markup):
            raise _bad(NOT_MODIFIED.removeprefix("Bad Request: "))
        message.text, message.entities, message.reply_markup = text, entities, markup
        return self._edited(message)

    def _api_editmessagereplymarkup(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._existing(params, "message to edit not found")
        if not message.from_bot:
            raise _bad("message can't be edited")
        markup = self._markup(params)
        if markup == message.reply_markup:
            raise _bad(NOT_MODIFIED.removeprefix("Bad Request: "))
        message.reply_markup = markup
        return self._edited(message)

    def _api_editmessagecaption(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._existing(params, "message to edit not found")
        if message.document is None:
            raise _bad("there is no caption in the message to edit")
        caption, entities = (
            self._text(params, "caption", 1024) if params.get("caption") else (None, [])
        )
        markup = self._markup(params)
        if (caption, entities, markup) == (
            message.caption,
            message.caption_entities,
            message.reply_markup,
        ):
            raise _bad(NOT_MODIFIED.removeprefix("Bad Request: "))
        message.caption, message.caption_entities, message.reply_markup = (
            caption,
            entities,
            markup,
        )
        return self._edited(message)

    def _edited(self, message: FakeMessage) -> dict[str, Any]:
        message.edits += 1
        message.edit_date = int(self.clock())
        return message.to_json()

    def _api_deletemessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        message = self.messages.get(chat_id, {}).get(int(params.get("message_id", 0)))
        if message is None or message.deleted:
            raise _bad("message to delete not found")
        if (
            not message.from_bot
            and chat_id in self.groups
            and not self.groups[chat_id].bot_is_admin
        ):
            raise _bad("message can't be deleted")
        self._delete(message)
        return True

    def _api_deletemessages(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        for message_id in params.get("message_ids", []):
            message = self.messages.get(chat_id, {}).get(int(message_id))
            if message is not None and (message.from_bot or chat_id in self.users):
                self._delete(message)
        return True

    def _delete(self, message: FakeMessage) -> None:
        message.deleted = True
        if not self.history:
            del self.messages[message.chat_id][message.message_id]

    def _api_senddocument(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params)
        if "document" not in files:
            raise _bad("there is no document in the request")
        filename, content, mime = files["document"]
        if hasattr(content, "read"):
            content = content.read()
        if not content:
            raise _bad("file must be non-empty")
        caption, entities = (
            self._text(params, "caption", 1024) if params.get("caption") else (None, [])
        )
        number = next(self._next_file)
        message = self.new_message(
            chat_id,
            self.bot_json_short(),
            document={
                "file_id": f"BQACAgIAAxkBAAI{number:08d}",
                "file_unique_id": f"AgAD{number:06d}",
                "file_name": filename,
                "mime_type": mime,
                "file_size": len(content),
            },
            document_bytes=bytes(content),
            caption=caption,
            caption_entities=entities,
            reply_markup=self._markup(params),
            thread_id=self._thread(chat_id, params),
        )
        return message.to_json()

    def _api_answercallbackquery(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        query = self.queries.get(str(params.get("callback_query_id")))
        if query is None or query.answered:
            raise _bad(QUERY_INVALID.removeprefix("Bad Request: "))
        text = params.get("text")
        if text is not None and len(text) > 200:
            raise _bad("MESSAGE_TOO_LONG")
        query.answered = True
        if not self.history:
            del self.queries[str(params.get("callback_query_id"))]
        query.text = text
        query.show_alert = bool(params.get("show_alert"))
        return True

    def _member(self, group: FakeGroup, user_id: int) -> dict[str, Any]:
        user = (
            self.users[user_id].to_json()
            if user_id in self.users
            else {
                "id": user_id,
                "is_bot": user_id == BOT_ID,
                "first_name": "Someone",
            }
        )
        if user_id == BOT_ID:
            user = self.bot_json_short()
        if user_id == group.creator:
            return {"status": "creator", "user": user, "is_anonymous": False}
        if user_id in group.admins or (user_id == BOT_ID and group.bot_is_admin):
            rights = dict.fromkeys(
                [
                    "can_be_edited",
                    "is_anonymous",
                    "can_manage_chat",
                    "can_delete_messages",
                    "can_manage_video_chats",
                    "can_restrict_members",
                    "can_promote_members",
                    "can_change_info",
                    "can_invite_users",
                    "can_post_stories",
                    "can_edit_stories",
                    "can_delete_stories",
                    "can_pin_messages",
                    "can_manage_topics",
                ],
                False,
            )
            rights.update(can_manage_chat=True, can_delete_messages=True, can_pin_messages=True)
            return {"status": "administrator", "user": user, **rights}
        if (user_id in self.users and user_id not in group.outsiders) or user_id == BOT_ID:
            return {"status": "member", "user": user}
        return {"status": "left", "user": user}

    def _api_getchatmember(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        user_id = int(params["user_id"])
        if chat_id in self.users:
            if user_id not in (chat_id, BOT_ID):
                raise _bad("user not found")
            return {"status": "member", "user": self.users[chat_id].to_json()}
        return self._member(self.groups[chat_id], user_id)

    def _api_getchatadministrators(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        if chat_id in self.users:
            raise _bad("there are no administrators in the private chat")
        group = self.groups[chat_id]
        ids = ([group.creator] if group.creator else []) + sorted(group.admins)
        if group.bot_is_admin:
            ids.append(BOT_ID)
        return [self._member(group, i) for i in ids]

    def _api_getchat(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        return {
            **self.chat_json(chat_id),
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": False,
                "limited_gifts": False,
                "unique_gifts": False,
                "premium_subscription": False,
                "gifts_from_channels": False,
            },
        }

    def _api_pinchatmessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        if chat_id in self.groups and not self.groups[chat_id].bot_is_admin:
            raise _bad("not enough rights to manage pinned messages in the chat")
        self._existing(params, "message to pin not found")
        return True

    def _api_unpinchatmessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return self._api_pinchatmessage(params, files) if "message_id" in params else True


class FakeRequest(BaseRequest):
    """PTB's HTTP layer, answered by a :class:`FakeTelegram` instead of the network.

    Several requests (several Applications) may share one server, as two bot processes
    share Telegram.
    """

    def __init__(self, server: FakeTelegram, *, latency: float = 0.0) -> None:
        self.server = server
        self.latency = latency
        # While this is an unset event, calls wait for it: a process frozen mid-call (or
        # killed: the test never sets it before it is done with the process).
        self.hold: asyncio.Event | None = None

    @property
    def read_timeout(self) -> float | None:
        return 5.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        api_method = method_of(url)
        params = dict(request_data.parameters) if request_data else {}
        files: dict[str, Any] = {}
        if request_data is not None and request_data.contains_files:
            files = dict(request_data.multipart_data)
        # What goes over the wire is JSON: round-trip so that nothing Python-only slips by.
        params = json.loads(json.dumps(params))
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.hold is not None:
            await self.hold.wait()
        try:
            result = self.server.handle(api_method, params, files)
        except ApiError as error:
            return error.code, error.payload()
        return 200, json.dumps({"ok": True, "result": result}).encode()


# ---------------------------------------------------------------------------- the driver

Pick = str | Callable[[Button], bool] | int


class Harness:
    """Plays users and groups against one or more Applications sharing a FakeTelegram."""

    def __init__(
        self, server: FakeTelegram, apps: Iterable[Application[Any, Any, Any, Any, Any, Any]] = ()
    ):
        self.server = server
        self.apps = list(apps)
        # Random bases: runs that share a Redis (two helpers, xdist) never share a chat,
        # nor an update id (the bot remembers those it handled).
        base = random.randrange(10**8)
        self._update_ids = itertools.count(100_000 + base * 10**5)
        self._query_ids = itertools.count(1)
        self._user_ids = itertools.count(10**9 + base * 10)
        self._group_ids = itertools.count(base * 10 + 1)
        self.log_errors: list[logging.LogRecord] = []
        self.redis: Any = None  # the store the apps share, for tests that read the state
        self.delivered: list[dict[str, Any]] = []  # every update, as sent
        # When set, every update is handed to all of these at once, as several webhook
        # workers may each be handed the same update.
        self.fanout: list[Application[Any, Any, Any, Any, Any, Any]] = []
        # (kind of update, seconds from its arrival to the end of its handling), for the
        # benchmark: parsing the JSON and ``process_update``
        self.durations: list[tuple[str, float]] = []

    @property
    def app(self) -> Application[Any, Any, Any, Any, Any, Any]:
        return self.apps[0]

    # ----- the world

    def user(
        self,
        first_name: str,
        *,
        language_code: str | None = "en",
        started: bool = True,
        username: str | None = None,
        user_id: int | None = None,
    ) -> FakeUser:
        return self.server.add_user(
            FakeUser(
                id=user_id or next(self._user_ids),
                first_name=first_name,
                language_code=language_code,
                username=username,
                started=started,
            )
        )

    def group(
        self,
        title: str = "Card night",
        *,
        creator: FakeUser | None = None,
        admins: Iterable[FakeUser] = (),
        forum: bool = False,
        kind: str = "supergroup",
    ) -> FakeGroup:
        number = next(self._group_ids)
        chat_id = -1_001_000_000_000 - number if kind == "supergroup" else -100_000 - number
        return self.server.add_group(
            FakeGroup(
                id=chat_id,
                title=title,
                type=kind,
                is_forum=forum,
                creator=creator.id if creator else None,
                admins={a.id for a in admins},
            )
        )

    async def upgrade(self, group: FakeGroup, *, notices: bool = True) -> FakeGroup:
        """A basic group becomes a supergroup (an admin turned on something only those
        have): a new chat id, and the old one refused with ``migrate_to_chat_id`` from
        now on. ``notices``: Telegram's two service messages, in the old chat and then in
        the new one (a bot that missed them learns of it from the refusal)."""
        assert group.type == "group" and group.creator is not None
        new = self.server.add_group(
            FakeGroup(
                id=-1_001_000_000_000 - next(self._group_ids),
                title=group.title,
                creator=group.creator,
                admins=set(group.admins),
                bot_is_admin=group.bot_is_admin,
            )
        )
        group.migrated_to = new.id
        if notices:
            await self.upgrade_notice(group, new, "to")
            await self.upgrade_notice(group, new, "from")
        return new

    async def upgrade_notice(self, old: FakeGroup, new: FakeGroup, which: str) -> None:
        """One of Telegram's two service messages of an upgrade: ``migrate_to_chat_id``
        in the old chat (``which`` "to"), ``migrate_from_chat_id`` in the new one."""
        assert old.creator is not None
        chat, other = (old, new) if which == "to" else (new, old)
        message = self.server.new_message(
            chat.id, self.server.users[old.creator].to_json(), text=None
        )
        message.deleted = True  # a service message, not something to tap
        data = {**message.to_json(), f"migrate_{which}_chat_id": other.id}
        await self.feed({"message": data})

    async def remove_bot(self, group: FakeGroup, by: FakeUser, *, status: str = "kicked") -> None:
        """``by`` removes the bot from ``group`` (``status`` "kicked", or "left"): the
        group refuses the bot from now on, and the bot gets its ``my_chat_member``."""
        group.kicked = True
        change: dict[str, Any] = {
            "chat": group.chat_json(),
            "from": by.to_json(),
            "date": int(self.server.clock()),
            "old_chat_member": {"status": "member", "user": self.server.bot_json_short()},
            "new_chat_member": {"status": status, "user": self.server.bot_json_short()},
        }
        if status == "kicked":
            change["new_chat_member"]["until_date"] = 0
        await self.feed({"my_chat_member": change})

    def topic(self, group: FakeGroup, name: str) -> int:
        """Creates a forum topic; its id is the id of its service message, as on Telegram."""
        assert group.is_forum, "topics exist only in forum supergroups"
        message = self.server.new_message(group.id, self.server.bot_json_short(), text=None)
        message.deleted = True  # the service message is not something the bot posted
        group.topics[message.message_id] = name
        return message.message_id

    # ----- users acting

    async def send_text(
        self,
        user: FakeUser,
        chat: FakeGroup | FakeUser,
        text: str,
        *,
        thread: int | None = None,
        reply_to: FakeMessage | None = None,
        app: Application[Any, Any, Any, Any, Any, Any] | None = None,
    ) -> FakeMessage:
        """A text message from ``user`` (commands get their bot_command entity).

        ``reply_to``: sent as a reply. In a supergroup that is not a forum Telegram then
        sets ``message_thread_id`` (the reply thread) *without* ``is_topic_message``."""
        if isinstance(chat, FakeUser):
            assert chat.id == user.id, "a user writes only in his own private chat with the bot"
            user.started = True  # writing to the bot opens the private chat
            user.blocked = False
        if thread is not None:
            assert isinstance(chat, FakeGroup) and thread in chat.topics
        message = self.server.new_message(
            chat.id,
            user.to_json(),
            text=text,
            entities=_command_entities(text),
            thread_id=thread,
        )
        data = message.to_json()
        if reply_to is not None:
            data["reply_to_message"] = reply_to.to_json()
            if isinstance(chat, FakeGroup) and chat.type == "supergroup" and not chat.is_forum:
                data["message_thread_id"] = reply_to.message_id
        elif thread is not None:  # in a topic, what replies to nothing replies to its start
            assert isinstance(chat, FakeGroup)
            data["reply_to_message"] = {
                "message_id": thread,
                "date": message.date,
                "chat": chat.chat_json(),
                "message_thread_id": thread,
                "is_topic_message": True,
                "forum_topic_created": {"name": chat.topics[thread], "icon_color": 7322096},
            }
        await self.feed({"message": data}, app)
        return message

    async def as_group(self, group: FakeGroup, text: str) -> FakeMessage:
        """``text`` from an anonymous admin: Telegram sends it from GroupAnonymousBot,
        with the group itself as ``sender_chat``."""
        sender = {
            "id": 1087968824,
            "is_bot": True,
            "first_name": "Group",
            "username": "GroupAnonymousBot",
        }
        message = self.server.new_message(
            group.id, sender, text=text, entities=_command_entities(text)
        )
        await self.feed({"message": {**message.to_json(), "sender_chat": group.chat_json()}})
        return message

    async def command(
        self,
        user: FakeUser,
        chat: FakeGroup | FakeUser,
        text: str,
        *,
        thread: int | None = None,
        mention: bool = False,
        reply_to: FakeMessage | None = None,
        app: Application[Any, Any, Any, Any, Any, Any] | None = None,
    ) -> FakeMessage:
        """``/cmd args`` in a chat; ``mention`` writes ``/cmd@botname`` as group menus do."""
        assert text.startswith("/")
        if mention:
            word, _, rest = text.partition(" ")
            text = f"{word}@{BOT_USERNAME}" + (f" {rest}" if rest else "")
        return await self.send_text(user, chat, text, thread=thread, reply_to=reply_to, app=app)

    async def private(
        self,
        user: FakeUser,
        text: str,
        app: Application[Any, Any, Any, Any, Any, Any] | None = None,
    ) -> FakeMessage:
        return await self.send_text(user, user, text, app=app)

    async def follow(self, user: FakeUser, url: str) -> FakeMessage:
        """Opens a t.me deep link and presses START, as the Telegram client does."""
        parsed = urlparse(url if "://" in url else f"https://{url}")
        assert parsed.netloc in ("t.me", "telegram.me"), url
        assert parsed.path.strip("/") == BOT_USERNAME, f"deep link to another bot: {url}"
        payload = parse_qs(parsed.query).get("start", [""])[0]
        assert START_PAYLOAD.fullmatch(payload), f"Telegram rejects start payload {payload!r}"
        return await self.private(user, f"/start {payload}")

    async def tap(
        self,
        user: FakeUser,
        message: FakeMessage,
        pick: Pick,
        app: Application[Any, Any, Any, Any, Any, Any] | None = None,
    ) -> Answer:
        """Taps a button that ``user`` sees on ``message`` (label, predicate or index)."""
        assert not message.deleted, "the message is gone; nobody can tap it"
        if message.chat_id in self.server.users:
            assert message.chat_id == user.id, "nobody sees another user's private chat"
        button = self.find(message, pick)
        assert button.callback_data is not None, f"{button.text!r} is a URL button: follow it"
        return await self.tap_data(
            user, message.chat_id, message.message_id, button.callback_data, app
        )

    def find(self, message: FakeMessage, pick: Pick) -> Button:
        buttons = message.buttons
        if isinstance(pick, int):
            return buttons[pick]
        matches = [b for b in buttons if (b.text == pick if isinstance(pick, str) else pick(b))]
        assert matches, f"no button {pick!r} on message: {message.shown!r}"
        return matches[0]

    async def tap_data(
        self,
        user: FakeUser,
        chat_id: int,
        message_id: int,
        data: str,
        app: Application[Any, Any, Any, Any, Any, Any] | None = None,
    ) -> Answer:
        """A callback query with any data, as a modified client could send it."""
        message = self.server.messages.get(chat_id, {}).get(message_id)
        query_id = str(next(self._query_ids) * 7919 + 4_000_000_000_000)
        query: dict[str, Any] = {
            "id": query_id,
            "from": user.to_json(),
            "chat_instance": str(abs(chat_id) * 31 + 17),
            "data": data,
        }
        if message is not None and not message.deleted:
            query["message"] = message.to_json()
        else:  # Telegram's InaccessibleMessage
            query["message"] = {
                "message_id": message_id,
                "chat": self.server.chat_json(chat_id),
                "date": 0,
            }
        answer = self.server.queries[query_id] = Answer(user.id, data)
        await self.feed({"callback_query": query}, app)
        return answer

    async def feed(
        self, payload: dict[str, Any], app: Application[Any, Any, Any, Any, Any, Any] | None = None
    ) -> None:
        """Delivers one update and waits for what it set off (tasks the handler created)."""
        await self.deliver({"update_id": next(self._update_ids), **payload}, app)

    async def deliver(
        self, data: dict[str, Any], app: Application[Any, Any, Any, Any, Any, Any] | None = None
    ) -> None:
        """One update exactly as given: also how Telegram redelivers an update a webhook
        did not acknowledge (same update_id, same callback query id)."""
        apps = self.fanout or [app or self.app]
        self.server.update_ids.add(data["update_id"])
        if self.server.history:
            self.delivered.append(data)
        started = ARRIVED.get() or time.perf_counter()
        await asyncio.gather(*(a.process_update(Update.de_json(data, a.bot)) for a in apps))
        kind = next(k for k in data if k != "update_id")
        self.durations.append((TAG.get() or kind, time.perf_counter() - started))
        for a in apps:
            await settle(a)

    # ----- what users see

    def screen(
        self, chat: FakeGroup | FakeUser | int, thread: int | None = None
    ) -> list[FakeMessage]:
        chat_id = chat if isinstance(chat, int) else chat.id
        return self.server.screen(chat_id, thread)

    def last(self, chat: FakeGroup | FakeUser | int, thread: int | None = None) -> FakeMessage:
        messages = [m for m in self.screen(chat, thread) if m.from_bot]
        assert messages, "the bot has posted nothing there"
        return messages[-1]

    def with_button(
        self, chat: FakeGroup | FakeUser | int, pick: Pick, thread: int | None = None
    ) -> FakeMessage:
        """The newest bot message in the chat that shows the button ``pick``."""
        for message in reversed(self.screen(chat, thread)):
            try:
                self.find(message, pick)
            except (AssertionError, IndexError):
                continue
            return message
        raise AssertionError(f"no message with button {pick!r} in chat")

    def alerts(self, user: FakeUser) -> list[str]:
        """The answerCallbackQuery texts the user was shown (toasts and alerts)."""
        return [a.text for a in self.server.queries.values() if a.user_id == user.id and a.text]

    def last_document(self, chat: FakeGroup | FakeUser | int) -> tuple[str, bytes]:
        chat_id = chat if isinstance(chat, int) else chat.id
        docs = [m for m in self.server.screen(chat_id) if m.document is not None]
        assert docs, "no document was sent there"
        return docs[-1].document["file_name"], docs[-1].document_bytes or b""  # type: ignore[index]

    def problems(self) -> list[str]:
        """What a real Telegram would have complained about, and errors the bot logged.

        A test that makes Telegram refuse things on purpose (deleted messages, blocked
        users, flood control) expects some of these."""
        out = []
        if self.server.not_modified:
            seen = "; ".join(self.server.unchanged[:5])
            out.append(f"{self.server.not_modified} edits changed nothing ({seen})")
        out += [f"unknown Bot API method {c.method}" for c in self.server.unknown_calls]
        out += [
            f"{c.method} refused: {c.error}"
            for c in self.server.calls
            if c.error and c.error.startswith("Bad Request") and c.error != NOT_MODIFIED
        ]
        out += [f"callback {a.data!r} never answered" for a in self.server.unanswered]
        out += [f"logged error: {r.getMessage()}" for r in self.log_errors]
        out += [f"untranslated: {key}" for key in self.untranslated()]
        return out

    def untranslated(self) -> list[str]:
        """Catalogue keys shown raw (a key missing from every catalogue shows itself):
        a whole line, button label or alert that reads like ``illegal.some_code``."""
        shown: list[str] = [a.text for a in self.server.queries.values() if a.text]
        for chat in self.server.messages.values():
            for message in chat.values():
                if message.from_bot:
                    shown += (message.text or message.caption or "").splitlines()
                    shown += [b.text for b in message.buttons]
        keys = {_CATALOGUE_KEY.search(line) for line in shown}
        return sorted(k.group(1) for k in keys if k)


def app_tasks(app: Application[Any, Any, Any, Any, Any, Any]) -> list[asyncio.Task[Any]]:
    """The tasks ``app`` started through ``Application.create_task`` still running."""
    tasks: set[asyncio.Task[Any]] = app._Application__create_task_tasks  # type: ignore[attr-defined]
    return [t for t in tasks if not t.done()]


def _stack_of(task: asyncio.Task[Any]) -> str:
    """Where ``task`` waits: its chain of awaited coroutines, outermost first."""
    lines = [task.get_name()]
    awaited: Any = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is not None:
            lines.append(f"  {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return "\n".join(lines)


async def settle(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Waits for the tasks an update set off through ``Application.create_task``."""
    for _ in range(50):
        await asyncio.sleep(0)
        pending = [t for t in app_tasks(app) if t is not asyncio.current_task()]
        if not pending:
            return
        await asyncio.gather(*pending, return_exceptions=True)


class ErrorCollector(logging.Handler):
    """Collects ERROR records (a handler exception PTB swallowed shows up here)."""

    def __init__(self, sink: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record)


async def start_app(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """What bot.runner does before it serves: initialize, post_init, start, and then the
    webhook's worker (bot.inbox; in webhook mode only)."""
    from bot import inbox

    await app.initialize()
    if app.post_init:
        await app.post_init(app)
    await app.start()
    inbox.start(app)


STOP_WITHIN = 10.0  # seconds: a bot that takes longer to stop has work that never ends


async def stop_app(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Stops ``app`` as ``run_polling`` does; fails, naming what still runs, when
    ``Application.stop`` (which waits for every task the bot set off) does not return."""
    if app.running:
        stopping = asyncio.ensure_future(app.stop())
        done, _ = await asyncio.wait([stopping], timeout=STOP_WITHIN)
        if not done:
            stuck = "\n".join(_stack_of(t) for t in app_tasks(app))
            raise AssertionError(f"the bot did not stop within {STOP_WITHIN} s:\n{stuck}")
        stopping.result()
    if app.post_stop:
        await app.post_stop(app)
    await app.shutdown()
    if app.post_shutdown:
        await app.post_shutdown(app)
