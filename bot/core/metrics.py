"""What an operator watches: Prometheus metrics, served at ``/metrics`` (bot.endpoints).

Each process counts its own (the process's default registry); Prometheus sums the
processes. The names, and who counts them:

- ``cardtable_updates_total{kind}``: updates handled (claimed by bot.handlers.once), by
  kind: tap, command, message, member (the bot's membership of a chat), other.
- ``cardtable_taps_answered_total{how}``: callback queries answered (silent, text, alert;
  bot.core.sender), and ``cardtable_tap_answer_seconds``: from the start of the tap's
  handling in this process to its answer.
- ``cardtable_bot_api_calls_total{method,outcome}``: every Bot API call, by method and
  outcome: ok, flood (a 429: flood control), refused (any other error answer), network
  (no answer) (:class:`Counted`, around PTB's HTTP client).
- ``cardtable_limiter_wait_seconds{how}``: the shared rate limiter's waits
  (bot.core.limiter): ``slept``, a caller waited that long; ``deferred``, a delivery's
  call was put off by that long (bot.service.delivery).
- ``cardtable_delivery_lag_seconds``: from a commit until the delivery it started has
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

import time
from contextvars import ContextVar

from prometheus_client import Counter, Gauge, Histogram
from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.request import BaseRequest, RequestData

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

# When this process started handling the update in hand (time.perf_counter).
_STARTED: ContextVar[float | None] = ContextVar("update_started", default=None)


def started() -> None:
    """An update is handled from now on (in this task and those it starts)."""
    _STARTED.set(time.perf_counter())


def handled(kind: str) -> None:
    UPDATES.labels(kind).inc()


def answered(text: str | None, alert: bool) -> None:
    """A tap was answered."""
    TAPS.labels("alert" if alert else "text" if text else "silent").inc()
    started = _STARTED.get()
    if started is not None:
        TAP_SECONDS.observe(time.perf_counter() - started)


def waited(how: str, seconds: float) -> None:
    if seconds > 0:
        LIMITER_WAIT.labels(how).observe(seconds)


def _outcome(status: int) -> str:
    if 200 <= status < 300:
        return "ok"
    return "flood" if status == 429 else "refused"


class Counted(BaseRequest):
    """PTB's HTTP client (or the tests' fake) with every call counted by method and
    outcome: the one place every Bot API call passes, whichever code made it."""

    def __init__(self, inner: BaseRequest) -> None:
        self.inner = inner

    @property
    def read_timeout(self) -> float | None:
        return self.inner.read_timeout

    async def initialize(self) -> None:
        await self.inner.initialize()

    async def shutdown(self) -> None:
        await self.inner.shutdown()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = DEFAULT_NONE,
        write_timeout: ODVInput[float] = DEFAULT_NONE,
        connect_timeout: ODVInput[float] = DEFAULT_NONE,
        pool_timeout: ODVInput[float] = DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        name = url.rsplit("/", 1)[-1]
        try:
            status, payload = await self.inner.do_request(
                url, method, request_data, read_timeout, write_timeout, connect_timeout,
                pool_timeout,
            )  # fmt: skip
        except Exception:
            API_CALLS.labels(name, "network").inc()
            raise
        API_CALLS.labels(name, _outcome(status)).inc()
        return status, payload
