"""The shared rate limiter: Telegram's limits kept by all processes together, prompts
first, a 429 holding back one chat only. Time is the limiter's injected clock."""

from __future__ import annotations

from collections.abc import AsyncIterator

import fakeredis
import pytest
from redis.exceptions import ConnectionError

from bot.core.limiter import ALL, GROUP, PRIVATE, Limiter, Priority

GROUP_CHAT = -100555
PLAYERS = list(range(1000, 1100))


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def two() -> AsyncIterator[tuple[Limiter, Limiter, Clock]]:
    """Two processes' limiters on one Redis."""
    redis = fakeredis.FakeAsyncRedis()
    clock = Clock()
    yield Limiter(redis, clock), Limiter(redis, clock), clock
    await redis.aclose()


async def granted_in(limiter: Limiter, clock: Clock, chat: int, seconds: float) -> int:
    """How many calls to ``chat`` are granted over ``seconds``, asking every 50 ms."""
    count = 0
    end = clock.now + seconds
    while clock.now < end:
        (wait,) = await limiter.try_acquire([(chat, Priority.PROMPT)])
        count += wait == 0
        clock.now += 0.05
    return count


async def test_one_chat_gets_its_burst_then_about_one_call_a_second(
    two: tuple[Limiter, Limiter, Clock],
) -> None:
    first, second, clock = two
    burst = [await lim.try_acquire([(PLAYERS[0], Priority.PROMPT)]) for lim in (first, second)]
    burst.append(await first.try_acquire([(PLAYERS[0], Priority.PROMPT)]))
    assert burst == [[0.0], [0.0], [0.0]]  # two processes share the chat's burst
    (wait,) = await second.try_acquire([(PLAYERS[0], Priority.PROMPT)])
    assert 0 < wait <= PRIVATE.interval
    clock.now += 60
    calls = await granted_in(first, clock, PLAYERS[0], 20)
    assert PRIVATE.burst <= calls <= 20 / PRIVATE.interval + PRIVATE.burst
    assert calls <= 20 + 3  # Telegram's one a second, with its short burst


async def test_a_group_gets_under_twenty_calls_a_minute(
    two: tuple[Limiter, Limiter, Clock],
) -> None:
    first, _, clock = two
    calls = await granted_in(first, clock, GROUP_CHAT, 60)
    assert 15 <= calls <= 20
    assert calls <= 60 / GROUP.interval + GROUP.burst


async def test_the_whole_bot_stays_under_thirty_calls_a_second(
    two: tuple[Limiter, Limiter, Clock],
) -> None:
    first, second, clock = two
    granted = 0
    for tick in range(1000):  # ten seconds of both processes asking for many chats
        for limiter in (first, second):
            chat = PLAYERS[tick % len(PLAYERS)]
            waits = await limiter.try_acquire([(chat, Priority.PROMPT)])
            granted += waits == [0.0]
        clock.now += 0.01
    assert 10 / ALL.interval <= granted <= 10 / ALL.interval + ALL.burst
    assert granted <= 30 + 10 * 30  # within Telegram's 30 a second after a burst of 30


async def test_prompts_go_first_when_the_bot_is_busy(
    two: tuple[Limiter, Limiter, Clock],
) -> None:
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


async def test_flood_control_holds_back_that_chat_alone_in_every_process(
    two: tuple[Limiter, Limiter, Clock],
) -> None:
    first, second, clock = two
    await first.hold(GROUP_CHAT, 30)
    (held,) = await second.try_acquire([(GROUP_CHAT, Priority.PROMPT)])
    assert 29 < held <= 30
    (other,) = await second.try_acquire([(GROUP_CHAT - 1, Priority.PROMPT)])
    assert other == 0
    clock.now += 30
    assert await first.try_acquire([(GROUP_CHAT, Priority.PROMPT)]) == [0.0]


async def test_without_redis_calls_go_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """An outage must not stall what the bot could still send."""
    limiter = Limiter(fakeredis.FakeAsyncRedis(), Clock())

    async def down(*args: object, **kwargs: object) -> object:
        raise ConnectionError("Redis is down")

    monkeypatch.setattr(limiter, "_acquire", down)
    assert await limiter.try_acquire([(PLAYERS[0], Priority.PROMPT)]) == [0.0]
