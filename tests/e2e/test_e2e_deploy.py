"""The bot as deployed, ``python -m bot`` processes (testing/botproc.py): their logs, a SIGTERM
mid-game, a worker killed with updates queued, the webhook while Redis is down."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aioredis

from bot.core import inbox
from bot.core.i18n import t
from testing.botproc import SECRET, BotProcess, Bots, Forked, ProcHarness, forks_as_started
from testing.chats import BOT_TOKEN, FakeUser
from testing.fakegram import FakeTelegram
from testing.fakeserver import FakeServer, serving
from testing.ownredis import OwnRedis
from testing.tabletop import PASS, TAKE, Tabletop, playing, stored
from testing.waits import side_by_side, until

GRACE = 5.0  # SHUTDOWN_GRACE of the processes below
TAKEN_OVER_WITHIN = 20.0  # seconds: the idle limit and a touch's period, with room
CLAIM_IDLE_MS = "1500"  # the idle limit before a process's updates are taken over: the least


@contextlib.asynccontextmanager
async def slow_and_fast() -> AsyncIterator[tuple[FakeServer, FakeServer]]:
    """Two Bot API servers of one Telegram: one to hang a process's calls, one for its successor."""
    async with serving() as slow, serving(slow.telegram) as fast:
        yield slow, fast


def prompts(top: Tabletop, players: list[FakeUser]) -> dict[int, Any]:
    """What each player is asked now: his prompt's id and buttons."""
    return {
        u.id: (m.message_id, [b.callback_data for b in m.buttons])
        for u in players
        if (m := top.prompt(u)) is not None
    }


async def _garbage(port: int, data: bytes) -> None:
    """Sends ``data`` to the bot's HTTP port and waits for the server to hang up."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    await reader.read()
    writer.close()
    await writer.wait_closed()


def pending(probe: redis.Redis) -> int:
    """Entries read and not yet done, in all the inbox's streams."""
    return sum(int(probe.xpending(s, inbox.GROUP)["pending"]) for s in inbox.STREAMS)


def backlog(probe: redis.Redis) -> int:
    return sum(int(probe.xlen(s)) for s in inbox.STREAMS)


def consumers(probe: redis.Redis) -> set[str]:
    """The group's members, in any of the streams."""
    return {c["name"] for s in inbox.STREAMS for c in probe.xinfo_consumers(s, inbox.GROUP)}


async def sigterm(bot: BotProcess, grace: float = GRACE) -> str:
    """SIGTERMs ``bot``, which exits 0 (within its grace and five seconds more): its log."""
    bot.process.terminate()
    assert await bot.stopped(grace + 5) == 0, bot.log()
    return bot.log()


def no_error(log: str) -> None:
    assert "Traceback" not in log and " ERROR " not in log, log


async def sigterm_in_time(bot: BotProcess, grace: float) -> None:
    """SIGTERMs ``bot``: it exits 0 within its grace and one second more, and logs no error."""
    started = time.monotonic()
    log = await sigterm(bot, grace)
    assert time.monotonic() - started < grace + 1
    no_error(log)


def help_replies(telegram: FakeTelegram, user: FakeUser) -> int:
    return len([m for m in telegram.screen(user.id) if m.from_bot])


def test_a_bot_is_forked_only_from_a_server_started_as_its_own_python_would_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process whose environment differs from the fork server's in what it read at import
    or at Python's start is started as a new Python."""
    Forked.server()  # started now, or before, in the tests' environment
    asked = dict(os.environ)
    monkeypatch.setenv("CARDTABLE_KEY_PREFIX", "elsewhere")  # after the server's start
    assert Forked.runs_as_started(asked) and not Forked.runs_as_started(os.environ)
    server = {"CARDTABLE_KEY_PREFIX": "t1", "PATH": "/bin"}
    assert forks_as_started({**server, "PORT": "8080", "PYTHONPATH": "/src"}, server)
    assert not forks_as_started({**server, "PYTHONWARNINGS": "error"}, server)
    assert not forks_as_started(server, {**server, "PYTHONHASHSEED": "0"})


async def test_json_logs_parse_line_by_line_name_the_update_and_never_show_a_secret(
    served: FakeServer, bots: Bots
) -> None:
    bot = await bots.start(served.url, LOG_FORMAT="json", LOG_LEVEL="DEBUG")
    h = bots.harness(served.telegram, bot)
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "football", players)
    for _ in range(4):
        await top.step(players, random.Random(1))
    await _garbage(bot.port, f"NOT HTTP {SECRET}\r\n\r\n".encode())  # uvicorn's to log
    text = await sigterm(bot)
    assert [s.params["url"] for s in served.log if s.method == "setWebhook"] == [bot.hook]
    lines = [json.loads(line) for line in text.splitlines()]  # every line is one object
    assert any(x["logger"].startswith("uvicorn") for x in lines), text  # the HTTP server's too
    assert len(lines) > 20 and all({"time", "level", "logger", "message"} <= set(x) for x in lines)
    assert BOT_TOKEN not in text and BOT_TOKEN.split(":")[1] not in text and SECRET not in text
    assert "***" in text  # PTB's debug lines do carry them: masked
    named = {x["update_id"] for x in lines if "update_id" in x}
    assert len(named) >= 4  # the lines logged while handling an update name it


async def test_sigterm_mid_game_finishes_the_tap_and_its_messages_and_the_next_process_goes_on(
    served: FakeServer, own_redis: OwnRedis, bots: Bots
) -> None:
    env = {"REDIS_URL": own_redis.url, "SHUTDOWN_GRACE": str(GRACE)}
    first = await bots.start(served.url, "first", **env)
    h = bots.harness(served.telegram, first)
    players = [h.user("Ann"), h.user("Bob")]
    top = Tabletop(h, h.group())
    async with aioredis.Redis.from_url(own_redis.url) as h.redis:
        await top.setup_game("durak", players, settings={"deck_size": 24})  # a short game
    rng = random.Random(3)
    await top.step(players, rng)
    before = prompts(top, players)
    served.delay = (0.3, 0.3)  # Telegram slow: the next tap is in hand for a while
    h.settling = False
    _, answer = await top.step(players, rng)
    with redis.Redis.from_url(own_redis.url) as probe:
        await until(lambda: pending(probe) == 1, 5, "the worker did not take the update")
        await sigterm_in_time(first, GRACE)
        # Before it exited: the tap answered, the messages up to date, the stream empty.
        assert answer.answered and answer.text is None
        assert prompts(top, players) != before
        assert backlog(probe) == 0
        assert consumers(probe) == set()  # it left the group
    served.delay = (0.0, 0.0)
    h.serve_by(await bots.start(served.url, "second", **env))
    h.settling = True
    # The game goes on to its end on the next process, by the shortest way (about 20 taps).
    await top.play(players, rng, shun=PASS, prefer=TAKE)
    assert top.finished()


RESTART_WITHIN = 3.0  # seconds from a new process's start to the next player's buttons


async def test_after_a_restart_mid_move_the_player_to_act_has_working_buttons_within_3_s(
    own_redis: OwnRedis, bots: Bots
) -> None:
    """A move committed, its process killed or stopped while Telegram hangs, before anyone
    saw it: the next process gives the player to act working buttons within 3 s. Each place
    of the hands and each way of stopping once, side by side (each waits on the rate limits
    and on a dead process's lease), on databases of their own."""
    url = own_redis.database
    await side_by_side(
        private_sigterm=_restart_mid_move(url(1), bots, "private", False, "sigterm"),
        group_kill=_restart_mid_move(url(2), bots, "group", False, "kill"),
        group_admin_sigterm=_restart_mid_move(url(3), bots, "group", True, "sigterm"),
    )


async def _restart_mid_move(url: str, bots: Bots, hands: str, admin: bool, stop: str) -> None:
    """One case of the test above: the stop is over before the next process starts."""
    env = {"REDIS_URL": url, "SHUTDOWN_GRACE": "0", "HANDS": hands}
    env.update(RATE_LIMIT="true", TABLE_EDIT_INTERVAL="3")  # Telegram's limits, as deployed
    name = f"{hands}-{admin}-{stop}"
    async with slow_and_fast() as (slow, fast), aioredis.Redis.from_url(url) as redis_db:
        first = await bots.start(slow.url, f"{name}-first", **env)
        h = bots.harness(slow.telegram, first)
        h.redis = redis_db
        players = [h.user("Ann"), h.user("Bob"), h.user("Cid")]
        top = Tabletop(h, h.group())
        if admin:
            await h.promote(top.group, players[0])
        await top.setup_game("durak", players)
        rng = random.Random(5)
        for _ in range(3):
            await until(lambda: top.actor_alone_asked(players), 20, "no prompt")
            await top.step(players, rng)
        await until(lambda: top.actor_alone_asked(players), 20, "no prompt")
        for user in players:  # his hand lives where the test says (a player's choice)
            assert bool(h.hands(user, top.group)) == (hands == "group")
        version = (await stored(h, top.group))["version"]
        slow.delay = (60.0, 60.0)  # Telegram hangs: nobody sees what the next move did
        h.settling = False
        await top.step(players, rng)
        await until(lambda: _moved_past(h, top, version), 10, "the move was not committed")
        if stop == "kill":
            first.kill()
        else:
            await sigterm(first, 0)
        await slow.stop()  # what it had asked Telegram for dies with it
        assert not await top.actor_asked(players)
        h.serve_by(await bots.start(fast.url, f"{name}-second", **env))
        started = time.monotonic()
        await until(lambda: top.actor_asked(players), 10, "no buttons after a restart")
        waited = time.monotonic() - started
        actor = await top.actor(players)
        assert actor is not None
        _, answer = await top.step([actor], rng)  # unsettled: the table's edit waits its 3 s
        await until(lambda: answer.answered, 10, "his tap was not answered")
        assert answer.text is None, answer.text  # his buttons work
        assert waited <= RESTART_WITHIN, f"his buttons came {waited:.1f} s after the start"


async def _moved_past(h: ProcHarness, top: Tabletop, version: int) -> bool:
    return bool((await stored(h, top.group))["version"] > version)


async def test_updates_a_worker_held_when_killed_or_out_of_grace_are_each_handled_once_next(
    own_redis: OwnRedis, bots: Bots
) -> None:
    """A worker holds three updates while Telegram hangs, and is killed, or SIGTERMed with a
    grace that runs out (it exits 0 in time all the same): none is lost, the next process
    handles each once, the gone worker leaves the group. Side by side (each waits for the
    idle limit before the takeover), on databases of their own."""
    await side_by_side(
        kill=_taken_over(own_redis.database(1), bots, "kill"),
        sigterm=_taken_over(own_redis.database(2), bots, "sigterm"),
    )


async def _taken_over(url: str, bots: Bots, stop: str) -> None:
    """One case of the test above, the worker stopped by ``stop``."""
    grace = 0.1  # runs out all the same: Telegram hangs for 60 s
    env = {"REDIS_URL": url, "SHUTDOWN_GRACE": str(grace), "CLAIM_IDLE_MS": CLAIM_IDLE_MS}
    async with slow_and_fast() as (slow, fast):
        telegram = slow.telegram
        doomed = await bots.start(slow.url, f"{stop}-doomed", **env)
        h = bots.harness(telegram, doomed)
        h.settling = False
        with redis.Redis.from_url(url) as probe:
            slow.delay = (60.0, 60.0)  # its every Bot API call now hangs
            users = [h.user(name) for name in ("Ann", "Bob", "Cid")]
            for user in users:
                await h.private(user, "/help")  # each answered 200: stored
            await until(lambda: pending(probe) == 3, 5, "the worker did not take the updates")
            (dead,) = consumers(probe)  # its name in the group
            if stop == "kill":
                doomed.kill()
            else:
                await sigterm_in_time(doomed, grace)
            await slow.stop()  # what it had asked Telegram for dies with it
            assert all(help_replies(telegram, u) == 0 for u in users)
            assert pending(probe) == 3  # not lost
            h.serve_by(await bots.start(fast.url, f"{stop}-other", **env))
            await until(
                lambda: all(help_replies(telegram, u) for u in users),
                TAKEN_OVER_WITHIN,
                "the other worker did not take the updates over",
            )
            await h.settle()
            assert [help_replies(telegram, u) for u in users] == [1, 1, 1]  # each once
            assert backlog(probe) == 0
            # The gone worker leaves the group. Not "one consumer left": on Redis 7.0 the
            # other, idle once done, may leave too.
            await until(
                lambda: dead not in consumers(probe),
                TAKEN_OVER_WITHIN,
                "the gone worker stayed in the group",
            )


async def test_the_webhook_answers_503_while_redis_is_down_and_the_update_is_handled_once_back(
    served: FakeServer, own_redis: OwnRedis, bots: Bots
) -> None:
    bot = await bots.start(served.url, REDIS_URL=own_redis.url)
    h = bots.harness(served.telegram, bot)
    ann = h.user("Ann")
    h.settling = False
    sent = h.keep_updates()
    await h.private(ann, "/help")
    own_redis.stop()
    refused = await h.post(sent[0])
    assert refused.status_code == 503  # Telegram keeps it and sends it again
    assert help_replies(served.telegram, ann) == 0
    own_redis.start()

    async def accepted() -> bool:  # Telegram sends it again until the bot takes it
        return (await h.post(sent[0])).status_code == 200

    await until(accepted, 15, "the update was not taken once Redis was back")  # a bound only
    await h.settle()  # handled: the stream's backlog is empty
    assert help_replies(served.telegram, ann) == 1
    assert t("en", "common.unavailable") not in bot.log()


async def test_a_poller_with_port_set_serves_health_readiness_and_metrics_and_stops_on_sigterm(
    served: FakeServer, bots: Bots
) -> None:
    served.delay = (0.05, 0.05)  # getUpdates: at most 20/s
    bot = await bots.start(served.url, webhook=False, SHUTDOWN_GRACE=str(GRACE))
    async with httpx.AsyncClient(base_url=bot.root) as c:
        assert (await c.get("/readyz")).status_code == 200
        await until(lambda: any(s.method == "getUpdates" for s in served.log), 5, "no poll")
        page = (await c.get("/metrics")).text
    assert "cardtable_bot_api_calls_total{" in page, page  # its start-up calls
    no_error(await sigterm(bot))
