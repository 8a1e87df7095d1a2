"""A delivery whose release is lost removes what it sent anew (bot.service.messages.unsaved).

A failover that outlasts the lease lets another process take the table while a round is
out: that round's release finds the lease another's, or is given up, and the slots naming
its new messages are not saved. The next delivery works from the old slots and sends its
own prompt; the first one's is removed by the process that sent it, so the player is left
with one prompt, and plays on. A message the table names (the release landed after all)
stays."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.core import replicas
from bot.core.scripts import Release
from bot.core.services import services
from bot.core.store import Snapshot
from bot.service import delivery
from testing.fakegram import FakeTelegram
from testing.harness import AppFactory, Harness, harness_on, settle
from testing.tabletop import game_for, playing, table_key


@pytest.fixture(params=["private", "group"])
async def placed(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    fake_redis: aioredis.Redis,
) -> AsyncIterator[Harness]:
    """The bot with every hand in the private chat, or in the group."""
    async for h in harness_on(request, server, make_app, fake_redis, hands=request.param):
        yield h


# The new holder's removal of the old prompt, which the lost round removed already (an
# ephemeral one it cannot delete it tries to strip of its buttons).
GONE = {
    "private": ["deleteMessage refused: Bad Request: message to delete not found"],
    "group": [
        "deleteEphemeralMessage refused: Bad Request: message to delete not found",
        "editEphemeralMessageReplyMarkup refused: Bad Request: message to edit not found",
    ],
}


# Two processes show one version (the lost round's, then the new holder's, from the old
# slots): edits that change nothing, and a deletion of the old prompt already deleted.
@pytest.mark.telegram_complaints
async def test_the_prompt_of_a_round_whose_release_is_lost_is_removed(
    placed: Harness, make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the group, a hand is an ephemeral message, sent anew at any time where the bot
    is an administrator."""
    h, hands = placed, services(placed.app).settings.messages.hands
    other = await make_app(h.redis, hands=hands)
    players = [h.user("Ann"), h.user("Bob")]
    group = h.group(creator=players[0])
    group.bot_is_admin = True
    top = await playing(h, "durak", players, group=group)
    await top.later(60)  # quiet for a while: the next prompt rings, a new message
    mine, theirs = services(h.app), services(other)
    key = table_key(top.group)
    release = mine.store.release
    taken: list[Snapshot] = []

    async def taken_meanwhile(*args: Any, **kwargs: Any) -> Snapshot | None:
        """The round's lease runs out before its release lands (a long failover), and
        the other process takes the table."""
        monkeypatch.setattr(mine.store, "release", release)
        await h.redis.hset(key, "lease", f"{mine.store.owner}|0")
        snap = await theirs.store.claim(key)
        assert snap is not None
        taken.append(snap)
        return await release(*args, **kwargs)

    monkeypatch.setattr(mine.store, "release", taken_meanwhile)
    sends = len(h.server.calls_to("sendMessage"))
    _, answer = await top.step(players, random.Random(1))
    assert answer.text is None
    await settle(h.app)
    assert taken, "the round was released while the other held the lease"
    assert len(h.server.calls_to("sendMessage")) > sends, "the round sent a new prompt"
    assert delivery.start(theirs, key, taken[0])  # the new holder, from the old slots
    await settle(other)

    asked = top.asked(players)
    assert len(top.prompts(asked)) == 1, "one live prompt"
    _, answer = await top.step(players, random.Random(2))
    assert answer.text is None, "and the game goes on"
    refused = [p for p in h.problems() if "edits changed nothing" not in p]
    assert refused == GONE[hands]


@pytest.mark.telegram_complaints  # as above, when the release was lost
@pytest.mark.parametrize("landed", [False, True])
async def test_a_release_given_up_removes_only_what_the_table_does_not_name(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, landed: bool
) -> None:
    """Redis goes away as the release goes out, for longer than it is run again: the
    release is given up. Lost, its round's new prompt is removed and the table, due once
    the lease has run out, is delivered from the old slots; landed all the same (only
    its answer was lost), the table names that prompt, and it stays."""
    h = harness
    top, players = await game_for(h, "durak")
    await top.later(60)  # quiet for a while: the next prompt rings, a new message
    svc = services(h.app)
    store = svc.store
    run = store._release

    async def away(release: Release) -> Any:
        monkeypatch.setattr(store, "_release", run)
        if landed:
            await run(release)
        raise RedisConnectionError("Connection reset by peer")

    monkeypatch.setattr(replicas, "AGAIN_FOR", 0.0)  # given up at the first failure
    monkeypatch.setattr(store, "_release", away)
    sends = len(h.server.calls_to("sendMessage"))
    _, answer = await top.step(players, random.Random(1))
    assert answer.text is None
    await settle(h.app)
    assert len(h.server.calls_to("sendMessage")) > sends, "the round sent a new prompt"
    kept = [m for u in players for m in top.prompts(u)]
    assert len(kept) == (1 if landed else 0), "removed unless the table names it"
    await top.later(12)  # the lease runs out: due, and delivered if it was lost

    asked = top.asked(players)
    assert len(top.prompts(asked)) == 1, "one live prompt"
    _, answer = await top.step(players, random.Random(2))
    assert answer.text is None, "and the game goes on"
    refused = [p for p in h.problems() if "edits changed nothing" not in p]
    assert refused == ([] if landed else GONE["private"])
