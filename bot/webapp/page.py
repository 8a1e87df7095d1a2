"""The Mini App's routes: the page, its files, and its API, each endpoint one method.

The page itself needs no credential (it holds nothing). It trades its ``initData`` once
for a session (``POST api/session`` with ``Authorization: tma <initData>``), and renews it
there before it runs out (``Authorization: Bearer <token>``); every other call carries
the token in that header, the event stream too (the page reads it with ``fetch``, so that
no token is ever in a URL, where proxies' logs would keep it). See :mod:`bot.webapp.auth`.

Which table a session is for comes from signed data only (:meth:`MiniApp._admitted`):
the ``start_param`` Telegram signs into the ``initData`` (the group's direct link), for
anyone, in the public view; or the address's ``?t=`` (a private hand's button), for a
person seated at that table only. Anything else is 403, the same whether the table
exists or not. The ``initData`` is spent the moment it is checked, whatever comes of it.

Whatever goes wrong is answered in one place, :meth:`MiniApp.errors`: a forged, expired,
malformed or replayed credential 401, a malformed body 400 with its reason
(:mod:`bot.core.bodies`), a session or a person asking too often 429
(:mod:`bot.webapp.quota`), a process holding all the streams it may 503
(:mod:`bot.webapp.streams`), Redis not answering 503 with what a tap would be told, and
so is a table no replica confirmed in time (the page shows only what one holds:
:func:`bot.webapp.api.load`).
:class:`Guard`, the outermost layer of the server (:func:`bot.webapp.server.asgi`), puts
the headers on every answer, a failure's 500 included: never cached (the API), a
Content-Security-Policy that lets the page run its own script and style only and be
framed by Telegram's web clients only, no sniffing, no referrer.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import PurePath
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.core import bodies
from bot.core.bodies import BadBody
from bot.core.config import Settings
from bot.core.health import UNREAD
from bot.core.i18n import lang_of, t
from bot.core.replicas import Unconfirmed
from bot.core.services import AnyApp, services
from bot.core.store import Snapshot
from bot.screens import registry
from bot.webapp import api, quota
from bot.webapp.auth import Checker, Forged, Opening, Session, Viewer
from bot.webapp.quota import Quota
from bot.webapp.streams import Hub

PAGE_PATH = "/app/"
API_PATH = PAGE_PATH + "api/"
MOVE_BODY = 1024  # bytes: a move is {"data": "<at most 64 bytes of callback data>"}
BUSY_RETRY = 5  # seconds a page is told to wait when the process holds all its streams
# The page (index.html, served at /app/) and the files it loads (every other file of
# static/, by its name), by what they are: the page's script and style are files of their
# own, so that the page runs under a policy that allows no inline code.
KINDS = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",  # its icon: a browser asks for one, Telegram's view does not
}
INDEX = "index.html"
# Telegram's web clients, which show a Mini App in a frame (its apps use a web view): all
# of them at web.telegram.org (/k/, /a/), the one origin the page talks to (bridge.js).
TELEGRAM_WEB = ("https://web.telegram.org",)
POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors " + " ".join(TELEGRAM_WEB),
    )
)


class Refused(Exception):
    """A request the server will not serve: its status, a short reason, any headers."""

    def __init__(self, status: int, error: str, headers: Mapping[str, str] | None = None):
        super().__init__(error)
        self.status = status
        self.error = error
        self.headers = dict(headers or {})


@dataclass(frozen=True)
class _Asset:
    body: bytes
    gzipped: bytes
    kind: str


def _assets() -> dict[str, _Asset]:
    """The files the page may ask for, by their path under /app/: static/'s, and the
    games' drawings the registry joins (bot.screens.registry.page_files)."""
    found = {}
    for file in resources.files("bot.webapp").joinpath("static").iterdir():
        kind = KINDS.get(PurePath(file.name).suffix)
        if kind is not None:
            body = file.read_bytes()
            path = "" if file.name == INDEX else file.name
            found[path] = _Asset(body, gzip.compress(body, mtime=0), kind)
    for path, (body, kind) in registry.page_files().items():
        found[path] = _Asset(body, gzip.compress(body, mtime=0), kind)
    return found


def _takes_gzip(accept: str) -> bool:
    """Whether an ``Accept-Encoding`` admits gzip (``gzip;q=0`` refuses it)."""
    for item in accept.split(","):
        coding, _, params = item.partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=")
            try:
                return not params.strip() or float(q) > 0
            except ValueError:
                return False
    return False


def _error(status: int, error: str, headers: Mapping[str, str] | None = None) -> Response:
    return JSONResponse({"error": error}, status, headers=dict(headers or {}))


class MiniApp:
    """The page's endpoints for one bot: its credentials' checker, its pages' hub, its
    sessions' quota."""

    def __init__(self, application: AnyApp, settings: Settings, hub: Hub) -> None:
        self.app = application
        self.svc = services(application)
        self.clock = self.svc.clock
        self.hub = hub
        self.checker = Checker(settings.telegram.telegram_bot_token.get_secret_value())
        self.quota = Quota(self.clock)
        self.people = Quota(self.clock, quota.PERSON_RATE, quota.PERSON_BURST)
        self.assets = _assets()

    def routes(self) -> list[Route]:
        return [
            Route(PAGE_PATH.rstrip("/"), self.to_page),
            *(Route(PAGE_PATH + path, self.asset) for path in self.assets),
            Route(API_PATH + "session", self.open_session, methods=["POST"]),
            Route(API_PATH + "state", self.state),
            Route(API_PATH + "move", self.move, methods=["POST"]),
            Route(API_PATH + "events", self.events),
        ]

    def errors(self) -> dict[Any, Callable[[Request, Exception], Any]]:
        """What each failure is answered with (Starlette's exception handlers)."""

        async def forged(request: Request, exc: Exception) -> Response:
            return _error(401, "unauthorized")

        async def bad_body(request: Request, exc: Exception) -> Response:
            assert isinstance(exc, BadBody)
            return _error(400, exc.reason)

        async def refused(request: Request, exc: Exception) -> Response:
            assert isinstance(exc, Refused)
            return _error(exc.status, exc.error, exc.headers)

        # A pause is an outage; any other error Redis returns is a bug (a 500, logged).
        paused = dict.fromkeys(UNREAD, self.unavailable)
        return {Forged: forged, BadBody: bad_body, Refused: refused, **paused}

    # ----- who asks, and for what

    def _held(self, request: Request) -> Session:
        """The session of the request's ``Authorization: Bearer`` token."""
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer "):
            raise Forged("no session token")
        return self.checker.session(header.removeprefix("Bearer "), self.clock())

    def _spend(self, held: Session | Opening, cost: float = 1.0) -> None:
        """A request of session ``held``, counted for it and for its person, or 429 when
        either has asked too often."""
        wait = self.quota.take(held.key, cost) or self.people.take(str(held.viewer.user_id), cost)
        if wait:
            raise Refused(429, "too many requests", {"Retry-After": str(math.ceil(wait))})

    def _session(self, request: Request) -> Session:
        held = self._held(request)
        self._spend(held)
        return held

    def _table(self, request: Request, who: Viewer) -> tuple[str, str]:
        """(table key, game id) of his session; 403 when the request names another table."""
        asked = request.query_params.get("t")
        where = api.table_of(who.table)
        if where is None or (asked and asked != who.table):
            raise Refused(403, "another table")
        return where

    @staticmethod
    def _shows(snap: Snapshot, who: Viewer, game_id: str) -> bool:
        """Whether the table shows him a game. A player's page follows his table into the
        next game (Play again); anyone else's shows only the game it named (a spectator's
        session stays one: see :attr:`Viewer.seated`)."""
        table = snap.table
        if table is None or table.state is None:
            return False
        return table.game_id == game_id or (who.seated and table.seat_of(who.user_id) is not None)

    def _picture(self, snap: Snapshot, who: Viewer, game_id: str) -> dict[str, Any] | None:
        """His picture of the table; None when it is gone."""
        return api.picture(snap, who, self.clock()) if self._shows(snap, who, game_id) else None

    async def _admitted(self, who: Viewer, *, public: bool) -> Viewer:
        """``who``, marked seated or not, when his table parameter names a table that shows
        him a game and he may see it: anyone (``public``: the parameter is Telegram's
        signed one, or the session's own) or only its players. Otherwise 403, the same
        whether the table exists or not."""
        where = api.table_of(who.table)
        if where is not None:
            snap = await api.admission(self.app, where[0])
            seated = snap.table is not None and snap.table.seat_of(who.user_id) is not None
            admitted = replace(who, seated=seated and who.seated)  # a spectator stays one
            if (public or admitted.seated) and self._shows(snap, admitted, where[1]):
                return admitted
        raise Refused(403, "forbidden")

    def _issued(self, viewer: Viewer, until: float, key: str) -> Response:
        now = self.clock()
        token, expires = self.checker.issue(viewer, now, until, key)
        return JSONResponse({"token": token, "expires_in": expires - now})

    # ----- the endpoints

    async def to_page(self, request: Request) -> Response:
        """``/app`` to ``/app/``, relative: never a host of the request's choosing."""
        query = request.url.query
        return Response(status_code=307, headers={"Location": "app/" + (f"?{query}" * bool(query))})

    async def asset(self, request: Request) -> Response:
        """The page and its files, gzip-compressed for a client that takes it."""
        asset = self.assets[request.url.path.removeprefix(PAGE_PATH)]
        headers = {"Vary": "Accept-Encoding"}
        if _takes_gzip(request.headers.get("accept-encoding", "")):
            headers["Content-Encoding"] = "gzip"
            return Response(asset.gzipped, media_type=asset.kind, headers=headers)
        return Response(asset.body, media_type=asset.kind, headers=headers)

    async def open_session(self, request: Request) -> Response:
        """initData for a session (once: a replay is refused), or a session renewed."""
        header = request.headers.get("authorization", "")
        if not header.startswith("tma "):
            renewed = self._session(request)
            viewer = await self._admitted(renewed.viewer, public=True)
            return self._issued(viewer, renewed.until, renewed.key)
        opening = self.checker.init_data(header.removeprefix("tma "))
        if not await self.svc.store.spend(opening.signature, opening.until):
            raise Forged("a replayed initData")
        self._spend(opening)
        signed = opening.viewer.table
        asked = request.query_params.get("t") or signed
        viewer = await self._admitted(
            replace(opening.viewer, table=asked), public=bool(signed) and asked == signed
        )
        return self._issued(viewer, opening.until, opening.key)

    async def state(self, request: Request) -> Response:
        who = self._session(request).viewer
        key, game_id = self._table(request, who)
        shown = self._picture(await api.load(self.app, key), who, game_id)
        if shown is None:
            raise Refused(404, "gone")
        return JSONResponse(shown)

    async def move(self, request: Request) -> Response:
        who = self._session(request).viewer
        raw = await bodies.read(request.stream(), limit=MOVE_BODY)
        body = bodies.json_object(raw, limit=MOVE_BODY)
        status, refusal = await api.move(self.app, who, body.get("data"))
        return JSONResponse({"ok": refusal is None, "refusal": refusal}, status)

    async def events(self, request: Request) -> Response:
        """The table's pictures as server-sent events, until the session ends (the page
        reopens the stream with its renewed token) or a newer stream takes its place."""
        held = self._held(request)
        self._spend(held, quota.STREAM)
        who = held.viewer
        key, game_id = self._table(request, who)
        stream = self.hub.streams.open(held.key, who.user_id)
        if stream is None:
            raise Refused(503, "busy", {"Retry-After": str(BUSY_RETRY)})
        return self.hub.response(
            key, stream, lambda snap: self._picture(snap, who, game_id), held.expires, self.clock
        )

    async def unavailable(self, request: Request, exc: Exception) -> Response:
        """Redis does not answer, or a failover is under way: an outage (bot.core.health
        reports it once), and the page says what a tap would be told. A write no replica
        confirmed in time (bot.core.replicas says so once) is no outage: the page is told
        what such a tap is."""
        self.svc.health.failed(exc)
        try:
            lang = lang_of(self._held(request).viewer.language_code)
        except Forged:
            lang = lang_of(None)
        key = "common.unconfirmed" if isinstance(exc, Unconfirmed) else "common.unavailable"
        return JSONResponse({"refusal": t(lang, key)}, 503)


class Guard:
    """ASGI middleware: the headers every answer of the server carries (see the module
    docstring); the API's are never stored by a cache."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        private = scope["path"].startswith(API_PATH)

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = POLICY
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "no-referrer"
                if private:
                    headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, guarded)
