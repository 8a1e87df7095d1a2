"""The fake Telegram over real HTTP on 127.0.0.1, for a bot that runs in another process.

Why: the in-process harness calls ``Application.process_update`` itself, so it cannot show
what a deployment sees: PTB's own HTTP client and connection pool, its webhook server,
the rate limiter waiting on a real network, several processes sharing one bot. Here the
bot is ``python -m bot`` with ``TELEGRAM_BASE_URL`` pointing at :class:`FakeServer`, which
answers every call with one :class:`~testing.fakegram.FakeTelegram` after a simulated
network delay, and :class:`WebhookHarness` posts updates to the bot's webhook. The server
speaks just enough HTTP/1.1 for httpx (keep-alive, ``Content-Length`` bodies); form values
are decoded back to what their JSON would have been, so the simulation sees the same
parameters as through :class:`~testing.fakegram.FakeRequest`.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import itertools
import json
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

import httpx

from testing.chats import BOT_TOKEN
from testing.errors import ApiError
from testing.fakegram import FakeTelegram, documented
from testing.harness import App, Harness

# Parameters the Bot API takes as strings: never JSON-decoded (a text "12" stays text).
_STRINGS = (
    "text caption parse_mode callback_query_id inline_message_id inline_query_id next_offset "
    "url secret_token language_code description short_description ip_address"
)
_STRING_PARAMS = frozenset(_STRINGS.split())
# The header Telegram sends with each webhook update when the bot set a secret.
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_MAX_HEAD = 64 * 1024


@dataclass(frozen=True)
class Served:
    """One Bot API call as the server answered it. Times are the server's ``clock``:
    ``received`` when the request was read, ``done`` when the simulation applied it
    (after the simulated delay; what a user would see from then on)."""

    received: float
    done: float
    method: str
    params: dict[str, Any]
    status: int
    result: Any = None  # the result on success
    description: str | None = None  # Telegram's error text otherwise
    retry_after: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == HTTPStatus.OK

    @property
    def message_id(self) -> int | None:
        """The message a successful send created, or the one an edit or delete named."""
        if isinstance(self.result, dict) and "message_id" in self.result:
            return int(self.result["message_id"])
        raw = self.params.get("message_id")
        return int(raw) if raw is not None else None


def _decode_value(name: str, raw: str) -> Any:
    if name in _STRING_PARAMS:
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw  # e.g. chat_id "@channelname"


def parse_body(content_type: str, body: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """(parameters, files) of a Bot API request, as :meth:`FakeTelegram.handle` takes them."""
    kind = content_type.split(";")[0].strip().lower()
    if not body:
        return {}, {}
    if kind == "application/json":
        return dict(json.loads(body)), {}
    if kind == "multipart/form-data":
        head = f"Content-Type: {content_type}\r\n\r\n".encode()
        message = email.message_from_bytes(head + body, policy=email.policy.HTTP)
        params: dict[str, Any] = {}
        files: dict[str, Any] = {}
        for part in message.iter_parts():
            name = str(part.get_param("name", header="content-disposition"))
            payload = part.get_payload(decode=True)
            if not isinstance(payload, bytes):
                payload = b""
            if part.get_filename():
                files[name] = (part.get_filename(), payload, part.get_content_type())
            else:
                params[name] = _decode_value(name, payload.decode())
        return params, files
    pairs = parse_qsl(body.decode(), keep_blank_values=True)
    return {k: _decode_value(k, v) for k, v in pairs}, {}


class FakeServer:
    """:class:`FakeTelegram` served over HTTP at ``http://127.0.0.1:<port>``.

    ``delay``: (low, high) seconds, uniform, that each call waits before the simulation
    applies it, as a round trip to Telegram would. ``listeners`` are called with each
    :class:`Served` right after it was applied, before the answer is sent back, in the
    event loop; ``log`` keeps them all when ``record`` is set."""

    def __init__(
        self,
        telegram: FakeTelegram,
        *,
        token: str = BOT_TOKEN,
        delay: tuple[float, float] = (0.03, 0.08),
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        record: bool = True,
    ) -> None:
        self.telegram = telegram
        self.prefix = f"/bot{token}/"
        self.delay = delay
        self.rng = rng or random.Random()
        self.clock = clock
        self.record = record
        self.log: list[Served] = []
        self.listeners: list[Callable[[Served], None]] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        """The root to give the bot as ``TELEGRAM_BASE_URL``."""
        assert self._server is not None, "start() first"
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def start(self, port: int = 0) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", port)
        return self.url

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._one(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass  # the client closed the connection (or sent garbage): drop it
        except asyncio.CancelledError:
            # Stopped (:meth:`stop`): ended, not cancelled, since asyncio's stream protocol
            # asks a finished handler for its exception and logs a cancelled one's (3.11).
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serves one request of a keep-alive connection; False when the client is gone."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise
            return False
        if len(head) > _MAX_HEAD:
            return False
        lines = head.decode("latin-1").split("\r\n")
        _, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        received = self.clock()
        status, payload = await self._call(path, headers.get("content-type", ""), body, received)
        data = json.dumps(payload).encode()
        writer.write(
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        return headers.get("connection", "").lower() != "close"

    async def _call(
        self, path: str, content_type: str, body: bytes, received: float
    ) -> tuple[int, dict[str, Any]]:
        if not path.startswith(self.prefix):
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        method = documented(path[len(self.prefix) :].strip("/"))
        params, files = parse_body(content_type, body)
        low, high = self.delay
        if high > 0:
            await asyncio.sleep(self.rng.uniform(low, high))
        try:
            result = self.telegram.handle(method, params, files)
        except ApiError as error:
            retry = (error.parameters or {}).get("retry_after")
            wait = None if retry is None else int(retry)
            when = (received, self.clock(), method, params)
            self._served(Served(*when, error.code, None, error.description, wait))
            return error.code, error.body()
        self._served(Served(received, self.clock(), method, params, HTTPStatus.OK, result))
        return HTTPStatus.OK, {"ok": True, "result": result}

    def _served(self, served: Served) -> None:
        if self.record:
            self.log.append(served)
        for listener in self.listeners:
            listener(served)


@contextlib.asynccontextmanager
async def serving(telegram: FakeTelegram | None = None) -> AsyncIterator[FakeServer]:
    """A fake Bot API (of its own Telegram, or ``telegram``'s) that answers at once (no
    simulated round trip), stopped after: the tests' whose bot runs in processes."""
    fake = FakeServer(telegram or FakeTelegram(), delay=(0.0, 0.0))
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


class WebhookHarness(Harness):
    """A :class:`Harness` whose updates go to bots' webhooks over HTTP, round-robin, with
    the secret header, as Telegram posts them; nothing waits for their handling (a webhook
    answers at once and handles the update afterwards). ``on_post`` is called with each
    update just before it is posted, in the caller's context."""

    def __init__(
        self,
        server: FakeTelegram,
        hooks: Iterable[str],
        secret: str,
        *,
        on_post: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(server)
        self.hooks = itertools.cycle(list(hooks))
        self.secret = secret
        self.on_post = on_post
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        # Plain HTTP: no certificates to load (20 ms of CPU a client).
        self.client = httpx.AsyncClient(verify=False, timeout=10.0, limits=limits)

    async def deliver(self, data: dict[str, Any], app: App | None = None) -> None:
        if self.on_post is not None:
            self.on_post(data)
        response = await self.client.post(
            next(self.hooks), json=data, headers={SECRET_HEADER: self.secret}
        )
        response.raise_for_status()

    async def close(self) -> None:
        await self.client.aclose()
