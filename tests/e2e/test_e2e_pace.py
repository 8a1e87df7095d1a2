"""The pace of a game with hands in the group (issue 29). Telegram publishes no limit for
ephemeral messages, so the bot learns per group, from its 429s, whether they count against
the group's 20 a minute (bot.core.budget): from 429s to two players' hands, not from one
that a busy machine or a few members tapping together brought on (issue 35). The fake
plays both worlds (testing/flood.py's ``ephemeral`` switch) and a busy machine (its
``busy``); the players tap the moment their buttons show, the bot's clock moving a quarter
of a second at a time while they wait, and the bot runs as deployed."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.core.budget import RENEW_COOLDOWN
from bot.core.callbacks import Action
from bot.core.services import services
from testing.chats import FakeUser
from testing.clock import Clock
from testing.fakegram import FakeTelegram
from testing.flood import FloodLimits, receiver
from testing.harness import AppFactory, Harness, stop_app
from testing.metrics import sample
from testing.tabletop import Tabletop, is_action, playing, stored
from testing.webapp import client

MINUTE = 60.0
GROUP_PER_MINUTE = 20  # Telegram's published limit for one group


@pytest.fixture
def server(clock: Clock, request: pytest.FixtureRequest) -> FakeTelegram:
    """Telegram with its flood control, counting an ephemeral call against its receiver
    or against the group (the test's parameter)."""
    return FakeTelegram(clock=clock, limits=FloodLimits(clock=clock, ephemeral=request.param))


@pytest.fixture
async def production(make_app: AppFactory, fake_redis: Any) -> AsyncIterator[AppFactory]:
    """Starts a bot process as deployed: the rate limiter on, the group's table edited
    every 3 s, hands in the group, EPHEMERAL_GROUP_BUDGET at its default."""

    async def start(**overrides: Any) -> Any:
        settings = {"rate_limit": True, "table_edit_interval": 3.0, "hands": "group"}
        return await make_app(fake_redis, **{**settings, **overrides})

    yield start


async def harness(server: FakeTelegram, production: AppFactory, fake_redis: Any) -> Harness:
    h = Harness(server)
    h.redis = fake_redis
    h.apps.append(await production())
    return h


def floods(h: Harness) -> list[Any]:
    return [c for c in h.server.calls if c.error and c.error.startswith("Too Many")]


def ephemeral_calls(h: Harness, since: int) -> int:
    """Ephemeral calls Telegram took since the ``since``-th call."""
    return sum(1 for c in h.server.calls[since:] if c.error is None and receiver(c.params))


def hands_sent(h: Harness, user: FakeUser, since: int) -> int:
    """New hands (ephemeral messages) Telegram took for ``user`` since the ``since``-th call."""
    calls = h.server.calls[since:]
    return sum(1 for c in calls if c.method == "sendMessage" and receiver(c.params) == user.id)


async def quick_table(h: Harness, game: str, count: int) -> tuple[Tabletop, list[FakeUser]]:
    """A group (the bot an administrator) whose players have just started a game."""
    players = [h.user(f"P{i}") for i in range(count)]
    group = h.group(creator=players[0])
    group.bot_is_admin = True
    top = await playing(h, game, players, group=group)
    return top, players


async def play_fast(
    top: Tabletop, players: list[FakeUser], seconds: float, seed: int, pester: bool = False
) -> int:
    """Each player taps the moment his buttons show, for ``seconds`` of the bot's clock or
    until the game is over: every tap accepted. The moves made. ``pester``: besides, the
    players who are not to act tap *My cards* all together at every chance."""
    clock = services(top.h.app).clock
    rng = random.Random(seed)
    end = clock() + seconds
    moves = 0
    while clock() < end and not top.finished():
        if pester:
            actor = await top.actor(players)
            for user in players:
                if user is not actor:
                    await top.tap_group(user, Action.CARDS)
        if await top.actor_alone_asked(players):
            _, answer = await top.step(players, rng)
            assert answer.text is None, answer.text
            moves += 1
        else:
            await top.later()
    return moves


async def learned(h: Harness) -> float:
    """How many groups count their hands in their limit, as /metrics says."""
    async with client(h) as c:
        return sample((await c.get("/metrics")).text, "cardtable_groups_learned")


@pytest.mark.parametrize("server", ["receiver"], indirect=True)
async def test_where_hands_count_per_receiver_a_quick_group_is_not_held_to_twenty_a_minute(
    server: FakeTelegram, production: AppFactory, fake_redis: Any
) -> None:
    """More hands change in a minute than the group's 20 calls would allow, and Telegram
    refuses none: the bot never learns a limit that is not there."""
    h = await harness(server, production, fake_redis)
    top, players = await quick_table(h, "durak", 3)
    before = len(h.server.calls)
    moves = await play_fast(top, players, MINUTE, seed=3)
    assert ephemeral_calls(h, before) > 2 * GROUP_PER_MINUTE
    assert moves > GROUP_PER_MINUTE
    assert floods(h) == []
    assert await learned(h) == 0


@pytest.mark.telegram_complaints  # the 429s that teach the bot
@pytest.mark.parametrize("server", ["group"], indirect=True)
async def test_where_hands_count_against_the_group_two_players_429s_teach_every_process(
    server: FakeTelegram, production: AppFactory, fake_redis: Any, clock: Clock
) -> None:
    """Telegram refuses the hands of two players in the group (one refused player teaches
    nothing); from then on its hands count against its 20 a minute, in this process and in
    one started later, and Telegram refuses nothing more. The refused calls go again once
    Telegram allows: no move and no hand is lost (every tap is accepted, the player to act
    always gets his prompt). An hour later the group is tried again at the fast pace."""
    h = await harness(server, production, fake_redis)
    async with client(h) as c:
        before = (await c.get("/metrics")).text
    top, players = await quick_table(h, "durak", 3)
    moves = await play_fast(top, players, MINUTE, seed=3)
    refused = floods(h)
    assert all(c.params["chat_id"] == top.group.id and receiver(c.params) for c in refused)
    first = receiver(refused[0].params)
    assert receiver(refused[1].params) != first  # the first player's 429 alone taught nothing
    assert len(refused) <= 3  # those that went out together, then none
    assert await learned(h) == 1
    async with client(h) as c:
        after = (await c.get("/metrics")).text
    labels = {"chat": "ephemeral", "method": refused[0].method}  # as the page orders them
    counted = [c for c in refused if c.method == refused[0].method]
    assert sample(after, "cardtable_floods_total", **labels) == (
        sample(before, "cardtable_floods_total", **labels) + len(counted)
    )
    # Another process takes over the table (this one stops): it knows what was learned.
    await stop_app(h.apps.pop())
    h.apps.append(await production())
    await clock.advance(5)
    moves += await play_fast(top, players, MINUTE, seed=4)
    assert floods(h) == refused
    assert len((await stored(h, top.group))["played"]["moves"]) == moves
    await top.caught_up(players)  # the newest state in every hand
    await clock.advance(MINUTE)  # the held-back hands go out; then the hour's rest at once:
    clock.offset += 59 * MINUTE  # its 26,000 polls would find nothing (an hour, not a day)
    assert await learned(h) == 0


@pytest.mark.parametrize("pester", [False, True])
@pytest.mark.parametrize("server", ["receiver"], indirect=True)
async def test_calls_a_busy_machine_held_back_teach_no_group_the_slow_pace(
    server: FakeTelegram, production: AppFactory, fake_redis: Any, pester: bool
) -> None:
    """Where Telegram counts hands per receiver, calls that a busy machine held back reach
    it together (every two seconds' calls at once), the members who are not to act tapping
    *My cards* all together at every chance or not: the bot kept a margin on each burst,
    so Telegram refuses nothing, and the group keeps the fast pace."""
    server.limits = FloodLimits(clock=server.clock, ephemeral="receiver", busy=2.0)
    h = await harness(server, production, fake_redis)
    top, players = await quick_table(h, "durak", 3)
    moves = await play_fast(top, players, MINUTE, seed=3, pester=pester)
    assert [receiver(c.params) for c in floods(h)] == []
    assert await learned(h) == 0
    assert moves > GROUP_PER_MINUTE


@pytest.mark.parametrize("server", ["receiver"], indirect=True)
async def test_my_cards_and_the_switch_again_at_once_answer_an_alert_and_send_nothing(
    server: FakeTelegram, production: AppFactory, fake_redis: Any, clock: Clock
) -> None:
    """A player taps *My cards*, then at once *My cards* again and his hand's place switch:
    both are answered at once with a short alert and send nothing; once the cooldown is
    over, *My cards* brings his hand again."""
    h = await harness(server, production, fake_redis)
    top, players = await quick_table(h, "durak", 3)
    await top.caught_up(players)
    bob = players[1]
    answer = await top.tap_group(bob, Action.CARDS)
    assert answer.text is None
    await top.caught_up(players)
    since = len(h.server.calls)
    hand = h.hands(bob, top.group)[-1]
    for again in (top.tap_group(bob, Action.CARDS), h.tap(bob, hand, is_action(Action.PLACE))):
        answer = await again
        assert answer.show_alert and answer.text == "Not so fast: try again in a few seconds."
    await top.caught_up(players)
    assert hands_sent(h, bob, since) == 0
    assert (await stored(h, top.group))["seats"][1]["reach"]["place"] == "group"
    await clock.advance(RENEW_COOLDOWN)
    answer = await top.tap_group(bob, Action.CARDS)
    assert answer.text is None
    await top.caught_up(players)
    assert hands_sent(h, bob, since) == 1
