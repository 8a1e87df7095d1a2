"""The pace of a game with hands in the group (issues 29, 35): the bot learns from 429s to two
players' hands whether ephemeral messages count against the group's 20 a minute
(bot.core.budget), in either world the fake plays (testing/flood.py)."""

from __future__ import annotations

import random
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
PRODUCTION = {"rate_limit": True, "table_edit_interval": 3.0, "hands": "group"}
pytestmark = pytest.mark.settings(**PRODUCTION)  # the bot as deployed


@pytest.fixture
def server(clock: Clock, request: pytest.FixtureRequest) -> FakeTelegram:
    """Telegram's flood control, an ephemeral call counted against its receiver or the group."""
    return FakeTelegram(clock=clock, limits=FloodLimits(clock=clock, ephemeral=request.param))


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
    """Each player taps the moment his buttons show (the clock moving on while nobody is
    asked), for ``seconds`` or to the game's end: the moves made. ``pester``: the players not
    to act tap *My cards* together at every chance."""
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


@pytest.mark.parametrize(("busy", "pester"), [(0.0, False), (2.0, True)])
@pytest.mark.parametrize("server", ["receiver"], indirect=True)
async def test_where_hands_count_per_receiver_a_quick_group_is_not_held_to_twenty_a_minute(
    harness: Harness, busy: float, pester: bool
) -> None:
    """More hands than the group's 20 calls a minute, none refused, no limit learned; also
    when a busy machine sends its calls in bursts (the bot keeps a margin on each) while
    the members not to act pester with *My cards*, which only adds calls to the bursts."""
    h = harness
    h.server.limits = FloodLimits(clock=h.server.clock, ephemeral="receiver", busy=busy)
    top, players = await quick_table(h, "durak", 3)
    before = len(h.server.calls)
    moves = await play_fast(top, players, MINUTE, seed=3, pester=pester)
    assert ephemeral_calls(h, before) > 2 * GROUP_PER_MINUTE
    assert moves > GROUP_PER_MINUTE
    assert floods(h) == []
    assert await learned(h) == 0


@pytest.mark.telegram_complaints  # the 429s that teach the bot
@pytest.mark.parametrize("server", ["group"], indirect=True)
async def test_where_hands_count_against_the_group_two_players_429s_teach_every_process(
    harness: Harness, make_app: AppFactory, fake_redis: Any, clock: Clock
) -> None:
    """Two refused players (not one) teach this process and a later one the group's limit:
    nothing more is refused, no move or hand lost; an hour later the fast pace is tried."""
    h = harness
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
    h.apps.append(await make_app(fake_redis, **PRODUCTION))
    await clock.advance(5)
    moves += await play_fast(top, players, MINUTE, seed=4)
    assert floods(h) == refused
    assert len((await stored(h, top.group))["played"]["moves"]) == moves
    await top.caught_up(players)  # the newest state in every hand
    await clock.advance(MINUTE)  # the held-back hands go out; then the hour's rest at once:
    clock.offset += 59 * MINUTE  # its 26,000 polls would find nothing (an hour, not a day)
    assert await learned(h) == 0


@pytest.mark.parametrize("server", ["receiver"], indirect=True)
async def test_my_cards_and_the_switch_again_at_once_answer_an_alert_and_send_nothing(
    harness: Harness, clock: Clock
) -> None:
    """*My cards* or the switch again at once: an alert, nothing sent; later, the hand again."""
    h = harness
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
