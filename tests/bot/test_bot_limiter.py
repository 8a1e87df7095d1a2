"""The shared rate limiter: Telegram's limits kept by all processes together, prompts
first, a 429 holding back one chat only. Time is the limiter's injected clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import fakeredis
import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.core import health
from bot.core.budget import LEARN_WINDOW, LEARNED_FOR, Mode, of_ephemeral
from bot.core.limiter import (
    ALL,
    ALL_KEY,
    GROUP,
    LEARNED_KEY,
    PRIVATE,
    Limiter,
    Priority,
    chat_bucket_key,
    refused_key,
)
from testing.clock import ManualClock
from testing.settings import REDIS_URL, settings

GROUP_CHAT = -100555
Two = tuple[Limiter, Limiter, ManualClock]  # two processes' limiters on one Redis, their clock
PLAYERS = list(range(1000, 1100))


@pytest.fixture
async def two() -> AsyncIterator[Two]:
    redis = fakeredis.FakeAsyncRedis()
    clock = ManualClock(1_000_000.0)
    yield Limiter(redis, clock), Limiter(redis, clock), clock
    await redis.aclose()


async def granted_in(
    limiter: Limiter, clock: ManualClock, chat: int | None, seconds: float, step: float = 0.2
) -> int:
    """Calls to ``chat`` (``None``: hands in GROUP_CHAT to each player in turn) granted over
    ``seconds``, asking every ``step``."""
    count = 0
    end = clock.now + seconds
    players = iter(PLAYERS * 100)
    while clock.now < end:
        spent = chat or of_ephemeral(limiter.ephemeral, GROUP_CHAT, next(players))
        (wait,) = await limiter.try_acquire([(spent, Priority.PROMPT)])
        count += wait == 0
        clock.now += step
    return count


async def test_one_chat_gets_its_burst_then_about_one_call_a_second(two: Two) -> None:
    first, second, clock = two
    burst = [await lim.try_acquire([(PLAYERS[0], Priority.PROMPT)]) for lim in (first, second)]
    # Two processes share the chat's burst: Telegram's 3 but one, kept as a margin for
    # calls held back that reach it together.
    assert burst == [[0.0], [0.0]]
    (wait,) = await second.try_acquire([(PLAYERS[0], Priority.PROMPT)])
    assert 0 < wait <= PRIVATE.interval
    clock.now += 60
    calls = await granted_in(first, clock, PLAYERS[0], 20)
    assert PRIVATE.burst <= calls <= 20 / PRIVATE.interval + PRIVATE.burst
    assert calls <= 20 + 3  # Telegram's one a second, with its short burst


async def test_a_group_gets_under_twenty_calls_a_minute(two: Two) -> None:
    first, _, clock = two
    calls = await granted_in(first, clock, GROUP_CHAT, 60)
    assert 15 <= calls <= 20
    assert calls <= 60 / GROUP.interval + GROUP.burst


async def test_the_whole_bot_stays_under_thirty_calls_a_second(two: Two) -> None:
    first, second, clock = two
    granted = 0
    for tick in range(300):  # three seconds of both processes asking for many chats
        for limiter in (first, second):
            chat = PLAYERS[tick % len(PLAYERS)]
            waits = await limiter.try_acquire([(chat, Priority.PROMPT)])
            granted += waits == [0.0]
        clock.now += 0.01
    assert 3 / ALL.interval <= granted <= 3 / ALL.interval + ALL.burst
    assert granted <= 30 + 3 * 30  # within Telegram's 30 a second after a burst of 30


async def test_prompts_go_first_when_the_bot_is_busy(two: Two) -> None:
    first, _, clock = two
    # A busy moment: group tables and watchers' hands ask for more than there is.
    asks = [(PLAYERS[i], Priority.WATCHER) for i in range(40)]
    asks += [(-100 - i, Priority.TABLE) for i in range(40)]
    waits = await first.try_acquire(asks)
    assert any(w > 0 for w in waits)
    # Still, a prompt goes out at once, and the lower priorities keep waiting.
    (prompt,) = await first.try_acquire([(PLAYERS[50], Priority.PROMPT)])
    (table,) = await first.try_acquire([(-999, Priority.TABLE)])
    assert prompt == 0 and table > 0
    clock.now += 1.0
    (table,) = await first.try_acquire([(-999, Priority.TABLE)])
    assert table == 0  # and is served once the burst has passed


async def test_flood_control_holds_back_that_chat_alone_in_every_process(two: Two) -> None:
    first, second, clock = two
    await first.flooded(GROUP_CHAT, None, 30)
    (held,) = await second.try_acquire([(GROUP_CHAT, Priority.PROMPT)])
    assert 29 < held <= 30
    (other,) = await second.try_acquire([(GROUP_CHAT - 1, Priority.PROMPT)])
    assert other == 0
    clock.now += 30
    assert await first.try_acquire([(GROUP_CHAT, Priority.PROMPT)]) == [0.0]


@pytest.mark.parametrize(
    ("mode", "low", "high"), [("auto", 200, 240), (False, 200, 240), (True, 15, 20)]
)
async def test_hands_in_the_group_count_against_the_group_as_the_setting_says(
    mode: Mode, low: int, high: int
) -> None:
    """Hands count against the group's 20 a minute only when the operator says so (True)."""
    clock = ManualClock(1_000_000.0)
    limiter = Limiter(fakeredis.FakeAsyncRedis(), clock, ephemeral=mode)
    assert low <= await granted_in(limiter, clock, None, 60, 0.25) <= high


@pytest.fixture(params=["in-process", pytest.param("redis", marks=pytest.mark.redis)])
async def one_redis(request: pytest.FixtureRequest) -> AsyncIterator[aioredis.Redis]:
    """fakeredis, or the real Redis (this test's keys removed after it)."""
    if request.param == "in-process":
        client: aioredis.Redis = fakeredis.FakeAsyncRedis()
    else:
        client = health.client(REDIS_URL)
        try:
            await client.ping()
        except (OSError, RedisError):
            await client.aclose()
            pytest.skip("no Redis answers on 127.0.0.1:6379")
    yield client
    await client.zrem(LEARNED_KEY, str(GROUP_CHAT))
    await client.delete(*(refused_key(c) for c in [GROUP_CHAT, *PLAYERS]))
    await client.delete(ALL_KEY, *(chat_bucket_key(c) for c in [GROUP_CHAT, *PLAYERS]))
    await client.aclose()


async def test_429s_to_two_players_hands_teach_every_process_for_an_hour(
    one_redis: aioredis.Redis,
) -> None:
    """Two players' 429s within LEARN_WINDOW: the group's hands count against its 20 a minute
    in every process, until it forgets an hour later."""
    clock = ManualClock(1_000_000.0)
    first, second = Limiter(one_redis, clock), Limiter(one_redis, clock)
    await first.flooded(GROUP_CHAT, PLAYERS[0], 5)
    assert await second.learned() == 0
    clock.now += LEARN_WINDOW
    await second.flooded(GROUP_CHAT, PLAYERS[1], 5)
    assert await first.learned() == 1
    # The learned groups expire with the last of them: nothing is left once all forgot.
    assert 0 < await one_redis.pttl(LEARNED_KEY) <= (LEARNED_FOR + 1) * 1000
    spent = of_ephemeral(second.ephemeral, GROUP_CHAT, PLAYERS[2])
    (held,) = await second.try_acquire([(spent, Priority.PROMPT)])
    assert 4 < held <= 5  # the whole group waits out Telegram's retry_after
    clock.now += 5
    assert await granted_in(second, clock, None, 60, 0.25) <= 20
    clock.now += LEARNED_FOR - 3 * 60
    assert await first.learned() == 1
    assert await granted_in(first, clock, None, 60, 0.25) <= 20  # still, a minute before a day
    clock.now += 60
    assert await second.learned() == 0
    assert await granted_in(second, clock, None, 60, 0.25) > 20


async def test_one_players_429s_two_far_apart_or_any_but_a_hand_in_the_group_teach_nothing(
    one_redis: aioredis.Redis,
) -> None:
    """One player's 429s (a busy machine's burst, or he taps fast) teach the group nothing;
    nor the group's own message's (counted against the group already), a private chat's,
    or any where the operator fixed the setting."""
    clock = ManualClock(1_000_000.0)
    limiter = Limiter(one_redis, clock)
    for _ in range(5):
        await limiter.flooded(GROUP_CHAT, PLAYERS[0], 1)
        clock.now += 1
    clock.now += LEARN_WINDOW
    await limiter.flooded(GROUP_CHAT, PLAYERS[1], 1)
    assert await limiter.learned() == 0
    clock.now += LEARN_WINDOW
    for player in PLAYERS[:2]:  # as many as would teach it by default
        for mode in (True, False):
            await Limiter(one_redis, clock, ephemeral=mode).flooded(GROUP_CHAT, player, 1)
        await limiter.flooded(player, None, 1)
        await limiter.flooded(GROUP_CHAT, None, 1)
    assert await limiter.learned() == 0


async def test_no_other_process_slips_a_hand_in_while_a_429_is_recorded() -> None:
    """Were the hold and the learning apart, another process's hand would go between them."""
    clock = ManualClock(1_000_000.0)
    redis = fakeredis.FakeAsyncRedis()
    first, second = Limiter(redis, clock), Limiter(redis, clock)
    await first.flooded(GROUP_CHAT, PLAYERS[2], 1)
    alone = redis.evalsha
    waits: list[float] = []

    async def and_meanwhile(*args: Any, **kwargs: Any) -> Any:
        answer = await alone(*args, **kwargs)
        spent = of_ephemeral(second.ephemeral, GROUP_CHAT, PLAYERS[1])
        redis.evalsha = alone  # type: ignore[method-assign]
        try:
            waits.extend(await second.try_acquire([(spent, Priority.PROMPT)]))
        finally:
            redis.evalsha = and_meanwhile  # type: ignore[method-assign]
        return answer

    redis.evalsha = and_meanwhile  # type: ignore[method-assign]
    await first.flooded(GROUP_CHAT, PLAYERS[0], 5)
    assert waits and all(wait > 4 for wait in waits)


def test_the_setting_takes_auto_true_and_false() -> None:
    def mode(value: str) -> Mode:
        return settings(ephemeral_group_budget=value).messages.ephemeral_group_budget

    assert [mode(v) for v in ("auto", "AUTO", "true", "false")] == ["auto", "auto", True, False]
    assert settings().messages.ephemeral_group_budget == "auto"
