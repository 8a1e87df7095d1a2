"""The process's log: its level and format, the update each line is about, no secrets.

``LOG_FORMAT=json`` writes one JSON object a line (``time``, ``level``, ``logger``,
``message``, ``update_id`` while an update is handled, ``error`` with the traceback), for
a log collector; ``text`` (the default) one readable line. The update is known through a
context variable (:data:`UPDATE_ID`), set by the first handler of each update
(bot.app): every line logged while handling it, in the tasks it starts too, carries it.

Every secret the settings hold (the token, the webhook's secret, the Redis URL) is
replaced by ``***`` in whatever a line would show, tracebacks included: PTB and httpx
put the token in the URLs they log.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from collections.abc import Iterable
from contextvars import ContextVar

UPDATE_ID: ContextVar[int | None] = ContextVar("update_id", default=None)
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MASK = "***"


class _Redacting(logging.Formatter):
    """A formatter that masks the secrets in everything it writes."""

    def __init__(self, secrets: Iterable[str], fmt: str | None = None) -> None:
        super().__init__(fmt)
        # Longest first, so that a secret containing another one is masked whole.
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def format(self, record: logging.LogRecord) -> str:
        return self.redact(super().format(record))


class TextFormatter(_Redacting):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__(secrets, TEXT)


class JsonFormatter(_Redacting):
    """One JSON object a line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": self.redact(record.getMessage()),
        }
        update = UPDATE_ID.get()
        if update is not None:
            line["update_id"] = update
        if record.exc_info:
            line["error"] = self.redact(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False)


def configure(level: str, form: str, secrets: Iterable[str]) -> None:
    """The root logger writes to stderr at ``level`` in ``form`` ("text" or "json")."""
    handler = logging.StreamHandler(sys.stderr)
    secrets = list(secrets)
    handler.setFormatter(JsonFormatter(secrets) if form == "json" else TextFormatter(secrets))
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # httpx logs every request at INFO, URL (and so the token) included.
    logging.getLogger("httpx").setLevel(logging.WARNING)
