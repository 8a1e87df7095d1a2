"""Redis's answers as text: redis-py hands back bytes or str, as its client decodes or not,
and the bot reads names and members the same either way."""

from __future__ import annotations


def text(raw: object) -> str:
    """``raw``, an answer's bytes or any other value, as text."""
    return raw.decode() if isinstance(raw, bytes) else str(raw)
