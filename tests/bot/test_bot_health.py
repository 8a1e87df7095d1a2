"""bot.core.health: one line when an outage starts and one when it ends; pollers back off."""

from __future__ import annotations

import itertools
import logging
import time

import fakeredis
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.app import build_application
from bot.core.health import FIRST_BACKOFF, MAX_BACKOFF, QUIET, Health
from bot.core.services import services
from testing.clock import Clock, ManualClock
from testing.settings import settings

STEP = 0.125  # seconds between two ticks of a poller (exact in binary)


def poll_times(health: Health, clock: ManualClock, ticks: int) -> list[float]:
    """When, from now, a poller ticking every :data:`STEP` seconds is let through."""
    start, times = clock.now, []
    for _ in range(ticks):
        if health.may_poll():
            times.append(clock.now - start)
        clock.now += STEP
    return times


def test_pollers_back_off_while_redis_is_down_and_not_after(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bot.core.health")
    clock = ManualClock()
    health = Health(clock)
    assert poll_times(health, clock, 3) == [0.0, STEP, 2 * STEP]
    for _ in range(50):  # every tap and every tick of an outage fails
        health.failed(RedisConnectionError("Connection refused"))
    times = poll_times(health, clock, 32)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert times[0] == FIRST_BACKOFF
    assert gaps[:2] == [FIRST_BACKOFF * 2, MAX_BACKOFF]
    assert set(gaps[1:]) == {MAX_BACKOFF}, "never slower than the cap: play resumes soon"
    clock.now += 2.5
    health.ok()
    health.ok()
    assert poll_times(health, clock, 2) == [0.0, STEP]
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [
        ("WARNING", lines[0][1]),
        ("INFO", f"Redis answers again, after {32 * STEP + 2.5:.1f} s"),
    ]
    assert "Connection refused" in lines[0][1]
    health.failed(RedisConnectionError("gone"))  # a second outage is reported again
    assert health.down
    health.ok()
    assert not health.down
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"] * 2


def test_on_a_cluster_one_failover_is_one_outage_whatever_healthy_nodes_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A cluster's failover fails the calls of one node while the others answer: the
    outage ends only once no call failed for the quiet period, and is told once."""
    caplog.set_level(logging.INFO, logger="bot.core.health")
    clock = ManualClock()
    health = Health(clock, quiet=QUIET)
    for _ in range(8):  # the failing node's reads fail, a healthy node's succeed between
        health.failed(RedisConnectionError("Connection refused"))
        clock.now += 0.3
        health.ok()
        assert health.down, "a healthy node's answer ends no outage"
        clock.now += 1.0
    health.ok()
    assert health.down
    clock.now += QUIET
    health.ok()
    assert not health.down
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"]
    assert caplog.records[1].getMessage() == f"Redis answers again, after {8 * 1.3 + QUIET:.1f} s"


async def test_the_bots_pollers_back_off_on_its_own_clock() -> None:
    """The bot's health reads the clock the bot was built with (bot.app), as its pollers
    do: a test moves it through an outage's backoff instead of waiting it out."""
    clock = Clock(frozen=True)
    app = build_application(settings(), fakeredis.FakeAsyncRedis(), clock=clock)
    health = services(app).health
    health.failed(RedisConnectionError("Connection refused"))
    assert not health.may_poll()
    await clock.advance(FIRST_BACKOFF)
    assert health.may_poll()


async def test_the_systems_time_set_back_mid_outage_holds_no_poller_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An outage's backoff is a span: the system's time set back an hour (NTP) while
    Redis is away must not keep the pollers waiting that hour once the backoff is over."""
    app = build_application(settings(), fakeredis.FakeAsyncRedis())  # the system's clock
    health = services(app).health
    health.failed(RedisConnectionError("Connection refused"))
    wall, since = time.time(), time.monotonic()
    monkeypatch.setattr(time, "time", lambda: wall - 3600)
    monkeypatch.setattr(time, "monotonic", lambda: since + 2 * FIRST_BACKOFF)
    assert health.may_poll()
