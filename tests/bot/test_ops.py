"""The operator's endpoints in process (bot.endpoints): /healthz, /readyz, /metrics, and
the webhook's answers to what is not an update."""

from __future__ import annotations

import random
from typing import Any

import pytest
from prometheus_client import REGISTRY

from bot.core import health, inbox
from bot.core.services import services
from bot.core.store import Write
from testing.clock import Clock
from testing.fakegram import FakeTelegram, method_of
from testing.fakeserver import SECRET_HEADER
from testing.harness import AppFactory, Harness
from testing.metrics import sample
from testing.ownredis import OwnRedis
from testing.tabletop import Tabletop, table_key
from testing.webapp import client

SECRET = "s3cret"


async def test_readyz_is_503_while_redis_is_stopped_and_200_once_it_is_back(
    server: FakeTelegram, make_app: AppFactory, own_redis: OwnRedis
) -> None:
    redis = health.client(own_redis.url, timeout=0.3)
    h = Harness(server)
    h.apps.append(await make_app(redis))
    async with client(h) as c:
        assert (await c.get("/healthz")).status_code == 200
        assert (await c.get("/readyz")).status_code == 200
        own_redis.stop()
        assert (await c.get("/readyz")).status_code == 503
        assert (await c.get("/healthz")).status_code == 200  # alive all the same
        metrics = (await c.get("/metrics")).text
        assert "cardtable_redis_down 1.0" in metrics
        own_redis.start()
        assert (await c.get("/readyz")).status_code == 200
        assert "cardtable_redis_down 0.0" in (await c.get("/metrics")).text
        services(h.app).health.stopping = True  # a SIGTERM (bot.runner)
        assert (await c.get("/readyz")).status_code == 503
    await redis.aclose()


async def test_metrics_move_as_a_game_is_played(harness: Harness) -> None:
    h = harness
    async with client(h) as c:
        before = (await c.get("/metrics")).text
        players = [h.user("Ann"), h.user("Bob")]
        top = Tabletop(h, h.group())
        await top.setup_game("football", players)
        taps = await top.play(players, random.Random(5))
        after = (await c.get("/metrics")).text

    def moved(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    assert moved("cardtable_updates_total", kind="tap") >= taps + 3  # pick, join, start
    assert moved("cardtable_updates_total", kind="command") >= 1  # /newgame
    assert moved("cardtable_taps_answered_total", how="silent") >= taps
    assert moved("cardtable_tap_answer_seconds_count") >= taps
    calls = "cardtable_bot_api_calls_total"
    assert moved(calls, method="answerCallbackQuery", outcome="ok") >= taps
    assert moved(calls, method="sendMessage", outcome="ok") >= 2
    assert moved("cardtable_delivery_lag_seconds_count") >= taps
    assert "cardtable_webapp_streams" in after and "cardtable_limiter_wait_seconds" in after


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "not an object"),
        (b'{"message": {}}', "no update_id"),
        (b'{"update_id": "7"}', "no update_id"),
        (b'{"update_id": true, "message": {}}', "no update_id"),
        (b'{"update_id": 1, "message": 7}', "not an update"),
        (b'{"update_id": 1, "callback_query": {"id": "x"}}', "not an update"),
        (b'{"update_id": 1, "message": {"message_id": 1}}', "not an update"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "too deep"),
        (b'{"update_id": 1, "x": "' + b"a" * (2 << 20) + b'"}', "too large"),
    ],
)
@pytest.mark.settings(webhook_url="https://cards.example.org/hook", webhook_secret=SECRET)
async def test_a_webhook_body_that_is_not_an_update_gets_400_and_changes_nothing(
    harness: Harness, body: bytes, reason: str
) -> None:
    async with client(harness) as c:
        r = await c.post("/hook", content=body, headers={SECRET_HEADER: SECRET})
        assert (r.status_code, r.json()) == (400, {"error": reason})
        r = await c.post("/hook", content=b'{"update_id": 1}', headers={SECRET_HEADER: "x"})
        assert r.status_code == 403
    for stream in inbox.STREAMS:
        assert await harness.redis.exists(stream) == 0 or await harness.redis.xlen(stream) == 0


async def test_delivery_lag_is_timed_from_the_commit_to_the_round_that_shows_it(
    harness: Harness, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit comes while the join's delivery is under way, so the delivery goes round
    once more; that second round takes 5 s. The join's lag ends with the round that showed
    it: it does not include those 5 s."""
    h = harness
    players = [h.user("Ann"), h.user("Bob")]
    top = Tabletop(h, h.group())
    await top.open(players[0], "durak")
    store = services(h.app).store
    key = table_key(top.group)
    request = h.app.bot.request
    calls, releases = request.do_request, store.release
    armed = False

    async def call(url: str, *args: Any, **kwargs: Any) -> Any:
        nonlocal armed
        if armed and method_of(url) == "editMessageText":
            armed = False  # the delivery edits the table: another commit meanwhile
            await store.transact(key, lambda snap: (Write(snap.table), None))
        return await calls(url, *args, **kwargs)

    rounds = 0

    async def release(*args: Any, **kwargs: Any) -> Any:
        nonlocal rounds
        rounds += 1
        if rounds == 2:
            clock.offset += 5.0  # the second round was slow
        return await releases(*args, **kwargs)

    monkeypatch.setattr(request, "do_request", call)
    monkeypatch.setattr(store, "release", release)
    before = REGISTRY.get_sample_value("cardtable_delivery_lag_seconds_sum") or 0.0
    armed = True
    await top.join(players[1])
    assert rounds == 2
    assert (REGISTRY.get_sample_value("cardtable_delivery_lag_seconds_sum") or 0.0) - before < 1
