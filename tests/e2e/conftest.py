"""Fixtures of the end-to-end tests: bot processes (testing/botproc.py), a bot tuned by a marker."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from testing.botproc import Bots
from testing.fakegram import FakeTelegram
from testing.fakeserver import FakeServer
from testing.harness import AppFactory, Harness, harness_on


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "settings(**overrides): the bot settings of ``tuned``")


@pytest.fixture
async def tuned(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    fake_redis: aioredis.Redis,
) -> AsyncIterator[Harness]:
    """The usual harness, with the settings the test's ``settings`` marker names."""
    overrides = request.node.get_closest_marker("settings").kwargs
    async for h in harness_on(request, server, make_app, fake_redis, **overrides):
        yield h


@pytest.fixture
async def served() -> AsyncIterator[FakeServer]:
    """The fake Bot API over HTTP, answering at once."""
    fake = FakeServer(FakeTelegram(), delay=(0.0, 0.0))
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def bots(tmp_path: Path) -> AsyncIterator[Bots]:
    """The test's bot processes, killed at its end (testing/botproc.py's Bots)."""
    started = Bots(tmp_path)
    yield started
    await started.close()
