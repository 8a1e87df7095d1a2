"""A basic group upgraded to a supergroup mid-game (a new chat id): the game goes on there."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.core.callbacks import decode
from bot.core.services import services
from bot.core.store import MOVED
from testing.harness import Harness
from testing.tabletop import PASS, TAKE, Tabletop, opened, playing, stored, table_key


@pytest.mark.parametrize(
    "how",
    [
        pytest.param("notices", id="service messages"),
        # Telegram's refusal of the old chat id is how the bot learns of it here.
        pytest.param("refusal", id="refusal only", marks=pytest.mark.telegram_complaints),
        # A table moved by a process that died before rewriting its chat id: the next notice does.
        pytest.param("cut short", id="cut short, finished by the next notice"),
    ],
)
async def test_the_game_follows_its_group_into_the_supergroup(
    harness: Harness, deals: Callable[[int], None], how: str
) -> None:
    h = harness
    deals(2)  # among the shorter three-player games of seeds 1-8, the same at every run
    players = [h.user("Ann"), h.user("Bob"), h.user("Cat", language_code="ru")]
    top = await playing(h, "durak", players, group=h.group(kind="group", creator=players[0]))
    rng = random.Random(3)
    for _ in range(5):
        await top.step(players, rng)
    old = top.group
    before = await stored(h, old)
    new = await h.upgrade(old, notices=how == "notices")
    if how == "refusal":  # the next move's group edit is refused; that moves the table
        await top.step(players, random.Random(4))
    elif how == "cut short":
        assert await services(h.app).store.move(table_key(old), table_key(new)) == MOVED
        await h.upgrade_notice(old, new, "from")
    top.group = new
    assert await stored(h, old) == {}
    after = await stored(h, top.group)
    assert after["chat_id"] == top.group.id
    assert (
        after["played"]["moves"][: len(before["played"]["moves"])] == before["played"]["moves"]
    )  # nothing lost
    # The table is posted in the supergroup; every hand's buttons now name the new chat.
    assert [m for m in h.screen(top.group) if m.from_bot], "no table in the supergroup"
    for user in players:
        hand = [m for m in h.screen(user) if m.from_bot and not m.deleted][-1]
        for button in hand.buttons:
            if button.callback_data:
                assert decode(button.callback_data).chat_id == top.group.id
    await top.play_watched(players, 5)
    assert not await h.redis.exists(table_key(old)), "nothing left at the old key"


async def test_a_lobby_follows_its_group_and_can_still_be_joined(harness: Harness) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    top = await opened(h, ann, "football", h.group(kind="group", creator=ann))
    top.group = await h.upgrade(top.group)
    answer = await top.join(bob)
    assert answer.text is None or not answer.show_alert, answer.text
    assert [s["user_id"] for s in (await stored(h, top.group))["seats"]] == [ann.id, bob.id]
    await top.start(ann)
    await top.play([ann, bob], random.Random(6))


@pytest.mark.telegram_complaints  # Bob's closed private chat
async def test_a_closed_private_chat_is_still_reopened_after_an_upgrade(harness: Harness) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    top = await playing(h, "durak", [ann, bob], group=h.group(kind="group", creator=ann))
    bob.blocked = True
    rng = random.Random(8)
    while all(s["reach"]["dm_ok"] for s in (await stored(h, top.group))["seats"]):
        await top.step([ann, bob], rng)  # until a change of his hand is refused
    top.group = await h.upgrade(top.group)
    await h.private(bob, "/start")  # he unblocks the bot
    assert all(s["reach"]["dm_ok"] for s in (await stored(h, top.group))["seats"])
    await top.play([ann, bob], rng, shun=PASS, prefer=TAKE)


async def test_the_turn_deadline_follows_the_table_in_the_same_commit(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn's deadline moved in the commit that moved the table: it still times out."""
    h = harness
    players = [h.user("Ann"), h.user("Bob")]
    top = Tabletop(h, h.group(kind="group", creator=players[0]))
    await top.setup_game("durak", players, settings={"turn_time": 1})
    svc = services(h.app)
    transact = svc.store.transact
    old_chat = top.group.id

    async def dies_after_the_rewrite(*args: Any, **kwargs: Any) -> Any:
        done = await transact(*args, **kwargs)
        if done[0].table is not None and done[0].table.chat_id != old_chat:
            monkeypatch.setattr(svc.store, "transact", transact)
            raise RedisConnectionError("the process died here")
        return done

    monkeypatch.setattr(svc.store, "transact", dies_after_the_rewrite)
    top.group = await h.upgrade(top.group)
    svc.health.ok()
    assert (await stored(h, top.group))["chat_id"] == top.group.id
    await top.later(16)
    assert (await stored(h, top.group))["played"]["moves"], "his turn never timed out"
