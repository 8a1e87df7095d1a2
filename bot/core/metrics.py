"""What an operator watches: Prometheus metrics, served at ``/metrics`` (bot.endpoints).

Each process counts its own (the process's default registry); Prometheus sums the
processes. The names, and who counts them:

- ``cardtable_updates_total{kind}``: updates handled (claimed by bot.handlers.once), by
  kind: tap (a button, or an inline result picked), query (an inline query), command,
  message, member (the bot's membership of a chat), other.
- ``cardtable_taps_answered_total{how}``: callback queries answered (silent, text, alert;
  bot.core.sender), and ``cardtable_tap_answer_seconds``: from the tap's arrival to its
  answer (in webhook mode, from when the webhook stored it, :data:`STORED_AT`: its wait
  in the stream included).
- ``cardtable_bot_api_calls_total{method,outcome}``: every Bot API call but the
  poller's getUpdates (which PTB makes around the hook), by method and
  outcome: ok, flood (a 429: flood control), refused (any other error answer), network
  (no answer) (:class:`Counted`, PTB's hook around every call).
- ``cardtable_floods_total{method,chat}``: the 429s among those, by method and kind of
  chat: private, group, ephemeral (a hand in the group), inline (a message posted via the
  bot), none (bot.core.budget.kind_of);
  a call the shared limiter refused itself (held back past its 30 s) counts as one.
- ``cardtable_groups_learned``: the groups whose hands count against the group's own
  limit now, having met a 429 (bot.core.budget); read from Redis when the metrics are
  served, so every process shows the same figure (take the max, not the sum).
- ``cardtable_limiter_wait_seconds{how}``: the shared rate limiter's waits
  (bot.core.limiter): ``slept``, a caller waited that long; ``deferred``, a delivery's
  call was put off by that long (bot.service.messages.rounds).
- ``cardtable_delivery_lag_seconds``: from a commit until a delivery of this process has
  shown it in every message it may change now (group edits coalesced for later are not
  waited for; bot.service.delivery).
- ``cardtable_webapp_streams``: the Mini App's event streams open in this process.
- ``cardtable_redis_down``: 1 while this process finds Redis not answering
  (bot.core.health).
- ``cardtable_webhook_updates_total{outcome}``: webhook posts: stored, refused (bad
  secret or body), unavailable (Redis down or shutting down: 503);
  ``cardtable_inbox_reclaimed_total``: updates taken over from a worker that died
  (bot.inbox).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from telegram import Bot
from telegram.error import NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.ext import BaseRateLimiter

from bot.core.budget import kind_of

# Seconds: a tap's answer should come within tens of milliseconds, a delivery within a
# second or two, a limiter's wait up to its 30 s cap.
_FAST = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_SLOW = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

UPDATES = Counter("cardtable_updates", "Updates handled, by kind", ["kind"])
TAPS = Counter("cardtable_taps_answered", "Callback queries answered, by how", ["how"])
TAP_SECONDS = Histogram(
    "cardtable_tap_answer_seconds", "A tap's handling until its answer", buckets=_FAST
)
API_CALLS = Counter(
    "cardtable_bot_api_calls", "Bot API calls, by method and outcome", ["method", "outcome"]
)
FLOODS = Counter("cardtable_floods", "429s from Telegram, by method and chat", ["method", "chat"])
GROUPS_LEARNED = Gauge("cardtable_groups_learned", "Groups whose hands count in their limit")
LIMITER_WAIT = Histogram(
    "cardtable_limiter_wait_seconds", "Waits of the shared rate limiter", ["how"], buckets=_SLOW
)
DELIVERY_LAG = Histogram(
    "cardtable_delivery_lag_seconds", "A commit until its messages show it", buckets=_SLOW
)
STREAMS = Gauge("cardtable_webapp_streams", "Mini App event streams open")
REDIS_DOWN = Gauge("cardtable_redis_down", "1 while Redis does not answer this process")
WEBHOOK = Counter("cardtable_webhook_updates", "Webhook posts, by outcome", ["outcome"])
RECLAIMED = Counter("cardtable_inbox_reclaimed", "Updates taken over from a dead worker")
# Set as the page is read: what is left to do (work in hand, for a scaler or a drain).
BACKLOG = Gauge("cardtable_inbox_backlog", "Updates stored and not yet handled, by any worker")
DELIVERING = Gauge("cardtable_tables_delivering", "Tables this process is bringing up to date")

# What PTB's rate-limiter hook is given to call, and what that call gives back.
ApiResult = bool | dict[str, Any] | list[dict[str, Any]]
ApiCall = Callable[..., Coroutine[Any, Any, ApiResult]]

# When the update in hand arrived (time.perf_counter).
_STARTED: ContextVar[float | None] = ContextVar("update_started", default=None)
# When the webhook stored the update in hand (time.time; bot.inbox sets it), if it did.
STORED_AT: ContextVar[float | None] = ContextVar("update_stored_at", default=None)


def started() -> None:
    """An update is handled from now on (in this task and those it starts); it arrived
    when the webhook stored it, if it did, or now."""
    stored = STORED_AT.get()
    waited = max(0.0, time.time() - stored) if stored is not None else 0.0
    _STARTED.set(time.perf_counter() - waited)


@functools.cache
def _counter(metric: Counter, *labels: str) -> Counter:
    """``metric``'s child for ``labels``, looked up once: ``labels()`` checks and locks on
    every call (some µs), and every update and Bot API call counts in one. Only for labels
    of a few values (a method, an outcome, a kind), never a chat."""
    return metric.labels(*labels)


def handled(kind: str) -> None:
    _counter(UPDATES, kind).inc()


def answered(text: str | None, alert: bool) -> None:
    """A tap was answered."""
    _counter(TAPS, "alert" if alert else "text" if text else "silent").inc()
    started = _STARTED.get()
    if started is not None:
        TAP_SECONDS.observe(time.perf_counter() - started)


def waited(how: str, seconds: float) -> None:
    if seconds > 0:
        LIMITER_WAIT.labels(how).observe(seconds)


# Every Bot API method by its lower-case spelling: bot.core.sender asks for some in lower
# case (its docstring says why), and a call is counted under one name however it was asked.
_DOCUMENTED = {
    name.lower(): name for name in dir(Bot) if name[:1].islower() and name != name.lower()
}
# and those newer than PTB's Bot API that bot.core.sender makes (ephemeral messages)
_EPHEMERAL = (
    "editEphemeralMessageText",
    "editEphemeralMessageReplyMarkup",
    "deleteEphemeralMessage",
)
_DOCUMENTED |= {name.lower(): name for name in _EPHEMERAL}


def _outcome(error: TelegramError) -> str:
    if isinstance(error, RetryAfter):
        return "flood"
    # TimedOut, or NetworkError itself: no answer (BadRequest is a NetworkError too)
    return "network" if type(error) in (NetworkError, TimedOut) else "refused"


class Counted(BaseRateLimiter[None]):
    """PTB's hook around every Bot API call (the shared rate limiter's, when it is on,
    inside it): each call counted by method and outcome, whichever code made it."""

    def __init__(self, inner: BaseRateLimiter[None] | None) -> None:
        self.inner = inner

    async def initialize(self) -> None:
        if self.inner is not None:
            await self.inner.initialize()

    async def shutdown(self) -> None:
        if self.inner is not None:
            await self.inner.shutdown()

    async def process_request(
        self,
        callback: ApiCall,
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: None,
    ) -> ApiResult:
        method = _DOCUMENTED.get(endpoint.lower(), endpoint)  # as the Bot API spells it
        try:
            if self.inner is None:
                result = await callback(*args, **kwargs)
            else:
                result = await self.inner.process_request(
                    callback, args, kwargs, endpoint, data, rate_limit_args
                )
        except TelegramError as error:
            _counter(API_CALLS, method, _outcome(error)).inc()
            if isinstance(error, RetryAfter):
                FLOODS.labels(method, kind_of(data)).inc()
            raise
        _counter(API_CALLS, method, "ok").inc()
        return result
