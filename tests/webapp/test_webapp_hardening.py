"""The Mini App probed as an attacker would: malformed bodies, floods of streams and requests,
the headers of every answer, the token's way, a foreign Host, compression (issue 20)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from importlib import resources

import httpx
import pytest

from bot.webapp import auth, page, quota, streams
from bot.webapp.auth import Checker
from testing.chats import FakeUser
from testing.clock import Clock
from testing.harness import Harness
from testing.tabletop import stored
from testing.webapp import (
    PageServer,
    bearer,
    exchange,
    init_data,
    page_files,
    said,
    shell_scripts,
    table_for_two,
    token,
)


@pytest.mark.parametrize(
    ("raw", "reason"),
    # Every reason a body is refused for is test_bodies.py's; here, that the endpoint answers
    # it with a 400 and changes nothing, and that its own limit is below 5 kB.
    [(b"{", "not JSON"), (b'{"data": "' + b"x" * 5000 + b'"}', "too large")],
)
async def test_a_malformed_move_body_is_a_400_with_a_reason(
    harness: Harness, asgi: httpx.AsyncClient, raw: bytes, reason: str
) -> None:
    h = harness
    top, (ann, _), param = await table_for_two(h, "durak")
    before = await stored(h, top.group)
    headers = {**bearer(await token(asgi, ann, param)), "Content-Type": "application/json"}
    r = await asgi.post("/app/api/move", content=raw, headers=headers)
    assert r.status_code == 400
    assert r.json()["error"] == reason
    assert await stored(h, top.group) == before


@contextlib.asynccontextmanager
async def _opened(c: httpx.AsyncClient, ticket: str) -> AsyncIterator[httpx.Response]:
    """A page's stream, asked for gzip as a browser asks: never compressed nor held back."""
    headers = {**bearer(ticket), "Accept-Encoding": "gzip"}
    async with c.stream("GET", "/app/api/events", headers=headers) as r:
        assert r.status_code == 200 and "content-encoding" not in r.headers
        assert (r.headers["cache-control"], r.headers["x-accel-buffering"]) == ("no-store", "no")
        yield r


async def _first(r: httpx.Response) -> AsyncIterator[str]:
    lines = r.aiter_lines()
    first = await anext(lines)
    assert first.startswith("data: ") and json.loads(first[6:])["version"] >= 0
    return lines


async def _next(lines: AsyncIterator[str]) -> str:
    """The stream's next line that is not the blank one ending an event."""
    async for line in lines:
        if line:
            return line
    raise AssertionError("the stream ended")


@pytest.fixture
async def served(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[streams.Hub, httpx.AsyncClient]]:
    """The web fixture's client (conftest.py) with the hub of its server's streams."""
    monkeypatch.setattr(streams, "KEEPALIVE", 0.05)
    async with (
        PageServer(harness) as server,
        httpx.AsyncClient(base_url=server.root, timeout=10) as web,
    ):
        yield server.hub, web


async def test_a_session_s_new_stream_ends_its_oldest(
    harness: Harness, served: tuple[streams.Hub, httpx.AsyncClient]
) -> None:
    h, (hub, web) = harness, served
    _, (ann, _), param = await table_for_two(h, "durak", turn_time=0)
    async with contextlib.AsyncExitStack() as stack:
        ticket = await token(web, ann, param)
        opened = []
        for _ in range(streams.PER_SESSION + 1):
            opened.append(await _first(await stack.enter_async_context(_opened(web, ticket))))
        # The oldest, closed for the newest, says nothing: its page opens it again at once.
        assert await said(opened[0]) == []
        assert hub.streams.live == streams.PER_SESSION


async def test_a_user_s_streams_are_bounded_and_the_process_s_refused_past_its_ceiling(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    _, (ann, bob), param = await table_for_two(h, "durak", turn_time=0)
    monkeypatch.setattr(streams, "PER_PROCESS", streams.PER_USER + 1)
    monkeypatch.setattr(streams, "KEEPALIVE", 0.05)
    async with (  # the server stops at the end: every place it gave is back
        PageServer(h) as server,
        httpx.AsyncClient(base_url=server.root, timeout=5) as web,
        contextlib.AsyncExitStack() as stack,
    ):
        hub = server.hub
        # Ann's pages in as many sessions (devices) as she likes: her oldest stream ends.
        hers = []
        for _ in range(streams.PER_USER + 1):
            r = await stack.enter_async_context(_opened(web, await token(web, ann, param)))
            hers.append(await _first(r))
        assert await said(hers[0]) == []
        # Bob's stream takes the process's last place; the next user is told it is busy.
        his = await _first(
            await stack.enter_async_context(_opened(web, await token(web, bob, param)))
        )
        assert hub.streams.live == streams.PER_PROCESS
        cid = await token(web, h.user("Cid"), param)
        r = await web.get("/app/api/events", headers=bearer(cid))
        assert r.status_code == 503 and r.json() == {"error": "busy"}
        assert r.headers["retry-after"] == str(page.BUSY_RETRY)
        assert (await _next(his)).startswith(": keep-alive")  # his goes on
    assert hub.streams.live == 0 and not hub._watches  # every place given back


@pytest.mark.parametrize("limit", ["IDLE", "SESSION"])
async def test_a_stream_ends_when_idle_and_with_its_session(
    harness: Harness,
    served: tuple[streams.Hub, httpx.AsyncClient],
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    limit: str,
) -> None:
    """A stream with nothing new for IDLE seconds ends, and one opened with a token does
    not outlive it (the page opens it again, renewed)."""
    h, (hub, web) = harness, served
    _, (ann, _), param = await table_for_two(h, "durak", turn_time=0)
    monkeypatch.setattr(streams if limit == "IDLE" else auth, limit, 60.0)  # the other: longer
    ticket = await token(web, ann, param)
    async with _opened(web, ticket) as r:
        lines = await _first(r)
        assert (await _next(lines)).startswith(": keep-alive")  # open, quiet
        await clock.advance(60.0)
        rest = await said(lines)  # it ends
    assert not [line for line in rest if line.startswith("data: ")]
    assert hub.streams.live == 0
    if limit == "SESSION":
        assert (await web.get("/app/api/events", headers=bearer(ticket))).status_code == 401


async def test_a_session_asking_too_often_gets_429_until_time_passes(
    harness: Harness, asgi: httpx.AsyncClient, clock: Clock
) -> None:
    h = harness
    _, (ann, _), param = await table_for_two(h, "durak")
    ticket = bearer(await token(asgi, ann, param))  # the exchange counts
    answered = 1
    while (await asgi.get("/app/api/state", headers=ticket)).status_code == 200:
        answered += 1
        assert answered < 2 * quota.BURST  # (real time passes too: a few come back)
    assert answered >= quota.BURST
    r = await asgi.get("/app/api/events", headers=ticket)
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert (await asgi.post("/app/api/move", json={"data": "x"}, headers=ticket)).status_code == 429
    # Another user's session is not held back by it.
    other = bearer(await token(asgi, h.user("Cid"), param))
    assert (await asgi.get("/app/api/state", headers=other)).status_code == 200
    await clock.advance(1.0)
    assert (await asgi.get("/app/api/state", headers=ticket)).status_code == 200


async def test_every_api_answer_is_never_cached_and_the_page_has_its_policy(
    harness: Harness, asgi: httpx.AsyncClient
) -> None:
    h = harness
    _, (ann, _), param = await table_for_two(h, "durak")
    r = await exchange(asgi, init_data(ann), param)
    answers = [r]
    ticket = bearer(r.json()["token"])
    answers.append(await asgi.get("/app/api/state", headers=ticket))  # his hand
    answers.append(await asgi.post("/app/api/session", headers=ticket))  # a token
    answers.append(await asgi.post("/app/api/move", json={"data": "x"}, headers=ticket))
    answers.append(await asgi.get("/app/api/state"))  # 401
    answers.append(await asgi.post("/app/api/move", content=b"[1]", headers=ticket))  # 400
    for answer in answers:
        assert answer.headers["cache-control"] == "no-store", answer.request.url
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
    shown = await asgi.get("/app/")
    parts = shown.headers["content-security-policy"].split("; ")
    policy = dict(part.split(" ", 1) for part in parts)
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == policy["style-src"] == policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"].split() == list(page.TELEGRAM_WEB)
    assert "https://web.telegram.org" in policy["frame-ancestors"].split()
    assert shown.headers["x-content-type-options"] == "nosniff"
    assert shown.headers["referrer-policy"] == "no-referrer"
    html = shown.text
    assert "<script>" not in html and "<style" not in html and " style=" not in html


async def test_the_token_is_never_in_a_url(harness: Harness, asgi: httpx.AsyncClient) -> None:
    """The stream takes the token from its header only, and the page sends it so."""
    h = harness
    _, (ann, _), param = await table_for_two(h, "durak")
    ticket = await token(asgi, ann, param)
    r = await asgi.get("/app/api/events", params={"s": ticket})
    assert r.status_code == 401
    static = resources.files("bot.webapp").joinpath("static")
    script = "\n".join(static.joinpath(name).read_text() for name in shell_scripts())
    assert "EventSource" not in script and "&s=" not in script
    fetches = [line for line in script.splitlines() if "fetch(" in line]
    assert fetches and all("token" not in line.split("{", 1)[0].lower() for line in fetches)


async def test_a_redirect_never_names_the_request_s_host(asgi: httpx.AsyncClient) -> None:
    r = await asgi.get("/app", params={"t": "x"}, headers={"Host": "evil.example"})
    assert r.status_code == 307 and r.headers["location"] == "app/?t=x"
    r = await asgi.get("/app/api/state/", headers={"Host": "evil.example"})
    assert r.status_code == 404 and "location" not in r.headers


async def test_the_page_is_compressed_for_a_client_that_takes_gzip(asgi: httpx.AsyncClient) -> None:
    raw = resources.files("bot.webapp").joinpath("static/table.js").read_bytes()
    for path in ("", *page_files()):  # the document and every file it loads
        r = await asgi.get("/app/" + path, headers={"Accept-Encoding": "gzip"})
        assert r.headers["content-encoding"] == "gzip", path
        assert r.headers["vary"] == "Accept-Encoding"
    r = await asgi.get("/app/table.js", headers={"Accept-Encoding": "gzip"})
    assert r.content == raw  # httpx took the gzip off
    assert int(r.headers["content-length"]) < len(raw) / 2
    for refused in ("identity", "gzip;q=0", ""):
        r = await asgi.get("/app/table.js", headers={"Accept-Encoding": refused})
        assert "content-encoding" not in r.headers and r.content == raw


def test_the_session_key_is_the_same_through_renewals() -> None:
    ann = FakeUser(id=7, first_name="Ann")
    checker = Checker("1:token")
    opening = checker.init_data(init_data(ann, token="1:token"))
    ticket, _ = checker.issue(opening.viewer, 0.0, opening.until, opening.key)
    held = checker.session(ticket, 1.0)
    renewed = checker.session(checker.issue(held.viewer, 2.0, held.until, held.key)[0], 3.0)
    assert opening.key == held.key == renewed.key
    assert checker.init_data(init_data(ann, token="1:token")).key != opening.key  # same second
