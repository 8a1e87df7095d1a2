"""Counting a finished game exactly once: what it adds, and the script that adds it.

Why on delivery: a game is counted when its finished table is delivered
(:func:`bot.tables.stats.standings.settle`, called by bot.service.messages.rounds before it
renders the table), not in ``decide`` (pure, re-run on a conflict) nor right after the
commit (lost if that process died in between): every committed version is delivered,
by a live process if its first holder died. A finished table may be delivered more than
once, so the count is idempotent by the game's marker, checked and set in the same Lua
script that adds the figures; and the result, rendered after the count, can say who
moved up. A first count costs two round trips (one pipelined read of the marker and the
ratings, the ratings computed by engine.ratings, one script that also checks that they
did not change meanwhile); each later delivery costs the read, which renews the marker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.tables.stats.finished import Finished
from bot.tables.stats.keys import (
    board_key,
    computer_key,
    group_key,
    groups_key,
    h2h_key,
    person_key,
    variant_key,
    variants_key,
)
from engine import ratings
from engine.ratings import Rating

MIN_GAMES = 3  # games in a group before a person appears on its board
NO = "~"  # a script argument that is not there


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
COUNT = f"""
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
    rated, each as a game of its own; "computer", "variant": not rated)."""

    key: str
    seat: int
    scope: str
    board: str | None = None
    old: tuple[str, str] = ("", "")  # mu, sigma as stored ("": none yet)
    old_trend: str = ""
    new: Rating | None = None

    @property
    def rated(self) -> bool:
        return self.scope in ("group", "overall")


@dataclass
class _Plan:
    rows: list[_Row] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def index(self, key: str) -> int:
        """The key's 1-based position in KEYS (the marker is KEYS[1])."""
        if key not in self.keys:
            self.keys.append(key)
        return self.keys.index(key) + 2


def plan_for(game: Finished, personal: bool) -> _Plan:
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
            uid = game.players[seat].uid
            plan.rows.append(_Row(person_key(uid, kind), seat, "overall"))
            if game.variant:
                plan.rows.append(_Row(variant_key(uid, kind, game.variant), seat, "variant"))
    return plan


def rate(game: Finished, plan: _Plan) -> None:
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


def script_args(game: Finished, plan: _Plan, ttl: int) -> list[Any]:
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
    members: list[tuple[str, Any]] = []
    if game.in_group:
        members += [(groups_key(p.uid), game.chat) for p in game.players]
    for row in plan.rows:
        if row.scope == "variant":
            uid = game.players[row.seat].uid
            members.append((variants_key(uid, game.kind), game.variant))
    args.append(len(members))
    for key, member in members:
        args += [plan.index(key), member]
    return args
