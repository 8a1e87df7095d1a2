"""The Record button's document comes at most once a game: not again for a table the
old code finished and posted, not twice when the delivering process dies after sending
it; and a document Telegram refuses is said on the result, so that it is asked again."""

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
from bot.service import delivery
from testing.harness import Harness, settle
from testing.tabletop import Tabletop, playing, stored, table_key


def documents(h: Harness, top: Tabletop) -> list[dict[str, Any]]:
    return [json.loads(m.document_bytes or b"") for m in h.screen(top.group) if m.document]


async def finished_game(h: Harness) -> tuple[Tabletop, list[Any]]:
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "football", players)
    await top.play(players, random.Random(2))
    await settle(h.app)
    return top, players


async def test_a_table_the_old_code_finished_and_posted_posts_no_second_record(
    harness: Harness,
) -> None:
    """The old code set ``record_sent`` when it had posted the record itself, and kept
    no slot for it; a delivery pass on such a table (here: one brought by a redeploy)
    must not post it again."""
    h = harness
    top, (ann, _) = await finished_game(h)
    key = table_key(top.group)
    data = json.loads(await h.redis.hget(key, "d"))
    data["delivery"]["record_sent"] = True
    data.pop("record_asked", None)  # a field the old code did not have
    await h.redis.hset(key, "d", json.dumps(data))
    delivery.start(services(h.app), key)
    await top.later(20)
    assert documents(h, top) == []
    await top.tap_group(ann, Action.RECORD)
    assert h.alerts(ann)[-1] == t(ann.language_code or "en", "tap.record_sent")


async def test_a_record_is_not_posted_again_when_its_sender_dies_before_saving(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process that posted the document dies before it can save that it did (its
    release never arrives); the process that takes the table over after the lease runs
    out posts nothing more."""
    h = harness
    top, (ann, _) = await finished_game(h)
    store = services(h.app).store
    release = store.release
    died: list[bool] = []

    async def dies_after_the_document(*args: Any, **kwargs: Any) -> Any:
        if documents(h, top) and not died:
            died.append(True)
            raise RedisConnectionError("the process died here")
        return await release(*args, **kwargs)

    monkeypatch.setattr(store, "release", dies_after_the_document)
    await top.tap_group(ann, Action.RECORD)
    await settle(h.app)
    assert died and len(documents(h, top)) == 1
    services(h.app).health.ok()
    await top.later(int(LEASE_MS / 250) * 3)  # the lease runs out; the table comes due
    assert len(documents(h, top)) == 1
    assert (await stored(h, top.group))["delivery"]["record_sent"]


@pytest.mark.telegram_complaints
async def test_a_refused_record_is_said_once_on_the_result(harness: Harness) -> None:
    h = harness
    top, (ann, bob) = await finished_game(h)
    h.server.inject("sendDocument", 400, "Bad Request: not enough rights to send documents")
    answer = await top.tap_group(ann, Action.RECORD)
    await settle(h.app)
    notice = plain(ann.language_code or "en", "record.refused")
    assert answer.text is None and documents(h, top) == []
    assert not (await stored(h, top.group))["delivery"]["record_sent"], "the claim was given back"
    assert notice in (top.table_message().text or "")
    answer = await top.tap_group(bob, Action.RECORD)  # asked again: the notice goes, the record
    await settle(h.app)
    assert answer.text is None and len(documents(h, top)) == 1
    assert notice not in (top.table_message().text or "")
