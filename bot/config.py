"""The bot's settings, read from the environment (and a ``.env`` file when present)."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Everything an operator may set; only ``TELEGRAM_BOT_TOKEN`` is required."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    telegram_bot_token: str
    # Without it the bot keeps games in process memory (fakeredis) and warns.
    redis_url: str | None = None
    # Root URL of a local Bot API server, e.g. http://127.0.0.1:8081.
    telegram_base_url: str | None = None
    # Webhook mode when set (the public HTTPS URL Telegram posts to); polling otherwise.
    webhook_url: str | None = None
    port: int = 8080
    webhook_secret: str | None = None
    # Seconds between two edits of one group's table message: Telegram allows a bot about
    # 20 messages a minute per group and edits count. 0 edits at once (tests).
    table_edit_interval: float = 3.0
    # AIORateLimiter makes bursts wait instead of failing; tests switch it off.
    rate_limit: bool = True
    # Seconds a game is kept after its last change (finished and abandoned games expire).
    game_ttl: int = 2 * 24 * 3600
    # Seconds between two computer moves (and before a computer plays for someone away),
    # so that people can follow them. Tests make it short.
    computer_delay: float = 1.0
