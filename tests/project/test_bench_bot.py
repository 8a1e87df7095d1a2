"""bench/bot.py may be pointed at a Redis that serves a bot: it must leave every key it
did not write where it was, and take its own away."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from bot.core.keys import table_key
from testing.settings import REDIS_URL

pytestmark = pytest.mark.redis
ROOT = Path(__file__).resolve().parents[2]
# One phase (the saturated), one table, one game of durak for two: every phase plays alike.
TINY = ["--tables", "1", "--games", "1", "--solo-games", "0", "--rate", "0", "--json"]


def test_the_bench_touches_only_keys_of_its_own() -> None:
    client = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError:
        pytest.skip("no Redis answers on 127.0.0.1:6379")
    bystander = table_key(-secrets.randbelow(10**12), None)  # a bot's table, as it looks
    client.hset(bystander, mapping={"v": "1", "d": "{}"})
    try:
        done = subprocess.run(
            [sys.executable, "bench/bot.py", *TINY, "--redis-url", REDIS_URL],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert '"moves"' in done.stdout  # it did play, against that database
        assert client.hgetall(bystander) == {b"v": b"1", b"d": b"{}"}
        assert not list(client.scan_iter(match="ctbench*", count=1000))
    finally:
        client.delete(bystander)
        client.close()
