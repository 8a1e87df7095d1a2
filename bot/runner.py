"""The process's life: start in polling or webhook mode, the HTTP server when asked for,
and a SIGTERM that loses nothing.

At SIGTERM (or SIGINT) the process stops taking updates (the poller stops; the webhook
answers 503 and ``/readyz`` too, and the webhook's worker reads no more), finishes the
updates it took and the deliveries they started (bot.inbox, ``Application.stop``), then
stops its HTTP server and exits 0. All of that within ``SHUTDOWN_GRACE`` seconds, and the
HTTP server's own :data:`bot.webapp.server.HTTP_GRACE` for its last requests: what is
still running then is cancelled, and nothing is lost by it (a webhook update not handled
stays pending in Redis for another worker; a delivery's lease runs out and its table is
due for any process, bot.service.delivery).

The webhook's worker starts reading only once the Application runs (after
``Application.start``): what it handles may start tasks and deliveries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Sequence

from bot import inbox
from bot.core import sender
from bot.core.config import Settings
from bot.core.services import AnyApp, services
from bot.webapp import server

log = logging.getLogger(__name__)


async def run(app: AnyApp, settings: Settings, allowed_updates: Sequence[str]) -> None:
    """Run until SIGTERM or SIGINT (see the module docstring)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    http = None
    if settings.http.serves_http:
        http = server.Server(app, settings, host=server.HOST, port=settings.http.http_port)
    await app.initialize()
    # The webhook is set while post_init sets the menu: a start waits for both at once.
    calls = [app.post_init(app)] if app.post_init is not None else []
    if settings.http.webhook_url:
        secret = settings.http.webhook_secret  # required with a webhook (bot.core.config)
        assert secret is not None
        hook, token = settings.http.webhook_url, secret.get_secret_value()
        calls.append(sender.set_webhook(app.bot, hook, allowed_updates, token))
    await asyncio.gather(*calls)
    if not settings.http.webhook_url and app.updater is not None:
        await app.updater.start_polling(allowed_updates=list(allowed_updates))
    await app.start()
    inbox.start(app)  # webhook mode only: the worker that reads the stored updates
    serving = asyncio.create_task(http.serve()) if http is not None else None
    try:
        waits = [asyncio.create_task(stop.wait())]
        await asyncio.wait([*waits, *([serving] if serving else [])], return_when="FIRST_COMPLETED")
        waits[0].cancel()
        await _stop(app, settings)
    finally:
        if http is not None and serving is not None:
            http.should_exit = True
            await serving
        if app.post_stop is not None:
            await app.post_stop(app)
        # After a grace that ran out the Application may still count as running: the
        # process exits all the same.
        with contextlib.suppress(RuntimeError):
            await app.shutdown()


async def _stop(app: AnyApp, settings: Settings) -> None:
    """Take no more updates; finish those taken, within the grace."""
    services(app).health.stopping = True
    grace = settings.process.shutdown_grace
    log.info("stopping: finishing the updates taken (at most %.0f s)", grace)
    try:
        async with asyncio.timeout(grace):
            if app.updater is not None and app.updater.running:
                await app.updater.stop()
            await inbox.drain(app)
            await app.stop()
    except TimeoutError:
        log.warning("stopped after %.0f s with work left; other processes take it over", grace)
