"""One ASGI app on ``PORT``: the Mini App page and its API, beside the routes of
bot.endpoints (Telegram's webhook, health, readiness, metrics).

This is python-telegram-bot's custom-webhook setup (Starlette and uvicorn beside the
Application); bot.runner starts and stops it, in webhook and in polling mode. The page's
routes are :mod:`bot.webapp.page`, its live updates :mod:`bot.webapp.streams`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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
TICK = 0.1  # seconds between uvicorn's ticks (its Date header is renewed every tenth)
# Seconds between looks at shutdown, for connections and requests still open. uvicorn
# looks every 100 ms and waits 100 ms more in any case: a stop took 0.15-0.35 s idle.
LOOK_EVERY = 0.005

log = logging.getLogger(__name__)


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
        self._exit = asyncio.Event()  # (before uvicorn's __init__ sets should_exit)
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

    @property
    def should_exit(self) -> bool:
        """Told to stop (bot.runner): the ticks end at once, not at the next one."""
        return self._exit.is_set()

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        if value:
            self._exit.set()
        else:
            self._exit.clear()

    async def main_loop(self) -> None:
        """uvicorn's ticks, ended as soon as the server is told to stop."""
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000  # (uvicorn's own wrap)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TICK):
                    await self._exit.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown, the pages' event streams ended first, each wait ended as
        soon as what it waits for is done (uvicorn's looks are 100 ms apart). Built on
        uvicorn's internals (its servers, connections, tasks, lifespan): check it when
        uvicorn is upgraded."""
        await self.hub.close()
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()  # an idle one closes now, a busy one once it has answered
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                await asyncio.sleep(LOOK_EVERY)  # a connection accepted just now registers
                while (state.connections or state.tasks) and not self.force_exit:
                    await asyncio.sleep(LOOK_EVERY)
                for server in self.servers:
                    await server.wait_closed()
        except TimeoutError:
            grace = self.config.timeout_graceful_shutdown
            log.error("HTTP requests still open after %s s: cancelled", grace)
            for task in state.tasks:
                task.cancel(msg="the server's grace at shutdown ran out")
        if not self.force_exit:
            await self.lifespan.shutdown()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The signals are bot.runner's, which stops this server last, once the updates
        it took are handled (uvicorn's own handling would stop it first)."""
        yield
