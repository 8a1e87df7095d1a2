"""A tap is answered as soon as its change is stored, before any message it sets off:
picking a game in a private chat (its "you are seated" message) and Record (its
document), with the bot's rate limits on; the message still comes, once, and a tap
delivered again changes nothing."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.callbacks import Action
from bot.core.i18n import t
from bot.handlers.once import update_key
from engine import records
from testing.chats import FakeUser
from testing.computers import lobby_with_computers, play_people
from testing.fakegram import FakeTelegram
from testing.harness import AppFactory, Harness, harness_on
from testing.tabletop import Tabletop, is_action, playing, stored


@pytest.fixture
async def limited(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    fake_redis: aioredis.Redis,
) -> AsyncIterator[Harness]:
    """The bot with its rate limits on (as in production) and a quick computer."""

    async def make(redis: Any, **overrides: Any) -> Any:
        return await make_app(redis, rate_limit=True, computer_delay=0.02, **overrides)

    async for h in harness_on(request, server, make, fake_redis):
        yield h


def calls_since(h: Harness, start: int) -> list[str]:
    """The Bot API methods called since ``start`` (an index into the fake's calls)."""
    return [c.method for c in h.server.calls[start:]]


async def tap_first(h: Harness, top: Tabletop, user: FakeUser, action: Action) -> str:
    """Taps ``action`` once it is shown and checks that the tap's answer is the first
    call its handling makes; the query id."""
    message = await top.shown(action)
    start = len(h.server.calls)
    await h.tap(user, message, is_action(action))
    query = h.delivered[-1]["callback_query"]["id"]
    first = h.server.calls[start]
    assert (first.method, first.params.get("callback_query_id")) == (
        "answerCallbackQuery",
        query,
    ), f"answered after {calls_since(h, start)}"
    assert first.params.get("text") is None, "answered silently"
    return str(query)


async def redeliver(h: Harness) -> list[str]:
    """The last update again, as Telegram sends it when the process that committed it
    died before answering (its claim on the update ran out); the calls it made."""
    update = h.delivered[-1]
    await h.redis.delete(update_key(update["update_id"]))
    h.server.queries[update["callback_query"]["id"]].answered = False  # its answer was lost
    start = len(h.server.calls)
    await h.deliver(update)
    return calls_since(h, start)


def documents(h: Harness, chat: Any) -> list[dict[str, Any]]:
    return [json.loads(m.document_bytes or b"") for m in h.screen(chat) if m.document]


async def test_a_private_game_pick_is_answered_before_the_seated_message(
    limited: Harness,
) -> None:
    h = limited
    ann = h.user("Ann")
    for command in ("/start", "/help", "/newgame"):  # his chat's burst is spent
        await h.private(ann, command)
    top = Tabletop(h, ann)  # type: ignore[arg-type]  # a private chat is a table too
    await tap_first(h, top, ann, Action.PICK)
    seated = t("en", "join.vs_computer", game=t("en", "game.football"))
    await top.later(20)
    texts = [m.text for m in h.screen(ann) if m.from_bot]
    assert texts.count(seated) == 1, texts
    assert await redeliver(h) == ["answerCallbackQuery"]
    await top.later(20)
    assert [m.text for m in h.screen(ann) if m.from_bot].count(seated) == 1
    assert [s["user_id"] for s in (await stored(h, top.group))["seats"]] == [ann.id]


async def test_record_in_a_private_chat_is_answered_before_its_document(
    limited: Harness,
) -> None:
    h = limited
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "football", 1, start=True)
    await play_people(h, top, [ann], random.Random(1))
    await tap_first(h, top, ann, Action.RECORD)
    await top.later(20)
    (record,) = documents(h, ann)
    data = await stored(h, top.group)
    assert record["moves"] == data["played"]["moves"] and records.replay(record)["finished"]
    assert await redeliver(h) == ["answerCallbackQuery"]
    await top.later(20)
    assert len(documents(h, ann)) == 1


async def test_record_in_a_group_is_answered_before_its_document_which_comes_once(
    limited: Harness,
) -> None:
    h = limited
    ann, bob = h.user("Ann"), h.user("Bob", language_code="uk")
    top = await playing(h, "football", [ann, bob])
    await top.play_paced([ann, bob], random.Random(3))
    await tap_first(h, top, ann, Action.RECORD)
    assert await redeliver(h) == ["answerCallbackQuery"]
    await top.later(40)  # the group's limit: the result, then the document
    (record,) = documents(h, top.group)
    assert sorted(record["table"]["users"]) == sorted([ann.id, bob.id])
