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
from typing import Any, NamedTuple

from bot.core.lua import Args, Key, Keys, Script
from bot.tables.stats.finished import Finished
from bot.tables.stats.keys import (
    board_key,
    computer_key,
    group_key,
    groups_key,
    h2h_key,
    people_key,
    person_key,
    variant_key,
    variants_key,
)
from engine import ratings
from engine.ratings import Rating

MIN_GAMES = 3  # games in a group before a person appears on its board


@dataclass(frozen=True)
class Moved:
    """Who moved up on the group's board with a game: (uid, place from 1)."""

    up: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, raw: bytes | str) -> Moved:
        text = raw.decode() if isinstance(raw, bytes) else raw
        pairs = (item.split(":") for item in text.split())
        return cls(tuple((int(uid), int(place)) for uid, place in pairs))


class Add(NamedTuple):
    """A counter of a hash and what it grows by."""

    name: str
    by: int


class Row(NamedTuple):
    """What a game adds to one hash (see :class:`_Row`)."""

    hash: int  # by its place in Count.hashes (from 1)
    board: int | None  # the group's board, by its place in Count.hashes; None: none
    uid: str  # the player, a member of the board
    rated: bool
    old_mu: str  # the rating as read ("": none yet); the count stops if it changed since
    old_sigma: str
    mu: str  # the new rating ("" when not rated)
    sigma: str
    score: str  # on the board
    streak: bool  # the player's streak goes on
    name: str
    trend: tuple[str, ...]  # the shown ratings kept (none: unchanged)
    adds: tuple[Add, ...]


class Member(NamedTuple):
    """A member added to a set."""

    set: int  # by its place in Count.hashes
    member: str


@dataclass(frozen=True)
class Count(Args):
    """A finished game's figures, counted unless its marker says it was."""

    marker: Key
    hashes: Keys  # the hashes, boards and sets the rows name
    ttl: int  # the marker's
    least: int  # MIN_GAMES
    rows: tuple[Row, ...]
    h2h: int | None  # the head-to-head hash, by its place in hashes; None: none
    h2h_fields: tuple[str, ...]  # its fields, each grown by 1
    members: tuple[Member, ...]
    carried: str  # who moved up, as an earlier step said: kept in this marker


# {1, moved}: counted before; {2}: a rating changed since it was read (read again);
# {0, moved}: counted now. ``moved`` is what this step's board says, else ``carried``.
COUNT = Script(
    Count,
    body="""
local done = redis.call('GET', marker)
if done then
  redis.call('EXPIRE', marker, ttl)
  return {1, done}
end
for _, row in ipairs(rows) do
  row.key = hashes[row.hash]
  if row.rated then
    local now = redis.call('HMGET', row.key, 'mu', 'sigma')
    if (now[1] or '') ~= row.old_mu or (now[2] or '') ~= row.old_sigma then return {2, ''} end
  end
  if row.board then
    row.board_key = hashes[row.board]
    row.before = redis.call('ZREVRANK', row.board_key, row.uid)
  end
end
for _, row in ipairs(rows) do
  for _, add in ipairs(row.adds) do redis.call('HINCRBY', row.key, add.name, add.by) end
  if row.streak then
    local cur = redis.call('HINCRBY', row.key, 'cur', 1)
    if cur > tonumber(redis.call('HGET', row.key, 'best') or '0') then
      redis.call('HSET', row.key, 'best', cur)
    end
  else
    redis.call('HSET', row.key, 'cur', 0)
  end
  redis.call('HSET', row.key, 'name', row.name)
  if row.rated then redis.call('HSET', row.key, 'mu', row.mu, 'sigma', row.sigma) end
  if #row.trend > 0 then redis.call('HSET', row.key, 'tr', table.concat(row.trend, ',')) end
  if row.board and tonumber(redis.call('HGET', row.key, 'n')) >= least then
    redis.call('ZADD', row.board_key, row.score, row.uid)
  end
end
local moved = {}
for _, row in ipairs(rows) do
  if row.board then
    local after = redis.call('ZREVRANK', row.board_key, row.uid)
    if after and (not row.before or after < row.before) then
      table.insert(moved, row.uid .. ':' .. (after + 1))
    end
  end
end
if h2h then
  for _, f in ipairs(h2h_fields) do redis.call('HINCRBY', hashes[h2h], f, 1) end
end
for _, m in ipairs(members) do redis.call('SADD', hashes[m.set], m.member) end
local text = table.concat(moved, ' ')
if text == '' then text = carried end
redis.call('SET', marker, text, 'EX', ttl)
return {0, text}
""",
)


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
        """The key's place in Count.hashes (from 1)."""
        if key not in self.keys:
            self.keys.append(key)
        return self.keys.index(key) + 1


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


def _script_row(game: Finished, plan: _Plan, row: _Row) -> Row:
    player = game.players[row.seat]
    trend: tuple[str, ...] = ()
    if row.scope == "overall" and row.new is not None:
        history = [v for v in row.old_trend.split(",") if v]
        trend = tuple([*history, f"{row.new.shown:.2f}"][-ratings.TREND_LEN :])
    new = row.new
    add = game.outcome.figures(row.seat)
    return Row(
        hash=plan.index(row.key),
        board=plan.index(row.board) if row.board else None,
        uid=str(player.uid),
        rated=new is not None,
        old_mu=row.old[0] if new else "",
        old_sigma=row.old[1] if new else "",
        mu=repr(new.mu) if new else "",
        sigma=repr(new.sigma) if new else "",
        score=repr(new.shown) if new else "0",
        streak=game.outcome.streak_goes_on(row.seat),
        name=player.name,
        trend=trend,
        adds=tuple(Add(name, value) for name, value in sorted(add.items())),
    )


def split(plan: _Plan) -> tuple[_Plan, _Plan]:
    """The plan's group step (the group's rows: its slot) and its people's step."""
    return (
        _Plan([r for r in plan.rows if r.scope == "group"]),
        _Plan([r for r in plan.rows if r.scope != "group"]),
    )


def script_args(game: Finished, plan: _Plan, ttl: int, *, group: bool, carried: str = "") -> Count:
    """One step's arguments (``group``: the group's step, with its marker, else the
    people's, with the game's); ``plan.keys`` holds the keys they name once built."""
    rows = tuple(_script_row(game, plan, row) for row in plan.rows)
    pairs: list[str] = []
    members: list[tuple[str, Any]] = []
    if group and game.in_group:
        ids = [p.uid for p in game.players]
        pairs += [f"{ids[a]}>{ids[b]}" for a, b in ratings.above(game.outcome)]
        people = sorted(ids)
        pairs += [f"{a}&{b}" for i, a in enumerate(people) for b in people[i + 1 :]]
        members += [(people_key(game.chat), p.uid) for p in game.players]
    h2h = plan.index(h2h_key(game.chat, game.kind)) if pairs else None
    if not group:
        if game.in_group:
            members += [(groups_key(p.uid), game.chat) for p in game.players]
        for row in plan.rows:
            if row.scope == "variant":
                uid = game.players[row.seat].uid
                members.append((variants_key(uid, game.kind), game.variant))
    added = tuple(Member(plan.index(k), str(m)) for k, m in members)
    return Count(  # after every plan.index: hashes is complete
        marker=game.group_marker if group else game.marker,
        hashes=tuple(plan.keys),
        ttl=ttl,
        least=MIN_GAMES,
        rows=rows,
        h2h=h2h,
        h2h_fields=tuple(pairs),
        members=added,
        carried=carried,
    )
