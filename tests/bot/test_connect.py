"""bot.core.connect: the three ways to connect, one setting each; TLS and passwords from
the URL; the check at start that loads every script and says the mode in one line. A
cluster and Sentinel themselves: tests/e2e/test_e2e_failover.py."""

from __future__ import annotations

import hashlib
import logging

import pytest
from pydantic import ValidationError
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import SSLConnection
from redis.asyncio.sentinel import SentinelManagedSSLConnection

import bot.app  # noqa: F401  (every module that makes a script: bot.core.lua.SCRIPTS)
from bot.core import connect, health, lua
from bot.core.config import RedisSettings, Settings
from testing.settings import REDIS_URL


def where(**values: object) -> RedisSettings:
    return RedisSettings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ({"redis_sentinels": "h:26379"}, "go together"),
        ({"redis_sentinel_master": "main"}, "go together"),
        ({"redis_cluster": True}, "needs REDIS_URL"),
        (
            {"redis_url": "redis://h", "redis_cluster": True, "redis_sentinels": "h:1"}
            | {"redis_sentinel_master": "m"},
            "exclude each other",
        ),
        ({"redis_sentinels": "h", "redis_sentinel_master": "m"}, "host:port"),
    ],
)
def test_one_way_to_connect_at_a_time(values: dict[str, object], why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        where(**values)


def test_each_way_makes_its_client() -> None:
    one = where(redis_url="redis://:pw@127.0.0.1:7299/3")
    assert connect.mode(one) == connect.ONE and one.uses_redis
    assert connect.client(one).connection_pool.connection_kwargs["db"] == 3

    cluster = where(redis_url="rediss://u:pw@10.0.0.1:7000/0", redis_cluster=True)
    made = connect.client(cluster)
    assert connect.mode(cluster) == connect.CLUSTER and isinstance(made, RedisCluster)
    kwargs = made.connection_kwargs
    assert (kwargs["username"], kwargs["password"]) == ("u", "pw")
    assert kwargs["connection_class"] is SSLConnection
    assert kwargs["socket_timeout"] == kwargs["socket_connect_timeout"] == health.TIMEOUT

    sentinel = where(
        redis_url="rediss://u:pw@ignored:1/2",
        redis_sentinels="10.0.0.1:26379, 10.0.0.2:26379",
        redis_sentinel_master="main",
        redis_sentinel_password="spw",
    )
    assert sentinel.sentinels == [("10.0.0.1", 26379), ("10.0.0.2", 26379)]
    master = connect.client(sentinel)
    kwargs = master.connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] == health.TIMEOUT
    assert (kwargs["username"], kwargs["password"], kwargs["db"]) == ("u", "pw", 2)
    assert master.connection_pool.connection_class is SentinelManagedSSLConnection
    assert "host" not in kwargs, "the Sentinels name the primary, not the URL"
    asked = master.connection_pool.sentinel_manager.sentinels  # type: ignore[attr-defined]
    assert asked[0].connection_pool.connection_kwargs["password"] == "spw"
    assert where(redis_sentinels="h:1", redis_sentinel_master="m").uses_redis
    # The bot's own settings take the same three.
    bots = Settings.read(
        _env_file=None,
        telegram_bot_token="1:x",
        redis_url="redis://n1:7000/0",
        redis_cluster="1",
    )
    assert connect.mode(bots.redis) == connect.CLUSTER


@pytest.mark.redis
async def test_the_check_loads_every_script_and_says_the_mode_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bot.core.connect")
    settings = where(redis_url=REDIS_URL)
    redis = connect.client(settings)
    try:
        line = await connect.check(redis, settings)
        shas = [hashlib.sha1(s.sent.encode()).hexdigest() for s in lua.SCRIPTS]
        assert all(await redis.script_exists(*shas))
    finally:
        await redis.aclose()
    db = REDIS_URL.rsplit("/", 1)[1]
    assert line == f"redis: one server at 127.0.0.1:6379, database {db}"
    assert [r.getMessage() for r in caplog.records] == [
        f"{line} ({len(lua.SCRIPTS)} scripts loaded on each primary)"
    ]


async def test_closing_a_client_as_its_node_goes_raises_nothing_to_hide_what_led_there() -> None:
    cluster = connect.client(where(redis_url="redis://127.0.0.1:7299/0", redis_cluster=True))

    async def node_gone() -> None:
        raise TimeoutError("a node stopped with writes unsent")

    cluster.aclose = node_gone  # type: ignore[method-assign]
    await connect.close(cluster)
