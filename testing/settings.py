"""The bot's settings in a test, and the Redis database a test run may use."""

from __future__ import annotations

import os
from typing import Any

from bot.core.config import Settings
from testing.chats import BOT_TOKEN


def _test_db() -> int:
    """Runs that overlap on one database share the bot's global keys (the due set): give
    each its own with REDIS_TEST_DB=<n>. A parallel run's workers (pytest-xdist: gw0, gw1,
    ...) take <n>, <n>+1, ... in turn."""
    base = int(os.environ.get("REDIS_TEST_DB", "14"))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return base + int(worker.removeprefix("gw")) if worker.startswith("gw") else base


REDIS_TEST_DB = _test_db()
REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_TEST_DB}"


def settings(**overrides: Any) -> Settings:
    """What a test's bot runs with: no coalescing delay, no rate limiter (a test that is
    about them turns them on), the test database, hands in private chats unless a player
    chooses the group (the tests of hands in the group ask for ``hands="group"``, the
    bot's own default: tests/conftest.py's ``group_harness``); ``overrides`` on top, by the
    settings' flat names (a name no part of :class:`Settings` has is a TypeError)."""
    values: dict[str, Any] = {
        "telegram_bot_token": BOT_TOKEN,
        "redis_url": REDIS_URL,
        "table_edit_interval": 0,
        "rate_limit": False,
        "hands": "private",
    }
    return Settings.read(**{**values, **overrides})
