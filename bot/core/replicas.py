"""Writes that acknowledge something wait until a replica holds them (``WAIT``).

Why: replication is asynchronous. A move the chat has shown, or a webhook update answered
200, would otherwise vanish when its primary dies before a replica got it, and the new
primary would go on from an older table: the version would go backwards on screen. So
each write that something is shown or answered from is followed by ``WAIT`` and counts
only once a replica has confirmed it: the tap's compare-and-set, a delivery's claim and
release and the message slots it saves (:mod:`bot.core.store`), the webhook's ``XADD``
and a worker's reading of the stream (:mod:`bot.core.inbox`).

Why one pipeline: ``WAIT`` waits for the writes of the connection it is sent on, and no
other. Sent through a pool it may go out on a connection that wrote nothing and come back
at once, whatever became of the write (tests/bot/test_replicas.py shows it). The write and
its ``WAIT`` therefore go out together on one connection (:meth:`Replicas.write`); on a
cluster both go to the node of the write's key (the key's slot names the node, and
``WAIT`` is sent there by name).

How many replicas: ``REDIS_MIN_REPLICAS`` when it is set. Otherwise one as soon as the
primary has had a replica (``INFO replication``), also after that replica dropped: a
replica cut off from its primary may be the one promoted, without the writes it missed,
so writes are refused rather than acknowledged unprotected. A primary that was just
promoted and has none yet waits for none (nothing could confirm a write until a replica
attaches). What each node has is read again every :data:`REFRESH` seconds, and at once
when ``WAIT`` comes back short. A server that never had a replica costs nothing: no
``WAIT`` is sent.

A read that something is shown from (a Mini App page's table) waits too
(:meth:`Replicas.read`): the primary may hold a write no replica has yet, which a failover
would take back after the page showed it. The read is followed, in the same pipeline, by
a tiny write in its slot (a barrier: its bucket's ``barrier`` key, bot.core.keys) and
``WAIT``: the primary runs one command at a time and replicates in that order, so a
replica that has the barrier has everything the read saw. Where no replica is awaited the
read goes alone, as before. A primary that serves reads but takes no writes (full, at
``maxmemory`` with ``noeviction``; or an ACL user that may not write the barrier) refuses
the barrier, and then nothing confirms the read: it is unconfirmed (:class:`BarrierRefused`,
said once per node), a page is answered 503 as in any other such episode.

A write no replica confirmed within ``REDIS_WAIT_MS`` is :class:`Unconfirmed`. It may
still reach the replicas later, or be lost in a failover: nothing from it is shown or
answered as accepted until a later write behind a ``WAIT`` confirms it (replication keeps
the order of writes, so confirming a later write confirms every earlier one).

Behind Sentinel an unconfirmed write (or a node answering as a replica) may mean that the
Sentinels have named another primary while the pool still writes to the old one: they are
asked, and the pool follows them (:mod:`bot.core.primary`). A write that went to a server
the pool no longer takes for the primary is not confirmed by what the new primary says of
its replicas.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import (
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    ResponseError,
)
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.core.primary import Follow, Landing, follow

log = logging.getLogger(__name__)

# What a node that a failover just demoted answers WAIT with.
DEMOTED = "WAIT cannot be used with replica instances"
REFRESH = 5.0  # seconds a node's replication state is trusted before it is read again
AGAIN_FOR = 5.0  # seconds a write is run again until confirmed (again): a failover's few
AGAIN_PAUSE = 0.25  # seconds between two tries
BARRIER_MS = 1000  # how long a read's barrier key outlives the read's WAIT, then it goes
# What a primary that still serves reads answers a read's barrier with when it takes no
# writes: full (maxmemory with noeviction), or an ACL user that may not write the key.
REFUSED = (OutOfMemoryError, NoPermissionError)

Queue = Callable[[Any], Any]  # puts a write into a pipeline
Plain = Callable[[], Awaitable[Any]]  # the same write, sent alone


class Unconfirmed(RedisError):
    """A write no replica confirmed in time (see the module docstring): ``result`` is
    what the write returned on the primary."""

    def __init__(self, result: Any, needed: int, acked: int, wait_ms: int) -> None:
        super().__init__(f"{acked} of {needed} replica(s) confirmed a write within {wait_ms} ms")
        self.result = result


class BarrierRefused(Unconfirmed):
    """A read whose barrier the primary refused (:data:`REFUSED`): without it no ``WAIT``
    can say a replica holds what the read saw, so the read is unconfirmed (a page is
    answered 503), not an error (a 500)."""

    def __init__(self, result: Any, cause: ResponseError) -> None:
        RedisError.__init__(self, f"a read's barrier was refused ({cause})")
        self.result = result


@dataclass
class _Node:
    """What one primary said of its replicas, and when."""

    needed: int
    read_at: float


@dataclass
class Replicas:
    """How many replicas confirm a write on each node, and the writes that wait for them
    (see the module docstring). ``least``: ``REDIS_MIN_REPLICAS`` (None: from the server)."""

    redis: aioredis.Redis | RedisCluster
    least: int | None = None
    wait_ms: int = 300
    clock: Callable[[], float] = time.monotonic
    _nodes: dict[str, _Node] = field(default_factory=dict)
    # The replication ids of primaries seen with a replica: a promoted node gets a new one.
    _had: set[str] = field(default_factory=set)
    # The nodes ("": the one server) whose last write waited for was unconfirmed: logged
    # once per node, so that a write confirmed on another node says nothing of this one.
    _short: set[str] = field(default_factory=set)
    _untold: bool = False  # INFO was refused (logged once)
    # Behind Sentinel: the pool kept on the primary the Sentinels name (bot.core.primary).
    _follow: Follow | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._follow = follow(self.redis, self.clock)

    async def _node(self, key: str) -> ClusterNode | None:
        """The primary that holds ``key`` on a cluster (None: one server)."""
        if isinstance(self.redis, RedisCluster):
            await self.redis.initialize()  # the slots are known once it is (a no-op then)
            return self.redis.get_node_from_key(key)
        return None

    async def needed(self, key: str) -> int:
        """How many replicas must confirm a write of ``key``."""
        if self.least is not None:
            return self.least
        node = await self._node(key)
        name = node.name if node is not None else ""
        known = self._nodes.get(name)
        if known is None or self.clock() - known.read_at > REFRESH:
            known = self._nodes[name] = _Node(await self._read(node), self.clock())
        return known.needed

    async def _read(self, node: ClusterNode | None) -> int:
        """1 when the primary has, or had, a replica (see the module docstring)."""
        try:
            if node is not None:
                assert isinstance(self.redis, RedisCluster)
                info = await self.redis.info("replication", target_nodes=node)
            else:
                assert isinstance(self.redis, aioredis.Redis)
                info = await self.redis.info("replication")
        except RedisError as exc:  # a server that keeps INFO to itself: not a lost one
            refused = "no permission" in str(exc).lower()
            if not refused and "unknown command" not in str(exc).lower():
                raise
            if refused and not self._untold:  # (fakeredis, the in-process store, has none)
                self._untold = True
                log.warning("INFO replication refused (%s): set REDIS_MIN_REPLICAS", exc)
            return 0
        if isinstance(info, dict) and node is not None and node.name in info:
            info = info[node.name]  # some versions answer by node name
        return 1 if self._had_replica(info) else 0

    def _had_replica(self, info: dict[str, Any]) -> bool:
        if info.get("role") not in (None, "master"):
            # A replica: its writes fail anyway (READONLY), and one it took before it was
            # demoted (read after a short WAIT) is confirmed by nothing now.
            return True
        replid = str(info.get("master_replid", ""))
        if int(info.get("connected_slaves", 0)) > 0:
            self._had.add(replid)
            return True
        if replid in self._had:
            return True  # its replica dropped: keep waiting (see the module docstring)
        # A primary keeps a replication backlog once a replica attached (for an hour after
        # the last one left); one promoted from a replica keeps it too, but then names its
        # old primary's history (second_repl_offset), and waits for none.
        return bool(int(info.get("repl_backlog_active", 0))) and (
            int(info.get("second_repl_offset", -1)) == -1
        )

    async def write(self, key: str, plain: Plain, queue: Queue, *, barrier: bool = False) -> Any:
        """Run a write of ``key`` (``plain``: alone; ``queue``: into a pipeline), and when
        the node has replicas wait for them on the same connection. Its result; raises
        :class:`Unconfirmed` when too few replicas confirmed it in time. ``barrier``: a
        :meth:`read`'s, the last command ``queue`` puts."""
        try:
            needed = await self.needed(key)
            if needed <= 0:
                return await plain()
            return await self._confirmed(key, needed, queue, barrier=barrier)
        except (Unconfirmed, ReadOnlyError):
            # Perhaps a failover behind Sentinel: the next write goes to the new primary,
            # whose replicas are read afresh.
            if self._follow is not None and await self._follow.ask():
                self._nodes.pop("", None)
            raise
        finally:
            # A new primary the pool found by itself (this write's new connection asked the
            # Sentinels, or an earlier command's did): logged once, before the write's
            # answer, so that no write is answered from the new primary unlogged.
            if self._follow is not None:
                self._follow.note()

    async def read(self, key: str, barrier: str, plain: Plain, queue: Queue) -> Any:
        """Run a read of ``key`` (``plain``: alone; ``queue``: into a pipeline) that
        returns only what a replica holds: where the node has replicas, a write of
        ``barrier`` (a key in ``key``'s slot) and a WAIT follow it on the same connection
        (see the module docstring). Its result; raises :class:`Unconfirmed` as
        :meth:`write` does, and :class:`BarrierRefused` when the primary takes no writes."""

        def with_barrier(pipe: Any) -> None:
            queue(pipe)
            pipe.set(barrier, 1, px=self.wait_ms + BARRIER_MS)

        return await self.write(key, plain, with_barrier, barrier=True)

    async def _confirmed(self, key: str, needed: int, queue: Queue, *, barrier: bool) -> Any:
        """:meth:`write` where ``needed`` replicas must confirm, short of following the
        primary behind Sentinel."""
        try:
            result, acked, landed = await self._with_wait(key, needed, queue, barrier=barrier)
        except BarrierRefused as refused:
            await self._short_once(key, refused, "pages are told so meanwhile")
            raise
        if acked < needed:
            # Short: perhaps the node was promoted and has no replica yet (it waits for none).
            self._nodes.pop(await self._name(key), None)
            # Unless the write went to a server the pool no longer takes for the primary
            # (behind Sentinel): what the new one says proves nothing of it.
            if self._follow is None:
                needed = await self.needed(key)
            elif landed == self._follow.address:
                await self._follow.keep_to()  # so that INFO is read where the write went
                fresh = await self.needed(key)
                if self._follow.address == landed:  # (not read on a connection of a new
                    needed = fresh  # primary's, which the pool may have learned of meanwhile)
        if acked >= needed:
            if self._short and (name := await self._name(key)) in self._short:
                self._short.discard(name)
                log.info("replicas confirm writes again%s", f" on {name}" if name else "")
            return result
        unconfirmed = Unconfirmed(result, needed, acked, self.wait_ms)
        await self._short_once(
            key, unconfirmed, "taps are told so, nothing of them is shown meanwhile"
        )
        raise unconfirmed

    async def _short_once(self, key: str, unconfirmed: Unconfirmed, meanwhile: str) -> None:
        """Log ``unconfirmed`` once per node, until the node's writes are confirmed again."""
        name = await self._name(key)
        if name not in self._short:
            self._short.add(name)
            log.warning("%s%s: %s", unconfirmed, f" on {name}" if name else "", meanwhile)

    async def _name(self, key: str) -> str:
        node = await self._node(key)
        return node.name if node is not None else ""

    async def _with_wait(
        self, key: str, needed: int, queue: Queue, *, barrier: bool = False
    ) -> tuple[Any, int, Any]:
        """What ``queue`` put in the pipeline returned (the first command's result: a
        read's barrier comes after it), how many replicas confirmed it, and behind
        Sentinel the server that took it (else None). A refused ``barrier`` (the last
        command) raises :class:`BarrierRefused`."""
        async with self.redis.pipeline(transaction=False) as pipe:
            landing = Landing(pipe) if self._follow is not None else None
            queue(pipe)
            node = await self._node(key)
            if node is not None:  # on a cluster, WAIT has no key: named by its node
                pipe.execute_command("WAIT", needed, self.wait_ms, target_nodes=node)
            else:
                pipe.execute_command("WAIT", needed, self.wait_ms)
            *results, acked = await pipe.execute(raise_on_error=False)
        refused = results.pop() if barrier and isinstance(results[-1], REFUSED) else None
        for failed in results:
            if isinstance(failed, Exception):
                raise failed
        result = results[0]
        if refused is not None:  # the WAIT that followed it confirmed nothing of the read
            raise BarrierRefused(result, refused)
        if isinstance(acked, ResponseError) and DEMOTED in str(acked):
            # The node became a replica as the pipeline went out (a failover): the write
            # went on to the new primary, and nothing yet says a replica holds it there.
            return result, 0, None  # (behind Sentinel: it took the write; a replica now)
        if isinstance(acked, Exception):
            raise acked
        if node is not None and await self._name(key) != node.name:
            # The slot moved meanwhile: the cluster's pipeline sent the write again, to
            # its new node, and the WAIT went to the old one, where it proves nothing.
            return result, 0, None
        return result, int(acked), landing.at if landing is not None else None

    async def script(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run a registered Lua script as :meth:`write` does (loaded where it is missing)."""

        def queue(pipe: Any) -> None:  # a cluster's pipeline refuses evalsha() by name
            pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)

        plain = functools.partial(script, keys=keys, args=args)

        try:
            return await self.write(keys[0], plain, queue)
        except NoScriptError:  # not run, so nothing written: load it, and run it again
            await self.redis.script_load(script.script)  # on a cluster: every primary
            return await self.write(keys[0], plain, queue)


async def again(write: Callable[[], Awaitable[Any]]) -> Any:
    """Run a write that changes nothing the second time (a release, a step of a move)
    until a replica confirms it: one that is unconfirmed, or met a lost connection or a
    primary turned replica, is run again for :data:`AGAIN_FOR` seconds (on a new
    primary it writes what was lost)."""
    until = time.monotonic() + AGAIN_FOR
    while True:
        try:
            return await write()
        except (Unconfirmed, RedisConnectionError, RedisTimeoutError, ReadOnlyError):
            if time.monotonic() >= until:
                raise
        await asyncio.sleep(AGAIN_PAUSE)
