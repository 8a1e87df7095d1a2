"""Who is asking: Telegram's signed ``initData`` once, then a short session of our own.

A page opens with the ``initData`` string Telegram handed it, and exchanges it once for a
session token (:meth:`Checker.init_data`, then the server spends the string in Redis:
a second exchange of the same string is a replay and is refused). The check itself is
``telegram-webapp-auth``'s (the HMAC-SHA256 scheme of https://core.telegram.org/bots/webapps),
with an age limit, :data:`MAX_AGE`.

Every later request carries the session token instead: the user, the table the page was
opened for, and an expiry :data:`SESSION` ahead, signed with a key derived from the bot's
token (so every worker checks it without asking Redis). The page trades its token for a
fresh one before it runs out; a session never outlives the ``initData`` it came from, so a
captured token is worth what the captured ``initData`` would have been, minus replays.
Nothing else the page says about its user is believed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import asdict, dataclass
from datetime import timedelta

from telegram_webapp_auth.auth import TelegramAuthenticator, generate_secret_key
from telegram_webapp_auth.errors import BaseTWAError

# Telegram hands a page a fresh initData each time it is opened, and the page exchanges
# it at once; a day still lets a slow start through.
MAX_AGE = timedelta(hours=24)
# A session token's life: short, so that a captured one soon stops working on its own
# (the page renews it well before, see static/index.html).
SESSION = 15 * 60.0
_SESSION_KEY = b"cardtable-webapp-session"
KEY_LEN = 22  # characters of the initData's signature that name its session


@dataclass(frozen=True)
class Viewer:
    """A checked user of the page, and the page's table parameter (a deep-link payload):
    from ``initData`` its ``start_param``, in a session the table it is bound to.

    ``seated``: in a session, whether he played at that table when the session was given
    or last renewed; a spectator's move is refused without reading the table (a token
    from before the field existed takes the full path, which checks it again)."""

    user_id: int
    first_name: str
    language_code: str | None
    table: str | None
    seated: bool = True


@dataclass(frozen=True)
class Opening:
    """A checked ``initData``: its user, its signature (spent once, by the exchange), and
    until when (seconds since the epoch) it would be accepted."""

    viewer: Viewer
    signature: str
    until: float

    @property
    def key(self) -> str:
        """The session this opening starts (see :attr:`Session.key`): its signature's
        first characters, unique to this initData."""
        return self.signature[:KEY_LEN]


@dataclass(frozen=True)
class Session:
    """A checked session token: whom and which table it is for, and until when."""

    viewer: Viewer
    expires: float
    until: float  # the initData's own limit: no renewal goes past it
    key: str  # which session, the same through its renewals: what the limits count by


class Forged(Exception):
    """A credential that is missing, not signed with our key, malformed or too old."""


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Checker:
    """Checks initData strings and session tokens of one bot (its token)."""

    def __init__(self, token: str, max_age: timedelta = MAX_AGE) -> None:
        self._auth = TelegramAuthenticator(generate_secret_key(token))
        self._max_age = max_age
        self._key = hmac.new(_SESSION_KEY, token.encode(), hashlib.sha256).digest()

    def init_data(self, init_data: str | None) -> Opening:
        if not init_data:
            raise Forged("no initData")
        try:
            data = self._auth.validate(init_data, expr_in=self._max_age)
        except (BaseTWAError, ValueError, TypeError) as exc:
            # TypeError: a hash with characters that are not ASCII (hmac.compare_digest)
            raise Forged(str(exc) or type(exc).__name__) from None
        if data.user is None or not data.hash:
            raise Forged("initData without a user")
        user = data.user
        viewer = Viewer(user.id, user.first_name, user.language_code, data.start_param)
        return Opening(viewer, data.hash, data.auth_date + self._max_age.total_seconds())

    def _sign(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()

    def issue(self, viewer: Viewer, now: float, until: float, key: str) -> tuple[str, float]:
        """A token of session ``key`` for ``viewer`` and his table; its expiry."""
        expires = min(now + SESSION, until)
        fields = [asdict(viewer), expires, until, key]
        body = json.dumps(fields, separators=(",", ":")).encode()
        return f"{_b64(body)}.{_b64(self._sign(body))}", expires

    def session(self, token: str | None, now: float) -> Session:
        """The session a token carries, if we signed it and it has not run out."""
        body_text, _, signature = (token or "").partition(".")
        try:
            body = _unb64(body_text)
            good = hmac.compare_digest(_unb64(signature), self._sign(body))
        except (binascii.Error, ValueError):
            raise Forged("a malformed session token") from None
        if not good:
            raise Forged("a session token not signed by us")
        fields, expires, until, key = json.loads(body)
        if now >= expires:
            raise Forged("an expired session token")
        return Session(Viewer(**fields), expires, until, key)
