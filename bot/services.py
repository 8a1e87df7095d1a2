"""What every handler needs, kept in ``application.bot_data``: settings, store, locks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakValueDictionary

from telegram.ext import Application, ContextTypes

from bot.config import Settings
from bot.health import Health
from bot.limiter import Limiter
from bot.store import Store

KEY = "services"


@dataclass
class Services:
    settings: Settings
    store: Store
    limiter: Limiter | None = None  # None: no rate limiting (tests)
    bot_username: str = ""
    clock: Callable[[], float] = time.time  # seconds since the epoch (tests move it)
    # One lock per table key in this process: a process serves one table's updates one at
    # a time (the CAS covers other processes); weak, so idle tables cost nothing.
    _locks: WeakValueDictionary[str, asyncio.Lock] = field(default_factory=WeakValueDictionary)
    # Tables this process is delivering (bot.delivery), each with whether a commit made
    # meanwhile asks for one more round.
    delivering: dict[str, bool] = field(default_factory=dict)
    # The one pending wake-up per table of this process's deliveries (bot.delivery).
    wakes: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    # Whether Redis answers (bot.health): an outage is reported once, pollers back off.
    health: Health = field(default_factory=Health)

    def lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock


def services(
    context: ContextTypes.DEFAULT_TYPE | Application[Any, Any, Any, Any, Any, Any],
) -> Services:
    data = context.bot_data
    result = data[KEY]
    assert isinstance(result, Services)
    return result
