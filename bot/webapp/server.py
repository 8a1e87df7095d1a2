"""One ASGI app on ``PORT``: Telegram's webhook, the Mini App page and its API.

This is python-telegram-bot's custom-webhook setup (Starlette and uvicorn beside the
Application): a webhook update is put on the Application's queue; in polling mode
(local use) the same server runs beside the poller, for the page. The page's routes are
:mod:`bot.webapp.page`, its live updates :mod:`bot.webapp.streams`.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import socket
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlparse

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from telegram import Update

from bot.core import sender
from bot.core.config import Settings
from bot.core.services import AnyApp
from bot.webapp.page import Guard, MiniApp
from bot.webapp.streams import Hub

HOST = "0.0.0.0"  # every interface, behind the load balancer (bench/load.py: loopback)


def asgi(application: AnyApp, settings: Settings, hub: Hub) -> Starlette:
    """The server's routes: the Mini App's (:class:`bot.webapp.page.MiniApp`), and the
    webhook when ``WEBHOOK_URL`` is set. No route redirects to the request's own URL (a
    redirect built from ``Host`` would send the page anywhere)."""
    page = MiniApp(application, settings, hub)
    routes = page.routes()
    if settings.webhook_url:
        secret = settings.webhook_secret or ""

        async def webhook(request: Request) -> Response:
            token = request.headers.get("x-telegram-bot-api-secret-token", "")
            if not secrets.compare_digest(token, secret):
                return Response(status_code=403)
            await application.update_queue.put(
                Update.de_json(await request.json(), application.bot)
            )
            return Response()

        routes.append(Route(urlparse(settings.webhook_url).path or "/", webhook, methods=["POST"]))

    app = Starlette(routes=routes, exception_handlers=page.errors(), middleware=[Middleware(Guard)])
    app.router.redirect_slashes = False
    return app


class Server(uvicorn.Server):
    """uvicorn serving :func:`asgi`; at shutdown it ends the pages' event streams first."""

    def __init__(self, application: AnyApp, settings: Settings, **config: Any) -> None:
        self.hub = Hub(application)
        app = asgi(application, settings, self.hub)
        super().__init__(uvicorn.Config(app, log_level="warning", **config))

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self.hub.close()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM stop the server and let :func:`run` stop the bot after it
        (uvicorn's own handling raises the signal again once it has stopped, which would
        kill the process before the bot's shutdown)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)


async def run(application: AnyApp, settings: Settings, allowed_updates: Sequence[str]) -> None:
    """Serve on ``PORT`` until interrupted: the webhook when ``WEBHOOK_URL`` is set (else
    the poller runs beside the server), the page and its API."""
    server = Server(application, settings, host=HOST, port=settings.port)
    await application.initialize()
    if application.post_init is not None:
        await application.post_init(application)
    if settings.webhook_url:
        secret = settings.webhook_secret or ""  # required with a webhook (bot.core.config)
        await sender.set_webhook(application.bot, settings.webhook_url, allowed_updates, secret)
    elif application.updater is not None:
        await application.updater.start_polling(allowed_updates=list(allowed_updates))
    await application.start()
    try:
        await server.serve()
    finally:
        if application.updater is not None and application.updater.running:
            await application.updater.stop()
        await application.stop()
        await application.shutdown()
