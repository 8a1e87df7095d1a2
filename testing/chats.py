"""The world the fake Bot API keeps: the bot, users, groups, messages, calls, answers.

As Telegram holds them and sends them in updates (``to_json``, ``chat_json``), so that
the server (:mod:`testing.fakegram`) and the users' side (:mod:`testing.harness`) share
one picture of every chat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from testing.errors import ApiError

BOT_ID = 7_000_000_001
BOT_USERNAME = "cardtable_test_bot"
BOT_TOKEN = f"{BOT_ID}:AAFakeTokenForTestsOnly_0123456789abc"


@dataclass
class FakeUser:
    """A Telegram user. ``started``: has opened the private chat with the bot."""

    id: int
    first_name: str
    language_code: str | None = "en"
    username: str | None = None
    started: bool = True
    blocked: bool = False
    # False: his clients are offline; an ephemeral message sent to him meanwhile never
    # reaches him (the Bot API delivers them best effort; the bot is not told).
    online: bool = True
    is_bot: bool = False  # another bot, a member of a group

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        for key in ("username", "language_code"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data

    def chat_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": "private", "first_name": self.first_name}
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
    # A public group (@username): anyone may read it and tap its buttons, outsiders too;
    # a private group's messages only its members see.
    username: str | None = None
    # False: the bot was never added; its users may still post the bot's inline results
    # there (testing.fakeinline), and the bot can edit those, nothing else.
    has_bot: bool = True

    def chat_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type, "title": self.title}
        if self.is_forum:
            data["is_forum"] = True
        if self.username:
            data["username"] = self.username
        return data


@dataclass
class FakeDialog:
    """A private chat between two users, the bot not in it: only inline mode reaches it
    (testing.fakeinline). Its ``id`` is the fake's own; Telegram never shows it to the bot."""

    id: int
    users: tuple[FakeUser, FakeUser]

    def chat_json(self) -> dict[str, Any]:
        """As the first of the two sees it: a private chat with the other."""
        return self.users[1].chat_json()

    def has(self, user_id: int) -> bool:
        return user_id in (u.id for u in self.users)


@dataclass(frozen=True)
class Button:
    """One inline-keyboard button as a user sees it."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    row: int = 0
    col: int = 0
    web_app: str | None = None  # the Mini App's page
    # Puts "@bot <this>" in the tapper's input field (an inline query in the same chat).
    switch_inline_query_current_chat: str | None = None


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
    # An ephemeral message (testing.fakegram's "ephemeral messages"): the one user who
    # sees it (as User JSON), and whether it never reached him (he was offline).
    receiver: dict[str, Any] | None = None
    dropped: bool = False
    replaces: int | None = None  # shown to him in place of this group message
    # Posted by a user from the bot's inline results: "via @bot" (the bot as User JSON),
    # and, with a keyboard, the id by which the bot edits it (testing.fakeinline).
    via_bot: dict[str, Any] | None = None
    inline_message_id: str | None = None

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
                    b.get("switch_inline_query_current_chat"),
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

    @property
    def receiver_id(self) -> int | None:
        """The user an ephemeral message is for (None: everyone in the chat sees it)."""
        return None if self.receiver is None else int(self.receiver["id"])

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "from": self.sender,
            "chat": self.chat,
            "date": self.date,
        }
        if self.receiver is not None:  # Bot API 10.2: message_id 0, its own id space
            data["message_id"] = 0
            data["ephemeral_message_id"] = self.message_id
            data["receiver_user"] = self.receiver
        if self.via_bot is not None:
            data["via_bot"] = self.via_bot
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
    chat_id: int | None = None  # the chat of the tapped message
    message_id: int = 0  # the tapped message (an ephemeral one: its ephemeral id)
    at: float = 0.0  # when he tapped (the server's clock)
    ephemeral: bool = False  # the tapped message was an ephemeral one
    inline_message_id: str | None = None  # the tapped message was sent via the bot
    url: str | None = None  # what the answer opens: a t.me/<bot>?start= link


@dataclass
class Fault:
    """An error injected into the next matching calls (flood control, outages...)."""

    method: str | None
    error: ApiError
    times: int = 1
    when: Callable[[dict[str, Any]], bool] | None = None
