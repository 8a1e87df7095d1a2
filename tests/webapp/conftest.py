"""The Mini App's tests' own fixtures."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from bot.core.services import Services
from bot.webapp import streams
from testing.harness import Harness
from testing.webapp import client, page_server


@pytest.fixture
async def web(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the bot's page server on a loopback port, keep-alives every 50 ms."""
    monkeypatch.setattr(streams, "KEEPALIVE", 0.05)
    async with page_server(harness) as root, httpx.AsyncClient(base_url=root, timeout=10) as c:
        yield c


@pytest.fixture
async def asgi(harness: Harness) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the bot's ASGI app, called in process."""
    async with client(harness) as c:
        yield c


@pytest.fixture
def touches(monkeypatch: pytest.MonkeyPatch) -> Callable[[Harness, str], dict[str, int]]:
    """Counts, from its call on, what touches the table at a key of a harness's Redis:
    its lock taken, and any command naming the key (a read of its hash or a write)."""

    def spy(h: Harness, key: str) -> dict[str, int]:
        touched = {"lock": 0, "redis": 0}
        lock, execute = Services.lock, h.redis.execute_command

        def counted_lock(self: Services, name: str) -> Any:
            touched["lock"] += name == key
            return lock(self, name)

        async def spied(*args: Any, **options: Any) -> Any:
            named = [a.decode() if isinstance(a, bytes) else str(a) for a in args[1:4]]
            touched["redis"] += key in named
            return await execute(*args, **options)

        monkeypatch.setattr(Services, "lock", counted_lock)
        monkeypatch.setattr(h.redis, "execute_command", spied)
        return touched

    return spy
