"""A failover is a pause, ridden out as an outage (bot.core.health.PAUSES); what a script
returns (NOSCRIPT, CROSSSLOT, a bug) is an error: logged with its traceback, never swallowed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import fakeredis
import pytest
from redis.exceptions import (
    ClusterCrossSlotError,
    ClusterDownError,
    NoScriptError,
    ReadOnlyError,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot import inbox
from bot.core import health
from bot.core.health import PAUSES, UnblockedError
from bot.core.i18n import t
from bot.core.limiter import Limiter, Priority
from bot.core.services import guarded, services
from bot.core.store import Store
from testing.harness import Harness
from testing.settings import REDIS_URL
from testing.tabletop import Tabletop, playing, stored

UNAVAILABLE = t("en", "common.unavailable")

# What each kind of pause looks like as redis-py raises it.
A_PAUSE: dict[str, Exception] = {
    "connection": RedisConnectionError("Connection refused"),
    "timeout": RedisTimeoutError("Timeout reading from socket"),
    "clusterdown": ClusterDownError("The cluster is down"),
    "tryagain": TryAgainError("Multiple keys request during rehashing of slot"),
    "uncovered": SlotNotCoveredError('Slot "42" is not covered by the cluster.'),
    "readonly": ReadOnlyError("You can't write against a read only replica."),
    "unblocked": UnblockedError("force unblock from blocking operation"),
}
# And errors that are not: a script's, or a key layout's.
AN_ERROR: dict[str, Exception] = {
    "noscript": NoScriptError("No matching script. Please use EVAL."),
    "crossslot": ClusterCrossSlotError("Keys in request don't hash to the same slot"),
    "bug": ResponseError("user_script:3: attempt to compare nil with number"),
}


@pytest.mark.redis
async def test_an_unblocked_reply_is_read_as_a_pause() -> None:
    """What a demoted primary answers a blocking read with, which redis-py does not name."""
    reader, other = health.client(REDIS_URL), health.client(REDIS_URL)
    connection = await reader.connection_pool.get_connection()
    try:
        await connection.send_command("CLIENT", "ID")
        client_id = await connection.read_response()
        await connection.send_command("BLPOP", "ct:test:never", 5)
        while not await other.execute_command("CLIENT", "UNBLOCK", client_id, "ERROR"):
            pass  # not blocked yet
        with pytest.raises(PAUSES) as raised:
            await connection.read_response()
        assert isinstance(raised.value, UnblockedError)
    finally:
        await reader.connection_pool.release(connection)
        await reader.aclose()
        await other.aclose()


@pytest.mark.redis
async def test_a_connection_closed_under_its_user_is_a_pause() -> None:
    """As redis-py's cluster client closes every connection after a failover, those in use
    too: never an AttributeError (bot.core.health), which failed its update and lost the tap."""
    met: list[str] = []
    for steps in range(5):
        redis = health.client(REDIS_URL)
        connection = await redis.connection_pool.get_connection()
        closing = asyncio.create_task(connection.disconnect())
        for _ in range(steps):
            await asyncio.sleep(0)  # one step of the loop: the close goes on
        try:
            await connection.send_command("PING")
            await connection.read_response()
        except PAUSES:
            pass
        except Exception as exc:  # what this test is about
            met.append(f"{steps} steps in: {type(exc).__name__}: {exc}")
        finally:
            await closing
            await redis.connection_pool.release(connection)
            await redis.aclose()
    assert not met


def _failing(exc: Exception) -> Any:
    async def fail(*args: object, **kwargs: object) -> object:
        raise exc

    return fail


@pytest.mark.telegram_complaints  # an error's tap is logged, and left unanswered: expected
@pytest.mark.parametrize("kind", [*A_PAUSE, *AN_ERROR])
async def test_a_tap_is_told_redis_is_away_during_a_pause_and_a_script_error_is_logged(
    harness: Harness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A pause: the tap is told at once, one WARNING, no traceback, play goes on after.
    An error: not an outage; logged once, with its traceback."""
    h = harness
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "durak", players)
    before = await stored(h, top.group)
    caplog.set_level(logging.INFO)
    caplog.clear()
    transact = Store.transact
    exc = A_PAUSE.get(kind) or AN_ERROR[kind]
    monkeypatch.setattr(Store, "transact", _failing(exc))
    told = await _tap(h, top, players, answered=kind in A_PAUSE)
    monkeypatch.setattr(Store, "transact", transact)
    assert await stored(h, top.group) == before
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    if kind in A_PAUSE:
        assert told == UNAVAILABLE
        assert (await _tap(h, top, players)) is None, "played once the pause is over"
        assert [(r.levelname, r.name) for r in loud] == [("WARNING", "bot.core.health")]
        assert not [r for r in caplog.records if r.exc_info], "no traceback"
        assert h.problems() == []
    else:
        assert told != UNAVAILABLE and not services(h.app).health.down, "not an outage"
        assert [(r.levelname, r.exc_info[1] if r.exc_info else None) for r in loud] == [
            ("ERROR", exc)
        ], "logged once, with its traceback"


async def _tap(h: Harness, top: Tabletop, players: list[Any], answered: bool = True) -> Any:
    user = top.asked(players)
    prompt = top.prompt(user)
    assert prompt is not None
    answer = await h.tap(user, prompt, 0)
    assert answer.answered or not answered
    return answer.text


@pytest.mark.parametrize("kind", [*A_PAUSE, *AN_ERROR])
async def test_the_limiter_lets_calls_through_during_a_pause_and_raises_a_script_error(
    kind: str,
) -> None:
    """A CROSSSLOT taken for an outage would let every call through, and Telegram say 429."""
    limiter = Limiter(fakeredis.FakeAsyncRedis())
    failing = _failing(A_PAUSE.get(kind) or AN_ERROR[kind])
    limiter._acquire = limiter._cooldown = limiter._flooded = failing
    if kind in A_PAUSE:
        assert await limiter.try_acquire([(1, Priority.PROMPT), (2, Priority.TABLE)]) == [0.0, 0.0]
        assert await limiter.cool(1)
        await limiter.flooded(-100, None, 3.0)
        return
    with pytest.raises(RedisError):
        await limiter.try_acquire([(1, Priority.PROMPT)])
    with pytest.raises(RedisError):
        await limiter.cool(1)
    with pytest.raises(RedisError):
        await limiter.flooded(-100, None, 3.0)


@pytest.mark.telegram_complaints  # the script errors are logged: expected
async def test_a_poller_backs_off_during_a_pause_and_from_a_script_error(harness: Harness) -> None:
    svc = services(harness.app)
    for kind, exc in {**A_PAUSE, **AN_ERROR}.items():
        await guarded(_failing(exc))(harness.app)  # neither raises: the poller goes on
        assert svc.health.down == (kind in A_PAUSE), f"only a pause is an outage: {kind}"
        svc.health.ok()


@pytest.mark.telegram_complaints  # the script errors are logged: expected
async def test_a_pollers_script_error_is_logged_once_until_it_works_again(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A CROSSSLOT in a poller that runs twice a second: one traceback, not two a second."""
    now = [0.0]
    svc = services(harness.app)
    svc.health.clock = lambda: now[0]
    failing: list[Exception] = [
        ClusterCrossSlotError("Keys in request don't hash to the same slot")
    ]
    calls = 0

    async def renew_job(app: Any) -> bool:
        nonlocal calls
        calls += 1
        if failing:
            raise failing[0]
        return True

    run = guarded(renew_job)
    caplog.set_level(logging.INFO)

    async def ticks(seconds: float) -> None:
        for _ in range(int(seconds / 0.5)):
            await run(harness.app)
            now[0] += 0.5

    def tracebacks() -> list[BaseException | None]:
        return [r.exc_info[1] for r in caplog.records if r.exc_info]

    await ticks(10)
    assert tracebacks() == [failing[0]], "once, with its traceback"
    assert calls <= 12, "backed off, as from a pause"  # 20 ticks: 0.25, 0.5, then 1 s apart
    assert not svc.health.down, "not an outage"
    failing[0] = NoScriptError("No matching script")
    await ticks(5)
    assert tracebacks()[1:] == [failing[0]]  # a new error: logged once as well
    failing.clear()
    await ticks(2)
    assert "poller renew_job works again" in caplog.messages
    failing.append(NoScriptError("No matching script"))
    await ticks(2)
    assert len(tracebacks()) == 3, "news again after it had worked"


async def test_the_lease_renewal_is_a_guarded_poller(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bot.app starts renew_job through guarded, and renew_job lets errors through to it."""
    from bot import app as bot_app
    from bot.service import delivery

    jobs: list[Any] = []
    monkeypatch.setattr(bot_app, "every", lambda app, s, job, **kw: jobs.append(job))
    bot_app._poll(harness.app)
    assert [j.__name__ for j in jobs] == ["due_job", "renew_job"]
    assert all(j is not delivery.due_job and j is not delivery.renew_job for j in jobs)
    svc = services(harness.app)
    assert await delivery.renew_job(harness.app) is False  # nothing held: Redis not asked
    svc.delivering["ct:{0}:table:-1:0"] = None

    async def down(keys: Any) -> None:
        raise A_PAUSE["connection"]

    monkeypatch.setattr(svc.store, "renew", down)
    with pytest.raises(RedisConnectionError):
        await delivery.renew_job(harness.app)
    svc.delivering.clear()


class _Inbox:
    """The webhook's stream as a worker reads it, failing first with ``exc``."""

    def __init__(self, worker: inbox.Worker, exc: Exception) -> None:
        self.worker, self.exc, self.reads = worker, exc, 0

    async def make_group(self) -> None:
        return None

    async def take(self, count: int, block_ms: int) -> list[Any]:
        self.reads += 1
        if self.reads == 1:
            raise self.exc
        self.worker.stopping.set()
        return []


@pytest.mark.parametrize("kind", ["unblocked", "readonly", "connection"])
async def test_the_inbox_reader_rides_a_failover_out(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Cut off by a demoted primary, the worker reads again rather than leave the stream."""
    svc = services(harness.app)
    worker = inbox.Worker(inbox=None)  # type: ignore[arg-type]
    stream = _Inbox(worker, A_PAUSE[kind])
    worker.inbox = stream  # type: ignore[assignment]
    monkeypatch.setattr(svc.clock, "sleep", _no_wait)
    await inbox._read(harness.app, worker)
    assert stream.reads == 2 and not svc.health.down


async def _no_wait(seconds: float) -> None:
    return None
