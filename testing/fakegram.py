"""The fake Telegram Bot API server: users, chats, messages and every call.

Why at the HTTP boundary: the bot under test is the real python-telegram-bot Application,
so every ``Bot`` method, its serialisation and PTB's mapping of HTTP errors to exceptions
run for real; only Telegram's servers are replaced. :class:`FakeTelegram` is the server
and :class:`FakeRequest` the ``BaseRequest`` that PTB sends its calls through (over real
HTTP, for a bot in another process: :mod:`testing.fakeserver`).

The fake is strict where Telegram is strict, in Telegram's words, because those are the
bugs that only show in production: an edit that changes nothing (counted in
:attr:`FakeTelegram.not_modified`), callback data over 64 bytes, a callback query answered
twice or never, a message to a user who never opened the bot, HTML that does not parse.
A method it does not simulate (no ``_api_<name>``) is Telegram's 404, recorded in
:attr:`FakeTelegram.unknown_calls`. Method names are taken in any case and recorded as
documented (``sendMessage``). Ephemeral messages follow docs/ephemeral.md's reading of the
Bot API. Updates of a kind the bot's ``allowed_updates`` leaves out are never sent
(:meth:`FakeTelegram.sends`). Every known user is in every group except its ``outsiders``.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import re
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from telegram import Bot
from telegram.request import BaseRequest, RequestData

from testing.chats import (
    BOT_ID,
    BOT_USERNAME,
    Answer,
    Call,
    FakeDialog,
    FakeGroup,
    FakeMessage,
    FakeUser,
    Fault,
)
from testing.errors import (
    BLOCKED,
    CANT_INITIATE,
    NOT_MODIFIED,
    QUERY_INVALID,
    ApiError,
    bad,
    too_many,
)
from testing.fakeinline import Inline, as_json
from testing.flood import FloodLimits
from testing.html import parse_html, strip_entities, utf16_len

# What the caller is doing (e.g. "move"): stamped on every Bot API call made meanwhile, so
# that a benchmark can count calls per kind of update even with many updates in flight.
TAG: ContextVar[str | None] = ContextVar("fakegram_tag", default=None)
# When the update the caller is about to deliver reached the bot (``time.perf_counter``),
# if earlier than its delivery: a benchmark pacing taps sets it, so that the time an update
# spent waiting for a busy event loop counts in its handling time.
ARRIVED: ContextVar[float | None] = ContextVar("fakegram_arrived", default=None)
COMMAND = re.compile(r"[a-z0-9_]{1,32}")
# Seconds after a user's tap within which any bot may send him an ephemeral message that
# quotes the tap's callback_query_id (docs/ephemeral.md); an administrator needs none.
EPHEMERAL_REPLY_WINDOW = 15.0
EPHEMERAL_FIELDS = frozenset(
    {"receiver_user_id", "callback_query_id", "replace_callback_query_message"}
)
# What Telegram sends a bot that never named the updates it wants ("an empty list" or none
# at all in setWebhook / getUpdates): every type but these.
DEFAULT_UNSENT = frozenset({"chat_member", "message_reaction", "message_reaction_count"})
# The parameters each ephemeral method takes (any other is refused).
_NAMED = "chat_id receiver_user_id ephemeral_message_id "
_EPHEMERAL_METHODS = {
    "editEphemeralMessageText": frozenset(
        (_NAMED + "text parse_mode entities link_preview_options reply_markup").split()
    ),
    "editEphemeralMessageReplyMarkup": frozenset((_NAMED + "reply_markup").split()),
    "deleteEphemeralMessage": frozenset(_NAMED.split()),
}


# Every Bot API method PTB knows, by its name in lower case: PTB's ``Bot`` has each under
# its documented camelCase name as well as in snake_case; and those newer than PTB 22.8's
# Bot API 10.0 that the fake simulates.
_DOCUMENTED = {
    name.lower(): name for name in dir(Bot) if name[:1].islower() and name != name.lower()
} | {name.lower(): name for name in _EPHEMERAL_METHODS}


# Methods the fake takes and answers True, keeping nothing.
_ACCEPTED = {"setMyDescription", "setMyShortDescription", "setChatMenuButton", "deleteWebhook"}


# An administrator's rights (ChatMemberAdministrator), as getChatMember lists them.
_RIGHTS = (
    "can_be_edited is_anonymous can_manage_chat can_delete_messages can_manage_video_chats "
    "can_restrict_members can_promote_members can_change_info can_invite_users "
    "can_post_stories can_edit_stories can_delete_stories can_pin_messages can_manage_topics"
)

_GIFTS = "unlimited_gifts limited_gifts unique_gifts premium_subscription gifts_from_channels"


def _scope(params: dict[str, Any]) -> tuple[str, str]:
    """The key of a set of commands: its scope and language."""
    scope = json.dumps(params.get("scope", {"type": "default"}), sort_keys=True)
    return scope, str(params.get("language_code", ""))


def documented(method: str) -> str:
    """``method`` as the Bot API documents it (``sendmessage`` → ``sendMessage``)."""
    return _DOCUMENTED.get(method.lower(), method)


def method_of(url: str) -> str:
    """The documented name of the method that ``url`` calls."""
    return documented(url.rstrip("/").rsplit("/", 1)[-1])


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
        # The update types the bot asked for (setWebhook's or getUpdates' allowed_updates;
        # None or empty: Telegram's default), and the updates not sent for that.
        self.allowed_updates: list[str] | None = None
        self.withheld: list[dict[str, Any]] = []
        # Ephemeral messages by (chat, receiver); each chat numbers them on its own.
        self.ephemeral: dict[tuple[int, int], dict[int, FakeMessage]] = {}
        self._next_ephemeral: dict[int, itertools.count[int]] = {}
        # The taps of the last EPHEMERAL_REPLY_WINDOW seconds (kept without ``history``
        # too): an ephemeral message may answer one of them.
        self.recent_taps: dict[str, Answer] = {}
        self._next_message_id: dict[int, itertools.count[int]] = {}
        self._next_file = itertools.count(1)
        # Inline mode: queries, answers and their cache, messages sent via the bot.
        self.inline = Inline(self)
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
        """How many edits changed nothing (Telegram refused each)."""
        return len(self.unchanged)

    def add_user(self, user: FakeUser) -> FakeUser:
        self.users[user.id] = user
        return user

    def add_group(self, group: FakeGroup) -> FakeGroup:
        self.groups[group.id] = group
        return group

    def add_dialog(self, a: FakeUser, b: FakeUser) -> FakeDialog:
        return self.inline.dialog(a, b)

    def chat(self, chat_id: int) -> FakeUser | FakeGroup | FakeDialog:
        """The chat of an id: a user's private chat with the bot, a group, a dialog."""
        found = self.users.get(chat_id) or self.groups.get(chat_id)
        return found or self.inline.dialogs[chat_id]

    def chat_json(self, chat_id: int) -> dict[str, Any]:
        return self.chat(chat_id).chat_json()

    def new_message(self, chat_id: int, sender: dict[str, Any], **fields: Any) -> FakeMessage:
        message = self._message(self._next_message_id, chat_id, sender, fields)
        self.messages.setdefault(chat_id, {})[message.message_id] = message
        return message

    def _message(
        self, ids: dict[int, Any], chat_id: int, sender: dict[str, Any], fields: dict[str, Any]
    ) -> FakeMessage:
        """A new message, numbered by the chat's counter in ``ids``."""
        number = next(ids.setdefault(chat_id, itertools.count(1)))
        return FakeMessage(
            chat_id, number, int(self.clock()), sender, self.chat_json(chat_id), **fields
        )

    def sends(self, kind: str) -> bool:
        """Whether Telegram sends the bot updates of this kind (``inline_query``...)."""
        if not self.allowed_updates:
            return kind not in DEFAULT_UNSENT
        return kind in self.allowed_updates

    def _allow(self, params: dict[str, Any]) -> None:
        """Keeps a call's ``allowed_updates``; without one, the previous setting stays."""
        raw = params.get("allowed_updates")
        if raw is not None:
            self.allowed_updates = list(as_json(raw))

    def note_tap(self, query_id: str, answer: Answer) -> None:
        """A callback query is sent to the bot: to be answered, and for 15 seconds one that
        an ephemeral message may answer."""
        self.queries[query_id] = answer
        # Oldest first (a dict keeps its order): drop from the front, not by a scan of them
        # all, which made a game of thousands of taps quadratic.
        while self.recent_taps:
            oldest = next(iter(self.recent_taps))
            if answer.at - self.recent_taps[oldest].at <= EPHEMERAL_REPLY_WINDOW:
                break
            del self.recent_taps[oldest]
        self.recent_taps[query_id] = answer

    def age(self, chat_id: int, next_message_id: int) -> None:
        """A chat that looks long-lived: its next message gets this id."""
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
        self.faults.append(Fault(method, too_many(retry_after), times, when))

    # ----- reading what users see

    def screen(self, chat_id: int, thread_id: int | None = None) -> list[FakeMessage]:
        """The live messages of a chat (or of one forum topic), oldest first."""
        return [
            m
            for m in self.messages.get(chat_id, {}).values()
            if not m.deleted and (thread_id is None or m.thread_id == thread_id)
        ]

    def ephemerals(self, chat_id: int, user_id: int, *, dropped: bool = False) -> list[FakeMessage]:
        """The live ephemeral messages to ``user_id`` in a chat, oldest first; ``dropped``:
        those that never reached him too (everything the bot sent him there)."""
        found = self.ephemeral.get((chat_id, user_id), {}).values()
        return [m for m in found if not m.deleted and (dropped or not m.dropped)]

    def seen_by(
        self, chat_id: int, user_id: int, thread_id: int | None = None
    ) -> list[FakeMessage]:
        """What ``user_id`` sees of a group (or a topic): its messages, except those an
        ephemeral message to him was shown in place of, then his ephemeral messages."""
        mine = [
            m
            for m in self.ephemerals(chat_id, user_id)
            if thread_id is None or m.thread_id == thread_id
        ]
        replaced = {m.replaces for m in mine}
        public = [m for m in self.screen(chat_id, thread_id) if m.message_id not in replaced]
        return public + mine

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
        if method in _ACCEPTED:
            handler = lambda params, files: True  # noqa: E731
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
                inline = params.get("inline_message_id")
                where = (
                    f"inline message {inline}" if inline else f"message {message} in chat {chat}"
                )
                self.unchanged.append(f"{method} of {where}")
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
            self.limits.admit(method, params, self.inline.chat_of(params))

    def _chat(self, params: dict[str, Any], *, writing: bool = True) -> int:
        raw = params.get("chat_id")
        if isinstance(raw, str) and re.fullmatch(r"-?\d+", raw):
            raw = int(raw)
        if not isinstance(raw, int):
            raise bad("chat not found")
        if raw in self.users:
            user = self.users[raw]
            if writing and user.blocked:
                raise ApiError(403, BLOCKED)
            if writing and not user.started:
                raise ApiError(403, CANT_INITIATE)
            return raw
        if raw in self.groups:
            group = self.groups[raw]
            if not group.has_bot:
                if writing and group.username:
                    raise ApiError(403, f"Forbidden: bot is not a member of the {group.type} chat")
                raise bad("chat not found")
            if group.kicked:
                raise ApiError(403, f"Forbidden: bot was kicked from the {group.type} chat")
            if group.migrated_to is not None:
                raise ApiError(
                    400,
                    "Bad Request: group chat was upgraded to a supergroup chat",
                    {"migrate_to_chat_id": group.migrated_to},
                )
            return raw
        raise bad("chat not found")

    def _text(
        self, params: dict[str, Any], key: str = "text", limit: int = 4096
    ) -> tuple[str, list[dict[str, Any]]]:
        raw = params.get(key)
        if raw is None or raw == "":
            raise bad(f"message {key} is empty")
        if not isinstance(raw, str):
            raw = str(raw)
        mode = params.get("parse_mode")
        if mode is None:
            entity_key = "entities" if key == "text" else "caption_entities"
            text, entities = raw, list(params.get(entity_key) or [])
        elif str(mode).upper() == "HTML":
            if params.get("entities"):
                raise bad("can't use parse_mode together with entities")
            text, entities = parse_html(raw)
        else:
            raise ApiError(501, f"fakegram: parse_mode {mode!r} is not simulated")
        text, entities = strip_entities(text, entities)
        if not text:
            raise bad(f"message {key} is empty")
        if utf16_len(text) > limit:
            raise bad("message is too long" if key == "text" else "message caption is too long")
        return text, entities

    def _markup(self, params: dict[str, Any], *, via_bot: bool = False) -> dict[str, Any] | None:
        """The inline keyboard of a call, checked; ``via_bot``: of a message sent via the
        bot (an inline result's), where a Mini App button is refused too."""
        via_bot = via_bot or "inline_message_id" in params
        markup = as_json(params.get("reply_markup"))
        if markup is None or "inline_keyboard" not in markup:
            return None  # reply keyboards are not part of a message's own content
        rows = []
        for row in markup["inline_keyboard"]:
            out_row = []
            for button in row:
                if not button.get("text"):
                    raise bad("text buttons are unallowed in the inline keyboard")
                kinds = [k for k in button if k != "text"]
                if len(kinds) != 1:
                    raise bad("can't parse inline keyboard button: exactly one field expected")
                data = button.get("callback_data")
                if data is not None and not (1 <= len(data.encode()) <= 64):
                    raise bad("BUTTON_DATA_INVALID")
                url = button.get("url")
                if url is not None and not re.match(r"(https?|tg)://", url):
                    raise bad(f"inline keyboard button URL '{url}' is invalid: Wrong HTTP URL")
                if "web_app" in button and (via_bot or params.get("chat_id") in self.groups):
                    # Mini App buttons: only in private chats between a user and the bot
                    raise bad("BUTTON_TYPE_INVALID")
                out_row.append(dict(button))
            rows.append(out_row)
        if sum(len(r) for r in rows) > 100:
            raise bad("reply markup is too long")
        return {"inline_keyboard": rows}

    def _thread(self, chat_id: int, params: dict[str, Any]) -> int | None:
        thread = params.get("message_thread_id")
        group = self.groups.get(chat_id)
        if thread is None or group is None or not group.is_forum:
            return None
        if int(thread) not in group.topics:
            raise bad("message thread not found")
        return int(thread)

    def _existing(self, params: dict[str, Any], missing: str) -> FakeMessage:
        if "inline_message_id" in params:
            return self.inline.message(params)
        chat_id = self._chat(params)
        message = self.messages.get(chat_id, {}).get(int(params.get("message_id", 0)))
        if message is None or message.deleted:
            raise bad(missing)
        return message

    # Methods: named _api_<lowercased Bot API method>.

    def _api_getme(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return {**self.bot_json, "supports_inline_queries": self.inline.mode}

    def _api_answerinlinequery(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return self.inline.answer(params)

    def _api_setmycommands(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        commands = as_json(params.get("commands")) or []
        if len(commands) > 100:
            raise bad("too many commands")
        for command in commands:
            if not COMMAND.fullmatch(command.get("command", "")):
                raise bad("BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise bad("command description is empty or too long")
        self.commands[_scope(params)] = commands
        return True

    def _api_deletemycommands(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self.commands.pop(_scope(params), None)
        return True

    def _api_getmycommands(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return self.commands.get(_scope(params), [])

    def _api_setwebhook(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._allow(params)
        return True

    def _api_getupdates(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._allow(params)
        return []  # a poller's: the tests hand their updates to the bot another way

    def _api_sendchataction(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        self._chat(params)
        return True

    def _reply_ok(self, chat_id: int, params: dict[str, Any]) -> None:
        reply = as_json(params.get("reply_parameters"))
        if not reply or reply.get("chat_id") not in (None, chat_id):
            return
        target = self.messages.get(chat_id, {}).get(int(reply.get("message_id", 0)))
        if (target is None or target.deleted) and not reply.get("allow_sending_without_reply"):
            raise bad("message to be replied not found")

    def _api_sendmessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        for old in ("receiver_user_id", "callback_query_id"):  # Bot API 10.2's shape
            if old in params:
                raise bad(f"unknown parameter {old}: use ephemeral_message_parameters")
        chat_id = self._chat(params)
        ephemeral = self._ephemeral_to(chat_id, params.get("ephemeral_message_parameters"))
        self._reply_ok(chat_id, params)
        text, entities = self._text(params)
        fields: dict[str, Any] = {
            "text": text,
            "entities": entities,
            "reply_markup": self._markup(params),
            "thread_id": self._thread(chat_id, params),
        }
        if ephemeral is not None:
            return self._new_ephemeral(chat_id, *ephemeral, fields).to_json()
        return self.new_message(chat_id, self.bot_json_short(), **fields).to_json()

    # ----- ephemeral messages (Bot API 10.2, reshaped by 10.3; docs/ephemeral.md)

    def _ephemeral_to(self, chat_id: int, raw: Any) -> tuple[FakeUser, int | None] | None:
        """Who an ephemeral message goes to, checked as the Bot API checks it: his user
        and the group message it replaces (None: not an ephemeral message)."""
        if raw is None:
            return None
        raw = as_json(raw)
        if not isinstance(raw, dict):
            raise bad("can't parse ephemeral message parameters")
        unknown = sorted(set(raw) - EPHEMERAL_FIELDS)
        if unknown:
            raise bad(f"can't parse ephemeral message parameters: unknown field {unknown[0]}")
        receiver = raw.get("receiver_user_id")
        if not isinstance(receiver, int) or isinstance(receiver, bool):
            raise bad("ephemeral message parameters: receiver_user_id is required")
        group = self.groups.get(chat_id)
        if group is None:
            raise bad("ephemeral messages can be sent only to groups and supergroups")
        user = self.users.get(receiver)
        if receiver == BOT_ID or (user is not None and user.is_bot):
            # the Bot API: "a non-bot member of the chat"; its error text is Telegram's
            # (MTProto's) name for a bot where a user is needed
            raise bad("USER_IS_BOT")
        if user is None or receiver in group.outsiders:
            raise bad("PARTICIPANT_ID_INVALID")
        query_id, replace = raw.get("callback_query_id"), raw.get("replace_callback_query_message")
        if query_id is None:
            if replace:
                raise bad("replace_callback_query_message needs a callback_query_id")
            if not group.bot_is_admin:
                raise bad("CHAT_ADMIN_REQUIRED")
            return user, None
        tap = self.recent_taps.get(str(query_id))
        if tap is None or self.clock() - tap.at > EPHEMERAL_REPLY_WINDOW:
            raise ApiError(400, QUERY_INVALID)
        if tap.user_id != receiver or tap.chat_id != chat_id:
            raise bad("the callback query was sent by another user or in another chat")
        if replace and tap.ephemeral:
            raise bad(
                "replace_callback_query_message must be False for callback queries from "
                "ephemeral messages"
            )
        return user, tap.message_id if replace else None

    def _new_ephemeral(
        self, chat_id: int, user: FakeUser, replaces: int | None, fields: dict[str, Any]
    ) -> FakeMessage:
        fields = {**fields, "receiver": user.to_json(), "dropped": not user.online}
        fields["replaces"] = replaces
        message = self._message(self._next_ephemeral, chat_id, self.bot_json_short(), fields)
        self.ephemeral.setdefault((chat_id, user.id), {})[message.message_id] = message
        return message

    def _ephemeral(self, method: str, params: dict[str, Any], missing: str) -> FakeMessage:
        """The ephemeral message a call names by chat, receiver and id (every other
        parameter the method does not take is refused)."""
        unknown = sorted(set(params) - _EPHEMERAL_METHODS[method])
        if unknown:
            raise bad(f"unknown parameter {unknown[0]}")
        chat_id = self._chat(params)
        receiver, number = params.get("receiver_user_id"), params.get("ephemeral_message_id")
        if not isinstance(receiver, int) or not isinstance(number, int):
            raise bad("receiver_user_id and ephemeral_message_id are required")
        message = self.ephemeral.get((chat_id, receiver), {}).get(number)
        if message is None or message.deleted:
            raise bad(missing)
        return message

    def _api_editephemeralmessagetext(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._ephemeral("editEphemeralMessageText", params, "message to edit not found")
        text, entities = self._text(params)
        self._change(message, text=text, entities=entities, reply_markup=self._markup(params))
        return True

    def _api_editephemeralmessagereplymarkup(
        self, params: dict[str, Any], files: dict[str, Any]
    ) -> Any:
        message = self._ephemeral(
            "editEphemeralMessageReplyMarkup", params, "message to edit not found"
        )
        self._change(message, reply_markup=self._markup(params))
        return True

    def _api_deleteephemeralmessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._ephemeral("deleteEphemeralMessage", params, "message to delete not found")
        message.deleted = True
        if not self.history:
            assert message.receiver_id is not None
            del self.ephemeral[message.chat_id, message.receiver_id][message.message_id]
        return True

    def bot_json_short(self) -> dict[str, Any]:
        return {k: self.bot_json[k] for k in ("id", "is_bot", "first_name", "username")}

    def _api_editmessagetext(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._existing(params, "message to edit not found")
        if not message.from_bot and message.inline_message_id is None:
            raise bad("message can't be edited")
        if message.text is None:
            raise bad("there is no text in the message to edit")
        text, entities = self._text(params)
        return self._change(
            message, text=text, entities=entities, reply_markup=self._markup(params)
        )

    def _api_editmessagereplymarkup(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._existing(params, "message to edit not found")
        if not message.from_bot and message.inline_message_id is None:
            raise bad("message can't be edited")
        return self._change(message, reply_markup=self._markup(params))

    def _api_editmessagecaption(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        message = self._existing(params, "message to edit not found")
        if message.document is None:
            raise bad("there is no caption in the message to edit")
        caption, entities = (
            self._text(params, "caption", 1024) if params.get("caption") else (None, [])
        )
        markup = self._markup(params)
        return self._change(
            message, caption=caption, caption_entities=entities, reply_markup=markup
        )

    def _change(self, message: FakeMessage, **fields: Any) -> dict[str, Any] | bool:
        """An edit of ``message``, refused when it changes nothing; the answer to it: the
        Message, or True for an inline message."""
        if all(getattr(message, k) == v for k, v in fields.items()):
            raise ApiError(400, NOT_MODIFIED)
        for key, value in fields.items():
            setattr(message, key, value)
        message.edits += 1
        message.edit_date = int(self.clock())
        return True if message.inline_message_id is not None else message.to_json()

    def _api_deletemessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        message = self.messages.get(chat_id, {}).get(int(params.get("message_id", 0)))
        if message is None or message.deleted:
            raise bad("message to delete not found")
        if (
            not message.from_bot
            and chat_id in self.groups
            and not self.groups[chat_id].bot_is_admin
        ):
            raise bad("message can't be deleted")
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
            raise bad("there is no document in the request")
        filename, content, mime = files["document"]
        if hasattr(content, "read"):
            content = content.read()
        if not content:
            raise bad("file must be non-empty")
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
            raise ApiError(400, QUERY_INVALID)
        text = params.get("text")
        if text is not None and len(text) > 200:
            raise bad("MESSAGE_TOO_LONG")
        query.answered = True
        if not self.history:
            del self.queries[str(params.get("callback_query_id"))]
        url = params.get("url")
        if url is not None and not str(url).startswith(f"https://t.me/{BOT_USERNAME}?start="):
            raise bad("URL_INVALID")  # outside games, only a link that opens the bot
        query.text = text
        query.show_alert = bool(params.get("show_alert"))
        query.url = url
        return True

    def _member(self, group: FakeGroup, user_id: int) -> dict[str, Any]:
        user = (
            self.users[user_id].to_json()
            if user_id in self.users
            else {"id": user_id, "is_bot": user_id == BOT_ID, "first_name": "Someone"}
        )
        if user_id == BOT_ID:
            user = self.bot_json_short()
        if user_id == group.creator:
            return {"status": "creator", "user": user, "is_anonymous": False}
        if user_id in group.admins or (user_id == BOT_ID and group.bot_is_admin):
            rights = dict.fromkeys(_RIGHTS.split(), False)
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
                raise bad("user not found")
            return {"status": "member", "user": self.users[chat_id].to_json()}
        return self._member(self.groups[chat_id], user_id)

    def _api_getchatadministrators(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        if chat_id in self.users:
            raise bad("there are no administrators in the private chat")
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
            "accepted_gift_types": dict.fromkeys(_GIFTS.split(), False),
        }

    def _api_pinchatmessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        chat_id = self._chat(params, writing=False)
        if chat_id in self.groups and not self.groups[chat_id].bot_is_admin:
            raise bad("not enough rights to manage pinned messages in the chat")
        self._existing(params, "message to pin not found")
        return True

    def _api_unpinchatmessage(self, params: dict[str, Any], files: dict[str, Any]) -> Any:
        return self._api_pinchatmessage(params, files) if "message_id" in params else True


class FakeRequest(BaseRequest):
    """PTB's HTTP layer, answered by a :class:`FakeTelegram` instead of the network (one
    server for several Applications, as two bot processes share Telegram)."""

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
