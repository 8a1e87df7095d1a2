"""Fixtures of the end-to-end tests: the bot in processes of its own (testing/botproc.py),
and deals the same at every run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.tables import games
from testing.botproc import Bots
from testing.fakeserver import FakeServer, serving
from testing.tabletop import dealing


@pytest.fixture
async def served() -> AsyncIterator[FakeServer]:
    """The fake Bot API over HTTP, answering at once."""
    async with serving() as fake:
        yield fake


@pytest.fixture
async def bots(tmp_path: Path) -> AsyncIterator[Bots]:
    """The test's bot processes, killed at its end (testing/botproc.py's Bots)."""
    started = Bots(tmp_path)
    yield started
    await started.close()


@pytest.fixture
def deals(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """``deals(seed)``: every game is dealt from ``random.Random(seed)`` (the bot deals
    from ``secrets``), so that the same games are played at every run: what only some
    deals bring (a transfer) comes each time, and a test takes the same time."""

    def seed(value: int) -> None:
        monkeypatch.setattr(games, "start", dealing(value))

    return seed
