"""The Mini App probed over HTTP by someone not at the table: which table a page may open,
malformed credentials, work done for nothing (issue 35; a credential that probes:
test_webapp_api.py)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from bot.core import callbacks
from bot.webapp import api, page, quota
from testing.fakeserver import SECRET_HEADER
from testing.harness import Harness
from testing.tabletop import stored, table_key
from testing.webapp import bearer, exchange, init_data, page_server, table_for_two, token

HOOK_SECRET = "s3cret-hook"
FORBIDDEN = {"error": "forbidden"}


def _guarded(r: httpx.Response) -> bool:
    """The answer carries the security headers (an API answer: never cached)."""
    return (
        r.headers.get("content-security-policy") == page.POLICY
        and r.headers.get("x-content-type-options") == "nosniff"
        and r.headers.get("referrer-policy") == "no-referrer"
        and r.headers.get("cache-control") == "no-store"
    )


async def test_a_table_opens_by_its_signed_parameter_or_for_its_players_only(
    harness: Harness, web: httpx.AsyncClient
) -> None:
    """Ann plays in her group only: another group's table is not hers to open by its
    address, whatever her initData's start_param; by Telegram's signed parameter it
    opens in its public view. A refusal says nothing of whether the table exists; a
    session is for its own table only."""
    h = harness
    _, (ann, _), mine = await table_for_two(h, "durak")
    other, players, theirs = await table_for_two(h, "durak")
    rival = players[0]
    parsed = callbacks.parse_payload(theirs)
    assert parsed is not None
    nowhere = callbacks.payload(-1_009_999_999_999, None, parsed[2])
    for signed in (None, mine, nowhere):  # the address overriding the signed parameter
        r = await exchange(web, init_data(ann, start_param=signed), theirs)
        assert (r.status_code, r.json()) == (403, FORBIDDEN), signed
    other_game = callbacks.payload(parsed[0], None, callbacks.new_game_id())  # its group's
    for absent in (nowhere, callbacks.payload(-1_001_234_567_890, None, "zzzz"), other_game):
        for signed in (None, absent):  # a table that is not there: the same answer
            r = await exchange(web, init_data(ann, start_param=signed), absent)
            assert (r.status_code, r.json()) == (403, FORBIDDEN), (absent, signed)
    # Telegram's signed parameter (the group's link): the public view, for anyone.
    r = await exchange(web, init_data(ann, start_param=theirs), theirs)
    assert r.status_code == 200
    shown = await web.get("/app/api/state", headers=bearer(r.json()["token"]))
    assert shown.json()["seat"] is None and shown.json()["view"]["hand"] == []
    # Her own table by its address (her private hand's button): her seat.
    r = await exchange(web, init_data(ann), mine)
    assert r.status_code == 200
    shown = await web.get("/app/api/state", headers=bearer(r.json()["token"]))
    assert shown.json()["seat"] == 0
    # The other table's first player: his address opens it, hers does not.
    assert (await exchange(web, init_data(rival), theirs)).status_code == 200
    assert (await exchange(web, init_data(rival), mine)).status_code == 403
    # The mover there, with a session of Ann's table: no picture of his, no move there.
    before = await stored(h, other.group)
    mover = await other.actor(players)
    assert mover is not None
    at_his = bearer(await token(web, mover, theirs))
    move = (await web.get("/app/api/state", headers=at_his)).json()["moves"][0]["data"]
    at_hers = bearer(await token(web, mover, mine))
    for path in ("state", "events"):
        r = await web.get(f"/app/api/{path}", params={"t": theirs}, headers=at_hers)
        assert r.status_code == 403
    moved = {"data": move}
    assert (await web.post("/app/api/move", json=moved, headers=at_hers)).status_code == 403
    assert await stored(h, other.group) == before
    # The session of his table makes the same move.
    assert (await web.post("/app/api/move", json=moved, headers=at_his)).status_code == 200
    after = (await stored(h, other.group))["played"]["moves"]
    assert len(after) == len(before["played"]["moves"]) + 1


async def test_a_person_s_requests_count_together_whatever_his_initdata(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh initData does not start a fresh quota: his sessions share one, and another
    person is not held back by his. (His burst made a quarter of its size, as are the
    requests that overrun it.)"""
    monkeypatch.setattr(quota, "PERSON_BURST", quota.PERSON_BURST // 4)
    h = harness
    _, _, param = await table_for_two(h, "durak")
    dan = h.user("Dan")
    async with page_server(h) as root, httpx.AsyncClient(base_url=root, timeout=10) as web:
        # All at once, as a script would: more than his burst and what refills meanwhile.
        openings = [init_data(dan, start_param=param) for _ in range(4 * quota.PERSON_BURST)]
        answers = []
        for at in range(0, len(openings), 40):
            some = openings[at : at + 40]
            answers += await asyncio.gather(*(exchange(web, data, param) for data in some))
        statuses = Counter(r.status_code for r in answers)
        assert set(statuses) == {200, 429}, statuses
        assert statuses[200] >= quota.PERSON_BURST
        refused = next(r for r in answers if r.status_code == 429)
        assert int(refused.headers["retry-after"]) >= 1
        assert (await exchange(web, init_data(h.user("Eve"), start_param=param), param)).is_success


@pytest.mark.settings(webhook_url="https://cards.example.org/hook", webhook_secret=HOOK_SECRET)
async def test_a_malformed_initdata_or_webhook_secret_is_refused_with_the_headers(
    harness: Harness, web: httpx.AsyncClient
) -> None:
    """No 500, no traceback in the log (the harness fails a test that logs an error)."""
    h = harness
    for hash_ in ("%C3%A9", "%FF%FE"):  # a hash that is not ASCII once decoded
        headers = {"Authorization": f"tma auth_date={int(time.time())}&hash={hash_}"}
        r = await web.post("/app/api/session", params={"t": "x"}, headers=headers)
        assert r.status_code == 401 and r.json() == {"error": "unauthorized"}
        assert _guarded(r)
    for secret in ("é".encode(), b"\xff" * 12, b"s3cret-hoo\xe9"):
        r = await web.post("/hook", json={"update_id": 1}, headers={SECRET_HEADER: secret})
        assert r.status_code == 403 and r.json() == {"error": "forbidden"}
        assert r.headers.get("content-security-policy") == page.POLICY
        assert r.headers.get("x-content-type-options") == "nosniff"
    assert h.log_errors == []


async def test_an_answer_the_server_did_not_plan_carries_the_headers_too(
    harness: Harness, web: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault (here a table that cannot be read for a reason nobody foresaw) is a 500,
    with the same headers as every other answer."""
    h = harness
    _, (ann, _), param = await table_for_two(h, "durak")

    async def broken(*args: Any) -> Any:
        raise RuntimeError("an unforeseen fault")

    ticket = bearer((await exchange(web, init_data(ann), param)).json()["token"])
    monkeypatch.setattr(api, "load", broken)
    r = await web.get("/app/api/state", headers=ticket)
    assert r.status_code == 500 and _guarded(r)
    assert [e.getMessage() for e in h.log_errors] == ["Exception in ASGI application\n"]
    h.log_errors.clear()  # the fault was the test's own


async def test_a_stranger_s_move_is_refused_before_the_table_is_touched(
    harness: Harness, web: httpx.AsyncClient, touches: Callable[[Harness, str], dict[str, int]]
) -> None:
    h = harness
    top, players, param = await table_for_two(h, "durak", turn_time=0)
    for player in players:  # the one who has a move to make now
        hers = bearer((await exchange(web, init_data(player), param)).json()["token"])
        moves = (await web.get("/app/api/state", headers=hers)).json()["moves"]
        if moves:
            break
    assert moves
    opened = await exchange(web, init_data(h.user("Eve"), start_param=param), param)
    eve = bearer(opened.json()["token"])
    before = await stored(h, top.group)
    touched = touches(h, table_key(top.group))
    for move in moves:
        r = await web.post("/app/api/move", json={"data": move["data"]}, headers=eve)
        assert r.status_code == 409 and r.json()["refusal"], r.text
    assert touched == {"lock": 0, "redis": 0}
    # The player's own move still takes the table's path.
    r = await web.post("/app/api/move", json={"data": moves[0]["data"]}, headers=hers)
    assert r.status_code == 200 and touched["lock"] == 1
    assert (await stored(h, top.group))["version"] == before["version"] + 1


async def test_a_set_up_reset_with_nothing_to_reset_makes_no_new_version(
    harness: Harness, web: httpx.AsyncClient
) -> None:
    """Her reset taken again (a page sent it twice, a stale button): nothing to reset, so
    nothing is committed, published or read again by the pages."""
    h = harness
    top, (ann, _), param = await table_for_two(h, "football", turn_time=0)
    ticket = bearer((await exchange(web, init_data(ann), param)).json()["token"])

    async def shown() -> dict[str, Any]:
        result: dict[str, Any] = (await web.get("/app/api/state", headers=ticket)).json()
        return result

    async def send(data: str) -> None:
        r = await web.post("/app/api/move", json={"data": data}, headers=ticket)
        assert r.status_code == 200, r.text

    version = (await stored(h, top.group))["version"]
    await send(next(m["data"] for m in (await shown())["moves"] if m.get("card")))
    picked = await shown()
    assert len(picked["picks"]) == 1
    reset = next(m["data"] for m in picked["moves"] if m["token"] == "setup:reset")
    await send(reset)
    assert (await shown())["picks"] == []
    assert (await stored(h, top.group))["version"] == version + 2
    for _ in range(10):
        await send(reset)
    assert (await stored(h, top.group))["version"] == version + 2
