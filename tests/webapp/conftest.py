"""The Mini App's tests' own fixtures."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

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
