"""The bot's settings, read from the environment (and a ``.env`` file when present).

The token, the webhook's secret and the Redis URL (which may carry a password) are
``SecretStr``: their repr and str are masked, so no log line or traceback shows them; the
code asks for the value where it is used, and nowhere else.

:class:`Settings` is made of parts, one for each concern (issue 32: no model of more than
15 fields), each read from the environment by the variables' own names, without a prefix:
``settings.redis.redis_url`` is ``REDIS_URL`` as before. Where Redis is
(:class:`RedisSettings`) and how long a game is kept (:class:`PlaySettings`) are parts the
tools that need Redis and no token read alone (``python -m bot.tables.stats``);
bot.core.connect connects.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, InitErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.core.budget import Mode

DEFAULT_PORT = 8080
ENV_FILE = ".env"
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


def _upper(value: object) -> object:
    return value.upper() if isinstance(value, str) else value


def _lower(value: object) -> object:
    return value.lower() if isinstance(value, str) else value


# Words an operator may write in any case.
LogLevel = Annotated[Literal["DEBUG", "INFO", "WARNING", "ERROR"], BeforeValidator(_upper)]
LogFormat = Annotated[Literal["text", "json"], BeforeValidator(_lower)]
EphemeralMode = Annotated[Mode, BeforeValidator(_lower)]


class _Environment(BaseSettings):
    """Where settings come from: the environment, then a ``.env`` file."""

    model_config = SettingsConfigDict(env_file=ENV_FILE, extra="ignore")


class RedisSettings(_Environment):
    """Where Redis is, one of three ways (bot.core.connect): ``REDIS_URL`` alone, one
    server; with ``REDIS_CLUSTER``, one node of a cluster (the rest are discovered); with
    ``REDIS_SENTINELS`` and ``REDIS_SENTINEL_MASTER``, the primary that the Sentinels
    name (the URL's host is then not used: its password, database and TLS are)."""

    # Without it (and without Sentinels) the bot keeps games in process memory (fakeredis)
    # and warns.
    redis_url: SecretStr | None = None
    redis_cluster: bool = False
    # host:port,host:port,... of the Sentinels; REDIS_SENTINEL_MASTER is the name they
    # know the primary by. A password of the Sentinels' own, when they ask for one.
    redis_sentinels: str | None = None
    redis_sentinel_master: str | None = None
    redis_sentinel_password: SecretStr | None = None

    @field_validator("redis_sentinels")
    @classmethod
    def _sentinels_as_host_port(cls, value: str | None) -> str | None:
        if value is not None:
            for each in value.split(","):
                host, _, port = each.strip().rpartition(":")
                if not host or not port.isdigit():
                    raise ValueError("REDIS_SENTINELS: host:port,host:port,...")
        return value

    @model_validator(mode="after")
    def _one_way_to_connect(self) -> Self:
        if bool(self.redis_sentinels) != bool(self.redis_sentinel_master):
            raise ValueError("REDIS_SENTINELS and REDIS_SENTINEL_MASTER go together")
        if self.redis_cluster and self.redis_sentinels:
            raise ValueError("REDIS_CLUSTER and REDIS_SENTINELS exclude each other")
        if self.redis_cluster and self.redis_url is None:
            raise ValueError("REDIS_CLUSTER needs REDIS_URL (one node of the cluster)")
        return self

    @property
    def uses_redis(self) -> bool:
        """Whether games live in Redis (else in process memory)."""
        return self.redis_url is not None or self.redis_sentinels is not None

    @property
    def sentinels(self) -> list[tuple[str, int]]:
        """The Sentinels' addresses (none unless REDIS_SENTINELS is set)."""
        found = []
        for each in (self.redis_sentinels or "").split(","):
            if each.strip():
                host, _, port = each.strip().rpartition(":")
                found.append((host, int(port)))
        return found


class BotRedisSettings(RedisSettings):
    """Where Redis is, and how sure the bot makes of a write (bot.core.replicas)."""

    # How many replicas must confirm a write before it is acknowledged (bot.core.replicas);
    # unset: one once the primary has had a replica, none on a server that never had one.
    redis_min_replicas: int | None = Field(default=None, ge=0)
    # Milliseconds a write waits for its replicas' confirmation (WAIT): below the client's
    # 1 s read timeout (bot.core.health), which must outlast it.
    redis_wait_ms: int = Field(default=300, ge=1, le=900)


class TelegramSettings(_Environment):
    """Who the bot is, and where its Bot API is."""

    telegram_bot_token: SecretStr
    # Root URL of a local Bot API server, e.g. http://127.0.0.1:8081.
    telegram_base_url: str | None = None


class HttpSettings(_Environment):
    """What the process's HTTP server serves, and the public addresses Telegram is given."""

    # Webhook mode when set (the public HTTPS URL Telegram posts to); polling otherwise.
    webhook_url: str | None = None
    # The HTTP server's port: /healthz, /readyz and /metrics whenever it is set (polling
    # included), with the webhook and the Mini App's page; DEFAULT_PORT when either of
    # those asks for a server and PORT is not set.
    port: int | None = Field(default=None, ge=1, le=65535)
    # Required with a webhook: without it anyone who learns the URL could post updates in
    # any player's name. Telegram allows 1-256 characters A-Z a-z 0-9 _ -.
    webhook_secret: SecretStr | None = None
    # The Mini App (bot.webapp): the page's public HTTPS address (the server's /app/ path;
    # Telegram opens nothing else); without it no hand message offers the page.
    webapp_url: str | None = Field(default=None, pattern=r"^https://")
    # The Mini App's short name registered with @BotFather (/newapp, same URL): the group
    # table then links spectators to t.me/<bot>/<name>?startapp=<table>.
    webapp_name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]{3,30}$")

    @field_validator("webhook_secret")
    @classmethod
    def _secret_as_telegram_takes_it(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _SECRET.fullmatch(value.get_secret_value()):
            raise ValueError("WEBHOOK_SECRET: 1-256 characters of A-Z a-z 0-9 _ -")
        return value

    @model_validator(mode="after")
    def _webhook_needs_a_secret(self) -> Self:
        if self.webhook_url and not self.webhook_secret:
            raise ValueError("WEBHOOK_SECRET must be set when WEBHOOK_URL is")
        return self

    @property
    def serves_http(self) -> bool:
        """Whether the process runs its HTTP server (bot.runner)."""
        return bool(self.port or self.webhook_url or self.webapp_url)

    @property
    def http_port(self) -> int:
        return self.port or DEFAULT_PORT


class ProcessSettings(_Environment):
    """How one process of the bot logs, stops, and takes over a dead one's updates."""

    # DEBUG, INFO, WARNING or ERROR; text lines, or one JSON object a line (bot.core.logs).
    log_level: LogLevel = "INFO"
    log_format: LogFormat = "text"
    # Seconds a SIGTERM leaves the process to finish the updates it took and their
    # deliveries before it exits anyway (what is left is picked up by another process).
    shutdown_grace: float = Field(default=10.0, ge=0)
    # Milliseconds an update a worker took may go untouched before another worker takes it
    # over as a dead one's, and a worker idle this long holding nothing is dropped from the
    # group (bot.core.inbox). A living worker touches its updates five times within it
    # (bot.inbox: once a second at the default), and another finds a dead one's within four
    # touches more; tests that kill a worker shorten it.
    claim_idle_ms: int = Field(default=5_000, ge=1_500)


class MessageSettings(_Environment):
    """How often and where the bot's messages reach the players, within Telegram's limits."""

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
    # Telegram publishes no limits of their own for ephemeral messages (docs/ephemeral.md).
    # "auto": each ephemeral call counts against its receiver (one a second) and the bot's
    # 30 a second, until 429s to two players' ones in a group teach that they count against
    # that group's 20 a minute too, for an hour (bot.core.budget). True: always against the
    # group's as well; False: never. Fixed choices for an operator who knows.
    ephemeral_group_budget: EphemeralMode = "auto"
    # Where a player's hand lives until he chooses (the switch on his hand, remembered):
    # "group", an ephemeral message only he sees there, or "private", his private chat.
    hands: Literal["group", "private"] = "group"


class PlaySettings(_Environment):
    """The pace of the computer players, and how long a game is kept."""

    # Seconds a game is kept after its last change (finished and abandoned games expire).
    game_ttl: int = Field(default=2 * 24 * 3600, gt=0)
    # Seconds between two computer moves (and before a computer plays for someone away),
    # so that people can follow them. Tests make it short.
    computer_delay: float = 1.0


class Settings(BaseModel):
    """Everything an operator may set, a part for each concern; only ``TELEGRAM_BOT_TOKEN``
    is required. :meth:`read` reads them all."""

    redis: BotRedisSettings
    telegram: TelegramSettings
    http: HttpSettings
    process: ProcessSettings
    messages: MessageSettings
    play: PlaySettings

    @classmethod
    def read(cls, _env_file: str | None = ENV_FILE, **values: Any) -> Self:
        """Every part from the environment and ``_env_file``, with ``values`` (named as the
        variables, in lower case) over both; a name no part has is a TypeError. What is wrong
        in any part is raised at once, in one ValidationError as one model raised it (each
        variable named; a whole part's checks only when no variable is wrong), so that
        ``python -m bot`` says what it said: a missing token first, else the first wrong."""
        unknown = sorted(set(values) - set(names()))
        if unknown:
            raise TypeError(f"no such setting: {', '.join(unknown)}")
        parts: dict[str, _Environment] = {}
        wrong: list[InitErrorDetails] = []
        for name, part in _parts().items():
            given = {k: v for k, v in values.items() if k in part.model_fields}
            try:
                parts[name] = part(_env_file=_env_file, **given)
            except ValidationError as exc:
                wrong += [_again(e) for e in exc.errors()]
        if wrong:
            named = [e for e in wrong if e["loc"]]
            raise ValidationError.from_exception_data(cls.__name__, named or wrong[:1])
        return cls.model_validate(parts)


@functools.cache
def _parts() -> dict[str, type[_Environment]]:
    """Each part of :class:`Settings` by its name there (read off its fields, once)."""
    found = {}
    for name, field in Settings.model_fields.items():
        assert isinstance(field.annotation, type) and issubclass(field.annotation, _Environment)
        found[name] = field.annotation
    return found


def names() -> list[str]:
    """Every setting's name: the environment variable's, in lower case."""
    return [name for part in _parts().values() for name in part.model_fields]


def _again(error: ErrorDetails) -> InitErrorDetails:
    """A part's error, to be raised again as one of :class:`Settings`."""
    again = InitErrorDetails(type=error["type"], loc=error["loc"], input=error["input"])
    if "ctx" in error:
        again["ctx"] = error["ctx"]
    return again


def wrong(exc: ValidationError) -> str:
    """The first thing wrong in ``exc``, in one line that names its variable (``GAME_TTL:
    Input should be greater than 0``), for the bot and the tools to print alike."""
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"]).upper()
    why = err["msg"].removeprefix("Value error, ")
    return f"{where + ': ' if where else ''}{why}"
