"""The table store, on fakeredis and on the real Redis: compare-and-set never loses or
doubles a change; leases, moves, deadlines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import fakeredis
import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from bot.core import store as store_module
from bot.core.keys import TABLE_SLOT, family_of, table_key, user_slot
from bot.core.models import Lobby, Seat, Slot, Table
from bot.core.store import LeaseLost, Snapshot, Store, Write
from testing.clock import ManualClock
from testing.settings import REDIS_URL

KEY = table_key(-100123, None)
NEW_KEY = table_key(-1001000000123, None)  # the same group, upgraded to a supergroup


def _table() -> Table:
    lobby = Lobby(creator=1)
    return Table(game_id="ab12", chat_id=-100123, lobby=lobby, kind="durak", phase="lobby")


def _add_seat(snap: Snapshot) -> tuple[Write, int]:
    table = snap.table or _table()
    table.seats.append(Seat(user_id=len(table.seats) + 1, name=f"p{len(table.seats)}"))
    return Write(table), len(table.seats)


@pytest.fixture(params=["fake", "real"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if request.param == "fake":
        client: aioredis.Redis = fakeredis.FakeAsyncRedis()
    else:
        client = aioredis.Redis.from_url(REDIS_URL, socket_timeout=2)
        try:
            await client.ping()
        except (OSError, aioredis.ConnectionError, aioredis.TimeoutError):
            await client.aclose()
            pytest.skip("no Redis answers on 127.0.0.1:6379")
        await _clean(client)
    yield Store(client, ttl=100)
    await _clean(client)
    await client.aclose()


async def _clean(client: aioredis.Redis) -> None:
    for key in (KEY, NEW_KEY):
        keys = family_of(key)
        await client.delete(key, *keys.chat_index)
        await client.zrem(keys.due, key)
        await client.zrem(keys.turns, key)


async def _take_due(store: Store, key: str = KEY) -> list[str]:
    """The due tables of the key's bucket."""
    [(found, _)] = await store.take_due([family_of(key).bucket], store.now_ms())
    return found


async def test_concurrent_changes_are_neither_lost_nor_doubled(store: Store) -> None:
    # Two stores on one Redis are two bot processes.
    other = Store(store.redis, ttl=100)
    results = await asyncio.gather(*(s.transact(KEY, _add_seat) for s in [store, other] * 25))
    snap = await store.load(KEY)
    assert snap.table is not None
    assert len(snap.table.seats) == 50
    assert snap.version == 50
    assert sorted(count for _, count in results) == list(range(1, 51))
    assert sorted(s.user_id for s in snap.table.seats) == list(range(1, 51))


async def test_refused_change_writes_nothing(store: Store) -> None:
    await store.transact(KEY, _add_seat)
    snap, _ = await store.transact(KEY, lambda s: (Write(None), None))
    assert snap.version == 1
    assert (await store.load(KEY)).version == 1


async def test_slots_ttl_and_fresh_tables(store: Store) -> None:
    _snap, _ = await store.transact(KEY, _add_seat)
    await store.save_slots(KEY, {TABLE_SLOT: Slot(id=5, hash="h", version=1)})
    await store.save_slots(KEY, {user_slot(7): Slot(id=9, version=1, prompt=True)})
    loaded = await store.load(KEY)
    assert loaded.slots[TABLE_SLOT].id == 5
    assert loaded.slots[user_slot(7)].prompt
    assert 0 < await store.redis.ttl(KEY) <= 100
    # A new game in the chat forgets the old messages but keeps counting versions.
    fresh, _ = await store.transact(KEY, lambda s: (Write(_table(), fresh=True), None))
    assert fresh.slots == {}
    loaded = await store.load(KEY)
    assert loaded.slots == {} and loaded.version == 2
    assert loaded.table is not None and loaded.table.seats == []


async def test_a_table_that_does_not_validate_leaves_the_chat_free(store: Store) -> None:
    await store.redis.hset(KEY, mapping={"v": 3, "d": '{"nonsense": true}'})
    snap = await store.load(KEY)
    assert snap.table is None and snap.version == 3
    snap, _ = await store.transact(KEY, lambda s: (Write(_table(), fresh=True), None))
    assert snap.version == 4
    assert (await store.load(KEY)).table is not None


def _other(store: Store) -> Store:
    """A second bot process on the same Redis."""
    return Store(store.redis, ttl=100, clock=store.clock)


async def test_one_process_delivers_and_ends_on_the_newest_version(store: Store) -> None:
    other = _other(store)
    first, _ = await store.transact(KEY, _add_seat)
    assert first.lease  # the lease was free: this process delivers
    second, _ = await other.transact(KEY, _add_seat)
    assert not second.lease  # taken: the holder will show this version too
    assert await other.claim(KEY) is None
    newer = await store.release(KEY, first.version, {TABLE_SLOT: Slot(id=1, version=1)})
    assert newer is not None and newer.lease and newer.version == second.version
    assert newer.slots[TABLE_SLOT].id == 1
    assert await store.release(KEY, newer.version, {}) is None  # shown the newest: free
    third, _ = await other.transact(KEY, _add_seat)
    assert third.lease


@pytest.mark.parametrize("by", ["this process", "another"])
async def test_a_new_game_committed_while_the_old_one_is_delivered_starts_with_no_messages(
    store: Store, by: str
) -> None:
    """A process starts a new game ("Play again") while this one's delivery of the old one
    is out: the delivery goes on (no second deliverer), and its release goes round for the
    new game, saving none of the old game's messages into it (a hand would be edited
    across games), but handing on what the old game left to remove."""
    first, _ = await store.transact(KEY, _add_seat)
    assert first.lease
    starts = store if by == "this process" else _other(store)
    fresh, _ = await starts.transact(KEY, lambda s: (Write(_table(), fresh=True), None))
    assert fresh.lease == (starts is store)  # the holder (this process) shows it
    old = {user_slot(7): Slot(id=1, version=1)}
    newer = await store.release(KEY, first.version, old, junk=[(7, 11, False, 0)])
    assert newer is not None and newer.version == fresh.version and newer.slots == {}
    assert newer.junk == [(7, 11, False, 0)]  # what the old game left to remove, removed
    assert await store.release(KEY, newer.version, {user_slot(7): Slot(id=2, version=2)}) is None
    assert (await store.load(KEY)).slots[user_slot(7)].id == 2  # its own are saved


async def test_a_release_after_another_took_the_lease_writes_nothing(store: Store) -> None:
    """A failover outlasts this holder's lease; another process takes the table, shows
    it and gives the lease back; this release, landing after, would put back the slots
    that the other's replaced (its new messages unknown to the table for good)."""
    store.clock = clock = ManualClock(store.clock())
    other = _other(store)
    first, _ = await store.transact(KEY, _add_seat)
    assert first.lease
    clock.now += store_module.LEASE_MS / 1000 + 0.1
    taken = await other.claim(KEY)
    assert taken is not None
    await other.release(KEY, taken.version, {TABLE_SLOT: Slot(id=2, version=first.version)})
    with pytest.raises(LeaseLost):
        await store.release(KEY, first.version, {TABLE_SLOT: Slot(id=1, version=first.version)})
    assert (await store.load(KEY)).slots[TABLE_SLOT].id == 2


async def test_a_table_moves_whole_to_its_new_key_once(store: Store) -> None:
    other = _other(store)
    first, _ = await store.transact(KEY, _add_seat)  # delivering: this process holds the lease
    assert await other.move(KEY, NEW_KEY) == store_module.BUSY  # not under its feet
    await store.release(KEY, first.version, {user_slot(7): Slot(id=5, version=1)})
    assert await other.move(KEY, NEW_KEY) == store_module.MOVED
    # Telegram's second notice: nothing to move.
    assert await store.move(KEY, NEW_KEY) == store_module.NOTHING_TO_MOVE
    moved = await store.load(NEW_KEY)
    assert moved.table is not None and moved.version == first.version
    assert moved.slots[user_slot(7)].id == 5
    # A release at the old key (a process that lost its lease) writes nothing anywhere.
    with pytest.raises(LeaseLost):
        await store.release(KEY, first.version, {TABLE_SLOT: Slot(id=6, version=1)})
    assert not await store.redis.exists(KEY)
    after, _ = await other.transact(NEW_KEY, _add_seat)  # the next commit there delivers
    assert after.lease and after.version == first.version + 1
    await store.transact(KEY, _add_seat)  # a new game in the old chat: the move is refused
    assert await store.move(KEY, NEW_KEY) == store_module.NOTHING_TO_MOVE


@pytest.mark.parametrize("cut", ["MoveIn", "Drop"])
async def test_a_move_to_another_slot_cut_short_is_finished_by_the_next(
    store: Store, cut: str
) -> None:
    """The new chat id is in another bucket, so another slot: the move is three scripts
    (freeze and read, write, drop). The process dies before ``cut``; the next notice
    finishes the move, and the table is neither lost nor doubled."""
    assert key_slot(KEY.encode()) != key_slot(NEW_KEY.encode())
    first, _ = await store.transact(KEY, _add_seat)
    await store.release(KEY, first.version, {user_slot(7): Slot(id=5, version=1)})
    await store.schedule_turn(KEY, 2e9)
    dying = _other(store)
    steps = {"MoveIn": "_move_in", "Drop": "_drop"}

    async def dies(*args: object) -> object:
        raise ConnectionError("the process died")

    setattr(dying, steps[cut], dies)
    with pytest.raises(ConnectionError):
        await dying.move(KEY, NEW_KEY)
    frozen = await store.load(KEY)
    assert frozen.table is None  # frozen: no tap commits there meanwhile
    assert await store.move(KEY, NEW_KEY) == store_module.MOVED
    moved = await store.load(NEW_KEY)
    assert moved.table is not None and moved.version == first.version
    assert [s.user_id for s in moved.table.seats] == [1] and moved.slots[user_slot(7)].id == 5
    assert not await store.redis.exists(KEY)
    assert await store.redis.zscore(family_of(NEW_KEY).turns, NEW_KEY) == 2e9 * 1000
    assert await store.redis.zscore(family_of(KEY).turns, KEY) is None
    assert await store.chat_tables(-1001000000123) == [NEW_KEY]
    assert await store.chat_tables(-100123) == []
    assert await store.chat_tables(0) == []  # no chat's: where inline tables live


@pytest.mark.parametrize("renewals", [0, 10])
async def test_a_working_holder_keeps_its_lease_and_a_dead_ones_expires(
    store: Store, renewals: int
) -> None:
    """The commit's own lease (none renewed) and a renewed one each last LEASE_MS."""
    store.clock = clock = ManualClock(store.clock())
    other = _other(store)
    await store.transact(KEY, _add_seat)
    assert await other.claim(KEY) is None
    for _ in range(renewals):  # far longer than one lease, renewed as the holder works
        clock.now += store_module.RENEW_EVERY
        await store.renew([KEY])
        assert await other.claim(KEY) is None
    clock.now += store_module.LEASE_MS / 1000 - 0.1  # it died after its last renewal
    assert await other.claim(KEY) is None  # not quite yet
    clock.now += 0.2  # the next poll takes over
    assert await _take_due(other) == [KEY]
    claimed = await other.claim(KEY)
    assert claimed is not None and claimed.lease and claimed.table is not None


async def test_a_due_table_taken_by_a_caller_that_fails_comes_due_again(store: Store) -> None:
    """A poller takes a due table, and its claim fails (a failover: the connection is
    lost, the node is demoted): the table comes due again a lease later for any process,
    rather than leave the due set for good (no prompt then until someone taps). A table
    that is gone leaves it at its claim. A due table is handed to one caller only, and the
    read says when the bucket's next entry falls due."""
    store.clock = clock = ManualClock(store.clock())
    other = _other(store)
    snap, _ = await store.transact(KEY, _add_seat)
    await store.release(KEY, snap.version, {}, due=clock.now)
    assert await _take_due(store) == [KEY]  # ... and this process's claim fails
    assert await _take_due(other) == []  # taken: not handed to two callers
    clock.now += store_module.LEASE_MS / 1000
    assert await _take_due(other) == [KEY]  # due again
    await store.redis.delete(KEY)
    assert await other.claim(KEY) is None
    clock.now += store_module.LEASE_MS / 1000
    assert await _take_due(other) == []
    await store.redis.delete(family_of(KEY).due)  # the bucket holds this table alone
    await store.defer(KEY, 1e12)  # far in the future: nothing due, and when it falls due
    assert await store.take_due([family_of(KEY).bucket], store.now_ms()) == [([], 1e12)]


async def test_a_running_game_outlives_its_deadline_and_a_finished_one_expires(
    store: Store,
) -> None:
    now = store.clock()
    store.ttl = 60  # GAME_TTL shorter than two turn times

    def set_phase(phase: str, due: float) -> Callable[[Snapshot], tuple[Write, None]]:
        def decide(snap: Snapshot) -> tuple[Write, None]:
            table = snap.table or _table()
            table.phase, table.clock.turn_due = phase, due  # type: ignore[assignment]
            return Write(table), None

        return decide

    await store.transact(KEY, set_phase("playing", now + 300))  # a person's five minutes
    assert await store.redis.ttl(KEY) > 300
    await store.transact(KEY, set_phase("playing", 0.0))  # no turn limit: days of thought
    assert await store.redis.ttl(KEY) >= store_module.IDLE_GAME_TTL - 5
    await store.transact(KEY, set_phase("finished", 0.0))
    assert 0 < await store.redis.ttl(KEY) <= 60


async def test_superseded_messages_are_kept_until_removed(store: Store) -> None:
    snap, _ = await store.transact(KEY, _add_seat)
    await store.release(KEY, snap.version, {}, junk=[(7, 11, False, 0), (-100123, 12, True, 5)])
    assert (await store.load(KEY)).junk == [(-100123, 12, True, 5), (7, 11, False, 0)]
    again = await store.claim(KEY)
    assert again is not None
    await store.release(KEY, again.version, {}, deleted=[(7, 11, 0)])
    assert (await store.load(KEY)).junk == [(-100123, 12, True, 5)]
    await store.redis.delete(KEY)
    await store.discard(KEY, [(7, 13, False, 0)])  # the table is gone: nothing is written
    assert not await store.redis.exists(KEY)


async def test_a_commit_delivers_from_what_a_delivery_saved_after_the_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delivery saves what the messages show between another change's read of the table
    and its commit (only the version is compared, so the commit goes through). The
    committed snapshot, which the next delivery starts from, has the messages as saved,
    not as read: else that delivery makes the same edit again, or edits a message that
    was replaced meanwhile and leaves the new one with its buttons."""
    first, _ = await store.transact(KEY, _add_seat)
    assert first.lease
    shown = {
        TABLE_SLOT: Slot(id=5, version=first.version, hash="table"),
        user_slot(1): Slot(id=6, version=first.version, hash="hand"),
    }
    read = store.load

    async def read_then_delivered(key: str) -> Snapshot:
        snap = await read(key)
        await store.release(KEY, first.version, shown, junk=[(1, 4, False, 0)])
        return snap

    monkeypatch.setattr(store, "load", read_then_delivered)
    second, _ = await store.transact(KEY, _add_seat)
    assert second.lease and second.version == first.version + 1
    assert second.slots == shown and second.junk == [(1, 4, False, 0)]
