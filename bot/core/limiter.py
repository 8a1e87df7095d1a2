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
that chat's bucket past its ``retry_after``, for every process; other chats go on.

Without Redis (an outage) calls are let through: the bot then has little to send anyway,
and a limiter that fails closed would stall what it could deliver.
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
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError
from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

from bot.core import metrics
from bot.core.clock import Clock
from bot.core.keys import KEY_PREFIX

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
PRIVATE = Bucket(interval=1.1, burst=3)  # one private chat
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

ALL_KEY = f"{KEY_PREFIX}:rl:all"


def retry_after_seconds(exc: RetryAfter) -> float:
    """The wait flood control asks for, in seconds."""
    with warnings.catch_warnings():  # PTB 22 warns that the int will become a timedelta
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = exc.retry_after
    return wait.total_seconds() if isinstance(wait, dt.timedelta) else float(wait)


def chat_bucket_key(chat_id: int) -> str:
    return f"{KEY_PREFIX}:rl:c:{chat_id}"


def bucket_of(chat_id: int) -> Bucket:
    return PRIVATE if chat_id > 0 else GROUP


# KEYS[1]: the whole-bot bucket, KEYS[2..]: chat buckets. ARGV[1]: now (ms), ARGV[2]: the
# whole-bot interval (ms); then per request: its chat bucket's index in KEYS, that
# bucket's interval and tolerance, the whole-bot tolerance at its priority (ms). Requests
# are granted in order; each answer is 0 (granted) or the ms to wait.
_ACQUIRE = """
local now = tonumber(ARGV[1])
local all_interval = tonumber(ARGV[2])
local tat = {}
local function get(key)
  if tat[key] == nil then tat[key] = tonumber(redis.call('GET', key) or '0') end
  return math.max(tat[key], now)
end
local out = {}
local n = (#ARGV - 2) / 4
for i = 0, n - 1 do
  local base = 3 + i * 4
  local chat = KEYS[tonumber(ARGV[base])]
  local interval, tolerance = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
  local all_tolerance = tonumber(ARGV[base + 3])
  local a, c = get(KEYS[1]), get(chat)
  local wait = math.max(a - all_tolerance - now, c - tolerance - now, 0)
  if wait > 0 then
    out[i + 1] = math.ceil(wait)
  else
    tat[KEYS[1]] = a + all_interval
    tat[chat] = c + interval
    out[i + 1] = 0
  end
end
for key, value in pairs(tat) do
  if value > now then
    redis.call('SET', key, string.format('%d', value), 'PX', math.ceil(value - now) + 1000)
  end
end
return out
"""

# KEYS[1]: a chat bucket; ARGV: now (ms), the hold (ms), the bucket's tolerance (ms). After
# a 429 nothing may go to that chat before now + hold.
_HOLD = """
local span = tonumber(ARGV[2]) + tonumber(ARGV[3])
local until_ = tonumber(ARGV[1]) + span
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ > current then
  redis.call('SET', KEYS[1], string.format('%d', until_), 'PX', span + 1000)
end
return 1
"""


class Limiter:
    """The shared buckets (see the module docstring)."""

    def __init__(self, redis: aioredis.Redis, clock: Clock | None = None) -> None:
        self.redis = redis
        self.clock = clock or Clock()
        self._acquire = redis.register_script(_ACQUIRE)
        self._hold = redis.register_script(_HOLD)

    async def try_acquire(self, requests: Sequence[tuple[int, Priority]]) -> list[float]:
        """Ask for one call to each chat, in order: 0 for each granted call, else the
        seconds to wait before asking again. One round trip for all of them."""
        if not requests:
            return []
        chats = list(dict.fromkeys(chat for chat, _ in requests))
        keys = [ALL_KEY, *(chat_bucket_key(c) for c in chats)]
        args: list[int] = [int(self.clock() * 1000), int(ALL.interval * 1000)]
        for chat, priority in requests:
            bucket = bucket_of(chat)
            share = int(ALL.tolerance_ms * SHARE[priority])
            args += [chats.index(chat) + 2, int(bucket.interval * 1000), bucket.tolerance_ms]
            args.append(share)
        try:
            waits = await self._acquire(keys=keys, args=args)
        except RedisError:
            return [0.0] * len(requests)
        return [int(w) / 1000 for w in waits]

    async def acquire(self, chat_id: int, priority: Priority) -> float:
        """Wait until a call to ``chat_id`` is allowed: 0, or, when that would take more
        than :data:`MAX_WAIT` (flood control holds the chat), the seconds still to wait."""
        deadline = self.clock() + MAX_WAIT
        while True:
            (wait,) = await self.try_acquire([(chat_id, priority)])
            if wait <= 0:
                return 0.0
            if self.clock() + wait > deadline:
                return wait
            metrics.waited("slept", wait)
            await self.clock.sleep(wait)

    async def hold(self, chat_id: int, seconds: float) -> None:
        """Telegram said 429 for ``chat_id``: no process calls it for ``seconds``."""
        bucket = bucket_of(chat_id)
        args = [int(self.clock() * 1000), math.ceil(seconds * 1000), bucket.tolerance_ms]
        with contextlib.suppress(RedisError):
            await self._hold(keys=[chat_bucket_key(chat_id)], args=args)


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


def _chat_of(data: dict[str, Any]) -> int | None:
    chat = data.get("chat_id")
    if isinstance(chat, int):
        return chat
    if isinstance(chat, str) and chat.lstrip("-").isdigit():
        return int(chat)
    return None


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
        chat = _chat_of(data)
        if chat is not None and endpoint not in UNLIMITED and not _GRANTED.get():
            wait = await self.limiter.acquire(chat, _PRIORITY.get())
            if wait > 0:  # held back for long: refused here, as Telegram would refuse it
                raise RetryAfter(dt.timedelta(seconds=math.ceil(wait)))
        try:
            return await callback(*args, **kwargs)
        except RetryAfter as exc:
            if chat is not None:
                await self.limiter.hold(chat, retry_after_seconds(exc))
            raise


# Calls that name a chat but send nothing into it.
UNLIMITED = frozenset({"getChat", "getChatMember", "getChatAdministrators", "sendChatAction"})
