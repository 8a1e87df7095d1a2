"""Nothing acknowledged is lost (bot.core.replicas): on a primary with a replica of the
test's own (testing/redis_servers.py), a write that acknowledges something counts only
once the replica has it. tests/e2e/test_e2e_failover.py times a failover on real
Sentinels."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import ContextVar
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.sentinel import SentinelConnectionPool
from redis.exceptions import ResponseError

from bot.core import connect, health
from bot.core import inbox as inbox_stream
from bot.core import primary as primary_module
from bot.core import replicas as replicas_module
from bot.core import store as store_module
from bot.core.config import Settings
from bot.core.i18n import t
from bot.core.keys import CHANGED, SLOT
from bot.core.keys import table_key as key_of
from bot.core.models import Lobby, Table
from bot.core.replicas import Replicas, Unconfirmed
from bot.core.scripts import SAVE, Save
from bot.core.store import Store, Write
from testing import redis_servers
from testing.clock import Clock, ManualClock
from testing.fakegram import FakeTelegram
from testing.fakeserver import SECRET_HEADER
from testing.harness import AppFactory, Harness, harness_on
from testing.ownredis import OwnRedis
from testing.redis_servers import Pair, Server
from testing.settings import settings
from testing.tabletop import Tabletop, playing, stored, table_key
from testing.waits import until
from testing.webapp import bearer, client, page_server, table_for_two, token

UNCONFIRMED = t("en", "common.unconfirmed")
# The bot's REDIS_WAIT_MS here: each unconfirmed write costs this much, and a replica on a
# busy machine must confirm within it.
WAIT_MS = 250
HOOK = "https://cards.example.org/hook"
SECRET = "s3cret"


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[redis_servers.Ahead[Pair]]:
    """Each test's pair started while the test before it ran."""
    if (why := redis_servers.why_not()) is not None:
        pytest.skip(why)
    ahead = redis_servers.Ahead(tmp_path_factory.mktemp("pairs"), Pair)
    yield ahead
    ahead.close()


@pytest.fixture
def pair(pairs: redis_servers.Ahead[Pair]) -> Iterator[Pair]:
    servers = pairs.take()
    yield servers
    servers.stop()


@pytest.fixture(scope="module", autouse=True)
def cluster(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Future[redis_servers.Cluster] | None]:
    """The cluster of the one test that needs it, started in a thread as this module's
    first test begins: its primaries say they are ok only two seconds after they start,
    which the tests before it run through (on a worker that runs no such test, it started
    for nothing). None: no redis-server here."""
    if redis_servers.why_not() is not None:
        yield None
        return
    made = redis_servers.Cluster(tmp_path_factory.mktemp("cluster"))
    with ThreadPoolExecutor(1) as thread:
        start = thread.submit(redis_servers.started, made)
        try:
            yield start
        finally:
            # by the thread, once the start is over (a stop meanwhile would miss a server
            # launched after it); Python joins the thread at exit, whatever interrupts
            thread.submit(made.stop)


@pytest.fixture
async def primary(pair: Pair) -> AsyncIterator[Any]:
    """The bot's client of the pair's primary, as in production."""
    redis = health.client(pair.primary.url)
    yield redis
    await redis.aclose()


def test_wait_counts_only_the_writes_of_the_connection_it_is_sent_on(pair: Pair) -> None:
    """The replica stops acknowledging (frozen), and a write goes to the primary on one
    connection. WAIT on that connection waits out its timeout: no replica has the write.
    WAIT on another connection, one a pool may well hand out, comes back at once saying
    one replica has everything, since that connection wrote nothing it has not."""
    writer, other = pair.primary.client(), pair.primary.client()
    assert other.wait(1, 1000) == 1  # connected, and acknowledged up to its own writes
    pair.replica.freeze(True)
    try:
        writer.set("k", "v")
        started = time.perf_counter()
        assert other.wait(1, 1000) == 1
        assert time.perf_counter() - started < 0.5, "returned at once"
        started = time.perf_counter()
        assert writer.wait(1, 100) == 0
        assert time.perf_counter() - started >= 0.09, "waited for the replica"
    finally:
        pair.replica.freeze(False)
        writer.close()
        other.close()


async def test_a_write_and_its_wait_go_out_together_and_a_read_s_barrier_outlives_its_wait(
    pair: Pair, primary: Any
) -> None:
    """Replicas.write: confirmed while the replica follows; Unconfirmed (with what the
    write returned) while it is held back, also when other connections of the pool have
    written nothing since; confirmed again once it has caught up."""
    replicas = Replicas(primary, wait_ms=WAIT_MS)

    def incr(pipe: Any) -> None:
        pipe.incr("n")

    assert await replicas.write("n", lambda: primary.incr("n"), incr) == 1
    pair.hold_back()
    async with primary.client() as idle:  # another connection of the pool
        await idle.ping()
        # Each waits out WAIT_MS: side by side.
        written, replicas_now = await asyncio.gather(
            replicas.write("n", lambda: primary.incr("n"), incr),
            idle.wait(1, WAIT_MS),
            return_exceptions=True,
        )
        assert isinstance(written, Unconfirmed) and written.result == 2, written
        assert replicas_now == 0  # no replica at all now
    pair.let_go()
    await asyncio.to_thread(pair.wait_synced)
    assert await replicas.write("n", lambda: primary.incr("n"), incr) == 3
    with contextlib.closing(pair.replica.client()) as replica:
        assert replica.get("n") == b"3"
    # The barrier key of a read (Replicas.read) lives for its WAIT (REDIS_WAIT_MS) and a
    # second more, however long that WAIT is. (Before, a second: shorter than a WAIT of two.)
    await _behind_barrier(primary, Replicas(primary, wait_ms=2000), "{t}k")
    assert 2000 < await primary.pttl("{t}:barrier") <= 2000 + replicas_module.BARRIER_MS


async def test_how_many_replicas_a_write_waits_for(
    pair: Pair, own_redis: OwnRedis, primary: Any
) -> None:
    lone = health.client(own_redis.url)
    try:
        assert await Replicas(lone).needed("k") == 0, "a server that never had a replica"
        assert await Replicas(lone, least=1).needed("k") == 1, "REDIS_MIN_REPLICAS wins"
    finally:
        await lone.aclose()
    seen = Replicas(primary)
    assert seen._follow is None, "only a client behind Sentinel follows the Sentinels"
    assert await seen.needed("k") == 1, "a primary with a replica"
    assert await Replicas(primary, least=0).needed("k") == 0, "REDIS_MIN_REPLICAS wins"
    pair.hold_back()
    # Its replica dropped: still one, for a process that saw it and for one that did not
    # (a cut-off replica may be promoted without the writes it missed).
    seen._nodes.clear()
    assert await seen.needed("k") == 1
    assert await Replicas(primary).needed("k") == 1
    pair.promote()
    promoted = health.client(pair.replica.url)
    try:
        assert await Replicas(promoted).needed("k") == 0, "just promoted, no replica yet"
    finally:
        await promoted.aclose()


def test_the_settings_and_their_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "1:x")
    defaults = Settings.read(_env_file=None)
    assert (defaults.redis.redis_min_replicas, defaults.redis.redis_wait_ms) == (None, 300)
    monkeypatch.setenv("REDIS_MIN_REPLICAS", "0")
    monkeypatch.setenv("REDIS_WAIT_MS", "50")
    chosen = Settings.read(_env_file=None)
    assert (chosen.redis.redis_min_replicas, chosen.redis.redis_wait_ms) == (0, 50)


async def _heard(notices: Any) -> list[tuple[str, int]]:
    """The versions announced on ct:changed since the last call (bot.core.store)."""
    found = []
    while (message := await notices.get_message(timeout=0.05)) is not None:
        if message["type"] == "message":
            version, _, key = message["data"].decode().partition(" ")
            found.append((key, int(version)))
    return found


def _chats(h: Harness, top: Tabletop, players: list[Any]) -> list[Any]:
    """What the group and the players' private chats show, message by message."""
    return [
        (m.chat_id, m.message_id, m.text, json.dumps(m.reply_markup), m.deleted)
        for chat in [top.group, *players]
        for m in h.screen(chat)
    ]


async def test_a_tap_no_replica_confirms_is_told_so_and_shown_only_once_confirmed(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    pair: Pair,
    primary: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Also: the Mini App hears of the new version (ct:changed) only once it is
    confirmed; the log says it once when writes go unconfirmed, and once when they are
    confirmed again; it is no Redis outage."""
    async for h in harness_on(request, server, make_app, primary, redis_wait_ms=WAIT_MS):
        players = [h.user("Ann"), h.user("Bob")]
        top = await playing(h, "durak", players)
        await top.later(12)  # every delivery done, every lease given back
        before, shown = await stored(h, top.group), _chats(h, top, players)
        key, version = table_key(top.group), before["version"] + 1
        notices = primary.pubsub()
        await notices.subscribe(CHANGED)
        caplog.set_level(logging.INFO)
        caplog.clear()
        user = top.asked(players)
        prompt = top.prompt(user)
        assert prompt is not None

        pair.hold_back()
        answer = await h.tap(user, prompt, 0)
        assert answer.answered and answer.text == UNCONFIRMED
        await top.later(4)  # a second: the lease it took has not run out
        assert _chats(h, top, players) == shown, "nothing of it shown"
        assert (await stored(h, top.group))["version"] == before["version"] + 1, (
            "written on the primary all the same"
        )
        await top.later(8)  # the lease runs out: the table is due, its claim unconfirmed
        assert _chats(h, top, players) == shown, "still nothing shown"
        assert (key, version) not in await _heard(notices), "nor announced"

        pair.let_go()
        await asyncio.to_thread(pair.wait_synced)
        await top.later(12)  # due again: claimed, confirmed, delivered
        assert _chats(h, top, players) != shown, "shown once a replica has it"
        assert (key, version) in await _heard(notices), "and announced (by the claim)"
        await notices.aclose()
        with contextlib.closing(pair.replica.client()) as replica:
            assert int(replica.hget(table_key(top.group), "v") or 0) == before["version"] + 1
        told = [
            (r.levelname, r.name)
            for r in caplog.records
            if r.levelno >= logging.WARNING or r.name in ("bot.core.replicas", "bot.core.health")
        ]
        assert told == [("WARNING", "bot.core.replicas"), ("INFO", "bot.core.replicas")]


async def test_a_worker_handles_only_what_a_replica_has_and_the_webhook_answers_503(
    server: FakeTelegram, make_app: AppFactory, clock: Clock, pair: Pair, primary: Any
) -> None:
    """An update stored while the replica is held back (the webhook answers it 503) is
    read by a worker, but handled only once a claim that waits for the replica confirms
    it: a primary lost meanwhile would take it with it, and Telegram sends it again."""
    h = Harness(server)
    ann = h.user("Ann")
    kept = h.keep_updates()
    await h.private(ann, "/help")
    overrides = {"webhook_url": HOOK, "webhook_secret": SECRET, "redis_wait_ms": WAIT_MS}
    h.apps.append(await make_app(primary, **overrides))
    await inbox_stream.Inbox(primary, "webhook").make_group()
    pair.hold_back()
    update = kept.pop()
    stream = inbox_stream.STREAMS[inbox_stream.stream_of(update)]
    await primary.xadd(stream, {inbox_stream.FIELD: json.dumps(update)})
    # Two seconds of the bot's clock: read, and claimed again each second, unconfirmed
    # each time.
    await clock.advance(2)
    assert (await primary.xpending(stream, inbox_stream.GROUP))["pending"] == 1
    assert [m.text for m in h.screen(ann) if m.from_bot] == [], "nothing handled"
    pair.let_go()
    await asyncio.to_thread(pair.wait_synced)

    async def handled() -> bool:
        return await primary.xlen(stream) == 0

    # Within a second or so (the next claim confirms it); the bound leaves room for a loaded
    # machine, where a touch may meet a timeout and back off.
    await until(handled, 10, "handled once confirmed")
    assert len([m for m in h.screen(ann) if m.from_bot]) == 1

    body = json.dumps({"update_id": 7}).encode()
    async with client(h) as c:
        r = await c.post("/hook", content=body, headers={SECRET_HEADER: SECRET})
        assert r.status_code == 200
        pair.hold_back()
        r = await c.post("/hook", content=body, headers={SECRET_HEADER: SECRET})
        assert (r.status_code, r.json()) == (503, {"error": "not confirmed by a replica"})
        pair.let_go()
        await asyncio.to_thread(pair.wait_synced)
        r = await c.post("/hook", content=body, headers={SECRET_HEADER: SECRET})
        assert r.status_code == 200


async def test_a_page_shows_only_what_a_replica_holds(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    pair: Pair,
    primary: Any,
) -> None:
    """A move reaches the primary only (the replica held back; its tap is told so): a
    page that reads the table meanwhile is not shown that version, which a failover would
    take back. Its picture is answered 503 with what such a tap is told; a live stream
    open already, woken by a notice, ends showing nothing, and one opened now ends at once
    (the page asks again, as after any outage). Once the replica has the move, both show
    it. (Before, the page read the primary and showed it at once.)"""
    async for h in harness_on(request, server, make_app, primary, redis_wait_ms=WAIT_MS):
        top, players, param = await table_for_two(h, "durak")
        await top.later(12)  # every delivery done, every lease given back
        version = (await stored(h, top.group))["version"]
        async with page_server(h) as root, httpx.AsyncClient(base_url=root, timeout=5) as web:
            # the session of a watcher's page (Cid's, by the group's link)
            ticket = bearer(await token(web, h.user("Cid"), param))
            async with web.stream("GET", "/app/api/events", headers=ticket) as live:
                pictures = _pictures(live)
                assert await anext(pictures) == version
                assert await _page(web, ticket) == (200, version)

                pair.hold_back()
                user = top.asked(players)
                answer = await h.tap(user, top.prompt(user), 0)  # type: ignore[arg-type]
                assert answer.text == t(user.language_code, "common.unconfirmed")
                assert (await stored(h, top.group))["version"] == version + 1, "on the primary"
                # A notice is only a reason to read (bot.core.keys): a late one, say.
                await primary.publish(CHANGED, f"{version + 1} {table_key(top.group)}")
                # Each read waits out its WAIT (WAIT_MS) unconfirmed: the three side by side.
                page, woken, opened = await asyncio.gather(
                    _page(web, ticket), anext(pictures, None), _streamed(web, ticket)
                )
                assert page == (503, UNCONFIRMED)
                assert woken is None, "the open stream ends, showing none"
                assert opened == [], "and one opened now at once"

            pair.let_go()
            await asyncio.to_thread(pair.wait_synced)
            assert await _page(web, ticket) == (200, version + 1)
            assert await _streamed(web, ticket) == [version + 1]


async def _page(web: httpx.AsyncClient, ticket: dict[str, str]) -> tuple[int, Any]:
    """What the page's state call answers: its status, with the version shown (else the
    refusal it is told)."""
    r = await web.get("/app/api/state", headers=ticket)
    body = r.json()
    return r.status_code, body["version"] if r.status_code == 200 else body["refusal"]


async def _pictures(stream: httpx.Response) -> AsyncIterator[int]:
    """The versions a live stream shows, until it ends."""
    async for line in stream.aiter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])["version"]


async def _streamed(web: httpx.AsyncClient, ticket: dict[str, str]) -> list[int]:
    """The version a live stream opened now shows first ([]: it ended showing none)."""
    async with web.stream("GET", "/app/api/events", headers=ticket) as stream:
        async for version in _pictures(stream):
            return [version]
    return []


@pytest.mark.parametrize(
    ("servers", "sent"),
    [("own_redis", [("HGETALL",)]), ("pair", [("HGETALL", "SET", "WAIT")])],
)
async def test_a_page_read_is_one_round_trip_with_a_replica_or_without(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    monkeypatch: pytest.MonkeyPatch,
    servers: str,
    sent: list[tuple[str, ...]],
) -> None:
    """On a server that never had a replica a page's read is the one HGETALL it always
    was; with a replica the barrier write and the WAIT go out with it, in one pipeline."""
    running: Server | Pair = request.getfixturevalue(servers)
    url = running.url if isinstance(running, Server) else running.primary.url
    redis = health.client(url)
    try:
        async for h in harness_on(request, server, make_app, redis, redis_wait_ms=WAIT_MS):
            _, _, param = await table_for_two(h, "durak")
            async with client(h) as web:
                ticket = bearer(await token(web, h.user("Cid"), param))
                assert (await web.get("/app/api/state", headers=ticket)).status_code == 200
                assert await _sent(monkeypatch, web.get("/app/api/state", headers=ticket)) == sent
    finally:
        await redis.aclose()


async def _sent(monkeypatch: pytest.MonkeyPatch, call: Any) -> list[tuple[str, ...]]:
    """The round trips to Redis that ``call`` (a page's request, awaited here) makes, each
    as the commands it carries. Only its own are counted (the tasks of the bot's pollers
    do not see ``reading`` set)."""
    trips: list[tuple[str, ...]] = []
    reading: ContextVar[bool] = ContextVar("reading", default=False)
    plain, batch = aioredis.Redis.execute_command, aioredis.client.Pipeline.execute

    async def counted(self: Any, *args: Any, **options: Any) -> Any:
        if reading.get() and not isinstance(self, aioredis.client.Pipeline):
            trips.append((str(args[0]),))
        return await plain(self, *args, **options)

    async def counted_batch(self: Any, *args: Any, **options: Any) -> Any:
        if reading.get():
            trips.append(tuple(str(command[0]) for command, _ in self.command_stack))
        return await batch(self, *args, **options)

    monkeypatch.setattr(aioredis.Redis, "execute_command", counted)
    monkeypatch.setattr(aioredis.client.Pipeline, "execute", counted_batch)
    mark = reading.set(True)
    try:
        assert (await call).status_code == 200
    finally:
        reading.reset(mark)
    return trips


async def _slots(redis: Any, top: Tabletop) -> set[int]:
    """The messages the stored table knows it shows (its slots)."""
    raw = await redis.hgetall(table_key(top.group))
    return {
        json.loads(value)["id"]
        for name, value in raw.items()
        if name.startswith(SLOT.encode()) and json.loads(value).get("id") is not None
    }


async def test_a_release_lost_in_a_failover_is_written_again(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    pair: Pair,
    primary: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A move is confirmed and its delivery sends the next prompt as a new message; then
    the replica is held back, so the release that records that message (and the one it
    deleted) reaches the primary only, and the primary fails over to the replica's copy.
    The release is run again until a replica has it: the table knows every prompt that
    still has buttons, and Telegram hears nothing twice. (Before, the table went back to
    the messages as they were: its next delivery edited a message to what it already
    showed and deleted one already gone, both refused, and the harness's check of
    Telegram's complaints fails.)"""
    async for h in harness_on(request, server, make_app, primary, redis_wait_ms=WAIT_MS):
        players = [h.user("Ann"), h.user("Bob")]
        top = await playing(h, "durak", players)
        await top.later(60)  # a quarter of a minute: the next prompt rings, a new message
        failover = _FailoverOnFirstSend(pair, server.handle)
        monkeypatch.setattr(server, "handle", failover.handle)
        _, answer = await top.step(players, random.Random(1))
        assert answer.text is None
        assert failover.thread is not None, "the move sent a new message"
        await asyncio.to_thread(failover.thread.join)
        monkeypatch.setattr(server, "handle", failover.passed)
        await top.later(8)  # the release is run again, and confirmed
        known = await _slots(h.redis, top)
        live = {m.message_id for user in players for m in top.prompts(user)}
        assert live <= known, "every live prompt is known to the table"


class _FailoverOnFirstSend:
    """Holds the replica back at the first message sent, and a moment later fails the
    primary over to the replica's copy (testing.redis_servers.Pair.lose_unreplicated)."""

    def __init__(self, pair: Pair, handle: Callable[..., Any]) -> None:
        self.pair, self.passed = pair, handle
        self.thread: threading.Thread | None = None

    def handle(self, method: str, params: dict[str, Any], files: dict[str, Any]) -> Any:
        if method.lower() == "sendmessage" and self.thread is None:
            self.pair.hold_back()
            self.thread = threading.Thread(target=self._fail_over)
            self.thread.start()
        return self.passed(method, params, files)

    def _fail_over(self) -> None:
        time.sleep(0.3)  # the delivery's release has reached the primary by then
        self.pair.lose_unreplicated()


@pytest.mark.usefixtures("clients_closed")
async def test_on_a_cluster_the_write_and_its_wait_go_to_the_keys_node(
    cluster: Future[redis_servers.Cluster] | None,
) -> None:
    """A Lua script of the bot's (loaded on demand) and its WAIT go together to the node
    of the key's slot: with that node's replica frozen the write is Unconfirmed, and so
    is a page's read behind its barrier, while a key of another node is confirmed at
    once. So do the inbox's: an update stored in a stream of that node is Unconfirmed
    (the webhook's 503), one of another node's is not; a worker's read of the first is
    Unconfirmed, and confirmed once the replica is back."""
    if cluster is None:
        pytest.skip(str(redis_servers.why_not()))
    servers = await asyncio.to_thread(cluster.result)  # started as the module began
    client = await RedisCluster.from_url(servers.url).initialize()
    replicas = Replicas(client, wait_ms=WAIT_MS)
    save = SAVE.register(client, replicas)  # type: ignore[arg-type]
    try:
        keys = {client.get_node_from_key(k).port: k for k in ("{a}k", "{b}k", "{c}k")}
        assert len(keys) == 3, "one key on each primary"
        (port, key), (_, elsewhere), _ = sorted(keys.items())
        for each in keys.values():
            await client.hset(each, "v", 1)
            # NOSCRIPT, loaded, run; confirmed once the replica (just synced) answers
            assert await _confirmed(lambda each=each: save(Save(each, 60, ("f", "1")))) == 1
        frozen = servers.servers[servers.replica_of(port)]
        frozen.freeze(True)
        on_key: asyncio.Future[list[Any]] | None = None
        try:
            # Each call the frozen replica's node answers waits out WAIT_MS: side by side.
            on_key = asyncio.gather(
                save(Save(key, 60, ("f", "2"))),
                _behind_barrier(client, replicas, key),  # a page's read, behind its barrier
                return_exceptions=True,
            )
            assert await save(Save(elsewhere, 60, ("f", "2"))) == 1
            assert not on_key.done(), "confirmed before the frozen node's WAIT ran out"
            read = await _behind_barrier(client, replicas, elsewhere)
            assert read == {b"v": b"1", b"f": b"2"}
            doubtful = await _inbox_on(client, replicas, port)
            assert [type(each) for each in await on_key] == [Unconfirmed, Unconfirmed]
        finally:
            frozen.freeze(False)
            if on_key is not None:  # (done, unless an assertion above failed)
                await on_key
        await asyncio.to_thread(redis_servers.wait_caught_up, servers.servers[port], frozen)
        worker = inbox_stream.Inbox(client, "worker", replicas)
        confirmed = await worker.confirm(doubtful)
        assert b'{"update_id": 1}' in [body for _, body in confirmed]
    finally:
        await connect.close(client)  # type: ignore[arg-type]


async def _behind_barrier(client: Any, replicas: Replicas, key: str) -> Any:
    """``key``'s hash, read as a page reads its table (Replicas.read), its barrier a key
    of its slot."""
    barrier = key[: key.index("}") + 1] + ":barrier"
    return await replicas.read(
        key, barrier, lambda: client.hgetall(key), lambda pipe: pipe.hgetall(key)
    )


async def _confirmed(write: Callable[[], Any]) -> Any:
    """``write`` run until a replica confirms it (at most for a few seconds): a replica
    of a cluster just made may take longer than WAIT_MS to confirm its first write on a
    busy machine."""
    for _ in range(20):
        with contextlib.suppress(Unconfirmed):
            return await write()
    return await write()


async def _inbox_on(client: Any, replicas: Replicas, port: int) -> list[bytes]:
    """The inbox while the replica of the primary at ``port`` is frozen: the entries a
    worker took unconfirmed (update 1, stored on that primary)."""
    node = {client.get_node_from_key(s).port: n for n, s in enumerate(inbox_stream.STREAMS)}
    there, elsewhere = node.pop(port), next(iter(node.values()))
    webhook = inbox_stream.Inbox(client, "webhook", replicas)
    await webhook.make_group()
    with pytest.raises(Unconfirmed):
        await webhook.put(b'{"update_id": 1}', there)
    await webhook.put(b'{"update_id": 2}', elsewhere)
    worker = inbox_stream.Inbox(client, "worker", replicas)
    taken: list[bytes] = []
    doubtful: list[bytes] = []
    try:
        for _ in range(40):  # each take ends with the first read to answer
            try:
                taken += [body for _, body in await worker.take(32, 50)]
            except Unconfirmed as exc:
                doubtful += [entry for entry, _ in exc.result]
            if len(taken) + len(doubtful) >= 2:
                break
    finally:
        worker.close()
    assert b'{"update_id": 1}' not in taken
    assert [inbox_stream.parse_ref(entry)[0] for entry in doubtful].count(there) == 1
    return doubtful


async def test_a_move_to_the_supergroups_key_goes_on_once_a_replica_has_each_step(
    pair: Pair, primary: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new key is in another slot (on a cluster perhaps another node, whose failover
    keeps no order with the old one's), so the table is written there, and confirmed,
    before the old key goes: with the replica held back the move stops at its first step
    (Unconfirmed, here at its first try) and the old key keeps the table; once the
    replica is back the next try finishes it, and the replica has the table at its new
    key only."""
    old, new = key_of(-100123, None), key_of(-1001000000123, None)
    # The scripts loaded as the bot loads them at its start: a first call's NOSCRIPT
    # would wait out a WAIT of its own below.
    await connect.check(primary, settings(redis_url=pair.primary.url).redis)
    store = Store(primary, 3600, replicas=Replicas(primary, wait_ms=WAIT_MS))
    lobby = Lobby(creator=1)
    table = Table(game_id="ab12", chat_id=-100123, lobby=lobby, kind="durak", phase="lobby")
    await store.transact(old, lambda snap: (Write(table), None))
    await store.release(old, 1, {})
    monkeypatch.setattr(replicas_module, "AGAIN_FOR", 0.0)  # given up at the first failure
    pair.hold_back()
    with pytest.raises(Unconfirmed):
        await store.move(old, new)
    assert await primary.exists(old) and not await primary.exists(new)
    pair.let_go()
    await asyncio.to_thread(pair.wait_synced)
    assert await store.move(old, new) == store_module.MOVED
    await asyncio.to_thread(pair.wait_synced)
    with contextlib.closing(pair.replica.client()) as replica:
        assert (replica.exists(old), replica.hget(new, "v")) == (0, b"1")


async def test_unconfirmed_writes_are_told_once_per_node_on_a_cluster(
    fake_redis: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node whose replica lags is told of once, until a write on that node is confirmed:
    a write another node confirms meanwhile says nothing of it."""
    replicas = Replicas(fake_redis, least=1)
    acked = {"a": 0, "b": 1}  # node a's replica lags; node b's is fine

    async def name(key: str) -> str:
        return key

    async def with_wait(key: str, needed: int, queue: Any, barrier: bool) -> tuple[Any, int, Any]:
        return "OK", acked[key], None

    monkeypatch.setattr(replicas, "_name", name)
    monkeypatch.setattr(replicas, "_with_wait", with_wait)
    caplog.set_level(logging.INFO, logger="bot.core.replicas")

    async def write(key: str) -> bool:
        try:
            await replicas.write(key, fake_redis.ping, lambda pipe: None)
        except Unconfirmed:
            return False
        return True

    assert [await write(key) for key in "abab"] == [False, True, False, True]
    acked["a"] = 1
    assert await write("a") and await write("a")
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == ["WARNING", "INFO"]
    assert lines[0][1].endswith("on a: taps are told so, nothing of them is shown meanwhile")
    assert lines[1][1] == "replicas confirm writes again on a"


class _Demoted:
    """A client whose node became a replica as a write's pipeline went out: the write is
    answered (redirected to the new primary), its WAIT refused by the demoted node."""

    def pipeline(self, transaction: bool = False) -> Any:
        return self

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def execute_command(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        return [1, ResponseError(f"{replicas_module.DEMOTED}. Please also note ...")]


async def _never() -> Any:
    raise AssertionError("a write that waits goes through the pipeline")


@pytest.mark.parametrize("refusal", ["full", "no write permission"])
async def test_a_read_whose_barrier_is_refused_is_unconfirmed_and_told_once(
    pair: Pair, primary: Any, refusal: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A primary at maxmemory with noeviction (OOM), or a user that may not write (NOPERM),
    refuses a read's barrier: nothing can confirm the read, so it is Unconfirmed (a page's
    503), not a ResponseError (a 500). The log says so once for the node, however many
    reads meet it, and once when reads are confirmed again. (Before, the refusal itself
    was raised.)"""
    await primary.hset("{t}k", "v", 1)
    reader: Any = primary
    with contextlib.closing(pair.primary.client()) as admin:
        if refusal == "full":
            admin.config_set("maxmemory", 1)  # this test's own server
        else:
            admin.acl_setuser(
                "reader", enabled=True, passwords=["+pw"], keys=["*"], commands=["+@all", "-set"]
            )
            reader = health.client(f"redis://reader:pw@{redis_servers.HOST}:{pair.primary.port}/0")
        caplog.set_level(logging.INFO, logger="bot.core.replicas")
        replicas = Replicas(reader, wait_ms=WAIT_MS)
        try:
            for _ in range(3):
                with pytest.raises(Unconfirmed):
                    await _behind_barrier(reader, replicas, "{t}k")
        finally:
            admin.config_set("maxmemory", 0)
            admin.acl_setuser("reader", enabled=True, commands=["+@all"])
        assert await _behind_barrier(reader, replicas, "{t}k") == {b"v": b"1"}
        if reader is not primary:
            await reader.aclose()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == ["WARNING", "INFO"], lines
    assert "barrier was refused" in lines[0][1]


OLD, NEW = ("10.0.0.1", 6379), ("10.0.0.2", 6379)


class _Sentinels:
    """The Sentinels as a pool asks them: the primary they name now; questions counted."""

    def __init__(self, named: tuple[str, int]) -> None:
        self.named, self.asked = named, 0

    async def discover_master(self, service_name: str) -> tuple[str, int]:
        self.asked += 1
        return self.named


class _BehindSentinel(_Demoted):
    """A client behind Sentinel whose pool moves from the old primary to the new one while
    a write's WAIT is out (``moves`` "wait": another task's new connection asked the
    Sentinels), else as the test says; the write went out on a connection to ``landed``."""

    def __init__(self, landed: tuple[str, int], moves: str) -> None:
        self.connection_pool = SentinelConnectionPool("cards", _Sentinels(NEW))
        self.connection_pool.master_address = OLD
        self.connection = SimpleNamespace(host=landed[0], port=landed[1])
        self.moves = moves

    async def _execute_pipeline(self, connection: Any, *args: Any) -> list[Any]:
        if self.moves == "wait":
            self.connection_pool.master_address = NEW
        return [1, 0]

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        return await self._execute_pipeline(self.connection, [], raise_on_error)


@pytest.mark.parametrize(
    ("landed", "moves", "left"),
    [
        (NEW, "wait", []),
        (OLD, "wait", [0]),  # the new primary is asked by the next write only
        (OLD, "read", []),
    ],
)
async def test_a_short_write_is_confirmed_by_a_new_primary_only_if_it_went_there(
    landed: tuple[str, int], moves: str, left: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new primary, just promoted, waits for no replica: a write it took is confirmed.
    One that went to the old primary is not: the old one drops it when it turns replica.
    The question after a short WAIT goes out on a new connection, which the Sentinels may
    send to the new primary (``moves`` "read"): that answer says nothing of a write the
    old primary took. (Before, the INFO read after the short WAIT, from the new primary,
    confirmed it.)"""
    client = _BehindSentinel(landed, moves)
    waits = Replicas(client)  # type: ignore[arg-type]
    # What the primary says of its replicas: the old one has one; the new one none yet.
    said = [1, 0]

    async def read(node: Any) -> int:
        if moves == "read" and len(said) == 1:  # a new connection: redis-py asked the Sentinels
            client.connection_pool.master_address = NEW
        return said.pop(0)

    monkeypatch.setattr(waits, "_read", read)
    write = waits.write("k", _never, lambda pipe: pipe.execute_command("SET", "k", "1"))
    if landed == NEW:
        assert await write == 1
    else:
        with pytest.raises(Unconfirmed):
            await write
    assert said == left


class _Busy:
    """A pooled connection to the old primary that a task is using."""

    host, port, is_connected, marked = OLD[0], OLD[1], True, False

    def mark_for_reconnect(self) -> None:
        self.marked = True


async def test_behind_sentinel_the_sentinels_are_asked_a_second_apart_and_told_of_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failover asks the Sentinels once, not once per unconfirmed write: at most one
    question per ASK_EVERY seconds, and the new primary is logged once. Sentinels that
    refuse the question (an ACL, not a Sentinel at all) leave the write's own error
    standing, said once."""
    caplog.set_level(logging.INFO, logger="bot.core.primary")
    sentinels, clock = _Sentinels(NEW), ManualClock()
    pool = SentinelConnectionPool("cards", sentinels)
    pool.master_address = OLD
    follow = primary_module.Follow(pool, clock)
    assert await follow.ask() and follow.address == NEW
    clock.now += primary_module.ASK_EVERY / 2
    assert not await follow.ask()
    assert sentinels.asked == 1
    clock.now += primary_module.ASK_EVERY
    assert not await follow.ask()  # the same primary: nothing to drop
    assert sentinels.asked == 2
    old = _Busy()
    pool._in_use_connections.add(old)  # type: ignore[arg-type]  # a task still on the old one
    clock.now += primary_module.ASK_EVERY
    assert await follow.ask() and old.marked  # dropped once given back: told no more

    async def refuse(service_name: str) -> tuple[str, int]:
        raise ResponseError("NOPERM this user has no permissions to run 'sentinel'")

    sentinels.discover_master = refuse  # type: ignore[method-assign]
    for _ in range(3):
        clock.now += primary_module.ASK_EVERY
        assert not await follow.ask()
    told = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert told[0] == ("INFO", "Redis primary is now 10.0.0.2:6379, per Sentinel")
    assert [level for level, _ in told] == ["INFO", "WARNING"]


async def test_behind_sentinel_a_primary_the_pool_found_itself_is_logged_once_by_its_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The old primary, turned replica, closed the pool's connections, and the write's new
    one asked the Sentinels itself: no question of the bot's would find a move, and the new
    primary is logged all the same, once, by the time that write is answered (an operator
    sees the switch before any tap is answered from the new primary)."""
    caplog.set_level(logging.INFO, logger="bot.core.primary")
    client = _BehindSentinel(NEW, "")
    waits = Replicas(client, least=0)  # type: ignore[arg-type]

    async def one() -> int:  # its connection, opened anew, was told NEW by the Sentinels
        client.connection_pool.master_address = NEW
        return 1

    assert await waits.write("k", one, lambda pipe: None) == 1
    told = [r.getMessage() for r in caplog.records]
    assert told == ["Redis primary is now 10.0.0.2:6379, per Sentinel"]
    assert await waits.write("k", one, lambda pipe: None) == 1
    assert [r.getMessage() for r in caplog.records] == told


class _DemotedAfter(aioredis.Redis):
    """One server whose write's WAIT comes back short, and which, asked again of its
    replicas, says it is a replica now: demoted between the WAIT and the question."""

    def __init__(self) -> None:  # no connection: nothing is sent
        self.said = [
            {"role": "master", "connected_slaves": 1, "master_replid": "a"},
            {"role": "slave", "master_replid": "a"},
        ]

    async def info(self, *args: Any, **kwargs: Any) -> Any:
        return self.said.pop(0)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        short = _Demoted()
        short.execute = lambda raise_on_error=True: asyncio.sleep(0, [1, 0])  # type: ignore[method-assign]
        return short


async def test_a_write_on_a_node_demoted_meanwhile_is_unconfirmed() -> None:
    """During a graceful failover the WAIT may reach the old primary, a replica now: the
    write is unconfirmed (the tap told so, the webhook 503), not an error (a 500). So is
    one whose node was demoted before it is asked again after a short WAIT: a replica now,
    it drops what it took as a primary, and its answer that it waits for no replica (a
    replica has none) does not confirm the write. (Before, it did.)"""
    waits = Replicas(_Demoted(), least=1)  # type: ignore[arg-type]
    with pytest.raises(Unconfirmed):
        await waits.write("k", _never, lambda pipe: pipe.execute_command("SET", "k", "1"))
    client = _DemotedAfter()
    with pytest.raises(Unconfirmed):
        await Replicas(client).write("k", _never, lambda pipe: None)
    assert client.said == []  # asked again, after the short WAIT


def test_behind_sentinel_a_redis_py_without_what_the_follow_uses_fails_at_start() -> None:
    """The follow reaches into redis-py's pool: a release without those parts stops the
    bot at start, not halfway through a failover."""
    pool = SentinelConnectionPool("cards", _Sentinels(NEW))
    del pool._lock
    with pytest.raises(RuntimeError, match="_lock"):
        Replicas(SimpleNamespace(connection_pool=pool))  # type: ignore[arg-type]
