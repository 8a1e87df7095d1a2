"""The Mini App's side of the tests: initData as Telegram signs it, and the page's server.

:func:`init_data` signs independently of the bot (Telegram's documented HMAC-SHA256
scheme), so the tests check the bot's validator against the published scheme rather
than against itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import hmac
import json
import re
import secrets
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any
from unittest import mock
from urllib.parse import urlencode

import httpx

from bot.core import callbacks
from bot.core.services import services
from bot.tables import games
from bot.webapp import server, streams
from testing import fakeinline
from testing.chats import BOT_TOKEN, BOT_USERNAME, FakeGroup, FakeMessage, FakeUser
from testing.harness import Harness, Pick
from testing.tabletop import Tabletop, dealing, stored


def page_files() -> list[str]:
    """The files the page loads, in its order, as index.html names them (under /app/)."""
    index = resources.files("bot.webapp").joinpath("static/index.html").read_text()
    return re.findall(r'(?:src|href)="([^"#:]+)"', index)


def shell_scripts() -> list[str]:
    """The shell's own scripts (static/), the games' page modules (games.js) left out."""
    return [f for f in page_files() if f.endswith(".js") and f != "games.js"]


def init_data(
    user: FakeUser,
    *,
    token: str = BOT_TOKEN,
    age: float = 0.0,
    start_param: str | None = None,
    chat_type: str | None = None,
    chat_instance: str | None = None,
) -> str:
    """The initData Telegram would give ``user``'s page, ``age`` seconds old; a page
    opened from a direct link in a chat also gets that chat's type and chat_instance."""
    profile = {"id": user.id, "first_name": user.first_name, "language_code": user.language_code}
    fields = {
        "auth_date": str(int(time.time() - age)),
        "query_id": secrets.token_urlsafe(18),  # Telegram's differs at each opening
        "user": json.dumps(profile, separators=(",", ":"), ensure_ascii=False),
    }
    if start_param is not None:
        fields["start_param"] = start_param
    if chat_type is not None and chat_instance is not None:
        fields |= {"chat_type": chat_type, "chat_instance": chat_instance}
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)


# A Mini App's direct link: t.me/<bot>/<app short name>?startapp=<up to 512 of [A-Za-z0-9_-]>
DIRECT_LINK = re.compile(rf"https://t\.me/{BOT_USERNAME}/(\w+)\?startapp=([\w-]{{1,512}})")


def open_direct_link(
    h: Harness, user: FakeUser, message: FakeMessage, pick: Pick
) -> tuple[str, str]:
    """``user`` taps a url button of ``message`` that opens the bot's Mini App by its
    direct link (the only way from a message sent via the bot, where a web_app button is
    refused): the app's short name and the initData its page gets, with the start
    parameter and the type and ``chat_instance`` of the chat he opened it from."""
    h.sees(user, message.chat_id)
    url = h.find(message, pick).url or ""
    link = DIRECT_LINK.fullmatch(url)
    assert link is not None, f"not a direct link to the bot's Mini App: {url!r}"
    data = init_data(
        user,
        start_param=link.group(2),
        chat_type=h.server.inline.chat_type(user, message.chat_id),
        chat_instance=fakeinline.chat_instance(message.chat_id),
    )
    return link.group(1), data


def tampered(data: str) -> str:
    """The same initData with another user id in it (the signature no longer fits)."""
    return data.replace("%22id%22%3A", "%22id%22%3A1", 1)


async def table_for_two(
    h: Harness, game: str, *, turn_time: int | None = None, deal: int | None = None, **options: Any
) -> tuple[Tabletop, list[FakeUser], str]:
    """A running game of Ann (English) and Bob (Russian) in a new group; its page parameter.
    ``turn_time``: the lobby's turn time in seconds (0: none) instead of its default;
    ``deal``: the seed of its deal (seats, cards): the same game at every run (None: a new one);
    ``options``: the game's own settings (durak's ``dummy``, ``transfer`` …)."""
    players = [h.user("Ann"), h.user("Bob", language_code="ru")]
    top = Tabletop(h, h.group(creator=players[0]))
    settings = options | ({} if turn_time is None else {"turn_time": turn_time})
    with mock.patch.object(games, "start", dealing(deal)):
        await top.setup_game(game, players, settings=settings)
    return top, players, await table_param(h, top.group)


async def table_param(h: Harness, group: FakeGroup) -> str:
    """The page's table parameter (a deep-link payload) of the group's current game."""
    data = await stored(h, group)
    return callbacks.payload(group.id, None, data["game_id"])


@asynccontextmanager
async def client(h: Harness) -> AsyncIterator[httpx.AsyncClient]:
    """The bot's ASGI app, called in process (no socket)."""
    hub = streams.Hub(h.app)
    app = server.asgi(h.app, services(h.app).settings, hub)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://page") as c:
        yield c
    await hub.close()


async def page_weight(h: Harness) -> int:
    """The bytes the page costs on the wire, gzipped: the document and every file it loads."""
    total = 0
    async with client(h) as c:
        for path in ("", *page_files()):
            r = await c.get("/app/" + path, headers={"Accept-Encoding": "gzip"})
            assert r.status_code == 200
            total += len(gzip.compress(r.content, mtime=0))
    return total


class PageServer:
    """The bot's ASGI app served on a loopback port in this event loop, which a test may
    stop and start again on the same port (a restart, or an outage the pages live
    through)."""

    def __init__(self, h: Harness) -> None:
        self.app = h.app
        self.port = 0
        self._web: server.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def hub(self) -> streams.Hub:
        """The hub of the pages' streams of the server running now."""
        assert self._web is not None, "the page server is not running"
        return self._web.hub

    async def start(self) -> None:
        # IPPROTO_TCP named, as uvicorn's own sockets have it (getaddrinfo's): asyncio sets
        # TCP_NODELAY only on a socket that names it, and without it every answer on a
        # kept-alive connection after the first waited 40 ms for the client's delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen()  # from now on a connection waits in the backlog until it is served
        self.port = sock.getsockname()[1]
        self._web = web = server.Server(self.app, services(self.app).settings)
        self._task = asyncio.create_task(web.serve(sockets=[sock]))

    async def stop(self) -> None:
        """Stops it as the bot's process stops: the pages' streams end, the port closes."""
        if self._web is not None and self._task is not None:
            self._web.should_exit = True
            await self._task
            self._web = self._task = None

    async def __aenter__(self) -> PageServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


@asynccontextmanager
async def page_server(h: Harness) -> AsyncIterator[str]:
    """A :class:`PageServer` on a free port; its root."""
    async with PageServer(h) as web:
        yield web.root


class Commits:
    """When each version of a table was committed (seconds since the epoch), as the bot's
    own subscription hears of it: every commit publishes its version in the same script
    (:meth:`bot.core.store.Store.changes`), so this is the commit's time to within the
    notice's trip, which the pages' latency then does not count."""

    def __init__(self, h: Harness, key: str) -> None:
        self._store = services(h.app).store
        self._key = key
        self.at: dict[int, float] = {}
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Commits:
        ready = asyncio.Event()

        async def listen() -> None:
            async with self._store.changes() as changes:
                ready.set()
                async for key, version in changes:
                    if key == self._key:
                        self.at.setdefault(version, time.time())

        self._task = asyncio.create_task(listen())
        await ready.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def tma(data: str) -> dict[str, str]:
    return {"Authorization": f"tma {data}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def exchange(c: httpx.AsyncClient, data: str, param: str | None) -> httpx.Response:
    """A page's first call: its initData (and table) for a session token."""
    return await c.post("/app/api/session", params={"t": param} if param else {}, headers=tma(data))


async def said(lines: AsyncIterator[str]) -> list[str]:
    """What a page's event stream says from now to its end, keep-alives aside (the test's
    timeout fails one that never ends)."""
    return [line async for line in lines if line and line[0] != ":"]


async def token(c: httpx.AsyncClient, user: FakeUser, param: str) -> str:
    """A session token of ``user``'s page on the table ``param``, from a fresh initData
    signed for it (as from the group's link: anyone may watch by it)."""
    r = await exchange(c, init_data(user, start_param=param), param)
    assert r.status_code == 200, r.text
    result: str = r.json()["token"]
    return result
