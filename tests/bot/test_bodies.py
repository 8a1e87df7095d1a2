"""Strict request bodies: what a malformed body is refused with, before and after parsing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.bodies import MAX_DEPTH, BadBody, json_object, read


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"[1,2]", "not an object"),
        (b'"abc"', "not an object"),
        (b"1", "not an object"),
        (b"null", "not an object"),
        (b"", "not JSON"),
        (b"{", "not JSON"),
        (b'{"a": NaN}', "not JSON"),
        (b'{"a": \xff}', "not UTF-8"),
        (b"[" * 100_000, "too deep"),
        (b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "too deep"),
        (b"{" + b" " * 2000 + b"}", "too large"),
    ],
)
def test_a_bad_body_is_refused_with_a_short_reason(raw: bytes, reason: str) -> None:
    with pytest.raises(BadBody) as refused:
        json_object(raw, limit=1024 if b" " * 2000 in raw else 10**6)
    assert refused.value.reason == reason


def test_an_object_within_the_bounds_is_read() -> None:
    nested: object = 1
    for _ in range(MAX_DEPTH - 1):
        nested = [nested]
    body = {"data": "x", "n": nested}
    assert json_object(json.dumps(body).encode(), limit=4096) == body
    with pytest.raises(BadBody, match="too deep"):
        json_object(json.dumps({"n": [nested]}).encode(), limit=4096)


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_reading_stops_at_the_limit() -> None:
    assert await read(_chunks([b"ab", b"cd"]), limit=4) == b"abcd"

    async def endless() -> AsyncIterator[bytes]:
        while True:
            yield b"x" * 1000

    with pytest.raises(BadBody, match="too large"):
        await read(endless(), limit=10_000)


@given(st.binary(max_size=200))
def test_any_bytes_give_an_object_or_bad_body(raw: bytes) -> None:
    try:
        assert isinstance(json_object(raw, limit=100), dict)
    except BadBody as refused:
        assert refused.reason in {"too large", "not UTF-8", "not JSON", "not an object", "too deep"}
