"""One ASGI app on ``PORT``: the Mini App page and its API, beside the routes of
bot.endpoints (Telegram's webhook, health, readiness, metrics).

This is python-telegram-bot's custom-webhook setup (Starlette and uvicorn beside the
Application); bot.runner starts and stops it, in webhook and in polling mode. The page's
routes are :mod:`bot.webapp.page`, its live updates :mod:`bot.webapp.streams`.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.types import ASGIApp

from bot import endpoints
from bot.core.config import Settings
from bot.core.services import AnyApp
from bot.webapp.page import Guard, MiniApp
from bot.webapp.streams import Hub

HOST = "0.0.0.0"  # every interface, behind the load balancer (bench/load.py: loopback)
HTTP_GRACE = 3  # seconds the server gives its last requests at shutdown (bot.runner)


class _Guarded(Starlette):
    """Starlette with :class:`bot.webapp.page.Guard` outside everything, its own error
    handling included: the 500 of a failure carries the headers too (a middleware given
    to Starlette sits inside that handling)."""

    def build_middleware_stack(self) -> ASGIApp:
        return Guard(super().build_middleware_stack())


def asgi(application: AnyApp, settings: Settings, hub: Hub) -> Starlette:
    """The server's routes: bot.endpoints' and the Mini App's
    (:class:`bot.webapp.page.MiniApp`). No route redirects to the request's own URL (a
    redirect built from ``Host`` would send the page anywhere)."""
    page = MiniApp(application, settings, hub)
    routes = [*endpoints.routes(application, settings), *page.routes()]
    app = _Guarded(routes=routes, exception_handlers=page.errors())
    app.router.redirect_slashes = False
    return app


class Server(uvicorn.Server):
    """uvicorn serving :func:`asgi`; at shutdown it ends the pages' event streams first."""

    def __init__(self, application: AnyApp, settings: Settings, **config: Any) -> None:
        self.hub = Hub(application)
        app = asgi(application, settings, self.hub)
        # log_config=None: uvicorn's loggers keep to bot.core.logs (JSON, secrets masked).
        super().__init__(
            uvicorn.Config(
                app,
                log_level="warning",
                log_config=None,
                timeout_graceful_shutdown=HTTP_GRACE,
                **config,
            )
        )

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self.hub.close()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The signals are bot.runner's, which stops this server last, once the updates
        it took are handled (uvicorn's own handling would stop it first)."""
        yield
