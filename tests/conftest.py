"""Shared fixtures: a fake Telegram, Redis (fakeredis or the real one), the running bot.

``harness`` is the bot against fakeredis; ``real_harness`` the bot against the real Redis
at 127.0.0.1:6379 (database :data:`testing.settings.REDIS_TEST_DB`; the test's keys are
deleted after it, and it is skipped when no Redis answers). Both check on teardown that
the bot did nothing a real Telegram would have complained about
(:func:`testing.harness.harness_on`). The helpers themselves are the package ``testing``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import time
import warnings
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis as sync_redis
import redis.asyncio as aioredis

from bot.core import health
from testing import luacache, redis_servers
from testing.browser import PICTURES, Tabs, chromiums
from testing.clock import Clock
from testing.computers import DELAY
from testing.fakegram import FakeTelegram
from testing.harness import AppFactory, Harness, harness_on, started_bot, stop_app
from testing.ownredis import OwnRedis
from testing.settings import REDIS_URL
from testing.webapp import page_server


def pytest_configure(config: pytest.Config) -> None:
    luacache.install()  # fakeredis compiles each Lua script once, not on every call
    config.addinivalue_line(
        "markers", "telegram_complaints: the test provokes Bot API errors on purpose"
    )
    config.addinivalue_line("markers", "redis: needs the real Redis on 127.0.0.1:6379")
    config.addinivalue_line(
        "markers", "running_clock: real time moves the clock too (unmarked, only the test does)"
    )
    config.addinivalue_line(
        "markers", "settings(**values): every harness fixture's bot built with these, by keyword"
    )


# ----- on xdist's workers (scripts/test), the slowest files first in each worker's share,
# each file whole on one worker (its module's servers, and the session's Chromium for the
# page games, started once), the files dealt to the share with the fewest seconds so far:
# worksteal hands each worker one contiguous share and lets an idle one steal the tail of
# another's, so what is left at the end is quick. Seconds: summed test times of one run.
SLOWEST = {"e2e/test_e2e_failover": 20, "e2e/test_e2e_deploy": 12,
           "webapp/test_webapp_durak_page webapp/test_webapp_football": 30,
           "engine/test_game_contract": 6, "e2e/test_e2e_languages": 5, "e2e/test_e2e_durak": 5,
           "e2e/test_wheel": 5, "e2e/test_e2e_answers": 2, "bot/test_fuzz_inputs": 1,
           "e2e/test_e2e_inline": 8, "bot/test_bot_store": 1, "e2e/test_e2e_edges": 2}  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    group = {f"tests/{name}.py": files for files in SLOWEST for name in files.split()}
    if workers < 2 or not any(i.nodeid.split("::")[0] in group for i in items):
        return
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    seconds = [0] * workers
    for files in sorted(SLOWEST, key=lambda files: -SLOWEST[files]):
        w = seconds.index(min(seconds))
        shares[w] += [i for i in items if group.get(i.nodeid.split("::")[0]) == files]
        seconds[w] += SLOWEST[files]
    quick = iter([i for i in items if i.nodeid.split("::")[0] not in group])
    left = len(items)
    for w, share in enumerate(shares):  # the sizes xdist's worksteal gives them
        size = left // (workers - w)
        share += [next(quick) for _ in range(size - len(share))]
        left -= len(share)
    items[:] = [i for share in shares for i in share] + list(quick)


# Every script call checks, as a Redis Cluster would, that its keys are of one hash slot
# and all named in KEYS (bot.core.lua): in this process and in the bot processes it starts.
os.environ["CARDTABLE_STRICT_SCRIPTS"] = "1"

# ----- opt-in: CPU seconds per test (CARDTABLE_CPU_PROFILE=1), to rank tests by what they cost
# rather than by wall time, which the machine's other load inflates.
CPU_PROFILE = os.environ.get("CARDTABLE_CPU_PROFILE") == "1"
_CPU_STARTS: dict[str, float] = {}
_CPU_SPENT: dict[str, float] = {}


def _cpu_now() -> float:
    """This process's CPU seconds plus those of its children it has waited for (a bot
    process a test started counts once the test has stopped it)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    if CPU_PROFILE:
        _CPU_STARTS[item.nodeid] = _cpu_now()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, None, None]:
    if CPU_PROFILE and call.when == "teardown" and item.nodeid in _CPU_STARTS:
        item.user_properties.append(("cpu", _cpu_now() - _CPU_STARTS.pop(item.nodeid)))
    yield


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "cpu" and report.when == "teardown":
            _CPU_SPENT[report.nodeid] = float(value)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _CPU_SPENT:
        return
    write = terminalreporter.write_line
    total = sum(_CPU_SPENT.values())
    write(f"CPU seconds over {len(_CPU_SPENT)} tests: {total:.1f}; the 40 costliest:")
    for nodeid, spent in sorted(_CPU_SPENT.items(), key=lambda kv: -kv[1])[:40]:
        write(f"{spent:8.2f}  {nodeid}")
    by_file: dict[str, float] = {}
    for nodeid, spent in _CPU_SPENT.items():
        by_file[nodeid.split("::")[0]] = by_file.get(nodeid.split("::")[0], 0.0) + spent
    write("CPU seconds by file, the 20 costliest:")
    for path, spent in sorted(by_file.items(), key=lambda kv: -kv[1])[:20]:
        write(f"{spent:8.2f}  {path}")


@pytest.fixture
def server(clock: Clock) -> FakeTelegram:
    return FakeTelegram(clock=clock)


@pytest.fixture
def clients_closed() -> Iterator[None]:
    """After the test, what it left behind is collected without an unclosed Redis client
    or connection: asyncio logs each as an error, in whichever later test collects it.
    What was there before the test is frozen meanwhile (gc.freeze), so that the collection
    goes through what the test made alone: 2 ms, not the 0.12-0.28 s of a full one (a
    cycle through an older object is left to a later collection, as without this)."""
    gc.freeze()
    yield
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gc.collect()
    finally:
        gc.unfreeze()
    assert [str(w.message) for w in caught if "Unclosed" in str(w.message)] == []


@pytest.fixture
def clock(request: pytest.FixtureRequest) -> Clock:
    return Clock(frozen=request.node.get_closest_marker("running_clock") is None)


@pytest.fixture
async def fake_redis() -> AsyncIterator[aioredis.Redis]:
    client = fakeredis.FakeAsyncRedis()
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def emptied_test_db() -> None:
    """This worker's Redis database emptied once, before its first real-Redis test: a
    run that was killed could not clean up, and a table it left due would be delivered
    by every later test's bot, into chats the fake Telegram does not know."""
    client = sync_redis.Redis.from_url(REDIS_URL, socket_timeout=1)
    with contextlib.suppress(sync_redis.RedisError):  # none answers: real_redis skips
        client.flushdb()
    client.close()


@pytest.fixture
async def real_redis(server: FakeTelegram, emptied_test_db: None) -> AsyncIterator[aioredis.Redis]:
    """The real Redis, in this worker's own database (testing.settings.REDIS_TEST_DB):
    what the test left is deleted at the end, every key that was not there before it (a
    game's standings marks and a page's spent initData name no chat or user)."""
    client = health.client(REDIS_URL)  # as the bot's: its timeouts and retries
    try:
        before = {key async for key in client.scan_iter(count=1000)}
    except (OSError, aioredis.ConnectionError, aioredis.TimeoutError):
        await client.aclose()
        pytest.skip("no Redis answers on 127.0.0.1:6379")
    yield client
    left = [key async for key in client.scan_iter(count=1000) if key not in before]
    if left:
        await client.delete(*left)
    idents = [str(i) for i in (*server.groups, *server.users)]
    # Shared indexes (e.g. the bot's due set of table keys): drop our members only.
    async for key in client.scan_iter(count=1000, _type="zset"):
        mine = [m async for m, _ in client.zscan_iter(key) if any(i in m.decode() for i in idents)]
        if mine:
            await client.zrem(key, *mine)
    await client.aclose()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    """A redis-server of the test's own (testing/ownredis.py), killed after it."""
    if (why := redis_servers.why_not()) is not None:
        pytest.skip(why)
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
async def make_app(server: FakeTelegram, clock: Clock) -> AsyncIterator[AppFactory]:
    """Builds and starts bot Applications on ``server``; stops them all at the end."""
    apps: list[Any] = []

    async def make(redis: aioredis.Redis, *, latency: float = 0.0, **overrides: Any) -> Any:
        """``latency``: seconds each Bot API call takes (a slow or distant process)."""
        app = await started_bot(server, redis, clock, latency=latency, **overrides)
        apps.append(app)
        return app

    yield make
    for app in apps:
        await stop_app(app)


def _on_fakeredis(**settings: Any) -> Any:
    """A harness fixture: the bot on fakeredis, built with ``settings`` (and over them the
    test's ``settings`` marker's)."""

    @pytest.fixture
    async def fixture(
        request: pytest.FixtureRequest,
        server: FakeTelegram,
        make_app: AppFactory,
        fake_redis: aioredis.Redis,
    ) -> AsyncIterator[Harness]:
        async for h in harness_on(request, server, make_app, fake_redis, **settings):
            yield h

    return fixture


harness = _on_fakeredis()
# The bot with its own default: every player's hand in the group, as an ephemeral message
# (docs/ephemeral.md).
group_harness = _on_fakeredis(hands="group")
# The computer's pace quick (testing.computers.DELAY), hands in private or in the group.
quick = _on_fakeredis(computer_delay=DELAY)
quick_group = _on_fakeredis(computer_delay=DELAY, hands="group")


@pytest.fixture
async def real_harness(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    real_redis: aioredis.Redis,
) -> AsyncIterator[Harness]:
    async for h in harness_on(request, server, make_app, real_redis):
        yield h


@pytest.fixture
async def quick_real(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    real_redis: aioredis.Redis,
) -> AsyncIterator[Harness]:
    """The computer's pace quick, on the real Redis."""
    async for h in harness_on(request, server, make_app, real_redis, computer_delay=DELAY):
        yield h


# ----- the Mini App in a browser (the browser tests: its page, durak and football)

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tabs]:
    """Two phone-sized headless Chromium, started once for the worker's session."""
    with chromiums([tmp_path_factory.mktemp(f"chromium{i}") for i in range(2)]) as drivers:
        tabs = Tabs(drivers)
        yield tabs
        tabs.close()


@pytest.fixture
def browsers(chromium: Tabs) -> Iterator[list[Any]]:
    """The two Chromium (Ann's and Bob's, or a player's and a spectator's), each showing a
    fresh tab: nothing a test before set up in its tab reaches this one. The test's tabs
    are frozen after it and closed for the next test's fresh ones (:class:`Tabs`), so
    that no page of it runs on while the other tests do."""
    yield chromium.ready()
    chromium.renew()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where a browser test's screenshots go: docs/ with ``CARDTABLE_SCREENSHOTS=1`` (the
    pictures docs/webapp.md shows); else none is taken (:data:`testing.browser.PICTURES`)."""
    return DOCS if PICTURES else tmp_path


@pytest.fixture
async def root(harness: Harness) -> AsyncIterator[str]:
    """The address of the bot's page server (the Mini App and its API) for a browser."""
    async with page_server(harness) as url:
        yield url
