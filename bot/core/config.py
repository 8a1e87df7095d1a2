"""The bot's settings, read from the environment (and a ``.env`` file when present)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator
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
    # Required with a webhook: without it anyone who learns the URL could post updates in
    # any player's name. Telegram allows 1-256 characters A-Z a-z 0-9 _ -.
    webhook_secret: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,256}$")
    # Seconds between two edits of one group's table message: Telegram allows a bot about
    # 20 messages a minute per group and edits count. 0 edits at once (tests).
    table_edit_interval: float = 3.0
    # Keep every process together under Telegram's rate limits (bot.core.limiter); tests switch
    # it off.
    rate_limit: bool = True
    # A new prompt is sent as a new message, so that his phone rings, when he has not been
    # asked to act for this many seconds; sooner, his message is edited in place (he is
    # looking at it, and it saves a call).
    ring_after: float = 10.0
    # Telegram publishes no limits of their own for ephemeral messages (docs/ephemeral.md):
    # until measured otherwise each ephemeral call counts against the group's 20 a
    # minute as well as the bot's 30 a second. False: against the receiver's own chat
    # budget instead (one a second), for an operator who measured otherwise.
    ephemeral_group_budget: bool = True
    # Where a player's hand lives until he chooses (the switch on his hand, remembered):
    # "group", an ephemeral message only he sees there, or "private", his private chat.
    hands: Literal["group", "private"] = "group"
    # Seconds a game is kept after its last change (finished and abandoned games expire).
    game_ttl: int = 2 * 24 * 3600
    # Seconds between two computer moves (and before a computer plays for someone away),
    # so that people can follow them. Tests make it short.
    computer_delay: float = 1.0
    # The Mini App (bot.webapp): the page's public HTTPS address (the server's /app/ path;
    # Telegram opens nothing else); without it no hand message offers the page.
    webapp_url: str | None = Field(default=None, pattern=r"^https://")
    # The Mini App's short name registered with @BotFather (/newapp, same URL): the group
    # table then links spectators to t.me/<bot>/<name>?startapp=<table>.
    webapp_name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]{3,30}$")

    @model_validator(mode="after")
    def _webhook_needs_a_secret(self) -> Self:
        if self.webhook_url and not self.webhook_secret:
            raise ValueError("WEBHOOK_SECRET must be set when WEBHOOK_URL is")
        return self
