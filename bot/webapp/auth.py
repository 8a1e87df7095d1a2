"""Who is asking: Telegram's signed ``initData``, checked with the bot's token.

The page sends the ``initData`` string Telegram handed it with every request; nothing
else it says about its user is believed. The check itself is ``telegram-webapp-auth``'s
(the HMAC-SHA256 scheme of https://core.telegram.org/bots/webapps), with an age limit:
a leaked string stops working after :data:`MAX_AGE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from telegram_webapp_auth.auth import TelegramAuthenticator, generate_secret_key
from telegram_webapp_auth.errors import BaseTWAError

# Telegram hands a page a fresh initData each time it is opened; a day covers a long
# evening of play without reopening it.
MAX_AGE = timedelta(hours=24)


@dataclass(frozen=True)
class Viewer:
    """A checked user of the page, and the table his ``start_param`` named (if any)."""

    user_id: int
    first_name: str
    language_code: str | None
    start_param: str | None


class Forged(Exception):
    """initData that is missing, not signed with our token, malformed or too old."""


class Checker:
    """Checks initData strings against one bot token."""

    def __init__(self, token: str, max_age: timedelta = MAX_AGE) -> None:
        self._auth = TelegramAuthenticator(generate_secret_key(token))
        self._max_age = max_age

    def viewer(self, init_data: str | None) -> Viewer:
        if not init_data:
            raise Forged("no initData")
        try:
            data = self._auth.validate(init_data, expr_in=self._max_age)
        except (BaseTWAError, ValueError) as exc:
            raise Forged(str(exc) or type(exc).__name__) from None
        if data.user is None:
            raise Forged("initData without a user")
        user = data.user
        return Viewer(user.id, user.first_name, user.language_code, data.start_param)
