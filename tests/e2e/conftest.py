"""Fixtures of the tests that run the bot in processes of its own (testing/botproc.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testing.botproc import Bots
from testing.fakegram import FakeTelegram
from testing.fakeserver import FakeServer


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
