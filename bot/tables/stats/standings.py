"""The standings kept beside a store: count, read, move a group's, forget a person's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from bot.core.models import Table
from bot.core.store import Store
from bot.tables.stats.count import COUNT, Moved, plan_for, rate, script_args, split
from bot.tables.stats.finished import Finished, from_record, from_table
from bot.tables.stats.keys import (
    KINDS,
    board_key,
    computer_key,
    decoded,
    group_key,
    group_prefix,
    groups_key,
    h2h_key,
    people_key,
    person_key,
    posted_key,
    variant_key,
    variants_key,
)
from engine import records
from engine.ratings import Rating
from engine.registry import GAMES

BOARD_SIZE = 10
MARKER_TTL_MARGIN = 24 * 3600  # seconds a marker outlives the finished table's key
POSTED_TTL = 3600  # seconds the Standings button of one result posts the board once


class Standings:
    """Counts finished games into Redis and reads the figures back."""

    def __init__(self, redis: aioredis.Redis, ttl: int) -> None:
        self.redis = redis
        self.marker_ttl = ttl + MARKER_TTL_MARGIN
        self._count = COUNT.register(redis)
        self.round_trips = 0  # Redis calls made by count (the cost the docstring states)

    async def claim_post(self, chat: int, thread: int, game_id: str) -> bool:
        """The Standings button of one result posts the board once: True for the first
        tap (within :data:`POSTED_TTL`), False for every later one."""
        posted = posted_key(chat, thread, game_id)
        return bool(await self.redis.set(posted, 1, nx=True, ex=POSTED_TTL))

    async def count(self, game: Finished, *, personal: bool = True) -> Moved:
        """Count ``game`` unless it was counted already; who moved up on the board.
        ``personal`` False: the group's figures only (a rebuild)."""
        marker = game.marker
        for _ in range(50):
            plan = plan_for(game, personal)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(marker)
                pipe.expire(marker, self.marker_ttl)  # outlive the table (then Delivery.counted)
                for row in plan.rows:
                    if row.rated:
                        pipe.hmget(row.key, ["mu", "sigma", "tr"])
                found = await pipe.execute()
            self.round_trips += 1
            if found[0] is not None:
                return Moved.parse(found[0])
            for row, values in zip([r for r in plan.rows if r.rated], found[2:], strict=True):
                row.old = (decoded(values[0]), decoded(values[1]))
                row.old_trend = decoded(values[2])
            rate(game, plan)
            group, people = split(plan)
            text: Any = ""
            if game.in_group:  # the group's step (a group marker of its own: done once)
                args = script_args(game, group, self.marker_ttl, group=True)
                status, text = await self._count(args)
                self.round_trips += 1
                if int(status) == 2:
                    continue
            args = script_args(game, people, self.marker_ttl, group=False, carried=decoded(text))
            status, text = await self._count(args)
            self.round_trips += 1
            if int(status) != 2:
                return Moved.parse(text)
        raise RuntimeError(f"the ratings of {marker} kept changing")

    async def board(self, chat: int, kind: str) -> list[Line]:
        """The group's top :data:`BOARD_SIZE` by shown rating."""
        found = await self.redis.zrevrange(board_key(chat, kind), 0, BOARD_SIZE - 1)
        uids = [int(decoded(u)) for u in found]
        return await self._lines([group_key(chat, kind, u) for u in uids], uids)

    async def _lines(self, keys: Sequence[str], uids: Sequence[int]) -> list[Line]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hgetall(key)
            found = await pipe.execute()
        return [Line.of(uid, raw) for uid, raw in zip(uids, found, strict=True)]

    async def in_group(self, chat: int, uid: int) -> dict[str, Line]:
        """His figures in a group, per game he played there."""
        lines = await self._lines([group_key(chat, k, uid) for k in KINDS], [uid] * len(KINDS))
        return {k: line for k, line in zip(KINDS, lines, strict=True) if line.n}

    async def mine(self, uid: int) -> tuple[dict[str, Line], dict[tuple[str, str], Line]]:
        """His figures across groups per game, and against the computer per game and level."""
        levels = [(k, lv) for k in KINDS for lv in GAMES[k].levels]
        keys = [person_key(uid, k) for k in KINDS]
        keys += [computer_key(uid, k, lv) for k, lv in levels]
        lines = await self._lines(keys, [uid] * len(keys))
        overall = {k: line for k, line in zip(KINDS, lines, strict=False) if line.n}
        vs = {kl: line for kl, line in zip(levels, lines[len(KINDS) :], strict=True) if line.n}
        return overall, vs

    async def variants(self, uid: int) -> dict[str, dict[str, Line]]:
        """His figures across groups per game and variant (its options' JSON)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for kind in KINDS:
                pipe.smembers(variants_key(uid, kind))
            found = await pipe.execute()
        named = [(k, decoded(v)) for k, members in zip(KINDS, found, strict=True) for v in members]
        lines = await self._lines([variant_key(uid, k, v) for k, v in named], [uid] * len(named))
        out: dict[str, dict[str, Line]] = {}
        for (kind, variant), line in zip(named, lines, strict=True):
            if line.n:
                out.setdefault(kind, {})[variant] = line
        return out

    async def head_to_head(self, chat: int, kind: str, a: int, b: int) -> tuple[int, int, int]:
        """(games together, a above b, b above a) in a group."""
        low, high = sorted((a, b))
        raw = await self.redis.hmget(h2h_key(chat, kind), [f"{low}&{high}", f"{a}>{b}", f"{b}>{a}"])
        n, won, lost = (int(decoded(x) or 0) for x in raw)
        return n, won, lost

    async def _group_keys(self, chat: int) -> tuple[list[int], list[str]]:
        """The people with figures in a group (its index) and every key of its standings."""
        uids = sorted(int(decoded(u)) for u in await self.redis.smembers(people_key(chat)))
        keys = [k for kind in KINDS for k in (board_key(chat, kind), h2h_key(chat, kind))]
        keys += [group_key(chat, kind, uid) for kind in KINDS for uid in uids]
        return uids, keys

    async def move_group(self, old: int, new: int, game: Finished | None = None) -> None:
        """A basic group became a supergroup: its standings follow it (figures already
        there, from a move that an error cut short, are kept), with the group's step
        marker of ``game``, its finished game (a count cut short between its steps goes
        on in the new group, and adds nothing there twice). The two groups' keys are in
        different slots: each is copied (DUMP, RESTORE), then the person's index of his
        groups changes, then the old ones go, the group's index last, so that a move cut
        short anywhere is finished by the next."""
        uids, keys = await self._group_keys(old)
        if game is not None and game.chat == old:
            keys.append(game.group_marker)
        for key in keys:
            dumped = await self.redis.dump(key)
            if dumped is None:
                continue
            target = key.replace(group_prefix(old), group_prefix(new), 1)
            ttl = max(0, int(await self.redis.pttl(key)))  # a marker's; figures: none
            try:
                await self.redis.restore(target, ttl, dumped)
            except ResponseError as exc:
                if "BUSYKEY" not in str(exc):
                    raise
        if uids:
            await self.redis.sadd(people_key(new), *uids)
        for uid in uids:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.srem(groups_key(uid), old)
                pipe.sadd(groups_key(uid), new)
                await pipe.execute()
        for key in keys:
            await self.redis.delete(key)
        await self.redis.delete(people_key(old))

    async def forget(self, uid: int) -> None:
        """Erase his figures everywhere; what others' figures say of him stays, nameless.
        His own keys are in one slot (one transaction), each group's in its own (one
        transaction each), his index of his groups dropped last."""
        chats = [int(decoded(c)) for c in await self.redis.smembers(groups_key(uid))]
        variants = {k: await self.redis.smembers(variants_key(uid, k)) for k in KINDS}
        async with self.redis.pipeline(transaction=True) as pipe:
            for kind in KINDS:
                pipe.delete(person_key(uid, kind), variants_key(uid, kind))
                for variant in variants[kind]:
                    pipe.delete(variant_key(uid, kind, decoded(variant)))
                for level in GAMES[kind].levels:
                    pipe.delete(computer_key(uid, kind, level))
            await pipe.execute()
        for chat in chats:
            async with self.redis.pipeline(transaction=True) as pipe:
                for kind in KINDS:
                    pipe.delete(group_key(chat, kind, uid))
                    pipe.zrem(board_key(chat, kind), uid)
                pipe.srem(people_key(chat), uid)
                await pipe.execute()
        await self.redis.delete(groups_key(uid))


@dataclass(frozen=True)
class Line:
    """One person's figures in one scope (a group, overall, or against a computer level)."""

    uid: int
    name: str
    counts: dict[str, int]
    rating: Rating | None
    trend: tuple[float, ...] = ()

    @property
    def n(self) -> int:
        return self.counts.get("n", 0)

    def get(self, name: str) -> int:
        return self.counts.get(name, 0)

    def plus(self, other: Line) -> Line:
        """Both lines' counters added up (not their streaks, which no sum makes), no rating."""
        names = (set(self.counts) | set(other.counts)) - {"cur", "best"}
        counts = {k: self.get(k) + other.get(k) for k in names}
        return Line(self.uid, self.name, counts, None)

    @classmethod
    def of(cls, uid: int, raw: dict[Any, Any]) -> Line:
        data = {decoded(k): decoded(v) for k, v in raw.items()}
        rating = Rating(float(data["mu"]), float(data["sigma"])) if "mu" in data else None
        trend = tuple(float(v) for v in data.get("tr", "").split(",") if v)
        counts = {k: int(v) for k, v in data.items() if k not in ("mu", "sigma", "tr", "name")}
        return cls(uid, data.get("name", ""), counts, rating, trend)


_BY_STORE: WeakKeyDictionary[Store, Standings] = WeakKeyDictionary()


def of(store: Store) -> Standings:
    """The standings kept beside a store (one per process and Redis client)."""
    found = _BY_STORE.get(store)
    if found is None:
        found = _BY_STORE[store] = Standings(store.redis, store.ttl)
    return found


async def settle(store: Store, table: Table) -> Moved | None:
    """Count the table's game if it has just finished (idempotent: see the module
    docstring); who moved up, or None when the game is not counted in a group."""
    game = from_table(table)
    if game is None:
        return None
    moved = await of(store).count(game)
    return moved if game.in_group else None


def moved_of(table: Table) -> Moved | None:
    """Who moved up on the group's board with the table's finished game, as its count
    left it in the table (bot.service.counting); None: not counted in a group (yet)."""
    up = table.delivery.moved_up
    return None if up is None or not table.delivery.counted else Moved(tuple(up))


async def rebuild(redis: aioredis.Redis, paths: Iterable[Path], ttl: int) -> int:
    """Rebuild the standings of the groups these records were played in: their figures
    (and markers) are cleared, then the games are counted in the order given, as live
    counting counts them into a group (nothing personal is touched); how many games were
    counted. A record given twice counts once."""
    found = [from_record(records.parse(path.read_bytes())) for path in paths]
    by_game: dict[str, Finished] = {}
    for game in found:
        if game.in_group:
            by_game.setdefault(game.marker, game)
    counted = list(by_game.values())
    standings = Standings(redis, ttl)
    for chat in sorted({game.chat for game in counted}):
        _, keys = await standings._group_keys(chat)
        for key in [*keys, people_key(chat)]:  # one at a time: each in its own slot
            await redis.delete(key)
    for game in counted:
        await redis.delete(game.marker)
        await redis.delete(game.group_marker)
    for game in counted:
        await standings.count(game, personal=False)
    return len(counted)
