"""Standings: counting each finished game exactly once, reading the figures, forgetting.

Keys (under :data:`bot.core.store.KEY_PREFIX`, without the games' TTL; ``<kind>`` is
``football`` or ``durak``; a forum topic counts for its group, so ``<chat>`` is the group)::

    ct:st:g:<chat>:<kind>:<uid>   hash: a person's figures in a group: n (games), fool,
                                  draw, first (went out first), won, lost, gf, ga (goals
                                  for, against), cur / best (streak now, longest), mu,
                                  sigma (his rating in the group), name
    ct:st:g:<chat>:<kind>:board   sorted set: uid -> shown rating (mu - 3 sigma), for the
                                  people with at least MIN_GAMES games there
    ct:st:g:<chat>:<kind>:h2h     hash: "<a>><b>": games a finished above b; "<a>&<b>"
                                  (a < b): games they played together
    ct:st:p:<uid>:<kind>          hash: his figures across all groups, his overall rating
                                  and ``tr``, his last shown ratings (the trend)
    ct:st:c:<uid>:<kind>:<level>  hash: his figures against the computer at that level
                                  (games with a computer seat count only here)
    ct:st:in:<uid>                set: the groups where he has figures (for /forgetme)
    ct:st:counted:<game id>:<deal>   the game was counted (<deal>: a hash of its deal,
                                  bot.tables.stats.deal_digest); its value says who moved up on
                                  the board. Its TTL outlives the table's key (it is
                                  renewed each time the finished table is delivered).
    ct:st:posted:<chat>:<thread>:<game id>   the result's Standings button has posted
                                  the board (once per game; an hour)

When a game is counted: after the commit that finished it, when its finished table is
delivered (:func:`settle`, called by bot.service.delivery before it renders a table). Counting in
``decide`` is impossible (pure, re-run on a conflict), and counting right after the
commit in the committing process would lose the game if that process died between the
commit and the count. The delivery, however, is guaranteed: every committed version is
delivered, and a delivery whose holder dies is taken over once its lease runs out (see
bot.core.store). A finished table is delivered at least once and may be delivered again (a
later commit: the Record button, a private chat that opened; another process taking
over): so the count is idempotent by the game's marker, checked and set in the same Lua
script that adds the figures. Two processes, a redelivered update or a crash between the
two steps can neither skip nor double a game. And the result message, rendered after the
count, can say who moved up.

Cost of a game's first count: one pipelined read (the marker and the ratings), the
ratings computed here (engine.ratings, pure), then one script that checks the marker and
that the ratings read are unchanged (else it reads again), and writes everything: two
round trips. Each later delivery of the finished table costs the read alone, which also
renews the marker's TTL: a commit on a finished table (the Record button) renews the
table's TTL, and the marker must outlive every delivery of it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

import redis.asyncio as aioredis

from bot.core.models import Table
from bot.core.store import KEY_PREFIX, Store
from bot.tables import games
from engine import ratings, records
from engine.base import Game, IllegalMove, MalformedRecord
from engine.ratings import Outcome, Rating
from engine.registry import GAMES

MIN_GAMES = 3  # games in a group before a person appears on its board
BOARD_SIZE = 10
MARKER_TTL_MARGIN = 24 * 3600  # seconds a marker outlives the finished table's key
# The games by name: the standings' order, whose first is also the board shown when a
# group has played each game equally often.
KINDS = tuple(sorted(GAMES))
NO = "~"  # a script argument that is not there
POSTED_TTL = 3600  # seconds the Standings button of one result posts the board once

ST = f"{KEY_PREFIX}:st"


def group_key(chat: int, kind: str, uid: int) -> str:
    return f"{ST}:g:{chat}:{kind}:{uid}"


def board_key(chat: int, kind: str) -> str:
    return f"{ST}:g:{chat}:{kind}:board"


def h2h_key(chat: int, kind: str) -> str:
    return f"{ST}:g:{chat}:{kind}:h2h"


def person_key(uid: int, kind: str) -> str:
    return f"{ST}:p:{uid}:{kind}"


def computer_key(uid: int, kind: str, level: str) -> str:
    return f"{ST}:c:{uid}:{kind}:{level}"


def groups_key(uid: int) -> str:
    return f"{ST}:in:{uid}"


def marker_key(game_id: str, deal: str) -> str:
    return f"{ST}:counted:{game_id}:{deal}"


def deal_digest(game: Game) -> str:
    """What tells one game from every other: its deal (shuffled deck, seats, options),
    hashed. Not the chat: a table moves when its group becomes a supergroup, and its
    finished game must not count again there; not the game id alone: four characters."""
    header = json.dumps(game.header(), sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(header.encode(), digest_size=9).hexdigest()


@dataclass(frozen=True)
class Player:
    uid: int
    name: str
    computer: str | None = None  # a computer seat's level


@dataclass(frozen=True)
class Finished:
    """A finished game as standings need it, from a table (live) or a record (rebuild)."""

    chat: int  # the group (a forum topic counts for its group), or a private chat
    game_id: str
    players: tuple[Player, ...]
    outcome: Outcome
    deal: str = ""  # deal_digest of the game

    @property
    def marker(self) -> str:
        return marker_key(self.game_id, self.deal)

    @property
    def kind(self) -> str:
        return self.outcome.kind

    @property
    def level(self) -> str | None:
        """The hardest computer level at the table (None: people only)."""
        levels = GAMES[self.kind].levels
        found = [p.computer for p in self.players if p.computer in levels]
        return max(found, key=levels.index) if found else None

    @property
    def in_group(self) -> bool:
        """Counted in its group's standings: a group, and people only."""
        return self.chat < 0 and self.level is None


def _finished(
    chat: int, game_id: str, players: Sequence[Player], kind: str, game: Game
) -> Finished:
    result = game.result()
    assert result is not None
    outcome = GAMES[kind].outcome(kind, result, game.summary())
    return Finished(chat, game_id, tuple(players), outcome, deal_digest(game))


def from_table(table: Table) -> Finished | None:
    """The finished game at ``table`` (None: it is not a finished game)."""
    if table.phase != "finished" or table.kind is None or table.state is None:
        return None
    players = [Player(s.user_id, s.name, s.computer) for s in table.seats]
    return _finished(table.chat_id, table.game_id, players, table.kind, games.current(table))


def record_table(table: Table) -> dict[str, Any]:
    """The ``table`` field a record the bot hands out carries (docs/records.md §2): where
    the game was played and who sat where, so that standings can be rebuilt from records."""
    return {
        "chat": table.chat_id,
        "thread": table.thread_id,
        "game_id": table.game_id,
        "users": [s.user_id for s in table.seats],
        "computer": [s.computer for s in table.seats],
    }


def record_document(table: Table) -> tuple[str, bytes]:
    """The game record the bot hands out (docs/records.md) as a file: its name, its JSON."""
    record = {**records.export(games.load(table), table.moves), "table": record_table(table)}
    name = f"{table.kind}-{table.game_id}.json"
    return name, json.dumps(record, ensure_ascii=False, indent=1).encode()


def from_record(record: dict[str, Any]) -> Finished:
    """The finished game of a record with a ``table`` field; raises MalformedRecord."""
    meta = record.get("table")
    if not isinstance(meta, dict):
        raise MalformedRecord("the record has no table field: whose game is it?")
    game, moves = records.load(record)
    for index, move in enumerate(moves):
        try:
            game.apply(move)
        except IllegalMove as exc:
            raise MalformedRecord(f"move {index} is illegal: {exc.message}") from None
    if game.result() is None:
        raise MalformedRecord("the game is not finished")
    names = game.players
    users, levels = meta.get("users"), meta.get("computer")
    if not isinstance(users, list) or not isinstance(levels, list) or len(users) != len(names):
        raise MalformedRecord("table.users must give a user id for every player")
    try:
        players = [Player(int(u), n, c) for u, n, c in zip(users, names, levels, strict=True)]
        chat, game_id = int(meta["chat"]), str(meta["game_id"])
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedRecord(f"a bad table field: {exc}") from None
    return _finished(chat, game_id, players, str(record["game"]), game)


@dataclass(frozen=True)
class Moved:
    """Who moved up on the group's board with a game: (uid, place from 1)."""

    up: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, raw: bytes | str) -> Moved:
        text = raw.decode() if isinstance(raw, bytes) else raw
        pairs = (item.split(":") for item in text.split())
        return cls(tuple((int(uid), int(place)) for uid, place in pairs))


# KEYS: the marker, then the hashes, boards and sets the ARGV rows name by index.
# ARGV: marker TTL, MIN_GAMES, row count, then per row: hash index, board index (0: none),
# uid, expected mu and sigma (NO: no rating on this row), new mu, sigma, board score,
# streak goes on (1/0), name, trend (NO: none), number of counters, counter/increment
# pairs; then the head-to-head count, its hash index and fields; then the set count and
# (set index, member) pairs. {1, moved}: counted before; {2}: a rating changed since it
# was read (read again); {0, moved}: counted now.
_COUNT = f"""
local ttl = tonumber(ARGV[1])
local done = redis.call('GET', KEYS[1])
if done then
  redis.call('EXPIRE', KEYS[1], ttl)
  return {{1, done}}
end
local least = tonumber(ARGV[2])
local rows = {{}}
local i = 4
for r = 1, tonumber(ARGV[3]) do
  local row = {{key = KEYS[tonumber(ARGV[i])], board = tonumber(ARGV[i + 1]), uid = ARGV[i + 2],
    emu = ARGV[i + 3], esig = ARGV[i + 4], mu = ARGV[i + 5], sig = ARGV[i + 6],
    score = ARGV[i + 7], good = ARGV[i + 8], name = ARGV[i + 9], tr = ARGV[i + 10],
    n = tonumber(ARGV[i + 11]), at = i + 12}}
  i = i + 12 + 2 * row.n
  if row.emu ~= '{NO}' then
    local now = redis.call('HMGET', row.key, 'mu', 'sigma')
    if (now[1] or '') ~= row.emu or (now[2] or '') ~= row.esig then return {{2, ''}} end
  end
  if row.board > 0 then row.before = redis.call('ZREVRANK', KEYS[row.board], row.uid) end
  rows[r] = row
end
for _, row in ipairs(rows) do
  for j = 0, row.n - 1 do
    redis.call('HINCRBY', row.key, ARGV[row.at + 2 * j], ARGV[row.at + 2 * j + 1])
  end
  if row.good == '1' then
    local cur = redis.call('HINCRBY', row.key, 'cur', 1)
    if cur > tonumber(redis.call('HGET', row.key, 'best') or '0') then
      redis.call('HSET', row.key, 'best', cur)
    end
  else
    redis.call('HSET', row.key, 'cur', 0)
  end
  redis.call('HSET', row.key, 'name', row.name)
  if row.emu ~= '{NO}' then redis.call('HSET', row.key, 'mu', row.mu, 'sigma', row.sig) end
  if row.tr ~= '{NO}' then redis.call('HSET', row.key, 'tr', row.tr) end
  if row.board > 0 and tonumber(redis.call('HGET', row.key, 'n')) >= least then
    redis.call('ZADD', KEYS[row.board], row.score, row.uid)
  end
end
local moved = {{}}
for _, row in ipairs(rows) do
  if row.board > 0 then
    local after = redis.call('ZREVRANK', KEYS[row.board], row.uid)
    if after and (not row.before or after < row.before) then
      table.insert(moved, row.uid .. ':' .. (after + 1))
    end
  end
end
local h = tonumber(ARGV[i])
i = i + 1
if h > 0 then
  local key = KEYS[tonumber(ARGV[i])]
  for j = 1, h do redis.call('HINCRBY', key, ARGV[i + j], 1) end
  i = i + 1 + h
end
local sets = tonumber(ARGV[i])
i = i + 1
for _ = 1, sets do
  redis.call('SADD', KEYS[tonumber(ARGV[i])], ARGV[i + 1])
  i = i + 2
end
local text = table.concat(moved, ' ')
redis.call('SET', KEYS[1], text, 'EX', ttl)
return {{0, text}}
"""


@dataclass
class _Row:
    """One hash a game adds to: a seat's figures in one scope ("group", "overall": both
    rated, each as a game of its own; "computer": not rated)."""

    key: str
    seat: int
    scope: str
    board: str | None = None
    old: tuple[str, str] = ("", "")  # mu, sigma as stored ("": none yet)
    old_trend: str = ""
    new: Rating | None = None

    @property
    def rated(self) -> bool:
        return self.scope != "computer"


@dataclass
class _Plan:
    rows: list[_Row] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def index(self, key: str) -> int:
        """The key's 1-based position in KEYS (the marker is KEYS[1])."""
        if key not in self.keys:
            self.keys.append(key)
        return self.keys.index(key) + 2


def _plan(game: Finished, personal: bool) -> _Plan:
    plan = _Plan()
    kind = game.kind
    people = [i for i, p in enumerate(game.players) if p.computer is None]
    level = game.level
    if level is not None:
        for seat in people:
            uid = game.players[seat].uid
            plan.rows.append(_Row(computer_key(uid, kind, level), seat, "computer"))
        return plan
    if game.chat < 0:
        board = board_key(game.chat, kind)
        for seat in people:
            key = group_key(game.chat, kind, game.players[seat].uid)
            plan.rows.append(_Row(key, seat, "group", board=board))
    if personal:
        for seat in people:
            key = person_key(game.players[seat].uid, kind)
            plan.rows.append(_Row(key, seat, "overall"))
    return plan


def _text(raw: Any) -> str:
    return "" if raw is None else raw.decode() if isinstance(raw, bytes) else str(raw)


def _rate(game: Finished, plan: _Plan) -> None:
    """New ratings for every rated row: the group's and the overall ones, each scope
    rated as one game of its own (ties and ranks from the outcome)."""
    scopes: dict[str, list[_Row]] = {}
    for row in plan.rows:
        if row.rated:
            scopes.setdefault(row.scope, []).append(row)
    for rows in scopes.values():
        old = [Rating(float(r.old[0]), float(r.old[1])) if r.old[0] else Rating() for r in rows]
        ranks = [game.outcome.ranks[r.seat] for r in rows]
        for row, new in zip(rows, ratings.rate(old, ranks), strict=True):
            row.new = new


def _args(game: Finished, plan: _Plan, ttl: int) -> list[Any]:
    args: list[Any] = [ttl, MIN_GAMES, len(plan.rows)]
    for row in plan.rows:
        player = game.players[row.seat]
        board = plan.index(row.board) if row.board else 0
        args += [plan.index(row.key), board, player.uid]
        if row.new is None:
            args += [NO, NO, NO, NO, 0]
        else:
            args += [*row.old, repr(row.new.mu), repr(row.new.sigma), repr(row.new.shown)]
        args += ["1" if game.outcome.streak_goes_on(row.seat) else "0", player.name]
        if row.scope == "overall" and row.new is not None:
            history = [v for v in row.old_trend.split(",") if v]
            args.append(",".join([*history, f"{row.new.shown:.2f}"][-ratings.TREND_LEN :]))
        else:
            args.append(NO)
        add = game.outcome.figures(row.seat)
        args.append(len(add))
        args += [x for name, value in sorted(add.items()) for x in (name, value)]
    pairs: list[str] = []
    if game.in_group:
        ids = [p.uid for p in game.players]
        pairs += [f"{ids[a]}>{ids[b]}" for a, b in ratings.above(game.outcome)]
        people = sorted(ids)
        pairs += [f"{a}&{b}" for i, a in enumerate(people) for b in people[i + 1 :]]
    args.append(len(pairs))
    if pairs:
        args += [plan.index(h2h_key(game.chat, game.kind)), *pairs]
    members = [] if not game.in_group else [p.uid for p in game.players]
    args.append(len(members))
    for uid in members:
        args += [plan.index(groups_key(uid)), game.chat]
    return args


class Standings:
    """Counts finished games into Redis and reads the figures back."""

    def __init__(self, redis: aioredis.Redis, ttl: int) -> None:
        self.redis = redis
        self.marker_ttl = ttl + MARKER_TTL_MARGIN
        self._count = redis.register_script(_COUNT)
        self.round_trips = 0  # Redis calls made by count (the cost the docstring states)

    async def claim_post(self, chat: int, thread: int, game_id: str) -> bool:
        """The Standings button of one result posts the board once: True for the first
        tap (within :data:`POSTED_TTL`), False for every later one."""
        posted = f"{ST}:posted:{chat}:{thread}:{game_id}"
        return bool(await self.redis.set(posted, 1, nx=True, ex=POSTED_TTL))

    async def count(self, game: Finished, *, personal: bool = True) -> Moved:
        """Count ``game`` unless it was counted already; who moved up on the board.
        ``personal`` False: the group's figures only (a rebuild)."""
        marker = game.marker
        for _ in range(50):
            plan = _plan(game, personal)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(marker)
                pipe.expire(marker, self.marker_ttl)  # outlive the table, kept on by commits
                for row in plan.rows:
                    if row.rated:
                        pipe.hmget(row.key, ["mu", "sigma", "tr"])
                found = await pipe.execute()
            self.round_trips += 1
            if found[0] is not None:
                return Moved.parse(found[0])
            for row, values in zip([r for r in plan.rows if r.rated], found[2:], strict=True):
                row.old = (_text(values[0]), _text(values[1]))
                row.old_trend = _text(values[2])
            _rate(game, plan)
            args = _args(game, plan, self.marker_ttl)
            status, text = await self._count(keys=[marker, *plan.keys], args=args)
            self.round_trips += 1
            if int(status) != 2:
                return Moved.parse(text)
        raise RuntimeError(f"the ratings of {marker} kept changing")

    async def board(self, chat: int, kind: str) -> list[Line]:
        """The group's top :data:`BOARD_SIZE` by shown rating."""
        found = await self.redis.zrevrange(board_key(chat, kind), 0, BOARD_SIZE - 1)
        uids = [int(_text(u)) for u in found]
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

    async def head_to_head(self, chat: int, kind: str, a: int, b: int) -> tuple[int, int, int]:
        """(games together, a above b, b above a) in a group."""
        low, high = sorted((a, b))
        raw = await self.redis.hmget(h2h_key(chat, kind), [f"{low}&{high}", f"{a}>{b}", f"{b}>{a}"])
        n, won, lost = (int(_text(x) or 0) for x in raw)
        return n, won, lost

    async def move_group(self, old: int, new: int) -> None:
        """A basic group became a supergroup: its standings follow it (figures already
        there, from a move that an error cut short, are kept)."""
        prefix = f"{ST}:g:{old}:"
        async for raw in self.redis.scan_iter(match=prefix + "*", count=1000):
            key = _text(raw)
            rest = key.removeprefix(prefix)
            await self.redis.renamenx(key, f"{ST}:g:{new}:{rest}")
            uid = rest.partition(":")[2]
            if uid.lstrip("-").isdigit():
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.srem(groups_key(int(uid)), old)
                    pipe.sadd(groups_key(int(uid)), new)
                    await pipe.execute()

    async def forget(self, uid: int) -> None:
        """Erase his figures everywhere; what others' figures say of him stays, nameless."""
        chats = [int(_text(c)) for c in await self.redis.smembers(groups_key(uid))]
        async with self.redis.pipeline(transaction=True) as pipe:
            for kind in KINDS:
                pipe.delete(person_key(uid, kind))
                for level in GAMES[kind].levels:
                    pipe.delete(computer_key(uid, kind, level))
                for chat in chats:
                    pipe.delete(group_key(chat, kind, uid))
                    pipe.zrem(board_key(chat, kind), uid)
            pipe.delete(groups_key(uid))
            await pipe.execute()


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

    @classmethod
    def of(cls, uid: int, raw: dict[Any, Any]) -> Line:
        data = {_text(k): _text(v) for k, v in raw.items()}
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
    for chat in sorted({game.chat for game in counted}):
        async for key in redis.scan_iter(match=f"{ST}:g:{chat}:*", count=1000):
            await redis.delete(key)
    if counted:
        await redis.delete(*(game.marker for game in counted))
    standings = Standings(redis, ttl)
    for game in counted:
        await standings.count(game, personal=False)
    return len(counted)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bot.tables.stats rebuild FILES…``: rebuild groups' standings from records
    (REDIS_URL says where; GAME_TTL as for the bot)."""
    parser = argparse.ArgumentParser(prog="python -m bot.tables.stats")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("rebuild", help="count game records into their groups' standings")
    cmd.add_argument("files", nargs="+", type=Path, help="records, in the order played")
    args = parser.parse_args(argv)
    url = os.environ.get("REDIS_URL")
    if not url:
        print("REDIS_URL is not set", file=sys.stderr)
        return 2
    ttl = int(os.environ.get("GAME_TTL", 2 * 24 * 3600))

    async def run() -> int:
        client = aioredis.Redis.from_url(url)
        try:
            return await rebuild(client, args.files, ttl)
        finally:
            await client.aclose()

    try:
        counted = asyncio.run(run())
    except (MalformedRecord, OSError, json.JSONDecodeError) as exc:
        print(f"not rebuilt: {exc}", file=sys.stderr)
        return 1
    print(f"{counted} games counted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
