"""Every script and transaction of the bot on a real Redis Cluster of three primaries: it
refuses a script or a MULTI whose keys are of two slots (CROSSSLOT), so each runs only
because the keys that live together hash together (docs/redis.md)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from bot.core import connect, scripts
from bot.core.inbox import STREAMS, Inbox, stream_of
from bot.core.keys import BUCKETS, family, family_of, table_key, user_slot
from bot.core.limiter import Limiter, Priority
from bot.core.models import Lobby, Seat, Slot, Table
from bot.core.services import services
from bot.core.store import MOVED, Snapshot, Store, Write
from bot.tables.stats.finished import Player, from_table
from bot.tables.stats.standings import Standings, of
from testing import redis_servers
from testing.fakegram import FakeTelegram
from testing.harness import AppFactory, harness_on
from testing.stats import GROUP, played
from testing.tabletop import playing, stored

pytestmark = pytest.mark.usefixtures("clients_closed")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """Three primaries, no replicas: the port of one of them."""
    if (why := redis_servers.why_not()) is not None:
        pytest.skip(why)
    where = redis_servers.Cluster(tmp_path_factory.mktemp("cluster"), replicas=0)
    with redis_servers.running(where):
        yield where.ports[0]


@pytest.fixture
async def client(cluster: int) -> AsyncIterator[RedisCluster]:
    found = RedisCluster(host="127.0.0.1", port=cluster)
    await found.initialize()
    await found.flushall()  # this module's own cluster: each test starts empty
    yield found
    await connect.close(found)  # type: ignore[arg-type]


def _write(chat: int) -> object:
    def decide(snap: Snapshot) -> tuple[Write, None]:
        seats = [Seat(user_id=u, name=f"p{u}") for u in (1, 2)]
        new = Table(game_id="ab12", chat_id=chat, lobby=Lobby(creator=1), kind="durak", seats=seats)
        table = snap.table or new
        table.seats[0].name += "!"
        return Write(table, wake=2e9), None

    return decide


async def test_the_tables_scripts_run_on_a_cluster(client: RedisCluster) -> None:
    store = Store(client, ttl=600)  # type: ignore[arg-type]
    other = Store(client, ttl=600)  # type: ignore[arg-type]
    chats = [-100777 - i for i in range(40)]
    assert len({family(c).bucket for c in chats}) > 8  # many nodes' slots
    for chat in chats:
        key = table_key(chat, None)
        snap, _ = await store.transact(key, _write(chat))  # type: ignore[arg-type]
        assert snap.lease
        await store.renew([key, table_key(chats[0], None)])
        assert await other.claim(key) is None  # leased
        await store.release(key, snap.version, {user_slot(1): Slot(id=3, version=1)}, due=1.0)
        assert await store.chat_tables(chat) == [key]
        await store.discard(key, [])
        await store.save_slots(key, {user_slot(2): Slot(id=4, version=1)})
        await store.note_reach(key, {1: False, 2: True})
    found = await other.take_due(list(range(BUCKETS)), other.now_ms())
    taken = [k for due, _ in found for k in due]
    assert sorted(taken) == sorted(table_key(c, None) for c in chats)
    key = table_key(chats[1], None)
    await store.schedule_turn(key, 1.0)
    now = store.now_ms()
    [(due, _)] = await store.due_turns([family_of(key).bucket], now)
    assert due == [key]
    assert await store.claim_turn(key, now, now + 5000)
    await store.settle_turn(key, now + 5000, 0)
    assert await client.zscore(family_of(key).turns, key) is None
    # A supergroup: the table moves to another slot, in three steps.
    new = table_key(-100999888777, None)
    assert await store.move(table_key(chats[2], None), new) == MOVED
    moved = await store.load(new)
    assert moved.table is not None and moved.slots[user_slot(1)].id == 3
    dropped = await store.drop(new)
    assert dropped.table is not None and not await client.exists(new)


async def test_the_old_layouts_commit_is_refused_by_a_cluster(client: RedisCluster) -> None:
    """Why the keys changed: a commit over ``ct:table:…``, ``ct:due`` and ``ct:turns``."""
    cas = scripts.CAS.register(client)  # type: ignore[arg-type]
    holder = scripts.Holder("me", 1, 2000)
    lease = scripts.Lease("ct:table:-5:0", "ct:due", holder)
    old = scripts.Cas(lease, "ct:turns", (), 0, 1, "{}", 60, False, None)
    with pytest.raises(ResponseError, match=r"(?i)slot"):
        await cas(old)


async def test_the_limiter_standings_and_inbox_run_on_a_cluster(client: RedisCluster) -> None:
    limiter = Limiter(client)  # type: ignore[arg-type]
    waits = await limiter.try_acquire([(-5, Priority.TABLE), (7, Priority.PROMPT)])
    assert waits == [0.0, 0.0]
    await limiter.flooded(-5, 7, 1.0)
    await limiter.flooded(-5, 8, 1.0)  # a second player: the group learns
    assert await limiter.learned() == 1
    assert await limiter.cool(7)
    # The standings: a game counted in two steps, once; moved with a supergroup; forgotten.
    standings = Standings(client, 600)  # type: ignore[arg-type]
    ann, bob = Player(11, "Ann"), Player(12, "Bob")
    for i in range(3):
        table, _ = played("durak", i, [ann, bob], f"c{i:03d}")
        game = from_table(table)
        assert game is not None
        await standings.count(game)
        await standings.count(game)  # delivered again: not counted again
    assert (await standings.in_group(GROUP, ann.uid))["durak"].n == 3
    assert len(await standings.board(GROUP, "durak")) == 2
    await standings.move_group(GROUP, -100123123)
    assert (await standings.in_group(-100123123, bob.uid))["durak"].n == 3
    assert await standings.in_group(GROUP, bob.uid) == {}
    await standings.forget(ann.uid)
    assert await standings.in_group(-100123123, ann.uid) == {}
    # The inbox: 16 streams, each read with a blocking read of its own on a cluster.
    worker = Inbox(client, "w1")  # type: ignore[arg-type]
    assert not worker.one_server
    await worker.make_group()
    updates = [{"update_id": i, "message": {"chat": {"id": -100 - i}}} for i in range(20)]
    for update in updates:
        await worker.put(str(update["update_id"]).encode(), stream_of(update))
    assert await worker.backlog() == 20
    got: list[tuple[bytes, bytes]] = []
    async with asyncio.timeout(10):
        while len(got) < 20:  # each take: what the first reads to answer found
            got += await worker.take(64, 100)
    assert sorted(int(body) for _, body in got) == list(range(20))
    for node in client.get_primaries():  # each read went straight to its stream's node
        stats = await client.info("commandstats", target_nodes=node)
        assert not [name for name in stats if "getkeys" in name], stats
    await worker.touch([e for e, _ in got])
    for entry, _ in got:
        await worker.done(entry)
    assert await worker.backlog() == 0 and await worker.reclaim(10) == []
    await worker.forget_dead()
    await worker.leave()
    assert all([await client.xinfo_consumers(s, "workers") == [] for s in STREAMS])


async def test_whole_games_are_played_on_a_cluster(
    request: pytest.FixtureRequest, server: FakeTelegram, make_app: AppFactory, client: RedisCluster
) -> None:
    """The bot itself on the cluster: two games to their end, their standings counted."""
    async for h in harness_on(request, server, make_app, client):
        players = [h.user("Ann"), h.user("Bob"), h.user("Cid")]
        for seed in (1, 2):
            top = await playing(h, "durak", players)
            await top.play(players, random.Random(seed))
            assert (await stored(h, top.group))["phase"] == "finished"
        assert (await of(services(h.app).store).mine(players[0].id))[0]["durak"].n == 2
