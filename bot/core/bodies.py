"""Request bodies read strictly: bounded in size before parsing, one JSON object, bounded depth.

Whatever arrives over HTTP (the Mini App's API, Telegram's webhook) is untrusted. A body is
read at most ``limit`` bytes (a longer one is refused before anything is parsed), decoded
as UTF-8, parsed as JSON without NaN or Infinity, and must be an object nested at most
:data:`MAX_DEPTH` levels. Anything else raises :class:`BadBody` with a short reason that
the server can send back in its 400, and never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable
from typing import Any

MAX_DEPTH = 32  # arrays and objects within each other; a Telegram update nests about 6


class BadBody(ValueError):
    """A body that is not what the endpoint reads; ``reason`` is short and safe to send."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def read(chunks: AsyncIterable[bytes], *, limit: int) -> bytes:
    """The whole body, or :class:`BadBody` as soon as it grows past ``limit`` bytes (so a
    huge body is never held in memory)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BadBody("too large")
        parts.append(chunk)
    return b"".join(parts)


def _constant(name: str) -> Any:
    raise BadBody("not JSON")  # NaN, Infinity, -Infinity: not JSON by RFC 8259


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (iteratively: no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def json_object(raw: bytes, *, limit: int, depth: int = MAX_DEPTH) -> dict[str, Any]:
    """``raw`` parsed as one JSON object, or :class:`BadBody` saying why not."""
    if len(raw) > limit:
        raise BadBody("too large")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadBody("not UTF-8") from None
    try:
        value = json.loads(text, parse_constant=_constant)
    except RecursionError:
        raise BadBody("too deep") from None
    except ValueError as exc:  # JSONDecodeError, or BadBody from _constant
        raise exc if isinstance(exc, BadBody) else BadBody("not JSON") from None
    if not isinstance(value, dict):
        raise BadBody("not an object")
    if _depth(value) > depth:
        raise BadBody("too deep")
    return value
