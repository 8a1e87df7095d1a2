"""Two bot processes on one real Redis, as two replicas behind one webhook, and a restart."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.callbacks import Action, decode
from bot.core.services import services
from bot.core.store import LEASE_MS
from bot.service.delivery import start
from engine import cards, records, registry
from engine.games.durak.game import Durak
from testing.chats import BOT_USERNAME, FakeUser
from testing.clock import Clock
from testing.computers import until
from testing.fakegram import FakeTelegram
from testing.harness import AppFactory, Harness, settle, stop_app
from testing.html import parse_html
from testing.tabletop import (
    PASS,
    PLAY_ACTIONS,
    TAKE,
    LeakWatch,
    Tabletop,
    action_of,
    game_for,
    is_action,
    opened,
    playing,
    stored,
    table_key,
)

pytestmark = pytest.mark.redis


@pytest.mark.parametrize("same_button", [False, True])
async def test_two_processes_apply_a_double_tap_once(
    real_harness: Harness,
    make_app: AppFactory,
    real_redis: aioredis.Redis,
    same_button: bool,
) -> None:
    h = real_harness
    second = await make_app(real_redis)
    h.apps.append(second)
    top, players = await game_for(h, "durak", 3)
    rng = random.Random(9)
    for _ in range(25):
        if top.finished():
            break
        user = top.asked(players)
        message = top.prompt(user)
        assert message is not None
        buttons = [b for b in message.buttons if action_of(b) in PLAY_ACTIONS]
        one = rng.choice(buttons)
        other = (
            one
            if same_button or len(buttons) == 1
            else rng.choice([b for b in buttons if b != one])
        )
        before = await stored(h, top.group)
        answers = await asyncio.gather(
            h.tap_data(user, user.id, message.message_id, one.callback_data or "", h.apps[0]),
            h.tap_data(user, user.id, message.message_id, other.callback_data or "", second),
        )
        after = await stored(h, top.group)
        applied = [a for a in answers if a.text is None]
        refused = [a for a in answers if a.text is not None]
        assert all(a.answered for a in answers)
        assert all(a.show_alert for a in refused)
        # No lost and no doubled move: one move per accepted tap, one version per move.
        moves = before["played"]["moves"]
        new_moves = after["played"]["moves"][len(moves) :]
        assert after["played"]["moves"][: len(moves)] == moves
        assert len(new_moves) == len(applied) >= 1
        assert after["version"] == before["version"] + len(applied)
        if same_button:
            assert len(applied) == 1, "the same move twice at once is applied once"
        # Each move made is one of the two tapped (an argument: a 3-character stamp, a move token).
        game = Durak.from_json(before["state"])
        tapped = [decode(b.callback_data).arg for b in (one, other)]
        for move in new_moves:
            token = game.move_token(game.move_from_record(move))
            assert any(
                arg[-len(token) :] == token and len(arg) - len(token) in (0, 3) for arg in tapped
            ), (move, tapped)
        assert len(new_moves) == len({str(m) for m in new_moves})
    # Both processes keep showing the same, current table.
    await LeakWatch(top).check()


async def test_a_new_process_carries_on_a_game(
    real_harness: Harness,
    make_app: AppFactory,
    real_redis: aioredis.Redis,
    deals: Callable[[int], None],
) -> None:
    h = real_harness
    deals(1)  # among the shorter games of seeds 1-8 here, and the same at every run
    top, players = await game_for(h, "durak", 4)
    watch = LeakWatch(top)
    rng = random.Random(12)
    for _ in range(15):
        await top.step(players, rng)
        await watch.check()
    before = await stored(h, top.group)
    await stop_app(h.apps.pop())
    h.apps.append(await make_app(real_redis))
    assert await stored(h, top.group) == before
    await top.play(players, rng, after_each=watch.check)
    data = await stored(h, top.group)
    assert data["phase"] == "finished"
    assert len(data["played"]["moves"]) > len(before["played"]["moves"])
    # The restarted process kept editing the same group message.
    assert len([m for m in h.screen(top.group) if m.from_bot]) == 1


async def test_concurrent_games_in_one_process_do_not_mix(
    real_harness: Harness, deals: Callable[[int], None]
) -> None:
    """Four tables played side by side through one Application: two of each game."""
    h = real_harness
    deals(1)  # among the shorter games of seeds 1-8 here, and the same at every run
    tables = []
    for i in range(4):
        players = [h.user(f"P{i}a"), h.user(f"P{i}b"), h.user(f"P{i}c")][: 2 + i % 2]
        top = await playing(
            h, "durak" if i % 2 else "football", players, group=h.group(f"Group {i}")
        )
        tables.append((top, players))

    async def run(top: Tabletop, players: list[FakeUser], seed: int) -> int:
        watch = LeakWatch(top)
        return await top.play(players, random.Random(seed), after_each=watch.check)

    moves = await asyncio.gather(*(run(t, p, i) for i, (t, p) in enumerate(tables)))
    for (top, _), n in zip(tables, moves, strict=True):
        data = await stored(h, top.group)
        assert data["phase"] == "finished"
        game = registry.spec(data["kind"]).game.from_json(data["state"])
        assert records.replay(records.export(game, data["played"]["moves"]))["finished"]
        assert n > 0


async def test_lobby_races_across_processes(
    real_harness: Harness, make_app: AppFactory, real_redis: aioredis.Redis
) -> None:
    """Joins from two processes at once all land; a double Start deals once."""
    h = real_harness
    second = await make_app(real_redis)
    players = [h.user(name) for name in ("Ann", "Bob", "Cid", "Dan")]
    top = await opened(h, players[0], "durak")
    lobby = top.table_message()

    def tap(user: FakeUser, action: Action, app: Any) -> Any:
        data = h.find(top.table_message(), is_action(action)).callback_data or ""
        return h.tap_data(user, top.group.id, lobby.message_id, data, app)

    apps = (h.apps[0], second, h.apps[0])
    await asyncio.gather(*(tap(u, Action.JOIN, a) for u, a in zip(players[1:], apps, strict=True)))
    data = await stored(h, top.group)
    assert sorted(s["user_id"] for s in data["seats"]) == sorted(u.id for u in players)
    answers = await asyncio.gather(*(tap(players[0], Action.START, a) for a in apps[:2]))
    data = await stored(h, top.group)
    assert data["phase"] == "playing" and data["played"]["moves"] == []
    assert sum(a.text is None for a in answers) == 1
    # Every player holds the hand of the one game that was dealt.
    game = Durak.from_json(data["state"])
    for user in players:
        seat = [s["user_id"] for s in data["seats"]].index(user.id)
        hand = game.view(seat).hand
        shown = [m.text or "" for m in h.screen(user) if m.from_bot][-1]
        assert all(cards.display(cards.parse(card)) in shown for card in hand)


async def test_a_crowd_joining_a_full_lobby_from_two_processes(
    real_harness: Harness, make_app: AppFactory, real_redis: aioredis.Redis
) -> None:
    """Joiners racing for football's last seat through a slow process are told the game is
    full and keep no "you joined" message."""
    h = real_harness
    slow = await make_app(real_redis)
    held = slow.bot.request.hold = asyncio.Event()  # its Bot API calls wait for this
    ann, bob = h.user("Ann"), h.user("Bob")
    crowd = [h.user(f"U{i}") for i in range(3)]
    # A public group: the slow process asks Telegram whether each joiner is a member.
    top = await opened(h, ann, "football", h.group(username="cardnight"))
    lobby = top.table_message()
    join = h.find(lobby, is_action(Action.JOIN))

    def tap(user: FakeUser, app: Any) -> Any:
        return h.tap_data(user, top.group.id, lobby.message_id, join.callback_data or "", app)

    late = [asyncio.create_task(tap(u, slow)) for u in crowd]
    await asyncio.sleep(0.1)  # they have looked at the lobby: a seat was free
    assert (await tap(bob, h.apps[0])).text is None  # Bob takes it meanwhile
    held.set()
    answers = await asyncio.gather(*late)
    seated = [s["user_id"] for s in (await stored(h, top.group))["seats"]]
    assert seated == [ann.id, bob.id]
    for user, answer in zip(crowd, answers, strict=True):
        assert answer.show_alert and "full" in (answer.text or ""), answer.text
        assert not [m for m in h.screen(user) if m.from_bot], "no 'you joined' left behind"


async def test_play_again_while_another_process_delivers_gets_a_new_group_message(
    real_harness: Harness, make_app: AppFactory, real_redis: aioredis.Redis
) -> None:
    h = real_harness
    second = await make_app(real_redis)
    top, players = await game_for(h, "durak", 2)
    await top.play(players, random.Random(3), shun=PASS, prefer=TAKE)  # the shortest way
    result = top.table_message()
    said = result.text
    # The second process is delivering the table (it holds the lease) when Play again is
    # tapped through the first, which leaves the delivery to it.
    held = await services(second).store.claim(table_key(top.group))
    assert held is not None
    assert (await top.tap_group(players[0], Action.AGAIN)).text is None
    start(services(second), table_key(top.group), held)  # it goes on to the newest version
    await settle(second)
    posted = [m for m in h.screen(top.group) if m.from_bot]
    assert posted[-1] is not result, "the new game has a message of its own"
    assert result.text == said and not result.buttons  # the result stays, its buttons go
    data = await stored(h, top.group)
    assert data["phase"] == "playing"
    await top.play(players, random.Random(4), shun=PASS, prefer=TAKE)


def rendered(data: dict[str, Any], seat: int | None) -> str:
    """The bot's own view of the stored table, as Telegram shows it: is the screen up to date?"""
    from bot.core.models import Table
    from bot.screens.views import group_screen, hand_screen

    table = Table.model_validate({k: v for k, v in data.items() if k != "version"})
    table.version = data["version"]
    screen = group_screen(table, BOT_USERNAME) if seat is None else hand_screen(table, seat)
    assert screen is not None
    return parse_html(screen.text)[0].strip()


async def test_screens_end_on_the_newest_state_when_two_processes_race(
    real_harness: Harness, make_app: AppFactory, real_redis: aioredis.Redis
) -> None:
    """Ann's set-up tap through a slow process, Bob's through a fast one: no older render
    overwrites a newer one, no edit repeats what a message shows."""
    h = real_harness
    slow = await make_app(real_redis, latency=0.05)
    ann, bob = players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "football", players)

    async def tap(user: FakeUser, step: str, app: Any) -> None:
        prompt = top.prompt(user)
        assert prompt is not None
        button = next(b for b in prompt.buttons if decode(b.callback_data or "").arg == step)
        await h.tap_data(user, user.id, prompt.message_id, button.callback_data or "", app)

    for step in "0123c":
        version = (await stored(h, top.group))["version"]
        first = asyncio.create_task(tap(ann, step, slow))
        while (await stored(h, top.group))["version"] == version:
            await asyncio.sleep(0.002)
        await tap(bob, step, h.apps[0])
        await first
        data = await stored(h, top.group)
        assert top.table_message().text == rendered(data, None), f"group stale after {step}"
        for seat, seated in enumerate(data["seats"]):
            hand = [m for m in h.screen(seated["user_id"]) if m.from_bot][-1]
            assert hand.text == rendered(data, seat), f"seat {seat} stale after {step}"


async def test_a_group_edit_deferred_before_a_restart_still_happens(
    server: FakeTelegram, make_app: AppFactory, real_redis: aioredis.Redis, clock: Clock
) -> None:
    """A coalesced group edit left for later by a process then stopped still comes when due."""
    h = Harness(server)
    h.redis = real_redis
    h.apps.append(await make_app(real_redis, table_edit_interval=1.0))
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "durak", players)
    rng = random.Random(3)
    await clock.advance(1.0)
    await top.step(players, rng)  # shown at once (the last edit was long enough ago)
    await top.step(players, rng)  # within the interval: left for later
    data = await stored(h, top.group)
    assert top.table_message().text != rendered(data, None)
    await stop_app(h.apps.pop())
    h.apps.append(await make_app(real_redis, table_edit_interval=1.0))
    await clock.advance(1.0)
    await until(h, lambda: top.table_message().text == rendered(data, None), 2.0, "the newest move")


@pytest.mark.telegram_complaints  # the dead process never answers the tap
async def test_a_process_that_dies_holding_delivery_work_holds_nothing_for_long(
    real_harness: Harness, make_app: AppFactory, real_redis: aioredis.Redis, clock: Clock
) -> None:
    """A move committed by a process that died before showing it: once its lease runs out a
    live process brings the next player his prompt, untapped."""
    h = real_harness
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "durak", players)
    doomed = await make_app(real_redis)
    frozen = doomed.bot.request.hold = asyncio.Event()  # its Bot API calls never return
    for poller in services(doomed).pollers:  # and it is dead: no renewals, no polls
        poller.cancel()
    clock.apps.remove(doomed)  # nothing it does comes to an end
    actor = top.asked(players)
    (waiting,) = [u for u in players if u is not actor]
    prompt = top.prompt(actor)
    assert prompt is not None
    before = (await stored(h, top.group))["version"]
    data = prompt.buttons[0].callback_data or ""
    dying = asyncio.create_task(h.tap_data(actor, actor.id, prompt.message_id, data, doomed))
    try:
        while (await stored(h, top.group))["version"] == before:
            await asyncio.sleep(0.005)
        await clock.advance(0.3)
        assert top.prompt(waiting) is None  # the lease is still the dead process's
        await clock.advance(LEASE_MS / 1000)  # it runs out: the live process's poll takes over
        await until(h, lambda: top.prompt(waiting) is not None, 2.0, "the next player's prompt")
    finally:
        dying.cancel()
        frozen.set()  # let the dead process's jobs end, so that it can be stopped
