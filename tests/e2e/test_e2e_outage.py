"""Redis stops answering and comes back (bot.core.health): a server of the test's own
(testing/ownredis.py) stopped or frozen, or the store failing in the middle of an update."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.core import health
from bot.core.i18n import t
from bot.core.store import Store
from testing.chats import FakeUser
from testing.clock import Clock
from testing.fakegram import FakeTelegram
from testing.harness import AppFactory, Harness, harness_on
from testing.ownredis import OwnRedis
from testing.tabletop import Tabletop, playing, stored

UNAVAILABLE = t("en", "common.unavailable")
ANSWERED_WITHIN = 2.0  # seconds: a tap during an outage still gets its answer by then
# The bot's client as in production, but waiting 0.3 s rather than 1 s on a frozen server:
# each tap below waits that long.
CLIENT_TIMEOUT = 0.3


@pytest.fixture
async def outage_harness(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    own_redis: OwnRedis,
) -> AsyncIterator[Harness]:
    client = health.client(own_redis.url, timeout=CLIENT_TIMEOUT)
    async for h in harness_on(request, server, make_app, client):
        yield h
    await client.aclose()


async def timed_tap(h: Harness, top: Tabletop, user: FakeUser) -> tuple[str | None, float]:
    """``user`` taps his first move button: the answer's text, and how long it took."""
    prompt = top.prompt(user)
    assert prompt is not None
    started = time.perf_counter()
    answer = await h.tap(user, prompt, 0)
    assert answer.answered
    return answer.text, time.perf_counter() - started


async def durak(h: Harness, caplog: pytest.LogCaptureFixture) -> tuple[Tabletop, list[FakeUser]]:
    """A game of two in play; the log is watched from now on."""
    caplog.set_level(logging.INFO)
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "durak", players)
    caplog.clear()
    return top, players


@pytest.mark.parametrize("outage", ["stopped", "frozen"])
async def test_an_outage_is_told_at_once_logged_once_and_play_goes_on(
    outage_harness: Harness,
    own_redis: OwnRedis,
    caplog: pytest.LogCaptureFixture,
    clock: Clock,
    outage: str,
) -> None:
    h = outage_harness
    top, players = await durak(h, caplog)
    other = h.group()
    before = await stored(h, top.group)

    if outage == "stopped":
        own_redis.stop()
    else:
        own_redis.freeze(True)
    down = time.perf_counter()
    try:
        user = top.asked(players)
        for _ in range(2):  # every tap, not only the first
            text, took = await timed_tap(h, top, user)
            assert text == UNAVAILABLE
            assert took < ANSWERED_WITHIN
        await h.command(players[1], other, "/newgame")
        assert [m.text for m in h.screen(other) if m.from_bot] == [UNAVAILABLE]
        # The pollers tick meanwhile (each at least twice): a frozen server has made
        # the taps above wait out their timeouts already.
        await clock.advance(max(0.0, 1.2 - (time.perf_counter() - down)))
    finally:
        if outage == "stopped":
            own_redis.start()
        else:
            own_redis.freeze(False)

    assert (await stored(h, top.group))["played"]["moves"] == before["played"]["moves"], (
        "nothing half-applied"
    )
    text, took = await timed_tap(h, top, top.asked(players))
    assert text is None, "the first tap after the outage is played"
    assert took < ANSWERED_WITHIN
    assert (
        len((await stored(h, top.group))["played"]["moves"]) == len(before["played"]["moves"]) + 1
    )

    records = caplog.records
    warnings = [r for r in records if r.levelno >= logging.WARNING]
    assert [(r.levelname, r.name) for r in warnings] == [("WARNING", "bot.core.health")]
    ends = [r for r in records if r.levelno == logging.INFO and r.name == "bot.core.health"]
    assert len(ends) == 1
    assert not [r for r in caplog.records if r.exc_info], "no traceback"


async def test_redis_failing_in_the_middle_of_a_tap_is_an_outage_not_a_traceback(
    harness: Harness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The update was claimed, then Redis fails under the compare-and-set."""
    h = harness
    top, players = await durak(h, caplog)
    before = await stored(h, top.group)
    transact = Store.transact

    async def failing(*args: object, **kwargs: object) -> object:
        raise RedisConnectionError("Connection reset by peer")

    monkeypatch.setattr(Store, "transact", failing)
    text, _ = await timed_tap(h, top, top.asked(players))
    assert text == UNAVAILABLE
    assert await stored(h, top.group) == before
    monkeypatch.setattr(Store, "transact", transact)
    text, _ = await timed_tap(h, top, top.asked(players))
    assert text is None
    lines = [(r.levelname, r.name) for r in caplog.records if r.name == "bot.core.health"]
    assert lines == [("WARNING", "bot.core.health"), ("INFO", "bot.core.health")]
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
