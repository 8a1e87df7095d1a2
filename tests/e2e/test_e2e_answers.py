"""A tap is answered before the message it sets off (its "you are seated", its record), which
still comes once; the Record button's document comes at most once a game."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.core.callbacks import Action
from bot.core.i18n import plain, t
from bot.core.services import services
from bot.core.store import LEASE_MS
from bot.handlers.once import update_key
from bot.service import delivery
from engine import records
from testing.chats import FakeUser
from testing.computers import DELAY, lobby_with_computers, play_people
from testing.harness import Harness, settle
from testing.tabletop import Tabletop, game_for, is_action, playing, stored, table_key

LIMITED = pytest.mark.settings(rate_limit=True, computer_delay=DELAY)  # as in production


def calls_since(h: Harness, start: int) -> list[str]:
    """The Bot API methods called since ``start`` (an index into the fake's calls)."""
    return [c.method for c in h.server.calls[start:]]


async def tap_first(h: Harness, top: Tabletop, user: FakeUser, action: Action) -> None:
    """Taps ``action`` once shown, checking that its answer is the first call it makes."""
    message = await top.shown(action)
    start = len(h.server.calls)
    await h.tap(user, message, is_action(action))
    query = h.delivered[-1]["callback_query"]["id"]
    first = h.server.calls[start]
    assert first.method == "answerCallbackQuery", f"answered after {calls_since(h, start)}"
    assert first.params.get("callback_query_id") == query
    assert first.params.get("text") is None, "answered silently"


async def redeliver(h: Harness) -> list[str]:
    """The last update again, its claim run out and its answer lost: the calls it made."""
    update = h.delivered[-1]
    await h.redis.delete(update_key(update["update_id"]))
    h.server.queries[update["callback_query"]["id"]].answered = False  # its answer was lost
    start = len(h.server.calls)
    await h.deliver(update)
    return calls_since(h, start)


def documents(h: Harness, chat: Any) -> list[dict[str, Any]]:
    return [json.loads(m.document_bytes or b"") for m in h.screen(chat) if m.document]


@LIMITED
async def test_a_private_game_pick_is_answered_before_the_seated_message(harness: Harness) -> None:
    h = harness
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


@LIMITED
async def test_record_in_a_private_chat_is_answered_before_its_document(harness: Harness) -> None:
    h = harness
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


@LIMITED
async def test_record_in_a_group_is_answered_before_its_document_which_comes_once(
    harness: Harness,
) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob", language_code="uk")
    top = await playing(h, "football", [ann, bob])
    await top.play_paced([ann, bob], random.Random(3))
    await tap_first(h, top, ann, Action.RECORD)
    assert await redeliver(h) == ["answerCallbackQuery"]
    await top.later(40)  # the group's limit: the result, then the document
    (record,) = documents(h, top.group)
    assert sorted(record["table"]["users"]) == sorted([ann.id, bob.id])


async def finished_game(h: Harness) -> tuple[Tabletop, list[Any]]:
    top, players = await game_for(h, "football")
    await top.play(players, random.Random(2))
    await settle(h.app)
    return top, players


async def test_a_table_the_old_code_finished_and_posted_posts_no_second_record(
    harness: Harness,
) -> None:
    """A table the old code marked ``record_sent`` (with no slot for it) posts no record again."""
    h = harness
    top, (ann, _) = await finished_game(h)
    key = table_key(top.group)
    data = json.loads(await h.redis.hget(key, "d"))
    data["delivery"]["record_sent"] = True
    data.pop("record_asked", None)  # a field the old code did not have
    await h.redis.hset(key, "d", json.dumps(data))
    delivery.start(services(h.app), key)
    await top.later(20)
    assert documents(h, top.group) == []
    await top.tap_group(ann, Action.RECORD)
    assert h.alerts(ann)[-1] == t(ann.language_code or "en", "tap.record_sent")


async def test_a_record_is_not_posted_again_when_its_sender_dies_before_saving(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process that posted the record dies before saving so: its successor posts no other."""
    h = harness
    top, (ann, _) = await finished_game(h)
    store = services(h.app).store
    release = store.release
    died: list[bool] = []

    async def dies_after_the_document(*args: Any, **kwargs: Any) -> Any:
        if documents(h, top.group) and not died:
            died.append(True)
            raise RedisConnectionError("the process died here")
        return await release(*args, **kwargs)

    monkeypatch.setattr(store, "release", dies_after_the_document)
    await top.tap_group(ann, Action.RECORD)
    await settle(h.app)
    assert died and len(documents(h, top.group)) == 1
    services(h.app).health.ok()
    await top.later(int(LEASE_MS / 250) * 3)  # the lease runs out; the table comes due
    assert len(documents(h, top.group)) == 1
    assert (await stored(h, top.group))["delivery"]["record_sent"]


@pytest.mark.telegram_complaints
async def test_a_refused_record_is_said_once_on_the_result(harness: Harness) -> None:
    h = harness
    top, (ann, bob) = await finished_game(h)
    h.server.inject("sendDocument", 400, "Bad Request: not enough rights to send documents")
    answer = await top.tap_group(ann, Action.RECORD)
    await settle(h.app)
    notice = plain(ann.language_code or "en", "record.refused")
    assert answer.text is None and documents(h, top.group) == []
    assert not (await stored(h, top.group))["delivery"]["record_sent"], "the claim was given back"
    assert notice in (top.table_message().text or "")
    answer = await top.tap_group(bob, Action.RECORD)  # asked again: the notice goes, the record
    await settle(h.app)
    assert answer.text is None and len(documents(h, top.group)) == 1
    assert notice not in (top.table_message().text or "")
