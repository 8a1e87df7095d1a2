"""Requests per session and per person: a token bucket each, in this process, on the
bot's clock.

A page asks little: a session, a picture, a stream, a renewal every ten minutes, and a
move per tap. A session that asks far more (a script replaying its token) is answered
429 with the seconds to wait, before the server reads a table or opens a stream for it.
A stream, which holds a connection and draws a picture at once, costs ten requests.
Every request counts for its person too (the user id Telegram signed), whatever session
it comes in: each new ``initData`` is a new session, and a person who fetches them one
after another must not get a fresh burst with each. Like the sessions' buckets, a
person's is this process's (a balancer spreading his requests over N processes lets
him N times as much); no request waits for Redis to be counted.
"""

from __future__ import annotations

from collections.abc import Callable

RATE = 5.0  # requests a second, sustained (a quick player taps about one)
BURST = 60  # at once: a page's start and a quick run of taps
# A person: two pages' start at once (his phone and his desktop), a session's pace after.
PERSON_RATE = RATE
PERSON_BURST = 2 * BURST
STREAM = 10.0  # what opening an event stream costs: a page opens one every ten minutes
_PRUNE_AT = 1024  # buckets held before the full ones are dropped (then twice as many)


class Quota:
    """The buckets of the sessions (or persons) seen lately, by their key
    (:attr:`bot.webapp.auth.Session.key`, the user id)."""

    def __init__(self, clock: Callable[[], float], rate: float = RATE, burst: int = BURST) -> None:
        self._clock = clock
        self._rate = rate
        self._burst = float(burst)
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._prune_at = _PRUNE_AT

    def take(self, key: str, cost: float = 1.0) -> float:
        """Takes ``cost`` requests from ``key``'s bucket: 0.0, or the seconds until it may
        ask again."""
        now = self._clock()
        tokens, when = self._buckets.get(key, (self._burst, now))
        tokens = min(self._burst, tokens + (now - when) * self._rate)
        if tokens < cost:
            self._buckets[key] = (tokens, now)
            return (cost - tokens) / self._rate
        self._buckets[key] = (tokens - cost, now)
        if len(self._buckets) > self._prune_at:
            self._prune(now)
        return 0.0

    def _prune(self, now: float) -> None:
        """Forgets the buckets that have filled up again (as good as never seen)."""
        full = self._burst / self._rate
        self._buckets = {
            key: (tokens, when)
            for key, (tokens, when) in self._buckets.items()
            if now - when < full
        }
        self._prune_at = max(_PRUNE_AT, 2 * len(self._buckets))
