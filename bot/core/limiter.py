"""Telegram's rate limits, kept by every process of the bot together, in Redis.

Telegram lets a bot make about 30 chat-directed calls a second in all, about one a second
in one chat, and 20 a minute in one group; past that it answers 429 (flood control) and
holds the chat back. A limiter in one process cannot keep several processes under those
figures, so the buckets live in Redis and every grant is one script run (GCRA: each
bucket keeps the *theoretical arrival time* of its next call; a call is allowed when that
time is at most ``tolerance`` ahead of now, and pushes it by the bucket's interval).

Calls have priorities. The whole-bot bucket tolerates less backlog for a lower priority,
so when the bot is busy the next player's prompt still goes out at once while the group
tables and the hands of players who only watch wait, and are coalesced meanwhile: the
sender renders the newest state when their turn comes (see :mod:`bot.service.delivery`).

A 429 that still comes (another bot on the same token, a limit we do not know) pushes
that chat's bucket past its ``retry_after``, for every process; other chats go on. What a
call counts against is its :class:`bot.core.budget.Budget`: a hand in the group, by
default, against its receiver until 429s to two players' hands there teach that its 20
a minute count (kept here, :data:`LEARNED_KEY`, for an hour). The person's cooldown on
sending his hand anew (*My cards*, the place switch) is kept here too.

Without Redis (an outage, a failover: bot.core.health.PAUSES) calls are let through: the
bot then has little to send anyway, and a limiter that fails closed would stall what it
could deliver. An error Redis returns (a script's: ``NOSCRIPT``, ``CROSSSLOT``, a bug) is
raised, never taken for an outage: a limiter that let every call through without a word
would have Telegram answer with 429s.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import math
import warnings
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

import redis.asyncio as aioredis
from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

from bot.core import budget, metrics
from bot.core.budget import Budget
from bot.core.clock import Clock
from bot.core.health import PAUSES
from bot.core.keys import KEY_PREFIX
from bot.core.lua import Args, Key, Keys, Script

log = logging.getLogger(__name__)


class Priority(IntEnum):
    """What a call is for, most urgent first."""

    PROMPT = 0  # a player's move buttons: he is waiting for them
    MOVER = 1  # the hand of the player who just moved (his buttons must go)
    REPLY = 2  # a direct answer to a command or a join
    TABLE = 3  # the group's table message (coalesced)
    WATCHER = 4  # the hand of a player who is not to act (coalesced)
    CLEANUP = 5  # deleting a message that was superseded


@dataclass(frozen=True)
class Bucket:
    """A rate: one call per ``interval`` seconds, ``burst`` calls at once."""

    interval: float
    burst: int

    @property
    def tolerance_ms(self) -> int:
        return int(self.interval * 1000 * (self.burst - 1))


# A little under Telegram's figures: the calls reach it after a network delay that varies,
# so two calls granted exactly one interval apart may arrive closer together.
ALL = Bucket(interval=0.036, burst=25)  # the whole bot: about 28/s (in whole ms)
# One private chat, or one person's hands in a group. Telegram takes a burst of 3; one of
# them is kept as a margin, so that calls held back (a busy machine or network) that reach
# it together still fit.
PRIVATE = Bucket(interval=1.1, burst=2)
GROUP = Bucket(interval=3.3, burst=2)  # one group: at most 20 in any minute
# How much of the whole-bot burst each priority may use: a busy bot keeps the last calls
# of a burst for prompts.
SHARE = {
    Priority.PROMPT: 1.0,
    Priority.MOVER: 0.5,
    Priority.REPLY: 0.5,
    Priority.TABLE: 0.3,
    Priority.WATCHER: 0.2,
    Priority.CLEANUP: 0.2,
}
MAX_WAIT = 30.0  # seconds a blocking caller waits at most; longer, the call is refused

# Every key of the limiter is in the one hash slot {rl}: a grant checks and pushes the
# whole bot's bucket and its chats' in one script (docs/redis.md).
RL = f"{KEY_PREFIX}:{{rl}}"
ALL_KEY = f"{RL}:all"
# The groups whose ephemeral calls count against their own limit (bot.core.budget),
# scored by when that ends (ms on the limiter's clock).
LEARNED_KEY = f"{RL}:learned"


def retry_after_seconds(exc: RetryAfter) -> float:
    """The wait flood control asks for, in seconds."""
    with warnings.catch_warnings():  # PTB 22 warns that the int will become a timedelta
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = exc.retry_after
    return wait.total_seconds() if isinstance(wait, dt.timedelta) else float(wait)


def chat_bucket_key(chat_id: int) -> str:
    return f"{RL}:c:{chat_id}"


def refused_key(chat_id: int) -> str:
    """The players whose hands in the group ``chat_id`` met a 429 lately (bot.core.budget)."""
    return f"{RL}:refused:{chat_id}"


def cooldown_key(user_id: int) -> str:
    return f"{RL}:cool:{user_id}"


def bucket_of(chat_id: int) -> Bucket:
    return PRIVATE if chat_id > 0 else GROUP


class Request(NamedTuple):
    """One call asked for: its chat's bucket and, while its group has learned (bot.core.budget),
    that group's bucket too (intervals and tolerances in ms)."""

    chat: int  # the chat's bucket, by its place in Acquire.buckets (from 1)
    interval: int
    tolerance: int
    all_tolerance: int  # the whole-bot tolerance at the call's priority
    group: int | None  # the group's bucket, by its place in Acquire.buckets; None: none
    group_interval: int
    group_tolerance: int
    group_member: str  # the group, as a member of the learned groups


@dataclass(frozen=True)
class Acquire(Args):
    """Ask for calls, in order."""

    all_key: Key  # the whole-bot bucket
    learned_key: Key  # LEARNED_KEY
    buckets: Keys  # the chat buckets the requests name
    now_ms: int
    all_interval: int
    requests: tuple[Request, ...]


# Requests are granted in order; each answer is 0 (granted) or the ms to wait.
_ACQUIRE = Script(
    Acquire,
    body="""
local tat = {}
local function get(key)
  if tat[key] == nil then tat[key] = tonumber(redis.call('GET', key) or '0') end
  return math.max(tat[key], now_ms)
end
local function learned(member)
  return tonumber(redis.call('ZSCORE', learned_key, member) or '0') > now_ms
end
local out = {}
for i, r in ipairs(requests) do
  local chat = buckets[r.chat]
  local group = nil
  if r.group and learned(r.group_member) then group = buckets[r.group] end
  local a, c = get(all_key), get(chat)
  local wait = math.max(a - r.all_tolerance - now_ms, c - r.tolerance - now_ms, 0)
  local g = 0
  if group then
    g = get(group)
    wait = math.max(wait, g - r.group_tolerance - now_ms)
  end
  if wait > 0 then
    out[i] = math.ceil(wait)
  else
    tat[all_key] = a + all_interval
    tat[chat] = c + r.interval
    if group then tat[group] = g + r.group_interval end
    out[i] = 0
  end
end
for key, value in pairs(tat) do
  if value > now_ms then
    redis.call('SET', key, string.format('%d', value), 'PX', math.ceil(value - now_ms) + 1000)
  end
end
return out
""",
)


@dataclass(frozen=True)
class Flooded(Args):
    """Telegram's 429 holds ``buckets`` for ``hold_ms``; ``group`` may learn."""

    learned_key: Key  # LEARNED_KEY
    refused_key: Key  # the group's refused_key
    buckets: Keys
    now_ms: int
    hold_ms: int
    learn_until: int | None  # when the group ends counting its hands (None: it learns nothing)
    window_ms: int  # budget.LEARN_WINDOW
    learn_from: int  # budget.LEARN_FROM
    group: str
    receiver: str  # whose hand was refused
    tolerances: tuple[int, ...]  # each bucket's, in ms


# One script, so that no process's call goes between the hold and the learning. Nothing
# may go to those chats before now + hold. The receiver joins the group's refused players
# of the last window; once they are learn_from, the group learns until learn_until (what
# ended before now is dropped on the way, the set goes when its last group forgets: every
# end is at most the newest). 1 when the group had not learned it before.
_FLOODED = Script(
    Flooded,
    body="""
for i, bucket in ipairs(buckets) do
  local span = hold_ms + tolerances[i]
  local current = tonumber(redis.call('GET', bucket) or '0')
  if now_ms + span > current then
    redis.call('SET', bucket, string.format('%d', now_ms + span), 'PX', span + 1000)
  end
end
if not learn_until then return 0 end
redis.call('ZADD', refused_key, now_ms, receiver)
redis.call('ZREMRANGEBYSCORE', refused_key, '-inf', now_ms - window_ms - 1)
redis.call('PEXPIRE', refused_key, 10 * window_ms)
if redis.call('ZCARD', refused_key) < learn_from then return 0 end
redis.call('ZREMRANGEBYSCORE', learned_key, '-inf', now_ms)
local new = redis.call('ZADD', learned_key, learn_until, group)
redis.call('PEXPIRE', learned_key, learn_until - now_ms + 1000)
return new
""",
)


@dataclass(frozen=True)
class Cooldown(Args):
    """Start a person's cooldown unless it is running."""

    cooldown_key: Key
    now_ms: int
    cooldown_ms: int


# 1: it was over (and starts again now); 0: it runs (on the limiter's clock, like the
# buckets; the key's own expiry, in Redis's time, only clears it away later).
_COOLDOWN = Script(
    Cooldown,
    body="""
if tonumber(redis.call('GET', cooldown_key) or '0') > now_ms then return 0 end
local ends = now_ms + cooldown_ms
redis.call('SET', cooldown_key, string.format('%d', ends), 'PX', cooldown_ms + 60000)
return 1
""",
)


class Limiter:
    """The shared buckets (see the module docstring); ``ephemeral``: what a hand in the
    group counts against (``EPHEMERAL_GROUP_BUDGET``, bot.core.budget)."""

    def __init__(
        self, redis: aioredis.Redis, clock: Clock | None = None, ephemeral: budget.Mode = "auto"
    ) -> None:
        self.redis = redis
        self.clock = clock or Clock()
        self.ephemeral = ephemeral
        self._acquire = _ACQUIRE.register(redis)
        self._flooded = _FLOODED.register(redis)
        self._cooldown = _COOLDOWN.register(redis)

    async def try_acquire(self, requests: Sequence[tuple[int | Budget, Priority]]) -> list[float]:
        """Ask for one call to each chat (or budget), in order: 0 for each granted call,
        else the seconds to wait before asking again. One round trip for all of them."""
        if not requests:
            return []
        budgets = [b if isinstance(b, Budget) else Budget(b) for b, _ in requests]
        chats = list(dict.fromkeys(c for b in budgets for c in (b.chat, b.group) if c))
        asked = tuple(
            Request(
                chat=chats.index(each.chat) + 1,
                interval=int(bucket_of(each.chat).interval * 1000),
                tolerance=bucket_of(each.chat).tolerance_ms,
                all_tolerance=int(ALL.tolerance_ms * SHARE[priority]),
                group=chats.index(each.group) + 1 if each.group else None,
                group_interval=int(GROUP.interval * 1000),
                group_tolerance=GROUP.tolerance_ms,
                group_member=str(each.group),
            )
            for each, (_, priority) in zip(budgets, requests, strict=True)
        )
        acquire = Acquire(
            all_key=ALL_KEY,
            learned_key=LEARNED_KEY,
            buckets=tuple(chat_bucket_key(c) for c in chats),
            now_ms=int(self.clock() * 1000),
            all_interval=int(ALL.interval * 1000),
            requests=asked,
        )
        try:
            waits = await self._acquire(acquire)
        except PAUSES:
            return [0.0] * len(requests)
        return [int(w) / 1000 for w in waits]

    async def acquire(self, chat: int | Budget, priority: Priority) -> float:
        """Wait until a call to ``chat`` is allowed: 0, or, when that would take more
        than :data:`MAX_WAIT` (flood control holds the chat), the seconds still to wait."""
        deadline = self.clock() + MAX_WAIT
        while True:
            (wait,) = await self.try_acquire([(chat, priority)])
            if wait <= 0:
                return 0.0
            if self.clock() + wait > deadline:
                return wait
            metrics.waited("slept", wait)
            await self.clock.sleep(wait)

    async def flooded(self, chat_id: int, receiver: int | None, seconds: float) -> None:
        """Telegram said 429 to a call into ``chat_id`` (for ``receiver``'s ephemeral
        message there, if not None): that chat, and the receiver's budget, are held for
        ``seconds`` in every process, and a group may learn that its limit counts
        (bot.core.budget)."""
        chats = [chat_id] if receiver is None else [chat_id, receiver]
        now = int(self.clock() * 1000)
        learns = budget.learns(self.ephemeral, chat_id, receiver)
        flooded = Flooded(
            learned_key=LEARNED_KEY,
            refused_key=refused_key(chat_id),
            buckets=tuple(chat_bucket_key(c) for c in chats),
            now_ms=now,
            hold_ms=math.ceil(seconds * 1000),
            learn_until=now + int(budget.LEARNED_FOR * 1000) if learns else None,
            window_ms=int(budget.LEARN_WINDOW * 1000),
            learn_from=budget.LEARN_FROM,
            group=str(chat_id),
            receiver=str(receiver),
            tolerances=tuple(bucket_of(c).tolerance_ms for c in chats),
        )
        with contextlib.suppress(*PAUSES):
            if await self._flooded(flooded):
                log.info("the group %s: its hands count in its limit from now on", chat_id)

    async def cool(self, user_id: int) -> bool:
        """Whether ``user_id`` may have his hand sent anew now (*My cards*, the place
        switch): at most once every :data:`bot.core.budget.RENEW_COOLDOWN` seconds, so
        that a few members tapping together stay within their own budgets. True starts
        his cooldown."""
        now = int(self.clock() * 1000)
        cooldown = Cooldown(cooldown_key(user_id), now, int(budget.RENEW_COOLDOWN * 1000))
        try:
            return bool(await self._cooldown(cooldown))
        except PAUSES:
            return True

    async def learned(self) -> int:
        """How many groups count their hands in their limit now (bot.core.budget)."""
        now = int(self.clock() * 1000)
        return int(await self.redis.zcount(LEARNED_KEY, f"({now}", "+inf"))


# Set by the sender around calls whose grant it already holds (it asks for all the calls
# of one delivery in one round trip).
_GRANTED: ContextVar[bool] = ContextVar("rate_granted", default=False)
_PRIORITY: ContextVar[Priority] = ContextVar("rate_priority", default=Priority.REPLY)


@contextlib.contextmanager
def granted() -> Iterator[None]:
    token = _GRANTED.set(True)
    try:
        yield
    finally:
        _GRANTED.reset(token)


@contextlib.contextmanager
def priority(value: Priority) -> Iterator[None]:
    """Calls made inside wait for the limiter at this priority."""
    token = _PRIORITY.set(value)
    try:
        yield
    finally:
        _PRIORITY.reset(token)


class SharedRateLimiter(BaseRateLimiter[None]):
    """PTB's hook around every Bot API call: chat-directed calls wait for the shared
    buckets (unless the sender holds their grant already); a 429 holds that chat back
    for every process and is passed on, never retried here (retrying would sleep inside
    the call while the caller may hold a table)."""

    def __init__(self, limiter: Limiter) -> None:
        self.limiter = limiter

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def process_request(
        self,
        callback: metrics.ApiCall,
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: None,
    ) -> metrics.ApiResult:
        chat = budget.chat_of(data)
        receiver = budget.receiver_of(data)
        if chat is not None and endpoint not in UNLIMITED and not _GRANTED.get():
            spent: int | Budget = chat
            if receiver is not None:
                spent = budget.of_ephemeral(self.limiter.ephemeral, chat, receiver)
            wait = await self.limiter.acquire(spent, _PRIORITY.get())
            if wait > 0:  # held back for long: refused here, as Telegram would refuse it
                raise RetryAfter(dt.timedelta(seconds=math.ceil(wait)))
        try:
            return await callback(*args, **kwargs)
        except RetryAfter as exc:
            if chat is not None:
                await self.limiter.flooded(chat, receiver, retry_after_seconds(exc))
            raise


# Calls that name a chat but send nothing into it.
UNLIMITED = frozenset({"getChat", "getChatMember", "getChatAdministrators", "sendChatAction"})
