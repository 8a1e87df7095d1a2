"""Tables in Redis: loading them, committing changes, and the delivery lease.

The keys are :mod:`bot.core.keys`'s, the scripts :mod:`bot.core.scripts`'s.

Why scripts: ``v`` and ``d`` change only together, by a compare-and-set on ``v`` in Lua
(the in-process store and the tests run the same scripts on fakeredis), so that two
processes serving one chat can neither lose nor double a move. Why a lease: one process
at a time brings a table's messages up to date, so that an older render never lands
after a newer one. A commit takes the lease when it is free, expired or its own; the
holder renews it while it works (:data:`LEASE_MS`, so a dead holder blocks nothing for
long) and saves the slots and releases it in one script, which hands it the newest
version if another process committed meanwhile, and writes nothing once another process
has taken the lease (:class:`LeaseLost`), even one that has given it back since. A move
costs one HGETALL, one CAS (which also takes the lease, publishes the version and lowers
the turn deadline) and one release. A key lives as long as its game needs
(:func:`ttl_for`); a table whose group became a supergroup moves to its new key whole,
without its lease, in three steps (:meth:`Store.move`: the new key is in another slot).
Every script touches one slot: a table with its bucket's due set, turn set and its
chat's index (bot.core.keys).

Where the server has replicas, the commit, the claim, the release, the slots saved, the
three steps of a move and a drop each wait for one (:mod:`bot.core.replicas`): a move is
answered and shown only once a failover could not lose it, and its version is announced
to the Mini App (``ct:changed``) only then, by a PUBLISH of its own after the WAIT; a
release or a step of a move is run again until a replica has it. A lease's renewal does
not wait: nothing is shown from it. A Mini App page reads a table behind a barrier that
waits for one (:meth:`Store.confirmed`): the primary may hold a move not confirmed yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import redis.asyncio as aioredis
from pydantic import ValidationError
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.core import replies, scripts
from bot.core.deadlines import LEASE_MS as LEASE_MS  # re-exported: the lease is the store's
from bot.core.deadlines import Deadlines
from bot.core.keys import (
    CHANGED,
    DUE_KEYS,
    FROM_FIELD,
    JUNK,
    MOVED_FIELD,
    SLOT,
    TABLE_SLOT,
    Family,
    Junk,
    closed_key,
    family,
    family_of,
    init_key,
    junk_field,
)
from bot.core.models import FORM_MARK, Slot, Table
from bot.core.personal import PersonalKeys
from bot.core.polls import Polls
from bot.core.replicas import Replicas, Unconfirmed, again

log = logging.getLogger(__name__)

R = TypeVar("R")
MAX_ATTEMPTS = 50

RENEW_EVERY = 0.5  # seconds between two renewals of the leases a process holds
IDLE_GAME_TTL = 30 * 24 * 3600  # a running game with no turn limit (correspondence play)
DEADLINE_MARGIN = 3600  # seconds a key outlives its game's pending deadline

MOVED, NOTHING_TO_MOVE, BUSY = 1, 0, 2
_CURRENT = FORM_MARK.encode()  # how a table stored in the current form begins


@dataclass
class Write:
    """What a transaction function decided: the table to store (None: store nothing)."""

    table: Table | None
    fresh: bool = False
    # The table's next automatic move came closer: lower its deadline in its bucket's turn
    # set to this (seconds since the epoch), in the same script as the commit.
    wake: float | None = None


@dataclass
class Snapshot:
    """A table as loaded, with its message slots and the messages left to delete."""

    table: Table | None
    slots: dict[str, Slot] = field(default_factory=dict)
    version: int = 0  # the stored version (also when the table itself did not validate)
    lease: bool = False  # this process holds the delivery lease: it must deliver, release
    junk: list[Junk] = field(default_factory=list)  # messages to remove
    # The table's stored form as read, when this version wrote it (None: an older form,
    # or not read from Redis): a change is compared with it (bot.service.taps.decide).
    stored: bytes | None = None


class ConflictError(RuntimeError):
    """The CAS kept failing (a pathological storm of concurrent changes)."""


class LeaseLost(RuntimeError):
    """A release found the table's lease another's (taken while a failover or an outage
    outlasted it), or the table gone or moving: nothing it would have saved was written."""


def _decode(raw: Mapping[Any, Any]) -> Snapshot:
    version = int(raw.get(b"v", b"0"))
    if b"d" not in raw or MOVED_FIELD.encode() in raw:  # none, or frozen for its move
        return Snapshot(None, version=version)
    stored = raw[b"d"]
    try:
        table = Table.from_stored(stored)
    except ValueError:
        # A table written by an incompatible version: treat the chat as free (the next
        # game overwrites it) rather than fail on every update.
        log.warning("a stored table does not validate; the chat counts as free")
        return Snapshot(None, version=version)
    table.version = version
    slots, junk = _messages(raw)
    current = stored if stored.startswith(_CURRENT) else None
    return Snapshot(table, slots, version, junk=junk, stored=current)


def _messages(raw: Mapping[bytes, bytes]) -> tuple[dict[str, Slot], list[Junk]]:
    """A table's message fields: its slots, and the messages left to remove."""
    slots: dict[str, Slot] = {}
    junk: list[Junk] = []
    for name, value in raw.items():
        if name.startswith(SLOT.encode()):
            try:
                slots[name.decode()] = Slot.model_validate_json(value)
            except ValidationError:
                continue
        elif name.startswith(JUNK.encode()):
            chat, message, *receiver = name.decode().removeprefix(JUNK).split(":")
            who = int(receiver[0]) if receiver else 0
            junk.append(Junk(int(chat), int(message), value == b"s", who))
    return slots, sorted(junk)


def _junk_pairs(junk: Sequence[Junk]) -> list[str]:
    """Hash fields of messages to remove: "s" strips the buttons, "" deletes."""
    return [
        x
        for chat, message, strip, receiver in junk
        for x in (junk_field(chat, message, receiver), "s" if strip else "")
    ]


async def _changes(pubsub: PubSub) -> AsyncIterator[tuple[str, int]]:
    async for message in pubsub.listen():
        if message["type"] == "message":
            version, _, key = replies.text(message["data"]).partition(" ")
            yield key, int(version)


def ttl_for(table: Table, base: int, now: float) -> int:
    """How long a table's key must live after this commit (see the module docstring)."""
    if table.phase != "playing":
        return base
    if not table.clock.turn_due:
        return max(base, IDLE_GAME_TTL)
    return max(base, int(table.clock.turn_due - now) + DEADLINE_MARGIN)


class Store(Deadlines, PersonalKeys):
    """Loads tables and commits changes to them with optimistic concurrency; hands out
    the delivery lease (see the module docstring)."""

    def __init__(
        self,
        redis: aioredis.Redis,
        ttl: int,
        clock: Callable[[], float] = time.time,
        replicas: Replicas | None = None,
    ) -> None:
        self.redis = redis
        self.ttl = ttl
        self.clock = clock
        self.owner = secrets.token_hex(6)  # this process, as a lease holder
        self.polls = Polls()  # when each bucket of the deadline sets is worth a read
        # What is shown or answered from waits for the replicas (bot.core.replicas): the
        # commit, the delivery's claim and release, the slots a delivery saves, and the
        # steps of a move (and a drop) to another key.
        self.replicas = replicas
        self._cas = scripts.CAS.register(redis, replicas)
        self._release = scripts.RELEASE.register(redis, replicas)
        self._claim = scripts.CLAIM.register(redis, replicas)
        self._renew = scripts.RENEW.register(redis)
        self._move_out = scripts.MOVE_OUT.register(redis, replicas)
        self._move_in = scripts.MOVE_IN.register(redis, replicas)
        self._drop = scripts.DROP.register(redis, replicas)
        self._save = scripts.SAVE.register(redis, replicas)
        self._take_due = scripts.TAKE_DUE.register(redis)
        self._turn_claim = scripts.TURN_CLAIM.register(redis)
        self._turn_settle = scripts.TURN_SETTLE.register(redis)
        self._delete_if = scripts.DELETE_IF.register(redis)

    async def delete_if(self, key: str, value: bytes) -> bool:
        """Delete ``key`` if it holds ``value`` (GET, compare and DEL in one script)."""
        return bool(await self._delete_if(scripts.DeleteIf(key, value)))

    def _holder(self) -> scripts.Holder:
        """This process taking a lease now."""
        return scripts.Holder(self.owner, self.now_ms(), LEASE_MS)

    def _lease(self, keys: Family) -> scripts.Lease:
        return scripts.Lease(keys.table, keys.due, self._holder())

    async def load(self, key: str) -> Snapshot:
        return _decode(await self.redis.hgetall(key))

    async def confirmed(self, key: str) -> Snapshot:
        """The table as a replica holds it, what a Mini App page may show: a version only
        the primary has would go back on its screen in a failover. Where replicas are
        awaited the read waits for them behind a barrier (one round trip:
        :meth:`bot.core.replicas.Replicas.read`), else it is :meth:`load`;
        :class:`Unconfirmed` when no replica confirmed it in time."""
        if self.replicas is None:
            return await self.load(key)
        raw = await self.replicas.read(
            key,
            family_of(key).barrier,
            lambda: self.redis.hgetall(key),
            lambda pipe: pipe.hgetall(key),
        )
        return _decode(raw)

    async def transact(
        self, key: str, decide: Callable[[Snapshot], tuple[Write, R]]
    ) -> tuple[Snapshot, R]:
        """Load, let ``decide`` change the table, commit if the version is unchanged.

        ``decide`` must be pure (no I/O): on a conflict it runs again on the newer table.
        Returns the snapshot as committed (or as loaded when nothing was written) and
        ``decide``'s result. A committed snapshot with ``lease`` must be delivered by the
        caller (:func:`bot.service.delivery.start`).
        """
        keys = family_of(key)
        for attempt in range(MAX_ATTEMPTS):
            snap = await self.load(key)
            expected = snap.version
            write, result = decide(snap)
            if write.table is None:
                return snap, result
            new = write.table
            ttl = ttl_for(new, self.ttl, self.clock())
            waits = await self._waits(key)
            cas = scripts.Cas(
                lease=self._lease(keys),
                turns_key=keys.turns,
                chat_index=keys.chat_index,
                expected=expected,
                version=expected + 1,
                data=new.to_stored(),
                ttl=ttl,
                fresh=write.fresh,
                wake_ms=None if write.wake is None else int(write.wake * 1000),
                channel="" if waits else CHANGED,  # announced once confirmed
            )
            done = await self._cas(cas)
            if done != 0 and waits:
                await self._announce(key, expected + 1)
            if done != 0 and write.wake is not None:
                self.polls.turns.wake(keys.bucket, write.wake)
            if done == 0:
                # Lost a race: back off a little, with jitter, so that a crowd thins out.
                await asyncio.sleep(random.random() * 0.001 * min(attempt, 10))
                continue
            new.version = expected + 1
            if done == 1:  # another process delivers
                if write.fresh:
                    return Snapshot(new, version=new.version), result
                return Snapshot(new, snap.slots, new.version, junk=snap.junk), result
            slots, junk = _messages(dict(zip(done[::2], done[1::2], strict=True)))
            return Snapshot(new, slots, new.version, lease=True, junk=junk), result
        raise ConflictError(key)

    async def release(
        self,
        key: str,
        version: int,
        slots: Mapping[str, Slot],
        *,
        due: float | None = None,
        deleted: Sequence[tuple[int, int, int]] = (),
        junk: Sequence[Junk] = (),
    ) -> Snapshot | None:
        """Save what the messages show (``version`` of the table) and give the lease back;
        ``due``: when what was left for later is due (seconds since the epoch);
        ``deleted``: messages of the junk list that are gone now (chat, message, receiver);
        ``junk``: messages to remove later (:data:`Junk`).

        Returns the newest snapshot, still leased, when a newer version was committed
        meanwhile: the caller delivers again. Raises :class:`LeaseLost` when the lease is another's
        (the slots are not saved: the messages only this delivery sent are unknown to the
        table), and what :meth:`_saved` gives up with.
        """
        pairs = [x for name, slot in slots.items() for x in (name, slot.model_dump_json())]
        pairs += _junk_pairs(junk)
        gone = [junk_field(chat, message, receiver) for chat, message, receiver in deleted]
        keys = family_of(key)
        release = scripts.Release(
            lease=self._lease(keys),
            delivered=version,
            due_ms=None if due is None else int(due * 1000),
            gone=tuple(gone),
            fields=tuple(pairs),
        )
        newer = await self._saved(keys, release)
        if newer == -1:
            raise LeaseLost(key)
        if due is not None:
            self.polls.due.wake(keys.bucket, due)
        if newer is not None and newer > 0:
            # Read by the claim, a write that waits for the replicas like the commit it
            # reads (bot.core.replicas): a plain read could show a newer, unconfirmed one.
            return await self.claim(key)
        return None

    async def _saved(self, keys: Family, release: scripts.Release) -> Any:
        """Run the release until a replica confirms it, or the lease is another's (-1).

        The messages are out: a release lost in a failover would leave the table naming
        the messages they replaced, and the new ones (a prompt with live buttons) unknown
        to it for good. So it is run again (:func:`bot.core.replicas.again`) while this
        process keeps the lease alive (bot.service.delivery's renewals); a release that is
        lost all the same leaves the delivery to remove those new messages itself
        (:mod:`bot.service.messages.unsaved`)."""
        return await again(
            lambda: self._release(dataclasses.replace(release, lease=self._lease(keys)))
        )

    async def _waits(self, key: str) -> bool:
        """Whether a write of ``key`` waits for a replica (its commit is then announced by
        this process once confirmed, not by the script)."""
        return self.replicas is not None and await self.replicas.needed(key) > 0

    async def _announce(self, key: str, version: int) -> None:
        """Tell every process's Mini App (:meth:`changes`) that ``key`` is at ``version``,
        which a replica has confirmed (a commit or a claim that waited for one). A notice
        lost with the connection is no error: a subscription that breaks reads every table
        it watches again once it is back (bot.webapp.streams)."""
        try:
            await self.redis.publish(CHANGED, f"{version} {key}")
        except (RedisConnectionError, RedisTimeoutError) as exc:
            log.info("the new version %d of %s was not announced: %s", version, key, exc)

    async def claim(self, key: str) -> Snapshot | None:
        """The table with the delivery lease, or None when another process holds it."""
        raw = await self._claim(scripts.Claim(self._lease(family_of(key))))
        if raw is None:
            return None
        snap = _decode(dict(zip(raw[::2], raw[1::2], strict=True)))
        snap.lease = True
        if await self._waits(key):
            # Confirmed now, perhaps a commit that was not (and so was never announced).
            await self._announce(key, snap.version)
        return snap

    async def renew(self, keys: Sequence[str]) -> None:
        """Push on the leases this process holds on ``keys`` (it is alive and working)."""
        by_bucket: dict[int, list[str]] = {}
        for key in keys:
            by_bucket.setdefault(family_of(key).bucket, []).append(key)
        holder = self._holder()
        for n, tables in sorted(by_bucket.items()):  # one script per slot
            await self._renew(scripts.Renew(DUE_KEYS[n], tuple(tables), holder))

    async def move(self, old: str, new: str) -> int:
        """Move a table to another key (see the module docstring): MOVED, NOTHING_TO_MOVE
        (nothing at ``old``, or ``new`` is taken) or BUSY (a delivery is under way: moving
        now would leave that delivery showing the old address). The keys are in different
        slots (the chat's bucket changes): the table is frozen at ``old`` and read
        (MOVE_OUT), written at ``new`` (MOVE_IN), deleted at ``old`` (DROP), each step of
        one slot and safe to run again: the next try finishes a move an error cut short."""
        if await self.redis.exists(new):  # taken: by this very move (cut short), or not
            mark = await self.redis.hget(old, MOVED_FIELD)
            if mark is None or await self.redis.hget(new, FROM_FIELD) != mark:
                return NOTHING_TO_MOVE
        ours, there, here = f"{new}|{secrets.token_hex(6)}", family_of(old), family_of(new)
        out = await again(
            lambda: self._move_out(
                scripts.MoveOut(self._lease(there), there.turns, ours, TABLE_SLOT)
            )
        )
        if int(out[0]) != MOVED:
            return int(out[0])
        mark, turn, fields = replies.text(out[1]), out[2], tuple(replies.text(x) for x in out[3:])
        ttl = max(self.ttl, int(await self.redis.ttl(old)))
        turn_ms = int(float(turn)) if turn else None
        moved_in = scripts.MoveIn(new, here.turns, here.chat_index, mark, ttl, turn_ms, fields)
        # Confirmed before the old key goes (another slot, perhaps another node: a failover
        # there keeps no order with this one's writes).
        if not await again(lambda: self._move_in(moved_in)):  # another table is there
            await self.redis.hdel(old, MOVED_FIELD)
            return NOTHING_TO_MOVE
        if turn_ms:
            self.polls.turns.wake(here.bucket, turn_ms / 1000)
        with contextlib.suppress(Unconfirmed):  # lost, it leaves a frozen table: inert
            await self._drop_key(old, only_moved=True)
        return MOVED

    async def _drop_key(self, key: str, *, only_moved: bool) -> list[Any]:
        keys = family_of(key)
        drop = scripts.Drop(key, keys.due, keys.turns, keys.chat_index, only_moved)
        return list(await self._drop(drop))

    async def discard(self, key: str, messages: Sequence[Junk]) -> None:
        """Remember messages that must be removed (the next delivery removes them)."""
        if messages:
            await self._save(scripts.Save(key, self.ttl, tuple(_junk_pairs(messages))))

    async def note_reach(self, key: str, reach: Mapping[int, bool]) -> None:
        """Keep ``ct:closed:<uid>`` in step with the seats' ``dm_ok`` just committed."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for user_id, ok in reach.items():
                if ok:
                    pipe.srem(closed_key(user_id), key)
                else:
                    pipe.sadd(closed_key(user_id), key)
                    pipe.expire(closed_key(user_id), self.ttl)
            await pipe.execute()

    @contextlib.asynccontextmanager
    async def changes(self) -> AsyncIterator[AsyncIterator[tuple[str, int]]]:
        """Every commit from now on, in any process, as (table key, version). It yields
        once Redis has confirmed the subscription: a table loaded after that misses none
        of its later changes. Raises a pause (bot.core.health) when the subscription breaks (commits
        made meanwhile are not told again)."""
        async with self.redis.pubsub() as pubsub:
            await pubsub.subscribe(CHANGED)
            async for message in pubsub.listen():
                if message["type"] == "subscribe":
                    break
            yield _changes(pubsub)

    async def spend(self, signature: str, until: float) -> bool:
        """Mark an initData (by its signature) used, until ``until`` (seconds since the
        epoch); False when it was used before (a replay)."""
        ttl = max(1, int(until - self.clock()))
        return bool(await self.redis.set(init_key(signature), "1", ex=ttl, nx=True))

    async def chat_tables(self, chat_id: int) -> list[str]:
        """The keys of every table of a chat, in any of its topics (its index: no SCAN)."""
        index = family(chat_id).chat_index  # none for chat 0 (inline tables', no chat's)
        return sorted(replies.text(k) for k in await self.redis.smembers(index[0])) if index else []

    async def drop(self, key: str) -> Snapshot:
        """Delete a table with its entries in the deadline sets, in one transaction, and
        in its players' closed-chat sets (the bot was removed from its chat); the table
        as it was."""
        raw = await self._drop_key(key, only_moved=False)
        snap = _decode(dict(zip(raw[::2], raw[1::2], strict=True)))
        if snap.table is not None and snap.table.seats:
            await self.note_reach(key, {seat.user_id: True for seat in snap.table.seats})
        return snap

    async def save_slots(self, key: str, slots: Mapping[str, Slot]) -> None:
        """Remember a message outside a delivery (a lobby's private confirmation)."""
        if slots:
            fields = [x for name, slot in slots.items() for x in (name, slot.model_dump_json())]
            await self._save(scripts.Save(key, self.ttl, tuple(fields)))
