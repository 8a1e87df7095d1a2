"""The webhook's updates, stored durably before Telegram is told they arrived.

Telegram sends a webhook update once it is answered 200 no more, so the webhook answers
200 only once the update is in Redis (:meth:`Inbox.put`: ``XADD`` to one of the
:data:`STREAMS`); while Redis does not answer it answers 503 and Telegram sends it again.
There are :data:`bot.core.keys.BUCKETS` streams, each in a slot of its own (``{i<n>}``),
so that on a Redis Cluster no one node takes every update: an update goes to the stream
of its chat's bucket (a chat's updates stay in order in one stream), one without a chat
to that of its ``update_id`` (:func:`stream_of`). On one server a worker reads all of
them with one blocking ``XREADGROUP``; on a cluster, where one command names keys of one
slot only, it reads each stream with a read of its own, side by side. The maintenance
below goes round the streams a few at a time (:data:`RECLAIM_PER_TOUCH`), so that an idle
process costs a few commands a second, and looks at them all once it finds a dead worker's
entries in one.
Every process reads the streams as a member of one consumer group (:data:`GROUP`): an
entry goes to one worker (``XREADGROUP``), stays pending under its name until it is
handled (then ``XACK`` and ``XDEL``: the stream holds only what is not handled yet), and
the worker touches its pending entries five times within the idle limit (``XCLAIM`` to
itself, which restarts their idle time; bot.inbox). An entry idle for the setting
``CLAIM_IDLE_MS`` belongs to a worker that died (or froze): any other takes it over
(``XAUTOCLAIM``). The update guard (bot.handlers.once) still sees every update, so one is
handled once whoever reads it.

Every process joins the group under a name of its own; a worker leaves it when it stops
with nothing pending (:meth:`Inbox.leave`), and one that died is removed once it has
been idle as long with nothing pending (:meth:`Inbox.forget_dead`), so
that the group holds only the living.

Where the server has replicas (:mod:`bot.core.replicas`), the ``XADD`` counts only once one
has it (else the webhook answers 503), and so do the reads that make entries a worker's
(``XREADGROUP``, ``XAUTOCLAIM``): what one finds is claimed again (``XCLAIM``) with a
``WAIT`` behind it on the node of its stream, and what a worker read unconfirmed stays
pending under its name and is handled once a later claim of it (:meth:`Inbox.confirm`) is
confirmed. A read that finds nothing sends no ``WAIT``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import secrets
import socket
from collections.abc import Callable, Sequence
from typing import Any, cast

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError, ResponseError

from bot.core import replies
from bot.core.config import ProcessSettings
from bot.core.keys import BUCKETS, KEY_PREFIX, bucket
from bot.core.replicas import Replicas, Unconfirmed
from bot.core.scripts import FORGET_CONSUMERS, ForgetConsumers


def stream_key(n: int) -> str:
    return f"{KEY_PREFIX}:{{i{n}}}:inbox"


STREAMS = tuple(stream_key(n) for n in range(BUCKETS))
GROUP = "workers"
FIELD = b"u"  # the field that holds the update's JSON
# An entry untouched this long is another's: the setting's default (Inbox.claim_idle_ms).
CLAIM_IDLE_MS: int = ProcessSettings.model_fields["claim_idle_ms"].default
RECLAIM_PER_TOUCH = 4  # streams looked at for a dead worker's entries at each touch
# The one stream of the layout before the buckets (bot.tables.layout), which a process of
# that version, still running during an upgrade, may store updates in: looked at every
# ADOPT_EVERY touches.
OLD_STREAM = f"{KEY_PREFIX}:inbox"
ADOPT_EVERY = 16

# An entry: its reference (b"<stream>/<entry id>": ids are unique within a stream only),
# the update's JSON.
Entry = tuple[bytes, bytes]
Raw = Sequence[tuple[bytes, dict[bytes, bytes] | None]]  # entries as redis-py reads them
# A read that claims entries: them, and whether no replica confirmed it (Inbox._claimed).
Claimed = tuple[list[Entry], Unconfirmed | None]


def stream_of(update: dict[str, Any]) -> int:
    """The stream an update goes to: its chat's bucket, else its update_id's."""
    for part in update.values():
        chat = part.get("chat") if isinstance(part, dict) else None
        if chat is None and isinstance(part, dict) and isinstance(part.get("message"), dict):
            chat = part["message"].get("chat")  # a callback query's message
        if isinstance(chat, dict) and isinstance(chat.get("id"), int):
            return bucket(chat["id"])
    update_id = update.get("update_id")
    return update_id % BUCKETS if isinstance(update_id, int) else 0


def _stream_of_body(body: bytes) -> int:
    try:
        update = json.loads(body)
    except ValueError:
        return 0
    return stream_of(update) if isinstance(update, dict) else 0


def ref(n: int, entry_id: bytes | str) -> bytes:
    """An entry's reference: its stream and its id there."""
    raw = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return f"{n}/{raw}".encode()


def parse_ref(entry: bytes) -> tuple[int, str]:
    n, _, entry_id = entry.decode().partition("/")
    return int(n), entry_id


def stored_at(entry: bytes) -> float:
    """When the webhook stored the entry: its id's milliseconds (Redis's clock)."""
    return int(parse_ref(entry)[1].split("-", 1)[0]) / 1000


def consumer_name() -> str:
    """This process's name in the group: unique, and readable in XINFO."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def _entries(n: int, raw: Raw) -> list[Entry]:
    """Entries with their update (one deleted meanwhile comes back without fields)."""
    return [(ref(n, i), fields[FIELD]) for i, fields in raw if fields and FIELD in fields]


_INDEX = {s.encode(): n for n, s in enumerate(STREAMS)}  # a stream's number, by its name


def _read(got: Any) -> list[Entry]:
    """The entries of an XREADGROUP (RESP2: [(stream, entries)], or None)."""
    streams = cast(list[tuple[bytes, Raw]], got or [])
    return [e for name, raw in streams for e in _entries(_INDEX[name], raw)]


def _autoclaimed(n: int, got: Any) -> list[Entry]:
    """The entries of an XAUTOCLAIM of stream ``n`` ([cursor, entries, deleted ids])."""
    return _entries(n, cast(Raw, got[1]))


def _by_stream(entries: Sequence[bytes]) -> dict[int, list[Any]]:
    found: dict[int, list[Any]] = {}
    for entry in entries:
        n, entry_id = parse_ref(entry)
        found.setdefault(n, []).append(entry_id)
    return found


def _confirmed(found: Sequence[Claimed]) -> list[Entry]:
    """The entries of one or more reads (:meth:`Inbox._claimed`) once each is confirmed;
    else the first read's :class:`Unconfirmed`, carrying the entries of all of them: they
    are this worker's now, pending, and it confirms them later (:meth:`Inbox.confirm`;
    those a confirmed read took are only claimed once more)."""
    entries = [e for got, _ in found for e in got]
    for _, unconfirmed in found:
        if unconfirmed is not None:
            unconfirmed.result = entries
            raise unconfirmed
    return entries


def _count(found: Sequence[Claimed | BaseException]) -> int:
    """How many entries the reads ``found`` took (a failure among them, none)."""
    return sum(len(got[0]) for got in found if not isinstance(got, BaseException))


class ClaimFailed(Unconfirmed):
    """A read's entries whose confirming claim failed (Redis gone, as in a failover):
    this worker's, confirmed at its next touch, not taken over after the idle limit;
    :class:`Kept` tells the ``failure`` once they are doubtful."""

    def __init__(self, result: list[Entry], failure: Exception) -> None:
        RedisError.__init__(self, f"a read's confirming claim failed ({failure})")
        self.result = result
        self.failure = failure


class Kept:
    """Where the failure of a read made beside others (a stream each) that found entries,
    or of a read's confirming claim (:class:`ClaimFailed`), waits: what they found is
    handed over first, else it would stay pending under this worker's name until taken
    over after the idle limit, and the failure is told after."""

    def __init__(self) -> None:
        self.failure: BaseException | None = None

    def tell(self) -> None:
        """Raise the failure kept, if any (once)."""
        failure, self.failure = self.failure, None
        if failure is not None:
            raise failure

    def hand_over(self, found: Sequence[Claimed | BaseException]) -> list[Entry]:
        """The entries of the reads ``found`` (:func:`_confirmed`), the failures among them
        kept; the first failure raised at once when no read found any."""
        read = [got for got in found if not isinstance(got, BaseException)]
        failed = [got for got in found if isinstance(got, BaseException)]
        failed += [short.failure for _, short in read if isinstance(short, ClaimFailed)]
        if failed and not _count(read):
            raise failed[0]
        self.failure = self.failure or (failed[0] if failed else None)
        return _confirmed(read)


class Inbox:
    """One process's side of the stream (see the module docstring)."""

    def __init__(
        self,
        redis: aioredis.Redis,
        consumer: str,
        replicas: Replicas | None = None,
        claim_idle_ms: int = CLAIM_IDLE_MS,
    ) -> None:
        self.redis = redis
        self.consumer = consumer
        self.claim_idle_ms = claim_idle_ms  # the setting CLAIM_IDLE_MS
        # The webhook's XADD and the reads a worker handles wait for the replicas.
        self.replicas = replicas
        self._forget = FORGET_CONSUMERS.register(redis)
        self.one_server = not isinstance(redis, RedisCluster)  # one XREADGROUP reads all
        self._reads: dict[int, asyncio.Task[Claimed]] = {}  # a cluster's, per stream
        self._take_failed = Kept()  # a read's (beside others, or its claim's): at the next take
        # Reclaim's claim that failed after others took entries: told by the caller once
        # it holds them (bot.inbox), as a failure of the touch.
        self.reclaim_failed = Kept()
        self._turn = 0  # the next stream reclaim looks at
        self._forget_turn = 0  # the next stream forget_dead looks at
        # Consumers found dead (forget_dead): the streams they may still be in.
        self._dead: dict[str, set[int]] = {}
        # Streams where reclaim took a dead worker's entries over since forget_dead looked.
        self._taken_over: set[int] = set()
        self._adopt_in = 0  # touches before the old stream is looked at again

    async def put(self, update: bytes, n: int = 0) -> None:
        """Store an update in stream ``n`` (:func:`stream_of`; the webhook answers 200
        after this only; :class:`Unconfirmed` when no replica confirmed it in time, which
        the webhook answers 503)."""
        stream = STREAMS[n]
        if self.replicas is None:
            await self.redis.xadd(stream, {FIELD: update})
            return
        await self.replicas.write(
            stream,
            lambda: self.redis.xadd(stream, {FIELD: update}),
            lambda pipe: pipe.xadd(stream, {FIELD: update}),
        )

    async def _claimed(
        self, entries: Callable[[Any], list[Entry]], command: str, *args: Any, **kw: Any
    ) -> Claimed:
        """A read that makes entries this worker's (the client's ``command`` with
        ``args``; ``entries`` of its result), and :class:`Unconfirmed` when no replica
        confirmed it (else None). The read is sent alone, and where replicas are awaited
        what it found is claimed again by a write with its WAIT behind it, on the node of
        each stream (:meth:`_claim`): a read that finds nothing, as most blocking reads
        of an idle process do, costs no WAIT. A failed claim: :class:`ClaimFailed`."""
        found = entries(await getattr(self.redis, command)(*args, **kw))
        try:
            if not found or not await self._awaits(found):
                return found, None
            return await self._claim([entry for entry, _ in found])
        except Exception as exc:  # this worker's already: confirmed at its next touch
            return found, ClaimFailed(found, exc)

    async def _awaits(self, found: Sequence[Entry]) -> bool:
        """Whether a replica must confirm the read of ``found`` (one server without one,
        the in-process store: the read alone made them this worker's)."""
        if self.replicas is None:
            return False
        for n in {parse_ref(entry)[0] for entry, _ in found}:
            if await self.replicas.needed(STREAMS[n]) > 0:
                return True
        return False

    async def _claim(self, entries: Sequence[bytes]) -> Claimed:
        """``entries`` claimed by this worker (again), each stream's with a WAIT on its
        node where replicas are awaited: those still in their stream, and the first
        :class:`Unconfirmed` (a replica confirming a later write confirms the read that
        made them this worker's, and the updates they carry, written before)."""
        got: list[Entry] = []
        unconfirmed: Unconfirmed | None = None
        for n, ids in sorted(_by_stream(entries).items()):
            claimed, short = await self._claim_of(n, ids)
            got += claimed
            unconfirmed = unconfirmed or short
        return got, unconfirmed

    async def _claim_of(self, n: int, ids: list[Any]) -> Claimed:
        args = (STREAMS[n], GROUP, self.consumer, 0, ids)
        assert self.replicas is not None  # only entries a replica must confirm come here
        try:
            got = await self.replicas.write(
                STREAMS[n], lambda: self.redis.xclaim(*args), lambda pipe: pipe.xclaim(*args)
            )
        except Unconfirmed as exc:
            return _entries(n, exc.result), exc
        return _entries(n, got), None

    async def make_group(self) -> None:
        """The consumer group of each stream, made with the stream if either is missing
        (a first start, or a Redis that lost its data): it reads every entry still there."""
        for stream in STREAMS:
            try:
                await self.redis.xgroup_create(stream, GROUP, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    async def take(self, count: int, block_ms: int) -> list[Entry]:
        """Up to about ``count`` entries no worker has read, waiting at most ``block_ms``."""
        per = max(1, -(-count // BUCKETS))
        try:
            self._take_failed.tell()  # a failure kept while what its read found went over
            if self.one_server:
                streams = dict.fromkeys(STREAMS, ">")
                args = (GROUP, self.consumer, streams)
                read = await self._claimed(_read, "xreadgroup", *args, count=per, block=block_ms)
                return self._take_failed.hand_over([read])
            return await self._take_each(per, block_ms)
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.make_group()
            return []

    async def _take_each(self, count: int, block_ms: int) -> list[Entry]:
        """A cluster's read: a blocking read of each stream of its own, side by side; what
        the first to answer found, the others going on for the next take (so that an
        update waits for no other stream's read)."""
        for n in range(BUCKETS):
            if n not in self._reads:
                self._reads[n] = asyncio.create_task(self._take_one(n, count, block_ms))
        await asyncio.wait(
            self._reads.values(), timeout=block_ms / 1000 + 1, return_when=asyncio.FIRST_COMPLETED
        )
        done = [self._reads.pop(n) for n, task in list(self._reads.items()) if task.done()]
        return self._take_failed.hand_over([task.exception() or task.result() for task in done])

    def close(self) -> None:
        """Stop the reads under way (a cluster's): what they took stays pending."""
        for task in self._reads.values():
            task.cancel()
        self._reads.clear()

    async def _take_one(self, n: int, count: int, block_ms: int) -> Claimed:
        """One stream's read on a cluster, sent to the node that holds it (with its WAIT,
        where one is sent): left to find the node itself, the cluster client would first
        ask a node for the keys of every XREADGROUP (COMMAND GETKEYS), a command more per
        read."""
        cluster = cast(RedisCluster, self.redis)
        node = cluster.get_node_from_key(STREAMS[n])
        args: list[str | int] = ["GROUP", GROUP, self.consumer, "COUNT", count, "BLOCK", block_ms]
        args += ["STREAMS", STREAMS[n], ">"]
        return await self._claimed(_read, "execute_command", "XREADGROUP", *args, target_nodes=node)

    async def confirm(self, entries: Sequence[bytes]) -> list[Entry]:
        """Entries this worker read unconfirmed (:class:`Unconfirmed` from :meth:`take` or
        :meth:`reclaim`), claimed again by a write that waits for the replicas: those
        still in their stream, once one holds them (:class:`Unconfirmed` again if not)."""
        return _confirmed([await self._claim(entries)])

    async def touch(self, entries: Sequence[bytes]) -> None:
        """This worker is still on ``entries``: their idle time starts again."""
        for n, ids in sorted(_by_stream(entries).items()):
            await self.redis.xclaim(STREAMS[n], GROUP, self.consumer, 0, ids, justid=True)

    def _next_streams(self, many: int) -> list[int]:
        """The next ``many`` streams in turn (the maintenance goes round them)."""
        found = [(self._turn + i) % BUCKETS for i in range(many)]
        self._turn = (self._turn + many) % BUCKETS
        return found

    async def reclaim(self, count: int) -> list[Entry]:
        """Entries a dead worker left (idle for :attr:`claim_idle_ms`), now this one's,
        from the next :data:`RECLAIM_PER_TOUCH` streams in turn, and from all the others
        once one of them had some: a worker that died holding updates of several chats
        most likely left them in several streams, idle since the same moment. Those others
        are claimed side by side, so that a touch with a WAIT behind each claim still
        comes well within the idle limit of what this worker holds, each for an equal share
        of the room left, one at least (what is over is taken at a later touch).
        A claim that fails after others took entries (Redis gone midway) does not lose
        them: they are returned, and the failure is kept in :attr:`reclaim_failed`."""
        found: list[Claimed | BaseException] = []
        turn = self._next_streams(RECLAIM_PER_TOUCH)
        for n in turn:
            room = count - _count(found)
            if room <= 0:
                break
            try:
                got = await self._reclaim_from(n, room)
            except Exception as exc:  # told after what the streams before it took is held
                found.append(exc)
                break
            if got is None:
                break
            found.append(got)
        else:
            room = count - _count(found)
            if room > 0 and _count(found):
                others = [m for m in range(BUCKETS) if m not in turn]
                share = max(room // len(others), 1)
                claims = (self._reclaim_from(m, share) for m in others)
                more = await asyncio.gather(*claims, return_exceptions=True)
                found += [got for got in more if got is not None]
        return self.reclaim_failed.hand_over(found)

    async def _reclaim_from(self, n: int, room: int) -> Claimed | None:
        """Stream ``n``'s entries idle past the limit (at most ``room``), now this
        worker's; None when its group was missing (made now: nothing to take yet)."""
        args = (STREAMS[n], GROUP, self.consumer, self.claim_idle_ms, "0-0")
        try:
            claimed = functools.partial(_autoclaimed, n)
            got = await self._claimed(claimed, "xautoclaim", *args, count=room)
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.make_group()
            return None
        if got[0]:  # their worker is a consumer of this stream: forget_dead looks here
            self._taken_over.add(n)
        return got

    async def leave(self) -> None:
        """This worker stops: out of every stream's group, unless it still holds entries
        there (they stay pending under its name, for another worker to take over)."""
        self.close()
        for n in range(BUCKETS):
            await self._forget_where(n, idle_ms=2**62, name=self.consumer)

    async def forget_dead(self) -> None:
        """Remove the consumers idle for :attr:`claim_idle_ms` that hold nothing, in the
        stream whose turn it is (each is looked at every 16 touches) and in those where
        :meth:`reclaim` took entries over since: their dead worker is a consumer there,
        found at once (Redis 7.0 makes a worker a consumer only of the streams it was
        given entries in, which the turn may reach 16 touches later). One found dead is
        looked for in every stream at once, and again in those where it still held
        entries, each touch until it is gone from them (its entries taken over meanwhile)."""
        n, self._forget_turn = self._forget_turn, (self._forget_turn + 1) % BUCKETS
        held_in: dict[int, list[str]] = {}
        for m in sorted({n, *self._taken_over}):
            gone, held_in[m] = await self._forget_where(m, self.claim_idle_ms, "")
            self._taken_over.discard(m)  # looked at: a pause before the next keeps the rest
            for name in gone + held_in[m]:
                self._dead.setdefault(name, set(range(BUCKETS)))
        visit = {m for streams in self._dead.values() for m in streams}
        for m in sorted(visit):
            if m not in held_in:
                held_in[m] = (await self._forget_where(m, self.claim_idle_ms, ""))[1]
            for name, streams in list(self._dead.items()):
                if m in streams and name not in held_in[m]:  # gone from it (or alive again)
                    streams.discard(m)
                if not streams:
                    del self._dead[name]

    async def _forget_where(self, n: int, idle_ms: int, name: str) -> tuple[list[str], list[str]]:
        """Consumers of stream ``n``'s group that are ``name`` or idle ``idle_ms``: those
        removed (holding nothing), and the others (holding entries still)."""
        try:
            gone, held = await self._forget(ForgetConsumers(STREAMS[n], GROUP, idle_ms, name))
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):  # no group: no consumers either
                raise
            return [], []
        return [replies.text(x) for x in gone], [replies.text(x) for x in held]

    async def adopt_old(self) -> int:
        """Updates a process of the previous version stored in its one stream (it may
        run on beside this one for a while during an upgrade): each moved into the stream
        it goes to now (the update guard drops one that is handled twice); how many. One
        XRANGE every :data:`ADOPT_EVERY` calls."""
        self._adopt_in -= 1
        if self._adopt_in > 0:
            return 0
        self._adopt_in = ADOPT_EVERY
        found: list[Any] = await self.redis.xrange(OLD_STREAM, count=100) or []
        for entry_id, fields in found:
            body = fields.get(FIELD)
            if body is not None:
                await self.redis.xadd(STREAMS[_stream_of_body(body)], {FIELD: body})
            await self.redis.xdel(OLD_STREAM, entry_id)
        return len(found)

    async def backlog(self) -> int:
        """Updates stored and not yet handled, by any worker."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream in STREAMS:
                pipe.xlen(stream)
            found = await pipe.execute()
        return sum(int(x) for x in found)

    async def done(self, entry: bytes) -> None:
        """Handled: off its stream."""
        n, entry_id = parse_ref(entry)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xack(STREAMS[n], GROUP, entry_id)
            pipe.xdel(STREAMS[n], entry_id)
            await pipe.execute()
