"""``python -m bot``: run the bot (webhook when WEBHOOK_URL is set, else polling; the Mini
App's page and API on PORT with the webhook, or beside polling when WEBAPP_URL is set)."""

from __future__ import annotations

import asyncio
import logging
import sys

import redis as sync_redis
from pydantic import ValidationError
from redis.exceptions import RedisError
from telegram.error import InvalidToken, NetworkError

from bot.app import build_application, freeze_startup_heap
from bot.core import health
from bot.core.config import Settings
from bot.webapp import server

log = logging.getLogger("bot")
# The kinds of update the bot handles (my_chat_member: it was removed from a group).
UPDATES = ["message", "callback_query", "my_chat_member"]


def _not_a_failed_start(record: logging.LogRecord) -> bool:
    """PTB logs a start-up that fails (a refused token, no Bot API) with its whole traceback
    before raising the error; :func:`main` reports that error in one line instead."""
    return not record.getMessage().startswith("Network Retry Loop (Bootstrap")


def main() -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("telegram.ext").addFilter(_not_a_failed_start)
    try:
        settings = Settings()
    except ValidationError as exc:
        missing = any(e["loc"] == ("telegram_bot_token",) for e in exc.errors())
        if missing:
            print(
                "error: TELEGRAM_BOT_TOKEN is not set (the bot's token from @BotFather)",
                file=sys.stderr,
            )
        else:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]).upper()
            why = err["msg"].removeprefix("Value error, ")
            print(f"error: bad settings: {where + ': ' if where else ''}{why}", file=sys.stderr)
        return 2
    if settings.redis_url:
        try:  # a wrong REDIS_URL is found now rather than at the first tap
            sync_redis.Redis.from_url(settings.redis_url, socket_timeout=5).ping()
        except (RedisError, ValueError) as exc:
            print(f"error: cannot use Redis at REDIS_URL: {exc}", file=sys.stderr)
            return 1
        redis = health.client(settings.redis_url)
    else:
        import fakeredis

        log.warning("REDIS_URL is not set: games are kept in memory and will not survive a restart")
        redis = fakeredis.FakeAsyncRedis()
    app = build_application(settings, redis)
    freeze_startup_heap()
    # Start-up failures are the operator's to fix: one line each, not a traceback.
    try:
        if settings.webhook_url or settings.webapp_url:
            # one ASGI server on PORT: the webhook (or the poller beside it) and the page
            asyncio.run(server.run(app, settings, UPDATES))
        else:
            app.run_polling(allowed_updates=UPDATES)
    except InvalidToken:
        print(
            "error: Telegram refused TELEGRAM_BOT_TOKEN (check it with @BotFather)", file=sys.stderr
        )
        return 2
    except NetworkError as exc:
        print(f"error: cannot reach the Bot API: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
