"""The webhook's worker in process (bot.inbox over bot.core.inbox): when it starts, whose
"busy" claim a taken-over entry removes, how it lives through Redis's faults, the tap
latency it reports. A dead worker is a consumer holding an entry it never touches."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from typing import Any

import pytest
import redis.asyncio as aioredis
from fakeredis.model import _stream as fakeredis_streams
from prometheus_client import REGISTRY
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException

from bot import inbox
from bot.app import build_application
from bot.core import inbox as stream
from bot.core.health import Backoff
from bot.core.i18n import t
from bot.core.replicas import Replicas, Unconfirmed
from bot.handlers import once
from testing.chats import Answer, FakeUser
from testing.clock import Clock
from testing.fakegram import FakeRequest, FakeTelegram
from testing.harness import AppFactory, Harness, stop_app
from testing.settings import settings
from testing.waits import until

WEBHOOK = {"webhook_url": "https://cards.example.org/hook", "webhook_secret": "s3cret"}
HOOKED = pytest.mark.settings(**WEBHOOK)  # the harness's bot in webhook mode
DEAD = "dead-worker"  # a consumer whose process is gone
TOUCH_EVERY = inbox.touch_every(stream.CLAIM_IDLE_MS)  # at the default: once a second
WITHIN = 5.0  # seconds for the worker to act on what it reads (it reads every 250 ms)


async def _help(h: Harness, kept: list[dict[str, Any]], user: FakeUser) -> dict[str, Any]:
    """/help in ``user``'s private chat, as Telegram would post it."""
    await h.private(user, "/help")
    return kept.pop()


STREAM = stream.STREAMS[0]  # the tests' updates go to the first stream


async def _store(redis: aioredis.Redis, update: dict[str, Any], entry: str = "*") -> bytes:
    """The update as the webhook stores it (``entry``: its id, when it must be given):
    its reference (stream and id) as a worker holds it."""
    await stream.Inbox(redis, "webhook").make_group()
    found = await redis.xadd(STREAM, {stream.FIELD: json.dumps(update)}, id=entry)
    return stream.ref(0, found)


def _id(entry: bytes) -> str:
    """An entry's id in its stream."""
    return stream.parse_ref(entry)[1]


async def _taken(redis: aioredis.Redis, consumer: str, update: dict[str, Any], n: int = 0) -> bytes:
    """An entry of stream ``n`` that ``consumer`` has read: stored and read at once, so
    that a running worker reads none of it."""
    await stream.Inbox(redis, "webhook").make_group()
    key = stream.STREAMS[n]
    async with redis.pipeline(transaction=True) as pipe:
        pipe.xadd(key, {stream.FIELD: json.dumps(update)})
        pipe.xreadgroup(stream.GROUP, consumer, {key: ">"}, count=1)
        found, _ = await pipe.execute()
    return stream.ref(n, found)


async def _left_by_a_dead_worker(
    redis: aioredis.Redis, update: dict[str, Any], n: int = 0
) -> bytes:
    """An entry of stream ``n`` a worker took and then died with: pending under it, idle
    for long."""
    entry = await _taken(redis, DEAD, update, n)
    ids = [_id(entry)]
    await redis.xclaim(stream.STREAMS[n], stream.GROUP, DEAD, 0, ids, idle=60_000, justid=True)
    return entry


async def _length_is(redis: aioredis.Redis, n: int) -> bool:
    return bool(await stream.Inbox(redis, "probe").backlog() == n)


def _replies(h: Harness, user: FakeUser) -> list[str]:
    return [m.text for m in h.screen(user) if m.from_bot]


async def test_the_worker_reads_nothing_before_the_application_runs(
    server: FakeTelegram, clock: Clock, fake_redis: aioredis.Redis
) -> None:
    h = Harness(server)
    ann = h.user("Ann")
    # a backlog, left before a restart
    await _store(fake_redis, await _help(h, h.keep_updates(), ann))
    app = build_application(
        settings(**WEBHOOK), fake_redis, request=FakeRequest(server), clock=clock
    )
    clock.apps.append(app)
    await app.initialize()
    assert app.post_init is not None
    await app.post_init(app)  # then bot.runner sets the webhook, which may take a while
    for _ in range(200):
        await asyncio.sleep(0)
    pending = await fake_redis.xpending(STREAM, stream.GROUP)
    assert pending["pending"] == 0 and _replies(h, ann) == []
    await app.start()
    inbox.start(app)
    try:
        await until(lambda: _length_is(fake_redis, 0), WITHIN, "not handled once running")
        assert len(_replies(h, ann)) == 1
    finally:
        await stop_app(app)


async def test_a_taken_over_entry_removes_its_own_busy_claim_never_a_live_workers(
    server: FakeTelegram, make_app: AppFactory, clock: Clock, fake_redis: aioredis.Redis
) -> None:
    h = Harness(server)
    kept = h.keep_updates()
    ann, bob = h.user("Ann"), h.user("Bob")
    # Telegram sent Ann's /help twice: a live worker handles the first entry (its claim),
    # the second was left by a dead worker.
    first = await _store(fake_redis, {"update_id": 999})  # stands for the live worker's
    await fake_redis.xdel(STREAM, _id(first))
    anns = await _help(h, kept, ann)
    await fake_redis.set(once.update_key(anns["update_id"]), once.busy(first), px=once.BUSY_MS)
    await _left_by_a_dead_worker(fake_redis, anns)
    # Bob's /help: the dead worker had claimed it for itself.
    bobs = await _help(h, kept, bob)
    entry = await _left_by_a_dead_worker(fake_redis, bobs)
    await fake_redis.set(once.update_key(bobs["update_id"]), once.busy(entry), px=once.BUSY_MS)
    h.apps.append(await make_app(fake_redis, **WEBHOOK))  # it reads only new entries
    await clock.advance(TOUCH_EVERY)  # the poller takes both over
    await until(lambda: _length_is(fake_redis, 0), WITHIN, "not taken over")
    assert len(_replies(h, bob)) == 1  # the dead worker's own claim was removed
    assert _replies(h, ann) == []  # the live worker's stays: it answers, once
    assert await fake_redis.get(once.update_key(anns["update_id"])) == once.busy(first)


@HOOKED
async def test_an_update_a_process_of_the_previous_version_stores_is_handled_once(
    harness: Harness, clock: Clock
) -> None:
    """During an upgrade a process of the version before the 16 streams may still store
    updates in its one stream, ``ct:inbox``: this version's workers move them over."""
    h, fake_redis = harness, harness.redis
    kept = h.keep_updates()
    ann = h.user("Ann")
    update = await _help(h, kept, ann)
    async with fake_redis.pipeline() as pipe:  # at once: the worker looks there any time
        for _ in range(2):  # twice
            pipe.xadd(stream.OLD_STREAM, {stream.FIELD: json.dumps(update)})
        await pipe.execute()
    for _ in range(stream.ADOPT_EVERY):
        await clock.advance(TOUCH_EVERY)
    await until(lambda: _moved_over_and_handled(fake_redis), WITHIN, "not moved over and handled")
    assert len(_replies(h, ann)) == 1


async def _moved_over_and_handled(redis: aioredis.Redis) -> bool:
    return await redis.xlen(stream.OLD_STREAM) == 0 and await _length_is(redis, 0)


@HOOKED
async def test_an_update_whose_claim_redis_fails_is_not_refused_and_is_handled_once_back(
    harness: Harness, clock: Clock
) -> None:
    h, fake_redis = harness, harness.redis
    kept = h.keep_updates()
    ann = h.user("Ann")
    update = await _help(h, kept, ann)
    real_set = fake_redis.set
    failures = [RedisConnectionError("Redis is restarting")]

    async def set_once_failing(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return await real_set(*args, **kwargs)

    fake_redis.set = set_once_failing  # type: ignore[method-assign]
    entry = await _store(fake_redis, update)
    worker = inbox.worker_of(h.app)
    assert worker is not None
    await until(lambda: _handled_by(worker, failures), WITHIN, "not read")
    assert _replies(h, ann) == []  # not told "unavailable": it waits in the stream
    assert await fake_redis.xlen(STREAM) == 1
    # Redis is back; the entry lies idle (no worker holds it), and is taken over.
    await fake_redis.xclaim(STREAM, stream.GROUP, DEAD, 0, [_id(entry)], idle=60_000)
    for _ in range(int(WITHIN / TOUCH_EVERY)):  # the outage's backoff, on the clock
        await clock.advance(TOUCH_EVERY)
        if worker.held:  # taken over: its handling runs apart from the bot's timers
            await asyncio.wait(list(worker.held.values()))
        if await _length_is(fake_redis, 0):
            break
    assert await _length_is(fake_redis, 0), "not handled once back"
    replies = _replies(h, ann)
    assert len(replies) == 1 and t("en", "common.unavailable") not in replies[0]


@HOOKED
@pytest.mark.parametrize(
    "later", [1, stream.RECLAIM_PER_TOUCH], ids=["in the turn", "side by side after it"]
)
async def test_a_touch_whose_later_claim_fails_holds_what_the_claims_before_it_took(
    harness: Harness,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    later: int,
) -> None:
    """A dead worker left entries in the first stream of a touch's turn and in one
    ``later`` streams after it (the next in the turn, or one outside it, claimed beside
    the others once the turn found entries), and Redis fails the later one's claim: the
    first one's entry, this worker's since its claim, is handled at that touch, not left
    pending under its name until the idle limit runs out again."""
    h, fake_redis = harness, harness.redis
    now = fakeredis_streams.current_time()  # idle times stand still: no second takeover
    monkeypatch.setattr(fakeredis_streams, "current_time", lambda: now)
    kept = h.keep_updates()
    ann, bob = h.user("Ann"), h.user("Bob")
    worker = inbox.worker_of(h.app)
    assert worker is not None
    anns, bobs = await _help(h, kept, ann), await _help(h, kept, bob)
    await clock.settle()  # the touch at the start is over
    first = worker.inbox._turn  # the next touch claims from this stream first
    second = (first + later) % stream.BUCKETS
    await _left_by_a_dead_worker(fake_redis, anns, first)
    await _left_by_a_dead_worker(fake_redis, bobs, second)
    real, failures = fake_redis.xautoclaim, [RedisConnectionError("the primary is gone")]

    async def xautoclaim(key: str, *args: Any, **kwargs: Any) -> Any:
        if key == stream.STREAMS[second] and failures:
            raise failures.pop()
        return await real(key, *args, **kwargs)

    fake_redis.xautoclaim = xautoclaim  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="bot.core.health"):
        await clock.advance(TOUCH_EVERY)  # the first stream's entry claimed, then the failure
    assert not failures
    assert "the primary is gone" in caplog.text  # the failure told as an outage, as before
    if worker.held:
        await asyncio.wait(list(worker.held.values()))
    assert await fake_redis.xlen(stream.STREAMS[first]) == 0, "claimed, and left unhandled"
    assert len(_replies(h, ann)) == 1
    for _ in range(int(WITHIN / TOUCH_EVERY) * 2):  # the second's when its turn comes round
        await clock.advance(TOUCH_EVERY)
        if worker.held:
            await asyncio.wait(list(worker.held.values()))
        if await _length_is(fake_redis, 0):
            break
    assert await _length_is(fake_redis, 0), "the second stream's entry not taken over"
    assert len(_replies(h, ann)) == 1 and len(_replies(h, bob)) == 1


@pytest.mark.parametrize("read", ["take", "reclaim"])
async def test_what_a_read_found_is_unconfirmed_when_the_claim_that_confirms_it_fails(
    fake_redis: aioredis.Redis, read: str
) -> None:
    """Redis fails the claim that confirms a read (gone midway, as in a failover): what
    the read made this worker's is unconfirmed, for the worker to confirm at its next
    touch, not left pending under its name until taken over after the idle limit; and the
    failure is told after (the reader's next read; the touch, once it holds the rest)."""
    replicas = Replicas(fake_redis, least=1)  # every read waits for a replica
    failures = [RedisConnectionError("the primary is gone")]

    async def write(key: str, plain: Any, queue: Any, **kw: Any) -> Any:
        if failures:
            raise failures.pop()
        return await plain()  # confirmed (fakeredis has no WAIT)

    replicas.write = write  # type: ignore[method-assign]
    box = stream.Inbox(fake_redis, "w1", replicas, claim_idle_ms=0)
    await box.make_group()
    found = stream.ref(0, await fake_redis.xadd(STREAM, {stream.FIELD: b"{}"}))
    if read == "reclaim":  # a dead worker's
        await fake_redis.xreadgroup(stream.GROUP, DEAD, {STREAM: ">"})
    with pytest.raises(Unconfirmed) as unconfirmed:
        await (box.take(16, 0) if read == "take" else box.reclaim(16))
    assert [entry for entry, _ in unconfirmed.value.result] == [found]
    with pytest.raises(RedisConnectionError, match="the primary is gone"):  # the outage
        if read == "take":
            await box.take(16, 0)  # told by the reader's next read
        box.reclaim_failed.tell()  # by the touch, once it holds what reclaim handed over
    assert [entry for entry, _ in await box.confirm([found])] == [found]


async def _handled_by(worker: inbox.Worker, failures: list[Any]) -> bool:
    return not failures and not worker.held


@HOOKED
async def test_an_entry_whose_confirmation_fails_is_confirmed_again_at_the_next_touch(
    harness: Harness, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry the worker read unconfirmed stays doubtful when the claim that would
    confirm it fails (Redis does not answer, as in a failover), as when it comes back
    unconfirmed: the touch after confirms it, not a takeover once it is idle that long."""
    h, fake_redis = harness, harness.redis
    now = fakeredis_streams.current_time()  # idle times stand still: no takeover
    monkeypatch.setattr(fakeredis_streams, "current_time", lambda: now)
    kept = h.keep_updates()
    ann = h.user("Ann")
    worker = inbox.worker_of(h.app)
    assert worker is not None
    real_confirm = worker.inbox.confirm
    failures = [RedisConnectionError("the primary is gone")]

    async def confirm(entries: list[bytes]) -> list[stream.Entry]:
        if failures:
            raise failures.pop()
        return await real_confirm(entries)

    worker.inbox.confirm = confirm  # type: ignore[method-assign]
    read = await _taken(fake_redis, worker.inbox.consumer, await _help(h, kept, ann))
    worker.doubtful.add(read)  # as a read no replica confirmed leaves it
    await clock.advance(TOUCH_EVERY)  # its confirmation fails
    assert not failures and worker.doubtful
    await clock.advance(TOUCH_EVERY)  # confirmed
    if worker.held:
        await asyncio.wait(list(worker.held.values()))
    assert await _length_is(fake_redis, 0), "not confirmed at the next touch"
    replies = _replies(h, ann)
    assert len(replies) == 1 and t("en", "common.unavailable") not in replies[0]


@HOOKED
async def test_a_taps_answer_time_counts_its_wait_in_the_stream(harness: Harness) -> None:
    h, fake_redis, server = harness, harness.redis, harness.server
    ann = h.user("Ann")
    name = "cardtable_tap_answer_seconds_sum"
    before = REGISTRY.get_sample_value(name) or 0.0
    tap = {
        "id": "4000000000001",
        "from": ann.to_json(),
        "chat_instance": "17",
        "data": "stale",
        "message": {"message_id": 1, "chat": server.chat_json(ann.id), "date": 0},
    }
    answer = server.queries[tap["id"]] = Answer(ann.id, tap["data"])
    stored = int(time.time() * 1000) - 3000  # the webhook stored it 3 s ago
    await _store(fake_redis, {"update_id": 30, "callback_query": tap}, f"{stored}-0")
    await until(lambda: _length_is(fake_redis, 0), WITHIN, "not handled")
    assert answer.answered
    assert (REGISTRY.get_sample_value(name) or 0.0) - before >= 3.0


@pytest.mark.running_clock  # its backoffs end by real time: see below
@HOOKED
async def test_the_reader_reads_on_after_an_error_that_is_no_pause(
    harness: Harness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    h, fake_redis = harness, harness.redis
    # Its backoffs, 0.25 s and 0.5, are on the bot's clock, which cannot be moved on here:
    # the reader, woken, reads on real time (a blocking read) and is never asleep on it again.
    monkeypatch.setattr(inbox, "Backoff", functools.partial(Backoff, 0.01))
    kept = h.keep_updates()
    ann = h.user("Ann")
    worker = inbox.worker_of(h.app)
    assert worker is not None and worker.reader is not None
    real_take = worker.inbox.take
    # What redis-py's cluster client raises when the slot map it reads again is not whole.
    failures = [
        RedisClusterException("Redis Cluster cannot be connected"),
        RedisClusterException("All slots are not covered after query all startup_nodes"),
    ]

    async def take(count: int, block_ms: int) -> Any:
        if failures:
            raise failures.pop()
        return await real_take(count, block_ms)

    worker.inbox.take = take  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, logger="bot.inbox"):
        await _store(fake_redis, await _help(h, kept, ann))
        await until(lambda: _length_is(fake_redis, 0), WITHIN, "the reader stopped")
    assert not failures and not worker.reader.done()
    assert len(_replies(h, ann)) == 1
    told = [r for r in caplog.records if "read failed" in r.getMessage()]
    assert len(told) == 1 and told[0].exc_info is not None  # once, with its traceback
    assert [r for r in caplog.records if "reads again" in r.getMessage()]
    assert [r.getMessage() for r in h.log_errors] == [told[0].getMessage()]
    h.log_errors.clear()  # that one traceback was the test's own


async def test_a_clusters_read_that_fails_hands_over_what_the_others_read_first(
    fake_redis: aioredis.Redis,
) -> None:
    box = stream.Inbox(fake_redis, "w1")
    box.one_server = False  # each stream read on its own, as on a cluster
    found = [(stream.ref(3, b"1-0"), b"{}")]

    async def take_one(n: int, count: int, block_ms: int) -> stream.Claimed:
        if n == 3:
            return found, None
        if n == 5:  # its node fails over
            raise RedisConnectionError("node down")
        await asyncio.sleep(10)
        return [], None

    box._take_one = take_one  # type: ignore[method-assign]
    try:
        assert await box.take(16, 250) == found  # not dropped, left pending for others
        with pytest.raises(RedisConnectionError):  # then the failure is told
            await box.take(16, 250)
    finally:
        box.close()


async def test_a_dead_worker_leaves_every_stream_at_one_look_once_it_holds_nothing(
    fake_redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [fakeredis_streams.current_time()]  # fakeredis's idle times, moved by the test
    monkeypatch.setattr(fakeredis_streams, "current_time", lambda: now[0])
    live = stream.Inbox(fake_redis, "live", claim_idle_ms=100)
    await live.make_group()
    await fake_redis.xadd(stream.STREAMS[7], {stream.FIELD: b"{}"})
    everything = dict.fromkeys(stream.STREAMS, ">")
    await fake_redis.xreadgroup(stream.GROUP, "dead", everything, count=1)  # holds stream 7's
    now[0] += 200  # the dead one idle past the limit, the live one not (whatever the load)
    await fake_redis.xreadgroup(stream.GROUP, "live", everything, count=1)
    assert all(names == {"dead", "live"} for names in (await _members(fake_redis)).values())
    await live.forget_dead()  # looks at stream 0, where the dead one holds nothing
    left = await _members(fake_redis)
    assert left[7] == {"dead", "live"}  # it holds an entry there: kept, for a takeover
    assert all(names == {"live"} for n, names in left.items() if n != 7)
    other = stream.Inbox(fake_redis, "other", claim_idle_ms=100)  # takes it over, not live
    assert await other.reclaim(10) == [] and await other.reclaim(10) != []  # streams 4-7
    await live.forget_dead()  # stream 1's turn: the dead one is looked for in 7 again
    assert all("dead" not in names for names in (await _members(fake_redis)).values())


async def _members(redis: aioredis.Redis) -> dict[int, set[str]]:
    """The consumers of each stream's group, by the stream's number."""
    found: dict[int, set[str]] = {}
    for n, key in enumerate(stream.STREAMS):
        found[n] = {c["name"].decode() for c in await redis.xinfo_consumers(key, stream.GROUP)}
    return found


async def test_a_dead_worker_leaves_the_group_at_the_touch_that_takes_its_entries_over(
    fake_redis: aioredis.Redis,
) -> None:
    """On Redis 7.0 a worker is a consumer only of the streams it was given entries in: one
    that died holding entries of streams 9 and 14 is looked for there as they are taken
    over (both at the touch whose turn is 9's), not once the turn of forget_dead comes."""
    live = stream.Inbox(fake_redis, "live", claim_idle_ms=0)  # no wait: all are idle past it
    await live.make_group()
    for n in (9, 14):
        await fake_redis.xadd(stream.STREAMS[n], {stream.FIELD: b"{}"})
        await fake_redis.xreadgroup(stream.GROUP, "dead", {stream.STREAMS[n]: ">"})
    for touch in range(3):  # as bot.inbox makes them: streams 0-3, 4-7, then 8-11 and all
        assert len(await live.reclaim(10)) == (2 if touch == 2 else 0)
        await live.forget_dead()
    assert all("dead" not in names for names in (await _members(fake_redis)).values())


async def test_once_a_touch_finds_a_dead_workers_entries_the_other_streams_go_side_by_side(
    fake_redis: aioredis.Redis,
) -> None:
    """Not one claim after another: with a WAIT behind each, twelve in a row could outlast
    the idle limit of what the worker itself holds, and another would take that over. The
    room left is shared between them, not asked of each (twelve times what was asked)."""
    live = stream.Inbox(fake_redis, "live", claim_idle_ms=0)
    await live.make_group()
    for n in (1, 9, 9, 14):  # 1 in the first turn's streams (0-3), the others swept
        await fake_redis.xadd(stream.STREAMS[n], {stream.FIELD: b"{}"})
        await fake_redis.xreadgroup(stream.GROUP, "dead", {stream.STREAMS[n]: ">"})
    real, flying = fake_redis.xautoclaim, [0, 0]  # claims under way: now, at most

    async def xautoclaim(*args: Any, **kwargs: Any) -> Any:
        flying[0] += 1
        flying[1] = max(flying)
        await asyncio.sleep(0)  # as a round trip would: the others may go meanwhile
        flying[0] -= 1
        return await real(*args, **kwargs)

    fake_redis.xautoclaim = xautoclaim  # type: ignore[method-assign]
    room = 1 + stream.BUCKETS - stream.RECLAIM_PER_TOUCH  # one for each stream swept
    assert len(await live.reclaim(room)) == 3  # stream 9's second at the next sweep
    assert flying[1] == stream.BUCKETS - stream.RECLAIM_PER_TOUCH


async def test_on_one_server_without_a_replica_a_read_is_the_only_call_an_update_costs(
    fake_redis: aioredis.Redis,
) -> None:
    """Where no replica is awaited, the read alone makes an update the worker's: no claim
    sent again after it (one more round trip per update, before)."""
    box = stream.Inbox(fake_redis, "w1", Replicas(fake_redis))
    await box.make_group()
    await box.put(b"{}", 3)
    claims: list[Any] = []
    real = fake_redis.xclaim

    async def xclaim(*args: Any, **kwargs: Any) -> Any:
        claims.append(args)
        return await real(*args, **kwargs)

    fake_redis.xclaim = xclaim  # type: ignore[method-assign]
    try:
        assert [update for _, update in await box.take(16, 0)] == [b"{}"]
    finally:
        box.close()
    assert claims == []
