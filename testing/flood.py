"""Telegram's flood control, as token buckets: a bot that outruns it gets real 429s."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from testing.errors import too_many
from testing.fakeinline import as_json

# Methods that put something into a chat (or change or remove it) when they name one with
# ``chat_id``: what Telegram's flood control counts. Answering a callback query, reading a
# chat or a member, and setting up the bot (commands, webhook) are not limited.
_CHAT_DIRECTED = ("send", "edit", "delete", "copy", "forward", "pin", "unpin")


def chat_directed(method: str, params: dict[str, Any]) -> bool:
    """Whether a call counts against Telegram's message limits (see :class:`FloodLimits`)."""
    return method.startswith(_CHAT_DIRECTED) and "chat_id" in params


def receiver(params: dict[str, Any]) -> int | None:
    """The receiver of the ephemeral message a call sends or names (None: not one)."""
    raw = as_json(params.get("ephemeral_message_parameters", params))
    found = raw.get("receiver_user_id") if isinstance(raw, dict) else None
    return found if isinstance(found, int) else None


@dataclass
class Bucket:
    """A token bucket: ``burst`` calls at once, refilled at ``rate`` calls a second."""

    rate: float
    burst: float
    tokens: float
    stamp: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self) -> float:
        """Seconds until one call fits (0 when one fits now); call :meth:`refill` first."""
        short = 1 - self.tokens
        return 0.0 if short <= 1e-9 else short / self.rate  # float sums of refills


class FloodLimits:
    """Telegram's flood control as token buckets, so that a bot that outruns it gets real
    429s with ``retry_after`` (Telegram publishes no exact algorithm; this is the documented
    order of magnitude). A chat-directed call (:func:`chat_directed`) takes a token from
    each bucket that applies, only when all have one: the whole bot's (``bot_rate`` a
    second), its chat's (``chat_rate``) and, in a group, the group's (``group_per_minute``).
    A refused call takes nothing; its ``retry_after`` is the wait until every bucket has a
    token, in whole seconds as Telegram counts them.

    Telegram publishes no limit for ephemeral messages (docs/ephemeral.md) nor for edits
    of inline messages, so what those count against are switches, for the worlds a bot
    must play well in: ``ephemeral`` "group" (as any call to the group) or "receiver" (as
    a call to his private chat); ``inline`` "chat" (as a call to the chat the message is
    in) or "none" (the bot's limit only). ``busy`` plays a congested network: the calls
    made within each span of ``busy`` seconds reach Telegram together, at its end.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        bot_rate: float = 30.0,
        bot_burst: float = 30.0,
        chat_rate: float = 1.0,
        chat_burst: float = 3.0,
        group_per_minute: float = 20.0,
        group_burst: float = 3.0,
        ephemeral: Literal["group", "receiver"] = "group",
        inline: Literal["chat", "none"] = "chat",
        busy: float = 0.0,
    ) -> None:
        self.clock = clock
        self.busy = busy
        self.ephemeral = ephemeral
        self.inline = inline
        self._shapes = {
            "bot": (bot_rate, bot_burst),
            "chat": (chat_rate, chat_burst),
            "group": (group_per_minute / 60, group_burst),
        }
        self._buckets: dict[tuple[str, Any], Bucket] = {}
        self.refused = 0

    def _bucket(self, kind: str, key: Any, now: float) -> Bucket:
        bucket = self._buckets.get((kind, key))
        if bucket is None:
            rate, burst = self._shapes[kind]
            bucket = self._buckets[kind, key] = Bucket(rate, burst, burst, now)
        bucket.refill(now)
        return bucket

    def admit(self, method: str, params: dict[str, Any], inline_chat: int | None = None) -> None:
        """Takes the call's tokens, or raises Telegram's 429 with ``retry_after``;
        ``inline_chat``: the chat of the inline message the call names, if it names one."""
        now = self.clock()
        if self.busy:
            now = math.ceil(now / self.busy) * self.busy
        if chat_directed(method, params):
            chat: str | None = str(params["chat_id"])
            to = receiver(params)
            if to is not None and self.ephemeral == "receiver":
                chat = str(to)  # counted as his private chat's
        elif inline_chat is not None and method.startswith(_CHAT_DIRECTED):
            chat = str(inline_chat) if self.inline == "chat" else None
        else:
            return
        buckets = [self._bucket("bot", None, now)]
        if chat is not None:
            buckets.append(self._bucket("chat", chat, now))
        if chat is not None and chat.startswith("-"):
            buckets.append(self._bucket("group", chat, now))
        wait = max(b.wait() for b in buckets)
        if wait > 0:
            self.refused += 1
            raise too_many(max(1, math.ceil(wait)))
        for bucket in buckets:
            bucket.tokens -= 1
