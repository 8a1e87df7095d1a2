"""How the bot reaches Redis: one server, a cluster, or the primary that Sentinel names.

Three ways, one setting each (bot.core.config.RedisSettings):

- ``REDIS_URL`` alone: one server, as it always was;
- ``REDIS_CLUSTER=1``: ``REDIS_URL`` names one node of a Redis Cluster (or Valkey's); the
  client learns the others, and follows the slots when a replica takes over;
- ``REDIS_SENTINELS=host:port,...`` with ``REDIS_SENTINEL_MASTER=name``: the Sentinels say
  which server is the primary; after a failover the client asks them again (and
  bot.core.primary leaves an old primary that still answers).

TLS and passwords come from the URL as redis-py reads it (``rediss://``,
``user:password@``, ``?ssl_cert_reqs=...``); behind Sentinel its host is not used, its
password, database and TLS are (the Sentinels are reached with the same TLS, and with
``REDIS_SENTINEL_PASSWORD`` when they ask for one of their own).

Every client fails fast, as bot.core.health explains: one second to connect and to answer,
and one more try after a broken connection (for a cluster, after it has read the slots
again: a failover it has not heard of yet). What fails then is a pause
(bot.core.health.PAUSES), which the bot rides out as an outage.

At start :func:`check` loads every Lua script (bot.core.lua.SCRIPTS) on every primary,
compares what Redis names it with what the bot will call it by, and says in one line
which way the bot is connected.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from typing import Any, cast

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from bot.core import health, lua, replies
from bot.core.config import RedisSettings

log = logging.getLogger(__name__)

ONE, CLUSTER, SENTINEL = "one server", "cluster", "sentinel"
START_TIMEOUT = 5.0  # seconds to connect and answer while the bot checks at start


def mode(settings: RedisSettings) -> str:
    """:data:`ONE`, :data:`CLUSTER` or :data:`SENTINEL`."""
    if settings.redis_sentinels:
        return SENTINEL
    return CLUSTER if settings.redis_cluster else ONE


def named(settings: RedisSettings) -> str:
    """The settings that say where Redis is, as an error at start names them."""
    return {
        ONE: "REDIS_URL",
        CLUSTER: "REDIS_URL (REDIS_CLUSTER: a node of a cluster)",
        SENTINEL: "REDIS_SENTINELS (REDIS_SENTINEL_MASTER's primary)",
    }[mode(settings)]


def _url(settings: RedisSettings) -> str:
    return settings.redis_url.get_secret_value() if settings.redis_url else "redis://"


def client(
    settings: RedisSettings, timeout: float = health.TIMEOUT, **options: Any
) -> aioredis.Redis:
    """The bot's client for the way ``settings`` connect (see the module docstring);
    ``options``: more of redis-py's for each connection, one server or a cluster (the
    benchmarks count commands).

    A cluster's client is typed as a Redis: it takes the same commands for what the bot
    sends (each script and transaction of one slot: bot.core.keys; a plain pipeline may
    span slots, the client splits it by node: Store.note_reach, Inbox.backlog, the
    standings' reads). A cluster's pipeline that meets a dead node closes the whole client
    before its retry (redis-py 8.1), so the pollers' reads of every second are plain
    commands there (bot.core.polls.read_buckets)."""
    url = _url(settings)
    if mode(settings) == ONE:
        return health.client(url, timeout, **options)
    if mode(settings) == CLUSTER:
        cluster = RedisCluster.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            # one more try, with the slots read again: what a failover asks for
            retry=Retry(NoBackoff(), 1),
            **options,
        )
        return cast(aioredis.Redis, cluster)
    return _sentinel(settings, url, timeout)


def _sentinel(settings: RedisSettings, url: str, timeout: float) -> aioredis.Redis:
    kwargs: dict[str, Any] = dict(parse_url(url))
    kwargs.pop("host", None)
    kwargs.pop("port", None)
    ssl = kwargs.pop("connection_class", None) is SSLConnection
    timeouts: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    password = settings.redis_sentinel_password
    asked: dict[str, Any] = {
        **timeouts,
        "retry": Retry(NoBackoff(), 0),  # the next Sentinel is the retry
        "ssl": ssl,
        **({"password": password.get_secret_value()} if password else {}),
    }
    sentinel = Sentinel(settings.sentinels, sentinel_kwargs=asked, **timeouts)  # type: ignore[no-untyped-call]
    assert settings.redis_sentinel_master is not None  # RedisSettings checks it
    kwargs.update(
        timeouts, ssl=ssl, retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
    )
    master: aioredis.Redis = sentinel.master_for(settings.redis_sentinel_master, **kwargs)
    return master


async def primaries(redis: aioredis.Redis) -> list[Any]:
    """Every primary: a cluster's nodes (the cluster's own client sends to one with
    ``target_nodes``), or the one client."""
    if isinstance(redis, RedisCluster):
        await redis.initialize()
        return list(redis.get_primaries())
    return [redis]


async def _load(redis: aioredis.Redis, source: str) -> list[str]:
    """``source`` loaded on every primary: the names each gives it."""
    names: list[Any] = []
    if isinstance(redis, RedisCluster):
        for node in await primaries(redis):
            names.append(await redis.execute_command("SCRIPT LOAD", source, target_nodes=node))
    else:
        names.append(await redis.script_load(source))
    return [replies.text(n) for n in names]


async def check(redis: aioredis.Redis, settings: RedisSettings) -> str:
    """Load every script on every primary and check what each calls it; log and return
    the one line that says how the bot is connected. Raises RedisError (or a cluster's
    RedisClusterException) when Redis cannot be used."""
    for script in lua.SCRIPTS:
        expected = hashlib.sha1(script.sent.encode()).hexdigest()
        named = await _load(redis, script.sent)
        if set(named) != {expected}:
            raise RuntimeError(f"Redis names a script {named}, not {expected}")
    line = await _describe(redis, settings)
    log.info("%s (%d scripts loaded on each primary)", line, len(lua.SCRIPTS))
    return line


async def _describe(redis: aioredis.Redis, settings: RedisSettings) -> str:
    how = mode(settings)
    if how == CLUSTER:
        nodes = await primaries(redis)
        where = ", ".join(sorted(n.name for n in nodes))
        return f"redis: cluster of {len(nodes)} primaries ({where})"
    if how == SENTINEL:
        pool = redis.connection_pool
        host, port = await pool.get_master_address()  # type: ignore[attr-defined]
        return f"redis: sentinel master {settings.redis_sentinel_master} at {host}:{port}"
    await redis.ping()
    kwargs = redis.connection_pool.connection_kwargs
    where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
    return f"redis: one server at {where}, database {kwargs.get('db', 0)}"


async def close(redis: aioredis.Redis) -> None:
    """Close every connection of ``redis``, a cluster's too after a failed command: the
    cluster client then only marks itself to read the slots again, and its ``aclose``
    closes nothing (redis-py 8.1), so each node's connections stay open until collected,
    which asyncio logs as an error ("Unclosed ClusterNode object"). What fails as it
    closes (a node gone meanwhile) is no news, and would hide the error that led here."""
    with contextlib.suppress(RedisError, OSError):
        await redis.aclose()
    if isinstance(redis, RedisCluster):
        nodes = redis.nodes_manager
        await asyncio.gather(nodes.aclose(), nodes.aclose("startup_nodes"), return_exceptions=True)


def check_at_start(settings: RedisSettings) -> str:
    """:func:`check` with a client of its own, in an event loop of its own, before the
    bot starts (a wrong setting is found now rather than at the first tap)."""

    async def run() -> str:
        redis = client(settings, START_TIMEOUT)
        try:
            return await check(redis, settings)
        finally:
            await close(redis)

    return asyncio.run(run())
