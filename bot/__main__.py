"""``python -m bot``: run the bot (webhook when WEBHOOK_URL is set, else polling; an HTTP
server on PORT with the webhook, the Mini App's page and API when WEBAPP_URL is set, and
health, readiness and metrics whenever PORT is set: bot.runner, bot.endpoints)."""

from __future__ import annotations

import asyncio
import logging
import sys

from pydantic import ValidationError
from redis.exceptions import RedisClusterException, RedisError
from telegram.error import InvalidToken, NetworkError

from bot import runner
from bot.app import build_application, freeze_startup_heap
from bot.core import connect, logs
from bot.core.config import Settings, wrong

log = logging.getLogger("bot")
# The kinds of update the bot handles (my_chat_member: it was removed from a group).
UPDATES = ["message", "callback_query", "my_chat_member", "inline_query", "chosen_inline_result"]


def _not_a_failed_start(record: logging.LogRecord) -> bool:
    """PTB logs a start-up that fails (a refused token, no Bot API) with its whole traceback
    before raising the error; :func:`main` reports that error in one line instead."""
    return not record.getMessage().startswith("Network Retry Loop (Bootstrap")


def main() -> int:
    logs.configure("INFO", "text", ())  # until the settings are read
    logging.getLogger("telegram.ext").addFilter(_not_a_failed_start)
    try:
        settings = Settings.read()
    except ValidationError as exc:
        missing = any(e["loc"] == ("telegram_bot_token",) for e in exc.errors())
        if missing:
            print(
                "error: TELEGRAM_BOT_TOKEN is not set (the bot's token from @BotFather)",
                file=sys.stderr,
            )
        else:
            print(f"error: bad settings: {wrong(exc)}", file=sys.stderr)
        return 2
    hidden = (
        settings.telegram.telegram_bot_token,
        settings.http.webhook_secret,
        settings.redis.redis_url,
        settings.redis.redis_sentinel_password,
    )
    secrets = [s.get_secret_value() for s in hidden if s is not None]
    logs.configure(settings.process.log_level, settings.process.log_format, secrets)
    if settings.redis.uses_redis:
        try:  # a wrong setting is found now rather than at the first tap
            connect.check_at_start(settings.redis)  # says in one line how it is connected
        except (RedisError, RedisClusterException, ValueError, RuntimeError) as exc:
            print(
                f"error: cannot use Redis at {connect.named(settings.redis)}: {exc}",
                file=sys.stderr,
            )
            return 1
        redis = connect.client(settings.redis)
    else:
        import fakeredis

        log.warning("REDIS_URL is not set: games are kept in memory and will not survive a restart")
        redis = fakeredis.FakeAsyncRedis()
    app = build_application(settings, redis)
    freeze_startup_heap()
    # Start-up failures are the operator's to fix: one line each, not a traceback.
    try:
        asyncio.run(runner.run(app, settings, UPDATES))
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
