"""Telegram's inline mode in the fake Bot API: queries, answers, their cache, picks, edits.

Why its own module: inline mode is a world of its own beside the chats the bot is in. A
user types ``@bot <text>`` in *any* chat (his private chat with the bot, one with another
user, a group with or without the bot), the bot answers with results, and the one he picks
is posted in that chat *by him*, "via @bot". The users' side is
:class:`testing.harness.Harness` (``inline``, ``scroll``, ``pick``, ``switch``, ``tap``).

As the Bot API documents it (core.telegram.org/bots/api): an ``InlineQuery`` never names
the chat, only its ``chat_type`` ("sender" for the user's private chat with the bot).
Telegram caches an answer for ``cache_time`` (300 s by default) and serves it without
asking the bot to anyone who types the same text and offset, or, ``is_personal``, to its
asker only: :attr:`Inline.shown` keeps what each user saw and whether it came from the
cache, so that a test can catch one player's cards shown to another. A picked result
carries ``inline_message_id`` only if it has a keyboard; the bot edits it by that id
(the answer is True, not a Message), and a tap on it is a ``CallbackQuery`` without
``message``. The bot learns of a pick by ``chosen_inline_result`` only with inline
feedback on (:attr:`Inline.feedback`), and by a ``message`` only in its own private chat.
Only ``article`` results are simulated; the checks and errors are in :meth:`Inline.answer`.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from testing.chats import FakeDialog, FakeMessage, FakeUser
from testing.errors import QUERY_INVALID, ApiError, bad

if TYPE_CHECKING:
    from testing.fakegram import FakeTelegram

MAX_RESULTS = 50
MAX_QUERY = 256  # characters of a query's text
DEFAULT_CACHE_TIME = 300
START_PARAMETER = re.compile(r"[A-Za-z0-9_-]{1,64}")
# The fake's inline message ids: opaque url-safe base64, as Telegram's look.
_ID_PREFIX = "AgAAA"
INLINE_ID = re.compile(_ID_PREFIX + r"[A-Za-z0-9_-]{32}")
DIALOG_BASE = 3 * 10**12  # dialogs' ids, beyond any user's and any group's


def chat_instance(chat_id: int) -> str:
    """The ``chat_instance`` of every callback query from a chat: one value a chat."""
    return str(abs(chat_id) * 31 + 17)


def as_json(raw: Any) -> Any:
    """A parameter as its JSON reads: PTB sends objects JSON-encoded in a form."""
    return json.loads(raw) if isinstance(raw, str) else raw


@dataclass
class InlineAnswer:
    """The bot's answer to one inline query, as the fake took it."""

    query_id: str
    user_id: int  # who asked
    results: list[dict[str, Any]]
    is_personal: bool
    cache_time: int
    next_offset: str
    button: dict[str, Any] | None
    at: float


@dataclass
class InlineQuery:
    """One inline query sent to the bot, and its answer once there is one."""

    id: str
    user_id: int
    chat_id: int
    query: str
    offset: str
    chat_type: str
    answer: InlineAnswer | None = None

    def to_json(self, user: FakeUser) -> dict[str, Any]:
        return {
            "id": self.id,
            "from": user.to_json(),
            "query": self.query,
            "offset": self.offset,
            "chat_type": self.chat_type,
        }


@dataclass
class Shown:
    """The results one user saw for one query text (and offset) in one chat."""

    user_id: int
    chat_id: int
    query: str
    offset: str
    answer: InlineAnswer | None  # None: the bot never answered (the client shows nothing)
    cached: bool  # served from Telegram's cache: the bot was not asked

    @property
    def results(self) -> list[dict[str, Any]]:
        return [] if self.answer is None else self.answer.results

    @property
    def ids(self) -> list[str]:
        return [r["id"] for r in self.results]

    @property
    def titles(self) -> list[str]:
        return [r.get("title", "") for r in self.results]

    @property
    def next_offset(self) -> str:
        return "" if self.answer is None else self.answer.next_offset

    @property
    def borrowed(self) -> bool:
        """Served from the cache of an answer to someone else's query."""
        return self.cached and self.answer is not None and self.answer.user_id != self.user_id

    def result(self, pick: int | str | Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """A result by index, id or predicate."""
        if isinstance(pick, int):
            return self.results[pick]
        found = [r for r in self.results if (r["id"] == pick if isinstance(pick, str) else pick(r))]
        assert found, f"no result {pick!r} among {self.titles}"
        return found[0]


@dataclass
class Inline:
    """Inline mode as Telegram runs it for the bot (see the module docstring)."""

    server: FakeTelegram
    # The bot's @BotFather switches: /setinline (getMe's supports_inline_queries) and
    # /setinlinefeedback (chosen_inline_result updates).
    mode: bool = True
    feedback: bool = True
    dialogs: dict[int, FakeDialog] = field(default_factory=dict)
    queries: dict[str, InlineQuery] = field(default_factory=dict)
    shown: list[Shown] = field(default_factory=list)
    messages: dict[str, FakeMessage] = field(default_factory=dict)  # by inline_message_id
    # Telegram's cache: (query, offset, the asker or None for anyone) -> the answer.
    cache: dict[tuple[str, str, int | None], InlineAnswer] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # ----- the chats

    def dialog(self, a: FakeUser, b: FakeUser) -> FakeDialog:
        """A private chat between ``a`` and ``b``."""
        dialog = FakeDialog(DIALOG_BASE + next(self._ids), (a, b))
        self.dialogs[dialog.id] = dialog
        return dialog

    def chat_type(self, user: FakeUser, chat_id: int) -> str:
        """``InlineQuery.chat_type`` of a query ``user`` types in a chat he is in."""
        if chat_id == user.id:
            return "sender"
        if chat_id in self.dialogs:
            assert self.dialogs[chat_id].has(user.id), "he is not in that private chat"
            return "private"
        group = self.server.groups[chat_id]
        assert user.id not in group.outsiders, "only members write in a group"
        return group.type

    # ----- a query and its answer

    @property
    def answers(self) -> list[InlineAnswer]:
        """Every answer the bot gave, oldest first."""
        return [q.answer for q in self.queries.values() if q.answer is not None]

    def cached(self, user: FakeUser, query: str, offset: str) -> InlineAnswer | None:
        """What Telegram's cache holds for ``user`` typing ``query`` now, if anything."""
        now = self.server.clock()
        for key in ((query, offset, user.id), (query, offset, None)):
            answer = self.cache.get(key)
            if answer is not None and now < answer.at + answer.cache_time:
                return answer
        return None

    def ask(self, user: FakeUser, chat_id: int, query: str, offset: str) -> InlineQuery:
        """A new inline query (the cache had nothing): to be sent to the bot."""
        assert len(query) <= MAX_QUERY, "clients send at most 256 characters"
        number = next(self._ids)
        asked = InlineQuery(
            str(number * 104_729 + 5_000_000_000_000),
            user.id,
            chat_id,
            query,
            offset,
            self.chat_type(user, chat_id),
        )
        self.queries[asked.id] = asked
        return asked

    def see(
        self,
        user: FakeUser,
        chat_id: int,
        query: str,
        offset: str,
        answer: InlineAnswer | None,
        *,
        cached: bool,
    ) -> Shown:
        """Records what ``user`` saw (kept for tests to read, unless without history)."""
        seen = Shown(user.id, chat_id, query, offset, answer, cached)
        if self.server.history:
            self.shown.append(seen)
        return seen

    def answer(self, params: dict[str, Any]) -> bool:
        """answerInlineQuery."""
        query = self.queries.get(str(params.get("inline_query_id")))
        if query is None or query.answer is not None:
            raise bad(QUERY_INVALID.removeprefix("Bad Request: "))
        results = as_json(params.get("results"))
        if not isinstance(results, list):
            raise bad("can't parse inline query results: expected an Array")
        if len(results) > MAX_RESULTS:
            raise bad("RESULTS_TOO_MUCH")
        checked = [self._result(r) for r in results]
        ids = [r["id"] for r in checked]
        if len(set(ids)) != len(ids):
            raise bad("RESULT_ID_DUPLICATE")
        next_offset = str(params.get("next_offset") or "")
        if len(next_offset.encode()) > 64:
            raise bad("NEXT_OFFSET_INVALID")
        cache_time = int(params.get("cache_time", DEFAULT_CACHE_TIME))
        personal = bool(params.get("is_personal", False))
        answer = InlineAnswer(
            query.id,
            query.user_id,
            checked,
            personal,
            cache_time,
            next_offset,
            self._button(params.get("button")),
            self.server.clock(),
        )
        query.answer = answer
        if not self.server.history:  # the benchmark: keep nothing a test reads afterwards
            del self.queries[query.id]
        if cache_time > 0:
            now = answer.at
            self.cache = {k: a for k, a in self.cache.items() if now < a.at + a.cache_time}
            self.cache[query.query, query.offset, query.user_id if personal else None] = answer
        return True

    def _result(self, raw: Any) -> dict[str, Any]:
        """One result, checked as Telegram checks it (only articles are simulated)."""
        if not isinstance(raw, dict):
            raise bad("can't parse inline query result")
        result_id = raw.get("id")
        if not isinstance(result_id, str) or not result_id:
            raise bad("RESULT_ID_EMPTY" if not result_id else "RESULT_ID_INVALID")
        if len(result_id.encode()) > 64:
            raise bad("RESULT_ID_INVALID")
        if raw.get("type") != "article":
            raise ApiError(
                501, f"fakegram: inline result type {raw.get('type')!r} is not simulated"
            )
        if not raw.get("title"):
            raise bad("ARTICLE_TITLE_EMPTY")
        content = raw.get("input_message_content")
        if not isinstance(content, dict) or "message_text" not in content:
            raise bad('can\'t parse input message content: field "message_text" must be given')
        text, entities = self.server._text(
            {
                "text": content["message_text"],
                "parse_mode": content.get("parse_mode"),
                "entities": content.get("entities"),
            }
        )
        markup = self.server._markup(raw, via_bot=True)
        return {**raw, "text": text, "entities": entities, "reply_markup": markup}

    def _button(self, raw: Any) -> dict[str, Any] | None:
        """InlineQueryResultsButton: a text and exactly one of web_app, start_parameter."""
        button = as_json(raw)
        if button is None:
            return None
        kinds = [k for k in ("web_app", "start_parameter") if k in button]
        if not button.get("text") or len(kinds) != 1:
            raise bad(
                "can't parse inline query results button: "
                "InlineQueryResultsButton must have exactly one optional field"
            )
        start = button.get("start_parameter")
        if start is not None and not START_PARAMETER.fullmatch(str(start)):
            raise bad("START_PARAM_INVALID")
        return dict(button)

    # ----- a pick and its message

    def post(
        self, user: FakeUser, seen: Shown, result: dict[str, Any]
    ) -> tuple[FakeMessage, dict[str, Any] | None]:
        """``user`` picks ``result``: its message in the chat, from him via the bot, and
        the ``chosen_inline_result`` to send (None when feedback is off)."""
        assert seen.user_id == user.id, "a user picks only from the results he sees"
        markup = result.get("reply_markup")
        message = self.server.new_message(
            seen.chat_id,
            user.to_json(),
            text=result["text"],
            entities=result["entities"],
            reply_markup=markup,
            via_bot=self.server.bot_json_short(),
        )
        chosen: dict[str, Any] = {
            "result_id": result["id"],
            "from": user.to_json(),
            "query": seen.query,
        }
        if markup is not None:
            message.inline_message_id = self._new_id()
            self.messages[message.inline_message_id] = message
            chosen["inline_message_id"] = message.inline_message_id
        return message, chosen if self.feedback else None

    def _new_id(self) -> str:
        raw = base64.urlsafe_b64encode(secrets.token_bytes(24)).decode()
        return _ID_PREFIX + raw

    def message(self, params: dict[str, Any]) -> FakeMessage:
        """The inline message an edit names by ``inline_message_id``."""
        raw = str(params.get("inline_message_id"))
        if not INLINE_ID.fullmatch(raw):
            raise bad("invalid inline message identifier specified")
        message = self.messages.get(raw)
        if message is None or message.deleted:
            raise bad("MESSAGE_ID_INVALID")
        return message

    def chat_of(self, params: dict[str, Any]) -> int | None:
        """The chat of the inline message a call names (None: it names none we know)."""
        message = self.messages.get(str(params.get("inline_message_id")))
        return None if message is None else message.chat_id
