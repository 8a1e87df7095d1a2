"""The HTTP server's stop (bot.webapp.server.Server, as bot.runner stops it): a request in
flight is answered first, one that outlasts the grace is cut, and the server closes."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from bot.core.services import services
from testing.harness import Harness
from testing.waits import until
from testing.webapp import PageServer

GRACE = 0.05  # seconds (HTTP_GRACE is 3): the cut case waits it out


def held_readyz(h: Harness, monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, asyncio.Event]:
    """/readyz's ping of Redis held until the second event is set; the first is set once
    a request waits there."""
    entered, go = asyncio.Event(), asyncio.Event()
    redis = services(h.app).store.redis
    ping = redis.ping

    async def held(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        await go.wait()
        return await ping(*args, **kwargs)

    monkeypatch.setattr(redis, "ping", held)
    return entered, go


async def stopping(
    web: PageServer, c: httpx.AsyncClient, entered: asyncio.Event
) -> tuple[asyncio.Task[httpx.Response], asyncio.Task[None]]:
    """A /readyz in flight, then the server told to stop: both, once it no longer listens."""
    asked = asyncio.create_task(c.get("/readyz"))
    await entered.wait()
    server = web._web
    assert server is not None
    stop = asyncio.create_task(web.stop())
    await until(lambda: not any(s.is_serving() for s in server.servers), 5, "still listening")
    return asked, stop


async def test_a_request_in_flight_when_the_server_stops_is_answered_before_it_closes(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, go = held_readyz(harness, monkeypatch)
    async with PageServer(harness) as web, httpx.AsyncClient(base_url=web.root, timeout=10) as c:
        asked, stop = await stopping(web, c, entered)
        assert not stop.done(), "the stop did not wait for the request in flight"
        go.set()
        assert (await asked).text == "ready"
        await stop
        with pytest.raises(httpx.ConnectError):
            await c.get("/healthz")


async def test_a_request_that_outlasts_the_grace_is_cut_and_the_server_closes(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, _ = held_readyz(harness, monkeypatch)  # never answered
    async with PageServer(harness) as web, httpx.AsyncClient(base_url=web.root, timeout=10) as c:
        assert web._web is not None
        web._web.config.timeout_graceful_shutdown = GRACE
        asked, stop = await stopping(web, c, entered)
        await asyncio.wait_for(stop, 5)
        with pytest.raises(httpx.HTTPError):  # cut: no answer
            (await asked).raise_for_status()
    # Said once by the server, and by uvicorn for the request it cancelled.
    said = [r.getMessage() for r in harness.log_errors]
    assert said == [
        f"HTTP requests still open after {GRACE} s: cancelled",
        "Exception in ASGI application\n",
    ]
    harness.log_errors.clear()
