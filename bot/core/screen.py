"""A message as the bot means to show it: HTML text plus inline buttons.

Renderers build :class:`Screen` values; :mod:`bot.service.delivery` turns them into Bot API calls
and compares :meth:`Screen.digest` with what a message already shows, so that an edit
which would change nothing is never sent.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Button:
    text: str
    data: str | None = None  # callback_data (see bot.core.callbacks)
    url: str | None = None
    web_app: str | None = None  # opens this HTTPS page as a Mini App (private chats only)
    asks: bool = True  # a tap on it is asked of its reader (False: a setting, e.g. where)
    # Puts "@bot <this>" into the reader's input field in the same chat (an inline query).
    inline_query: str | None = None


@dataclass(frozen=True)
class Screen:
    text: str  # HTML
    rows: tuple[tuple[Button, ...], ...] = field(default=())

    @property
    def prompt(self) -> bool:
        """True when it asks its reader to act (it carries buttons that act; a link, the
        Mini App's button or a setting asks nothing)."""
        return any(b.data and b.asks for row in self.rows for b in row)

    @functools.cached_property
    def digest(self) -> str:
        """What the screen shows, hashed (a pass compares it with what the message shows,
        and the slot of the message sent keeps it); worked out once per screen (no field:
        no part of ``==``)."""
        h = hashlib.blake2b(self.text.encode(), digest_size=12)
        for row in self.rows:
            h.update(b"\x1e")
            for b in row:
                h.update(
                    f"\x1f{b.text}\x1d{b.data or ''}\x1d{b.url or ''}{b.web_app or ''}"
                    f"{b.inline_query or ''}".encode()
                )
        return h.hexdigest()

    def markup(self) -> dict[str, Any] | None:
        """The Bot API's InlineKeyboardMarkup as JSON (None: no buttons)."""
        rows = [[_button(b) for b in row] for row in self.rows if row]
        return {"inline_keyboard": rows} if rows else None


def _button(button: Button) -> dict[str, Any]:
    if button.url is not None:
        return {"text": button.text, "url": button.url}
    if button.web_app is not None:
        return {"text": button.text, "web_app": {"url": button.web_app}}
    if button.inline_query is not None:
        return {"text": button.text, "switch_inline_query_current_chat": button.inline_query}
    return {"text": button.text, "callback_data": button.data or ""}


def rows_of(buttons: list[Button], width: int) -> list[tuple[Button, ...]]:
    """Buttons laid out ``width`` to a row (phone-sized keyboards)."""
    return [tuple(buttons[i : i + width]) for i in range(0, len(buttons), width)]


@dataclass(frozen=True)
class Article:
    """One result of an inline query: what its reader sees in the list (``title``,
    ``description``) and what picking it posts in the chat, via the bot (``posts``). Its
    ``id`` (at most 64 bytes) comes back in the pick's ``chosen_inline_result``."""

    id: str
    title: str
    description: str
    posts: Screen

    def json(self) -> dict[str, Any]:
        """The Bot API's InlineQueryResultArticle."""
        result: dict[str, Any] = {
            "type": "article",
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "input_message_content": {
                "message_text": self.posts.text,
                "parse_mode": "HTML",
                "link_preview_options": {"is_disabled": True},
            },
        }
        markup = self.posts.markup()
        if markup is not None:
            result["reply_markup"] = markup
        return result
