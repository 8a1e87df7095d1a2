"""One ASGI app on ``PORT``: the Mini App page and its API, beside the routes of
bot.endpoints (Telegram's webhook, health, readiness, metrics).

This is python-telegram-bot's custom-webhook setup (Starlette and uvicorn beside the
Application); bot.runner starts and stops it, in webhook and in polling mode.

Live updates are server-sent events. Every commit publishes the table's new version
(:meth:`bot.core.store.Store.changes`); each process holds one subscription to those notices
for all its pages, and loads a table its pages watch once per new version, for all of
them. So an update costs the server one Redis read (an HGETALL) per process that has the
table open, however many pages there watch it, and nothing between changes: no page and
no table is polled. A subscription that breaks (Redis restarts) is made again, and every
watched table is read once then, since the notices sent meanwhile are lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

import uvicorn
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bot import endpoints
from bot.core import metrics
from bot.core.config import Settings
from bot.core.i18n import lang_of, t
from bot.core.services import AnyApp, services
from bot.core.store import Snapshot
from bot.webapp import api
from bot.webapp.auth import Checker, Forged, Session, Viewer

log = logging.getLogger(__name__)

KEEPALIVE = 15.0  # seconds between two comments on a quiet event stream (proxies)
PAGE_PATH = "/app/"
RETRY = 1.0  # seconds before a broken subscription is made again
HOST = "0.0.0.0"  # every interface, behind the load balancer (bench/load.py: loopback)


@dataclass
class _Watch:
    """One watched table in this process: its newest snapshot, and who waits for it."""

    snap: Snapshot = field(default_factory=lambda: Snapshot(None, version=-1))  # not read yet
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    pages: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one read at a time


class Hub:
    """The tables this process's pages watch, and the one subscription that tells it of
    their changes (see the module docstring)."""

    def __init__(self, application: AnyApp) -> None:
        self._app = application
        self._watches: dict[str, _Watch] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self.closed = False

    async def close(self) -> None:
        """The server stops: every page's stream ends now (its page reconnects, to another
        worker), rather than holding the shutdown up."""
        self.closed = True
        self._subscribed.set()  # a page waiting for Redis to come back waits no more
        for watch in self._watches.values():
            watch.changed.set()
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.wait([self._listener])  # its end; a cancellation of ours goes on

    @contextlib.asynccontextmanager
    async def watch(self, key: str) -> AsyncIterator[_Watch]:
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(), name="webapp:changes")
        await self._subscribed.wait()
        watch = self._watches.setdefault(key, _Watch())
        watch.pages += 1
        metrics.STREAMS.inc()
        try:
            if not self.closed:
                await self._read(key, watch, 0)
            yield watch
        finally:
            metrics.STREAMS.dec()
            watch.pages -= 1
            if watch.pages == 0 and self._watches.get(key) is watch:
                del self._watches[key]

    async def _read(self, key: str, watch: _Watch, version: int) -> None:
        """Load the table when what the watch holds is older than ``version``, and wake
        its pages."""
        async with watch.lock:
            if watch.snap.version >= version:
                return
            watch.snap = await api.load(self._app, key)
            old, watch.changed = watch.changed, asyncio.Event()
            old.set()

    async def _listen(self) -> None:
        svc = services(self._app)
        while True:
            try:
                async with svc.store.changes() as changes:
                    for key, known in list(self._watches.items()):
                        await self._read(key, known, known.snap.version + 1)  # missed ones
                    self._subscribed.set()
                    async for key, version in changes:
                        if watch := self._watches.get(key):
                            await self._read(key, watch, version)
            except RedisError as exc:
                self._subscribed.clear()  # new pages wait for the subscription
                svc.health.failed(exc)  # reported once for the whole outage
                await asyncio.sleep(RETRY)


# The page and the files it loads, by the name it asks for: its script and style are files
# of their own, so that the page runs under a policy that allows no inline code.
ASSETS = {
    "": ("index.html", "text/html; charset=utf-8"),
    "table.js": ("table.js", "text/javascript; charset=utf-8"),
    "table.css": ("table.css", "text/css; charset=utf-8"),
}


def _assets() -> dict[str, tuple[bytes, str]]:
    static = resources.files("bot.webapp").joinpath("static")
    return {
        path: (static.joinpath(name).read_bytes(), kind) for path, (name, kind) in ASSETS.items()
    }


def asgi(application: AnyApp, settings: Settings, hub: Hub) -> Starlette:
    """The server's routes. The page itself needs no credential (it holds nothing). It
    trades its ``initData`` once for a session (``POST api/session`` with
    ``Authorization: tma <initData>``) and renews it there before it runs out
    (``Authorization: Bearer <token>``); every other call carries the token:
    ``Authorization: Bearer <token>``, or ``s`` in the query of the event stream
    (EventSource cannot set headers). See :mod:`bot.webapp.auth`."""
    checker = Checker(settings.telegram_bot_token.get_secret_value())
    assets = _assets()
    svc = services(application)
    clock = svc.clock

    def session(request: Request, token: str | None = None) -> Session:
        header = request.headers.get("authorization", "")
        return checker.session(token or header.removeprefix("Bearer "), clock())

    def table(request: Request, who: Viewer) -> tuple[str, str] | None:
        """The table of his session; None when the request names another one."""
        asked = request.query_params.get("t")
        return None if asked and asked != who.table else api.table_of(who.table)

    def picture(snap: Snapshot, who: Viewer, game_id: str) -> dict[str, Any] | None:
        """His picture of the table; None when it is gone. A player's page follows his
        table into the next game (Play again); anyone else's shows only the game it named."""
        table = snap.table
        if table is None or table.state is None:
            return None
        if table.game_id != game_id and table.seat_of(who.user_id) is None:
            return None
        return api.picture(snap, who, clock())

    def issued(viewer: Viewer, until: float) -> Response:
        now = clock()
        token, expires = checker.issue(viewer, now, until)
        return JSONResponse({"token": token, "expires_in": expires - now})

    async def asset(request: Request) -> Response:
        body, kind = assets[request.url.path.removeprefix(PAGE_PATH)]
        return Response(body, media_type=kind)

    async def open_session(request: Request) -> Response:
        """initData for a session (once: a replay is refused), or a session renewed."""
        header = request.headers.get("authorization", "")
        try:
            if not header.startswith("tma "):
                renewed = session(request)
                return issued(renewed.viewer, renewed.until)
            opening = checker.init_data(header.removeprefix("tma "))
        except Forged:
            return JSONResponse({"error": "unauthorized"}, 401)
        param = request.query_params.get("t") or opening.viewer.table
        if api.table_of(param) is None:
            return JSONResponse({"error": "no table"}, 404)
        if not await svc.store.spend(opening.signature, opening.until):
            return JSONResponse({"error": "unauthorized"}, 401)  # a replay
        return issued(replace(opening.viewer, table=param), opening.until)

    async def state(request: Request) -> Response:
        try:
            who = session(request).viewer
        except Forged:
            return JSONResponse({"error": "unauthorized"}, 401)
        where = table(request, who)
        if where is None:
            return JSONResponse({"error": "another table"}, 403)
        shown = picture(await api.load(application, where[0]), who, where[1])
        return JSONResponse(shown) if shown else JSONResponse({"error": "gone"}, 404)

    async def move(request: Request) -> Response:
        try:
            who = session(request).viewer
            body = await request.json()
        except Forged:
            return JSONResponse({"error": "unauthorized"}, 401)
        except ValueError:
            return JSONResponse({"error": "bad request"}, 400)
        status, refusal = await api.move(application, who, body.get("data"))
        return JSONResponse({"ok": refusal is None, "refusal": refusal}, status)

    async def events(request: Request) -> Response:
        """The stream ends when the session does (the page reconnects with its renewed
        token)."""
        try:
            held = session(request, request.query_params.get("s", ""))
        except Forged:
            return JSONResponse({"error": "unauthorized"}, 401)
        who = held.viewer
        where = table(request, who)
        if where is None:
            return JSONResponse({"error": "another table"}, 403)
        key, game_id = where

        def live() -> float:
            """Seconds until the next keep-alive, or until the session ends (0: it has)."""
            return 0.0 if hub.closed else max(0.0, min(KEEPALIVE, held.expires - clock()))

        async def stream() -> AsyncIterator[str]:
            async with hub.watch(key) as watch:
                while live():
                    shown = picture(watch.snap, who, game_id)
                    yield f"data: {json.dumps(shown, ensure_ascii=False)}\n\n"
                    waiting = watch.changed
                    while wait := live():
                        # asyncio.timeout, as 3.11's wait_for can lose the cancellation
                        # that comes when the page goes away
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(wait):
                                await waiting.wait()
                            break
                        yield ": keep-alive\n\n"

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    routes = [
        *endpoints.routes(application, settings),  # webhook, health, readiness, metrics
        *(Route(PAGE_PATH + path, asset) for path in ASSETS),
        Route(PAGE_PATH + "api/session", open_session, methods=["POST"]),
        Route(PAGE_PATH + "api/state", state),
        Route(PAGE_PATH + "api/move", move, methods=["POST"]),
        Route(PAGE_PATH + "api/events", events),
    ]

    async def unavailable(request: Request, exc: Exception) -> Response:
        """Redis does not answer: an outage (bot.core.health reports it once), and the page says
        what a tap would be told."""
        svc.health.failed(exc)
        try:
            lang = lang_of(session(request, request.query_params.get("s")).viewer.language_code)
        except Forged:
            lang = lang_of(None)
        return JSONResponse({"refusal": t(lang, "common.unavailable")}, 503)

    return Starlette(routes=routes, exception_handlers={RedisError: unavailable})


class Server(uvicorn.Server):
    """uvicorn serving :func:`asgi` and bot.endpoints; at shutdown it ends the pages' event
    streams first."""

    def __init__(self, application: AnyApp, settings: Settings, **config: Any) -> None:
        self.hub = Hub(application)
        app = asgi(application, settings, self.hub)
        super().__init__(uvicorn.Config(app, log_level="warning", **config))

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self.hub.close()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The signals are bot.runner's, which stops this server last, once the updates
        it took are handled (uvicorn's own handling would stop it first)."""
        yield
