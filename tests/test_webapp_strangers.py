"""The Mini App probed by someone who is not at the table, over HTTP against the running
server: which table a page may open, a credential that probes, malformed credentials, and
work done for nothing. Each test is a point of issue 35 (they fail on the code before it).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.webapp import api, page
from testing.fakegram import FakeTelegram
from testing.fakeserver import SECRET_HEADER
from testing.harness import AppFactory, Harness, harness_on
from testing.webapp import bearer, client, exchange, init_data, page_server, table_for_two

HOOK_SECRET = "s3cret-hook"


@contextlib.asynccontextmanager
async def _served(h: Harness) -> AsyncIterator[httpx.AsyncClient]:
    async with page_server(h) as root, httpx.AsyncClient(base_url=root, timeout=10) as c:
        yield c


def _guarded(r: httpx.Response) -> bool:
    """The answer carries the security headers (an API answer: never cached)."""
    return (
        r.headers.get("content-security-policy") == page.POLICY
        and r.headers.get("x-content-type-options") == "nosniff"
        and r.headers.get("referrer-policy") == "no-referrer"
        and r.headers.get("cache-control") == "no-store"
    )


MALFORMED_PAGE = ["%C3%A9", "%FF%FE"]  # a hash that is not ASCII once decoded


@pytest.mark.parametrize("hash_", MALFORMED_PAGE)
async def test_a_malformed_initdata_is_a_401_with_the_headers(harness: Harness, hash_: str) -> None:
    """No 500, no traceback in the log (the harness fails a test that logs an error)."""
    h = harness
    headers = {"Authorization": f"tma auth_date={int(time.time())}&hash={hash_}"}
    async with _served(h) as c:
        r = await c.post("/app/api/session", params={"t": "x"}, headers=headers)
        assert r.status_code == 401 and r.json() == {"error": "unauthorized"}
        assert _guarded(r)
    assert h.log_errors == []


@pytest.fixture
async def hooked(
    request: pytest.FixtureRequest, server: FakeTelegram, make_app: AppFactory, fake_redis: Any
) -> AsyncIterator[Harness]:
    """The bot in webhook mode."""
    hook = {"webhook_url": "https://cards.example.org/hook", "webhook_secret": HOOK_SECRET}
    async for h in harness_on(request, server, make_app, fake_redis, **hook):
        yield h


@pytest.mark.parametrize("secret", ["é".encode(), b"\xff" * 12, b"s3cret-hoo\xe9"], ids=range(3))
async def test_a_malformed_webhook_secret_is_a_403_with_the_headers(
    hooked: Harness, secret: bytes
) -> None:
    h = hooked
    async with _served(h) as c:
        r = await c.post("/hook", json={"update_id": 1}, headers={SECRET_HEADER: secret})
        assert r.status_code == 403 and r.json() == {"error": "forbidden"}
        assert r.headers.get("content-security-policy") == page.POLICY
        assert r.headers.get("x-content-type-options") == "nosniff"
    assert h.log_errors == []


async def test_an_answer_the_server_did_not_plan_carries_the_headers_too(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault (here a table that cannot be read for a reason nobody foresaw) is a 500,
    with the same headers as every other answer."""
    h = harness
    _, (ann, _), param = await table_for_two(h, "durak")

    async def broken(*args: Any) -> Any:
        raise RuntimeError("an unforeseen fault")

    async with _served(h) as c:
        ticket = bearer((await exchange(c, init_data(ann), param)).json()["token"])
        monkeypatch.setattr(api, "load", broken)
        r = await c.get("/app/api/state", headers=ticket)
        assert r.status_code == 500 and _guarded(r)
    assert [e.getMessage() for e in h.log_errors] == ["Exception in ASGI application\n"]
    h.log_errors.clear()  # the fault was the test's own


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(
    fields=st.dictionaries(
        st.sampled_from(["hash", "user", "start_param", "signature", "query_id", "chat_instance"]),
        st.text(max_size=40),
    ),
    tail=st.binary(max_size=40),
)
async def test_any_initdata_or_token_is_a_session_or_a_401(
    harness: Harness, fields: dict[str, str], tail: bytes
) -> None:
    h = harness
    fresh = {"auth_date": str(int(time.time()))}  # past the age check, to the rest
    raw = urlencode(fresh | fields).encode() + tail.replace(b"\r", b"").replace(b"\n", b"")
    async with client(h) as c:
        for scheme in (b"tma ", b"Bearer "):
            r = await c.post("/app/api/session", headers={"Authorization": scheme + raw})
            assert r.status_code == 401, (scheme + raw, r.status_code)
    assert h.log_errors == []
