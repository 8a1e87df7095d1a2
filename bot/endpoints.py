"""The operator's endpoints and Telegram's webhook, on the HTTP server of ``PORT``.

- ``GET /healthz``: 200 while the process runs (its event loop answers).
- ``GET /readyz``: 200 when Redis answers a PING and the process is not stopping; 503
  otherwise, so that a balancer sends nothing to a process that cannot act on it.
- ``GET /metrics``: the Prometheus metrics of bot.core.metrics (the webhook's backlog and
  the deliveries under way as of the read).
- ``POST <path of WEBHOOK_URL>``: an update from Telegram, with the secret header. It is
  answered 200 only once it is stored in Redis (bot.core.inbox), for a worker to handle
  (bot.inbox), and a replica has it where the server has replicas (bot.core.replicas): a
  process or a primary that dies then loses nothing Telegram took as delivered. 503
  while Redis does not answer, no replica confirms the update in time, or the process is
  stopping (Telegram sends it again, to another worker; the update guard drops a second
  reading of one stored twice), 403 without the secret (any other header, malformed ones
  included), 400 for a body that is not an update (bot.core.bodies: strict JSON, bounded; then
  decoded as the worker will decode it, so that no update a worker cannot read is
  stored), never a traceback.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any
from urllib.parse import urlparse

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from telegram import Update

from bot.core import bodies, metrics
from bot.core.config import Settings
from bot.core.health import PAUSES
from bot.core.inbox import Inbox, stream_of
from bot.core.replicas import Unconfirmed
from bot.core.services import AnyApp, Services, services

MAX_UPDATE = 1 << 20  # bytes: an update is a few kB (a 4096-character message and more)
SECRET_HEADER = "x-telegram-bot-api-secret-token"


def routes(application: AnyApp, settings: Settings) -> list[BaseRoute]:
    """The routes above, for the server of bot.webapp.server to mount."""
    svc = services(application)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        if svc.health.stopping:
            return PlainTextResponse("stopping", 503)
        try:
            await svc.store.redis.ping()
        except PAUSES as exc:
            svc.health.failed(exc)
            return PlainTextResponse("redis does not answer", 503)
        svc.health.ok()
        return PlainTextResponse("ready")

    async def metrics_page(request: Request) -> Response:
        if svc.limiter is not None:  # shared by every process: read where it is kept
            with contextlib.suppress(*PAUSES):
                metrics.GROUPS_LEARNED.set(await svc.limiter.learned())
        if svc.inbox is not None:
            with contextlib.suppress(*PAUSES):
                metrics.BACKLOG.set(await svc.inbox.backlog())
        metrics.DELIVERING.set(len(svc.delivering))
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    found: list[BaseRoute] = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_page),
    ]
    if settings.http.webhook_url and settings.http.webhook_secret:
        secret = settings.http.webhook_secret.get_secret_value().encode()

        async def webhook(request: Request) -> Response:
            # As bytes: compare_digest refuses to compare text that is not ASCII (a 500).
            told = request.headers.get(SECRET_HEADER, "").encode("latin-1")
            if not secrets.compare_digest(told, secret):
                return _told("refused", 403, "forbidden")
            inbox = svc.inbox
            if svc.health.stopping or inbox is None:
                return _told("unavailable", 503, "stopping")
            try:
                raw = await bodies.read(request.stream(), limit=MAX_UPDATE)
                _update(obj := bodies.json_object(raw, limit=MAX_UPDATE), application)
            except bodies.BadBody as exc:
                return _told("refused", 400, exc.reason)
            return await _store(svc, inbox, raw, stream_of(obj))

        found.append(
            Route(urlparse(settings.http.webhook_url).path or "/", webhook, methods=["POST"])
        )
    return found


async def _store(svc: Services, inbox: Inbox, raw: bytes, n: int) -> Response:
    """The webhook's answer once it has tried to store the update ``raw`` in stream ``n``."""
    try:
        await inbox.put(raw, n)
    except Unconfirmed:  # stored, but perhaps not for good: Telegram sends it again
        return _told("unavailable", 503, "not confirmed by a replica")
    except PAUSES as exc:
        svc.health.failed(exc)
        return _told("unavailable", 503, "redis does not answer")
    svc.health.ok()
    metrics.WEBHOOK.labels("stored").inc()
    return Response()


def _update(obj: dict[str, Any], application: AnyApp) -> Update:
    """``obj`` as the worker decodes it (bot.inbox), or BadBody."""
    update_id = obj.get("update_id")
    if not isinstance(update_id, int) or isinstance(update_id, bool):
        raise bodies.BadBody("no update_id")
    try:
        return Update.de_json(obj, application.bot)
    except Exception:  # PTB's decoding trusts the Bot API: any field of a wrong kind
        raise bodies.BadBody("not an update") from None


def _told(outcome: str, status: int, reason: str) -> Response:
    metrics.WEBHOOK.labels(outcome).inc()
    return JSONResponse({"error": reason}, status)
