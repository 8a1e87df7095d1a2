"""The bot on a Redis Cluster and behind Sentinel (the test's own servers:
testing/redis_servers.py), and a failover mid-game (issue 33), which is a pause: the game
goes on within seconds, every accepted tap applied once. The bot runs as webhook processes
(testing/botproc.py), posted each update in turn, and again while it answers 503."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import random
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.exceptions import RedisError

from bot.core import connect, lua, polls
from bot.core.callbacks import STAMP_LEN, Action, decode
from bot.core.config import RedisSettings
from bot.core.health import PAUSES
from bot.core.i18n import t
from bot.core.keys import DUE_KEYS
from bot.core.replicas import Replicas, Unconfirmed
from testing import redis_servers
from testing.botproc import BotProcess, Bots, Forked, ProcHarness
from testing.chats import Answer
from testing.fakegram import FakeTelegram
from testing.fakeserver import serving
from testing.redis_servers import SENTINEL_MASTER, Ahead, Cluster, Sentinels, reused, running
from testing.tabletop import PASS, TAKE, Tabletop, action_of, stored, table_key
from testing.waits import side_by_side, until

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("clients_closed")]
pytestmark.append(pytest.mark.skipif(bool(why := redis_servers.why_not()), reason=str(why)))

BACK_WITHIN = 10.0  # seconds from a failover until each table accepts taps again
# Seconds from the Sentinels naming a new primary until the bot's writes are confirmed: a
# question to them a second at most (bot.core.primary.ASK_EVERY), then a WAIT. 0.3-0.6 s on
# a quiet machine, once 2.1 s in a full run; without the bot's asking, 8-10 s.
FOLLOWED_WITHIN = 4.0
REPOSTED_FOR = 30.0  # seconds Telegram goes on posting an update the bot answered 503
PROCESSES = 2
HELD_BACK_TAPS = 3  # taps that reach no replica before the primary is killed
HANGS_FOR = 2.0  # seconds a tap may neither end nor be refused before the kill
UNCONFIRMED = t("en", "common.unconfirmed")


Where = Cluster | Sentinels


@pytest.fixture(scope="module", autouse=True)
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Future[list[Cluster]]]:
    """The module's cluster (2 s to form), formed in a thread while the first case (behind
    Sentinel) runs; the bot processes' fork server (testing.botproc.Forked) starts now too,
    importing the bot (a second or more) before the first game needs it."""
    Forked.server()
    made = [Cluster(tmp_path_factory.mktemp("cluster"))]

    def form() -> list[Cluster]:
        try:
            made[0].start()
        except Exception:  # the next cluster case starts one of its own (reused)
            made.pop().stop()
        return made

    with ThreadPoolExecutor(1) as thread:
        yield thread.submit(form)
    for c in made:
        c.stop()


@pytest.fixture
def cluster(tmp_path: Path, clusters: Future[list[Cluster]]) -> Iterator[Cluster]:
    """The module's cluster, restored after the test."""
    with reused(clusters.result(), tmp_path / "cluster") as c:
        yield c


@pytest.fixture(scope="module", autouse=True)
def sentinel_sets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ahead[Sentinels]]:
    """Each test's primary and replica behind Sentinel, started while the test before runs."""
    ahead = Ahead(tmp_path_factory.mktemp("sentinels"), Sentinels)
    yield ahead
    ahead.close()


@pytest.fixture
def sentinels(sentinel_sets: Ahead[Sentinels]) -> Iterator[Sentinels]:
    made = sentinel_sets.take()
    yield made
    made.stop()


def settings_of(where: Where) -> RedisSettings:
    """The settings that connect to ``where``: what a bot process reads (env_of)."""
    named = {name.lower(): value for name, value in env_of(where).items()}
    return RedisSettings(_env_file=None, **named)  # type: ignore[arg-type]


def env_of(where: Where) -> dict[str, str]:
    if isinstance(where, Cluster):
        return {"REDIS_URL": where.url, "REDIS_CLUSTER": "1"}
    return {"REDIS_SENTINELS": where.addresses, "REDIS_SENTINEL_MASTER": SENTINEL_MASTER}


async def test_behind_sentinel_writes_are_confirmed_again_soon_after_a_graceful_failover(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With the Sentinels' default periods, the old primary takes unconfirmed writes for
    8-10 s after a SENTINEL FAILOVER: the bot asks the Sentinels and leaves it
    (bot.core.primary), so writes are confirmed again within FOLLOWED_WITHIN, on the new one."""
    caplog.set_level(logging.INFO, logger="bot.core.primary")
    with running(Sentinels(tmp_path / "sentinel", periods={})) as where:
        redis = connect.client(settings_of(where))
        writes = _Writes(Replicas(redis, wait_ms=250))
        tasks = [asyncio.create_task(writes.run(n)) for n in range(4)]
        try:
            await until(lambda: writes.each_confirmed(len(tasks)), 10, "no write confirmed")
            promoted = where.replica()
            await asyncio.to_thread(where.failover)
            named = time.monotonic()
            await until(
                lambda: writes.confirmed_since(named), FOLLOWED_WITHIN + 8, "none confirmed"
            )
            took = writes.first_confirmed_since(named) - named
            assert took < FOLLOWED_WITHIN, f"confirmed again {took:.1f} s after the switch"
        finally:
            writes.stopping = True  # (a cancel alone may be lost: _Writes.run)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await connect.close(redis)
        with where.servers[promoted].client() as new:
            held = {m.decode() for m in new.smembers(_Writes.KEY)}
        assert set(writes.confirmed) <= held, "a write confirmed that the new primary lacks"
    assert [r.getMessage() for r in caplog.records if r.name == "bot.core.primary"] == [
        f"Redis primary is now 127.0.0.1:{promoted}, per Sentinel"
    ]


async def test_the_check_says_the_mode_loads_each_script_on_each_primary_and_a_kill_is_a_pause(
    cluster: Cluster, sentinels: Sentinels, caplog: pytest.LogCaptureFixture
) -> None:
    """On the cluster and behind Sentinel, side by side: the check (its line logged once
    for each), then a kill of the primary, which Redis finds and fails over itself."""
    caplog.set_level(logging.INFO, logger="bot.core.connect")
    clients = [connect.client(settings_of(where)) for where in (cluster, sentinels)]
    try:
        lines = await side_by_side(
            cluster=_checked(cluster, clients[0]), sentinel=_checked(sentinels, clients[1])
        )
        logged = sorted(r.getMessage().split(" (")[0] for r in caplog.records)
        assert logged == sorted(line.split(" (")[0] for line in lines)
        await side_by_side(
            cluster=_a_kill_is_a_pause(cluster, clients[0]),
            sentinel=_a_kill_is_a_pause(sentinels, clients[1]),
        )
    finally:
        for redis in clients:
            await connect.close(redis)


async def _checked(where: Where, redis: Any) -> str:
    """The check's line, which says the mode; each script loaded on each primary."""
    line = await connect.check(redis, settings_of(where))
    if isinstance(where, Cluster):
        assert line.startswith("redis: cluster of 3 primaries (127.0.0.1:")
        primaries = where.primary_ports()
    else:
        assert line == f"redis: sentinel master {SENTINEL_MASTER} at 127.0.0.1:{where.primary()}"
        primaries = [where.primary()]
    shas = [hashlib.sha1(s.sent.encode()).hexdigest() for s in lua.SCRIPTS]
    for port in primaries:
        assert all(where.servers[port].client().script_exists(*shas)), port
    return line


async def _a_kill_is_a_pause(where: Where, redis: Any) -> None:
    """The primary killed: only pauses, until Redis's own failover (within BACK_WITHIN)."""
    key = "ct:{failover}:probe"
    await redis.set(key, 0)
    await asyncio.to_thread(where.wait_ok)
    if isinstance(where, Cluster):
        successor = where.kill(where.primary_for(key))
    else:
        successor = await asyncio.to_thread(where.replica)
        where.kill(where.primary())
    killed = time.monotonic()  # (an error but a pause fails the test: until's ignoring)
    await until(lambda: redis.incr(key), BACK_WITHIN + 5, "no answer again", ignoring=PAUSES)
    back = time.monotonic() - killed
    assert back < BACK_WITHIN, f"answered {back:.1f} s after the kill"
    assert await asyncio.to_thread(_primary, where, key) == successor
    await _restored(where)


async def _restored(where: Where, processes: list[BotProcess] | None = None) -> None:
    """A cluster's half restores it as it ends (its processes gone), while the other
    goes on: the fixture's restore after the test then has nothing to start again."""
    if isinstance(where, Cluster):
        for process in processes or []:
            process.kill()
        await asyncio.to_thread(where.restore)


async def test_a_pollers_read_across_a_dead_node_leaves_other_commands_be(cluster: Cluster) -> None:
    """A poller's read just after one bucket's primary died leaves a blocking command on a
    live node, same client, to end as it would have (bot.core.polls.read_buckets; before: the
    cluster's pipeline closed the whole client to retry)."""
    dead = cluster.primary_for(DUE_KEYS[0])
    live = next(k for k in DUE_KEYS if cluster.primary_for(k) != dead).replace(":due", ":probe")
    blocked = cluster.servers[cluster.primary_for(live)].client()
    redis = connect.client(settings_of(cluster))
    try:
        await redis.ping()
        waiting = asyncio.create_task(redis.blpop([live], timeout=0.25))
        while not blocked.info("clients")["blocked_clients"]:
            await asyncio.sleep(0.005)
        cluster.kill(dead)
        with contextlib.suppress(*PAUSES):
            await polls.read_buckets(redis, list(DUE_KEYS), 0, polls.READ)
        assert await waiting is None  # its timeout, not a broken connection
    finally:
        blocked.close()
        await connect.close(redis)


class _Writes:
    """Tasks that each add members to a set through Replicas: the members confirmed, and when."""

    KEY = "ct:{failover}:members"

    def __init__(self, replicas: Replicas) -> None:
        self.replicas = replicas
        self.confirmed: dict[str, float] = {}
        self.stopping = False

    async def run(self, task: int) -> None:
        """Writes until stopping: Python 3.11's ``asyncio.wait_for`` (in redis-py's send)
        drops a cancel that comes as the send completes, and the task wrote on for ever."""
        for n in itertools.count():
            if self.stopping:
                return
            try:
                await self._add(f"{task}:{n}")
            except Unconfirmed:
                continue  # it waited for the replica meanwhile
            except PAUSES:
                pass
            await asyncio.sleep(0.02)  # real servers: a pace, not a spin

    async def _add(self, member: str) -> None:
        redis: Any = self.replicas.redis
        await self.replicas.write(
            self.KEY, lambda: redis.sadd(self.KEY, member), lambda pipe: pipe.sadd(self.KEY, member)
        )
        self.confirmed[member] = time.monotonic()

    async def each_confirmed(self, tasks: int) -> bool:
        return {m.split(":")[0] for m in self.confirmed} == {str(n) for n in range(tasks)}

    async def confirmed_since(self, since: float) -> bool:
        return any(at > since for at in self.confirmed.values())

    def first_confirmed_since(self, since: float) -> float:
        return min(at for at in self.confirmed.values() if at > since)


class Telegram(ProcHarness):
    """Posts each update to the next bot process in turn, and again while it answers 503."""

    def __init__(self, telegram: FakeTelegram, bots: list[BotProcess]) -> None:
        super().__init__(telegram, bots[0])
        self.bots = bots
        self.posted = 0
        self.refused = asyncio.Event()  # set by a post answered 503

    async def deliver(self, data: dict[str, Any], app: Any = None) -> None:
        self.posted += 1
        self.serve_by(self.bots[self.posted % len(self.bots)])
        deadline = time.monotonic() + REPOSTED_FOR
        while (response := await self.post(data)).status_code == 503:
            assert time.monotonic() < deadline, "the bot refused an update for too long"
            self.refused.set()
            await asyncio.sleep(0.05)
        response.raise_for_status()
        query = data.get("callback_query")
        await self.settle(query["id"] if query else None)

    async def settle(self, query_id: str | None = None) -> None:
        """Until the tap is answered and every process is done: the table's delivery may be
        the other's (it holds the lease), and come after a lull in the Bot API calls."""
        await self._settled(query_id)
        posted_to = self.bot
        for bot in self.bots:
            with contextlib.suppress(AssertionError, httpx.HTTPError):  # /metrics, Redis away
                if bot is posted_to or await self.done_with(bot):
                    continue  # (one read: it has had the lull the first one waited for)
            self.serve_by(bot)
            try:
                await self._settled(None)
            finally:
                self.serve_by(posted_to)

    async def _settled(self, query_id: str | None) -> None:
        for _ in range(3):  # a process's /metrics may not answer while Redis is away
            try:
                await super().settle(query_id)
                return
            except (AssertionError, httpx.HTTPError):
                await asyncio.sleep(0.5)
        await super().settle(query_id)


class Game:
    """A durak game of two, played tap by tap by whoever is to act; accepted taps counted."""

    def __init__(self, h: Telegram, seed: int) -> None:
        self.h = h
        self.players = [h.user("Ann"), h.user("Bob")]
        self.top = Tabletop(h, h.group())
        self.rng = random.Random(seed)
        self.accepted = 0
        self.shown = 0  # the newest position a prompt has shown (its move count)
        self.shun: str | None = None  # a button's text not tapped while there is another
        self.prefer: str | None = None  # a button's text tapped whenever it is shown

    async def start(self) -> None:
        await self.top.setup_game("durak", self.players, settings={"deck_size": 24})

    async def tap(self) -> Answer:
        """The player to act taps one of his buttons, once he has them."""
        await until(
            lambda: self.top.actor_asked(self.players), 20, "nobody was asked", ignoring=PAUSES
        )
        actor = await self.top.actor(self.players)
        assert actor is not None
        return await self.tap_shown([actor])

    async def tap_shown(self, players: list[Any]) -> Answer:
        """One of ``players`` taps the prompt he is shown, whatever Redis holds; the
        position on screen never goes back."""
        _, answer = await self.top.step(players, self.rng, self.shun, self.prefer)
        assert answer.answered
        if answer.text is None:
            self.accepted += 1
        stamps = [
            int(decode(b.callback_data).arg[:STAMP_LEN], 36)
            for u in self.players
            if (m := self.top.prompt(u)) is not None
            for b in m.buttons
            if action_of(b) is Action.MOVE
        ]
        shown = max(stamps, default=self.shown)
        assert shown >= self.shown, f"the screen went back from move {self.shown} to {shown}"
        self.shown = shown
        return answer

    def screen(self) -> list[tuple[str, str, list[str]]]:
        """Every message the players and the group see: chat, text, buttons."""
        chats = [self.top.group.id, *(u.id for u in self.players)]
        return [
            (str(chat), m.text or "", [str(b.callback_data) for b in m.buttons])
            for chat in chats
            for m in self.h.screen(chat)
        ]

    async def moves(self) -> int:
        return len((await stored(self.h, self.top.group))["played"]["moves"])


def _primary(where: Where, key: str) -> int:
    """The port of the primary that holds ``key`` now."""
    return where.primary_for(key) if isinstance(where, Cluster) else where.primary()


async def _moved(where: Where, key: str, was: int) -> bool:
    """Whether a server other than ``was`` is the primary that holds ``key`` now."""
    with contextlib.suppress(AssertionError, RedisError):  # none live holds it yet
        return await asyncio.to_thread(_primary, where, key) != was
    return False


def _fail_over(how: str, where: Where, key: str) -> None:
    """The primary that holds ``key`` killed (-9), or handed over gracefully. A killed one's
    replica takes over at once, as an operator would have it: the bot meets what Redis's own
    failover leaves (a dead primary, its slots or the Sentinels' master on the replica),
    1.5-2.5 s sooner."""
    if isinstance(where, Sentinels):
        if how == "kill":
            where.kill(where.primary())
        next(s for s in where.sentinels if s.alive).client().sentinel_failover(SENTINEL_MASTER)
    elif how == "kill":
        where.kill(where.primary_for(key))
        where.take_over()
    else:
        where.servers[where.replica_of(where.primary_for(key))].client().cluster("FAILOVER")


async def _a_game_across_a_failover(h: Telegram, where: Where, how: str, seed: int) -> None:
    """A game with a failover after a few moves: the table accepts taps again, on another
    primary, within BACK_WITHIN; each accepted tap is applied once; the game ends."""
    game = Game(h, seed)
    await game.start()
    for _ in range(6):
        await game.tap()
    assert await game.moves() == game.accepted
    key = table_key(game.top.group)
    was = await asyncio.to_thread(_primary, where, key)
    if how == "held-back":
        await _held_back_then_killed(game, where, key)
    else:
        await asyncio.to_thread(_fail_over, how, where, key)
    failed_over = time.monotonic()
    while (await game.tap()).text is not None:
        pass
    back = time.monotonic() - failed_over
    assert back < BACK_WITHIN, f"the table accepted a tap {back:.1f} s after the failover"
    # (a graceful handover may come after a tap the old primary took)
    left = failed_over + BACK_WITHIN - time.monotonic()
    await until(
        lambda: _moved(where, key, was), left, f"{was} still holds the table", ignoring=PAUSES
    )
    # The shortest way to the end (random until here): the defender takes, the attacker
    # passes only when he must; 23 moves in median on 24 cards, 36 with takes shunned.
    game.shun, game.prefer = PASS, TAKE
    for _ in range(200):
        if game.top.finished():
            break
        await game.tap()
    assert game.top.finished(), "the game did not end"
    assert await game.moves() == game.accepted, "an accepted tap lost, or applied twice"


async def _held_back_then_killed(game: Game, where: Where, key: str) -> None:
    """The table's replica hears nothing for a few taps, then the primary is killed (-9).
    None of them is accepted or shown: the first is answered "not confirmed yet" (or 503:
    Telegram posts it again, handled once after the failover); later ones are refused, as
    the bot reads the table the unconfirmed tap moved on. The failover drops that move, and
    the prompt still shown works again."""
    if isinstance(where, Cluster):
        await asyncio.to_thread(where.hold_back, where.replica_of(where.primary_for(key)))
    else:
        await asyncio.to_thread(where.hold_back)
    before = game.screen()
    accepted = game.accepted
    answers: list[str | None] = []
    for _ in range(HELD_BACK_TAPS):
        game.h.refused.clear()
        tap = asyncio.create_task(game.tap_shown(game.players))
        refused = asyncio.create_task(game.h.refused.wait())
        await asyncio.wait({tap, refused}, timeout=HANGS_FOR, return_when="FIRST_COMPLETED")
        refused.cancel()
        if not tap.done():  # answered 503: Telegram posts it again until the failover: kill now
            break
        answers.append(tap.result().text)
    else:
        tap = None
    assert answers[:1] in ([], [UNCONFIRMED]), answers
    assert game.accepted == accepted, "a tap accepted that no replica confirmed"
    assert game.screen() == before, "what no replica confirmed was shown"
    await asyncio.to_thread(_fail_over, "kill", where, key)
    if tap is not None:
        await tap  # handled by the new primary, once


# No plain kill: "held-back" is one, after unconfirmed taps, and asserts all it would.
@pytest.mark.parametrize("how", ["graceful", "held-back"])
async def test_a_game_of_several_processes_goes_on_across_a_failover(
    cluster: Cluster, sentinels: Sentinels, bots: Bots, how: str
) -> None:
    """A game on the cluster (the table's primary goes) and one behind Sentinel, side by
    side, each with its own bot processes and Bot API."""
    await side_by_side(cluster=_played(cluster, bots, how), sentinel=_played(sentinels, bots, how))


async def _played(where: Where, bots: Bots, how: str) -> None:
    """A game across a failover on processes of its own, which said the mode, no traceback."""
    env, name = env_of(where), type(where).__name__.lower()
    async with serving() as api:
        processes = await asyncio.gather(
            *(bots.start(api.url, f"{name}{n}", **env) for n in range(PROCESSES))
        )
        h = Telegram(api.telegram, processes)
        bots._harnesses.append(h)
        h.redis = connect.client(settings_of(where))
        try:
            await _a_game_across_a_failover(h, where, how, seed=5)
        finally:
            await connect.close(h.redis)
    mode = "redis: cluster of 3 primaries" if isinstance(where, Cluster) else "redis: sentinel"
    for process in processes:
        log = process.log()
        assert mode in log
        assert "Traceback" not in log, log
    await _restored(where, processes)
