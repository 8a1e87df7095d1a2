"""The Mini App's API without a browser: who may see what, and a move from the page taking
the button's path (same checks, same refusals, the same table afterwards)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.core import callbacks, health
from bot.core.callbacks import Action
from bot.core.i18n import t
from bot.core.keys import table_key
from bot.core.replicas import Unconfirmed
from bot.core.services import services
from bot.core.store import Snapshot
from bot.webapp import api, auth, streams
from bot.webapp.auth import SESSION
from engine.games.durak.game import Durak
from testing.chats import FakeUser
from testing.clock import Clock
from testing.harness import Harness
from testing.settings import settings
from testing.tabletop import PLAY_ACTIONS, Tabletop, action_of, hidden_cards, leaks, stored
from testing.webapp import (
    bearer,
    client,
    exchange,
    init_data,
    page_server,
    said,
    table_for_two,
    table_param,
    tampered,
    token,
)

PAGE = "https://cards.example.org/app/"
Touches = Callable[[Harness, str], dict[str, int]]  # the touches fixture (conftest.py)


async def picture(h: Harness, user: FakeUser, param: str) -> dict[str, Any]:
    async with client(h) as c:
        r = await c.get("/app/api/state", headers=bearer(await token(c, user, param)))
    assert r.status_code == 200, r.text
    result: dict[str, Any] = r.json()
    return result


@pytest.mark.settings(webapp_name="table")
async def test_one_link_on_the_group_opens_for_each_his_own_view(
    harness: Harness, asgi: httpx.AsyncClient
) -> None:
    """With only WEBAPP_NAME, the group's table and every hand carry the page's direct link:
    opened from it, it shows a player his own seat, in his language, and anyone else the
    public view; each picture holds only what its seat may know."""
    h = harness
    top, (ann, bob), param = await table_for_two(h, "durak")
    link = f"https://t.me/cardtable_test_bot/table?startapp={param}"
    opens = [(b.text, b.url) for b in top.table_message().buttons if b.url]
    assert opens == [(t("en", "webapp.open"), link)]
    for user in (ann, bob):
        hand = [m for m in h.screen(user) if m.from_bot][-1]
        assert [b.url for b in hand.buttons if b.url] == [link]
        assert not any(b.web_app for b in hand.buttons)
    assert h.server.calls_to("setChatMenuButton") == []
    data = await stored(h, top.group)
    game = Durak.from_json(data["state"])

    async def opened(user: FakeUser) -> dict[str, Any]:
        r = await exchange(asgi, init_data(user, start_param=param), None)
        assert r.status_code == 200, r.text
        shown: dict[str, Any] = (
            await asgi.get("/app/api/state", headers=bearer(r.json()["token"]))
        ).json()
        return shown

    mine = await opened(ann)
    assert mine["seat"] == 0 and mine["view"]["hand"] == game.view(0).hand
    assert mine["lang"] == "en" and mine["view"]["hand"]
    his = await opened(bob)
    assert his["seat"] == 1 and his["lang"] == "ru" and his["view"]["hand"] == game.view(1).hand
    assert not leaks(json.dumps(his), hidden_cards("durak", data["state"], 1))
    stranger = await opened(h.user("Cid", language_code="uk"))
    assert stranger["seat"] is None and stranger["moves"] == [] and stranger["view"]["hand"] == []
    assert stranger["words"]["spectator"] == t("uk", "webapp.spectator")
    assert not leaks(json.dumps(stranger), hidden_cards("durak", data["state"], None))


async def test_the_page_shows_a_name_with_html_characters_as_written(harness: Harness) -> None:
    """The page sets its texts as text: a name is neither escaped there nor read as HTML."""
    h = harness
    name = "<b>&Ann"
    players = [h.user(name), h.user("Bob")]
    group = h.group(creator=players[0])
    top = Tabletop(h, group)
    await top.setup_game("football", players)
    param = await table_param(h, group)
    seen = await picture(h, players[1], param)
    assert name in seen["names"] and name in seen["status"]  # seats are drawn at random
    rng = random.Random(2)
    for _ in range(40):  # until her set-up is done, and narrated
        if any(name in event for event in seen["events"]):
            break
        await top.step(players, rng)
        seen = await picture(h, players[1], param)
    assert any(name in event for event in seen["events"])
    assert "&amp;" not in json.dumps(seen) and "&lt;" not in json.dumps(seen)


async def test_initdata_is_traded_once_for_a_session_and_a_replay_gets_401(
    harness: Harness, asgi: httpx.AsyncClient
) -> None:
    h = harness
    top, (ann, _), param = await table_for_two(h, "durak")
    before = await stored(h, top.group)
    opening = init_data(ann)
    r = await exchange(asgi, opening, param)
    assert r.status_code == 200 and r.json()["expires_in"] == pytest.approx(SESSION)
    ticket = r.json()["token"]
    assert (await asgi.get("/app/api/state", headers=bearer(ticket))).json()["seat"] == 0
    # The same initData again (captured on the way, or a page replaying it): refused,
    # while the session it was traded for goes on.
    assert (await exchange(asgi, opening, param)).status_code == 401
    assert (await asgi.get("/app/api/state", headers=bearer(ticket))).status_code == 200
    # Only the signature counts: forged, another bot's, too old (over a day), or none.
    for bad in (
        tampered(init_data(ann)),
        init_data(ann, token="1:another-bots-token"),
        init_data(ann, age=25 * 3600),
        "",
        "user=%7B%7D&hash=00",
    ):
        assert (await exchange(asgi, bad, param)).status_code == 401
    # A probe's initData is spent when first presented, whatever the answer (a 403 too).
    probe, nowhere = init_data(ann), callbacks.payload(-1_009_999_999_999, None, "zzzz")
    assert (await exchange(asgi, probe, nowhere)).status_code == 403
    for where in (nowhere, nowhere, nowhere, param):
        assert (await exchange(asgi, probe, where)).status_code == 401
    assert (await exchange(asgi, init_data(ann), param)).status_code == 200  # not locked out
    assert await stored(h, top.group) == before


def _altered(text: str, at: int) -> str:
    """``text`` with the character at ``at`` made another: always a change of its bytes
    (the last characters of base64 may end in "AA" already, or carry only padding bits)."""
    return text[:at] + ("B" if text[at] == "A" else "A") + text[at + 1 :]


def _with_user(ticket: str, user_id: int) -> str:
    """A session token with another user id written into it, its signature kept."""
    body, _, signature = ticket.partition(".")
    fields = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    fields[0]["user_id"] = user_id
    raw = json.dumps(fields, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode() + "." + signature


async def _refused_everywhere(c: httpx.AsyncClient, ticket: str, move: str) -> None:
    """Every call with ``ticket`` gets 401: the picture, a move, the stream, a renewal."""
    assert (await c.get("/app/api/state", headers=bearer(ticket))).status_code == 401
    r = await c.post("/app/api/move", json={"data": move}, headers=bearer(ticket))
    assert r.status_code == 401
    assert (await c.get("/app/api/events", headers=bearer(ticket))).status_code == 401
    assert (await c.post("/app/api/session", headers=bearer(ticket))).status_code == 401


async def test_a_forged_or_expired_session_gets_401_and_changes_nothing(
    harness: Harness, clock: Clock, monkeypatch: pytest.MonkeyPatch, asgi: httpx.AsyncClient
) -> None:
    h = harness
    session = 60.0  # its life: a minute of the clock and the bot's pollers, not a quarter hour
    monkeypatch.setattr(auth, "SESSION", session)
    top, players, param = await table_for_two(h, "durak", turn_time=0)
    before = await stored(h, top.group)
    actor = Durak.from_json(before["state"]).to_act()
    assert actor is not None
    mover, other = players[actor.player], players[1 - actor.player]
    move = (await picture(h, mover, param))["moves"][0]["data"]
    ticket = await token(asgi, mover, param)
    body, _, signature = ticket.partition(".")
    for forged in (
        _with_user(await token(asgi, other, param), mover.id),  # Bob's token made Ann's
        f"{body}.{_altered(signature, 0)}",
        f"{_altered(body, len(body) // 2)}.{signature}",
        "",
        "nonsense",
    ):
        await _refused_everywhere(asgi, forged, move)
    # A renewal before it runs out is a new token; the old one still ends when it did.
    await clock.advance(session * 2 / 3)
    r = await asgi.post("/app/api/session", headers=bearer(ticket))
    assert r.status_code == 200 and r.json()["expires_in"] == pytest.approx(session)
    renewed = r.json()["token"]
    await clock.advance(session / 3)
    await _refused_everywhere(asgi, ticket, move)
    assert (await asgi.get("/app/api/state", headers=bearer(renewed))).status_code == 200
    await clock.advance(session)
    await _refused_everywhere(asgi, renewed, move)
    assert await stored(h, top.group) == before


async def test_a_move_from_the_page_is_the_button_s_move_with_its_refusals(
    harness: Harness, asgi: httpx.AsyncClient
) -> None:
    h = harness
    top, players, param = await table_for_two(h, "durak")
    before = await stored(h, top.group)
    actor = Durak.from_json(before["state"]).to_act()
    assert actor is not None
    mover, other = players[actor.player], players[1 - actor.player]
    moves = (await picture(h, mover, param))["moves"]
    # Not configured: no hand message offers the page, the group has no link to it.
    assert not any(b.web_app for u in players for m in h.screen(u) for b in m.buttons)
    assert not any(b.url and "startapp" in b.url for b in top.table_message().buttons)
    assert h.server.calls_to("setChatMenuButton") == []
    # The page offers exactly the buttons of his hand message, with the same data.
    prompt = top.prompt(mover)
    assert prompt is not None
    offered = [b.callback_data for b in prompt.buttons if action_of(b) in PLAY_ACTIONS]
    assert [m["data"] for m in moves] == offered
    # The lead: every move plays a card from his hand, and says which.
    assert {m["card"] for m in moves} <= set((await picture(h, mover, param))["view"]["hand"])
    # Each is marked on the page (data-move) by the engine's token of the move.
    game = Durak.from_json(before["state"])
    legal = {game.move_token(m) for m in game.legal_moves()}
    assert {m["token"] for m in moves} == legal
    assert all(m["token"] == f"a{m['card']}" for m in moves)
    mine, theirs = bearer(await token(asgi, mover, param)), bearer(await token(asgi, other, param))
    # The other player sending the same move: refused as the button would be.
    r = await asgi.post("/app/api/move", json={"data": moves[0]["data"]}, headers=theirs)
    assert r.status_code == 409
    assert r.json()["refusal"] == t(other.language_code or "en", "illegal.not_your_turn")
    r = await asgi.post("/app/api/move", json={"data": moves[0]["data"]}, headers=mine)
    assert r.status_code == 200 and r.json() == {"ok": True, "refusal": None}
    after = await stored(h, top.group)
    assert len(after["played"]["moves"]) == len(before["played"]["moves"]) + 1
    # Sent twice (a double tap): the position stamp refuses the second.
    r = await asgi.post("/app/api/move", json={"data": moves[0]["data"]}, headers=mine)
    assert r.status_code == 409 and await stored(h, top.group) == after
    # Only a hand message's actions: a group button's data is not a move.
    join = callbacks.at(callbacks.address(top.group.id, None, after["game_id"]), Action.JOIN)
    r = await asgi.post("/app/api/move", json={"data": join}, headers=mine)
    assert r.status_code == 400
    await top.caught_up(players)  # the messages followed the page's move as after a tap


@pytest.mark.settings(webapp_url=PAGE, webapp_name="table")
async def test_the_page_is_small_and_offered_only_when_configured(
    harness: Harness, asgi: httpx.AsyncClient
) -> None:
    h, server = harness, harness.server
    top, (ann, bob), param = await table_for_two(h, "durak")
    for user in (ann, bob):
        hand = [m for m in h.screen(user) if m.from_bot][-1]
        pages = [b.web_app for b in hand.buttons if b.web_app]
        assert pages == [f"{PAGE}?t={param}"]
        # His private chat's menu button opens the same table, set with his first hand.
        menus = [c.params for c in server.calls_to("setChatMenuButton")]
        mine = [m["menu_button"] for m in menus if int(m["chat_id"]) == user.id]
        text = t(user.language_code or "en", "webapp.open")
        assert mine == [{"type": "web_app", "text": text, "web_app": {"url": pages[0]}}]
    links = [b.url for b in top.table_message().buttons if b.url]
    assert links == [f"https://t.me/cardtable_test_bot/table?startapp={param}"]
    page = await asgi.get("/app/")
    assert page.status_code == 200 and len(page.content) < 100_000
    with pytest.raises(ValueError):  # Telegram opens only HTTPS pages
        settings(webapp_url="http://cards.example.org/app/")


async def test_a_player_s_page_follows_his_table_into_the_next_game(
    harness: Harness, asgi: httpx.AsyncClient
) -> None:
    h = harness
    top, players, param = await table_for_two(h, "football")
    await top.play(players, random.Random(2))
    await top.tap_group(players[0], Action.AGAIN)
    again = await stored(h, top.group)
    assert again["phase"] == "playing" and param != await table_param(h, top.group)
    # The old game's page: its players see the new game, a stranger sees it gone.
    assert (await picture(h, players[1], param))["view"]["hand"]
    r = await exchange(asgi, init_data(h.user("Cid"), start_param=param), param)
    assert r.status_code == 403


async def test_a_session_is_admitted_by_api_admission_and_shown_by_api_load(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, asgi: httpx.AsyncClient
) -> None:
    """Which read a request makes is the api module's choice: a session's admission (its
    opening, its renewal) reads through api.admission, as the primary has the table (it
    shows nothing), its picture through api.load, as a replica holds it. So while no
    replica confirms reads a session still opens and renews, and only its picture is
    answered 503; and a Redis that does not answer is told as a tap is told it."""
    h = harness
    _, (_, bob), param = await table_for_two(h, "durak")
    admitted = api.admission
    reads: list[str] = []

    async def counted(application: Any, key: str) -> Snapshot:
        reads.append(key)
        return await admitted(application, key)

    async def unconfirmed(key: str) -> Snapshot:
        raise Unconfirmed(None, 1, 0, 300)

    monkeypatch.setattr(api, "admission", counted)
    monkeypatch.setattr(services(h.app).store, "confirmed", unconfirmed)
    ticket = await token(asgi, bob, param)
    r = await asgi.post("/app/api/session", params={"t": param}, headers=bearer(ticket))
    assert r.status_code == 200, r.text
    r = await asgi.get("/app/api/state", headers=bearer(ticket))
    assert r.status_code == 503 and r.json()["refusal"] == t("ru", "common.unconfirmed")
    assert len(reads) == 2  # the opening's and the renewal's

    async def down(key: str) -> None:
        raise RedisTimeoutError("Timeout reading from socket")

    monkeypatch.setattr(services(h.app).store, "confirmed", down)
    r = await asgi.get("/app/api/state", headers=bearer(ticket))
    assert r.status_code == 503 and r.json()["refusal"] == t("ru", "common.unavailable")
    assert services(h.app).health.down_since is not None


async def test_n_open_pages_of_a_table_cost_one_read_per_change(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, touches: Touches
) -> None:
    """Five pages follow one table through the server's real event streams: the server
    reads the table once per change for all of them, and not at all between changes."""
    await _five_pages(harness, monkeypatch, touches, keepalive=0.05)


async def test_the_real_redis_tells_the_pages_of_each_change(
    real_harness: Harness, monkeypatch: pytest.MonkeyPatch, touches: Touches
) -> None:
    """The same on the real Redis: its pub/sub, and its client's read timeout, which a
    quiet subscription outlives (five keep-alives of a quarter of the time the bot's client
    waits for an answer: quiet for longer than that)."""
    await _five_pages(real_harness, monkeypatch, touches, keepalive=health.TIMEOUT / 4)


async def _five_pages(
    h: Harness, monkeypatch: pytest.MonkeyPatch, touches: Touches, keepalive: float
) -> None:
    top, players, param = await table_for_two(h, "durak")
    reads = 0  # the pages' reads of the table
    load = api.load

    async def counted(application: Any, key: str) -> Snapshot:
        nonlocal reads
        reads += 1
        return await load(application, key)

    monkeypatch.setattr(api, "load", counted)
    touched = touches(h, table_key(top.group.id, None))  # by anyone
    monkeypatch.setattr(streams, "KEEPALIVE", keepalive)
    viewers = [*players, *(h.user(name) for name in ("Cid", "Dan", "Eve"))]
    async with (
        page_server(h) as root,
        httpx.AsyncClient(base_url=root, timeout=5) as c,
        contextlib.AsyncExitStack() as stack,
    ):
        pages = []
        tickets = [await token(c, user, param) for user in viewers]
        reads = 0  # a session is given for a table that exists: only the streams' reads count
        for ticket in tickets:
            stream = c.stream("GET", "/app/api/events", headers=bearer(ticket))
            pages.append((await stack.enter_async_context(stream)).aiter_lines())

        async def shown(page: AsyncIterator[str], version: int) -> None:
            """Reads the page's stream until it shows ``version``."""
            async for line in page:
                if line.startswith("data: ") and json.loads(line[6:])["version"] >= version:
                    return

        first = (await stored(h, top.group))["version"]
        for page in pages:
            await shown(page, first)
        assert reads == 1  # the first page's, shared by the four that came after it
        rng = random.Random(4)
        for _ in range(6):
            await top.caught_up(players)
            await top.step(players, rng)
            newest = (await stored(h, top.group))["version"]
            for page in pages:
                await shown(page, newest)
        # Quiet: while every page gets keep-alives, nobody reads the table.
        await top.caught_up(players)
        before = (reads, touched["redis"])
        quiet = 0
        async for line in pages[0]:
            quiet += line.startswith(": keep-alive")
            if quiet == 5:
                break
        assert (reads, touched["redis"]) == before
    changes = newest - first
    assert changes >= 6 and 1 <= reads - 1 <= changes
    print(f"\n{len(pages)} pages, {changes} changes: {reads - 1} reads of the table")


Notices = asyncio.Queue[tuple[str, int] | Exception]


def _subscriptions(h: Harness, monkeypatch: pytest.MonkeyPatch) -> list[Notices]:
    """The hub's subscriptions, one per (re)subscription, made by hand so that a test says
    what each hears: a notice put on one is heard, an error put on one breaks it."""
    subscriptions: list[Notices] = []

    @contextlib.asynccontextmanager
    async def changes() -> AsyncIterator[AsyncIterator[tuple[str, int]]]:
        notices: Notices = asyncio.Queue()
        subscriptions.append(notices)

        async def heard() -> AsyncIterator[tuple[str, int]]:
            while not isinstance(notice := await notices.get(), Exception):
                yield notice
            raise notice

        yield heard()

    monkeypatch.setattr(services(h.app).store, "changes", changes)
    monkeypatch.setattr(streams, "RETRY", 0.0)
    return subscriptions


async def _watching(
    hub: streams.Hub, stack: contextlib.AsyncExitStack, key: str, user_id: int
) -> tuple[streams.Stream, Any]:
    """A page's stream opened and watching the table ``key`` (until ``stack`` closes),
    not yet woken; and its watch."""
    page = hub.streams.open(f"s{user_id}", user_id)
    assert page is not None
    watch = await stack.enter_async_context(hub.watch(key, page))
    page.wake.clear()
    return page, watch


async def test_after_the_subscription_broke_nothing_waits_for_the_catch_up(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a failover each read of the catch-up may wait out REDIS_WAIT_MS (no
    replica yet): the watched tables are read CATCH_UP at a time, and a new page's stream
    and the new notices wait for none of them."""
    hub = streams.Hub(harness.app)
    subscriptions = _subscriptions(harness, monkeypatch)
    watched = [f"t{n}" for n in range(2 * streams.CATCH_UP)]
    slow = asyncio.Event()  # reads of the watched tables after the subscription broke
    reading: set[str] = set()
    at_once = 0
    all_reading = asyncio.Event()

    async def load(application: Any, key: str) -> Snapshot:
        nonlocal at_once
        if len(subscriptions) > 1 and key in watched:
            reading.add(key)
            at_once = max(at_once, len(reading))
            if len(reading) == streams.CATCH_UP:
                all_reading.set()
            await slow.wait()
            reading.discard(key)
        return Snapshot(None, version=len(subscriptions))

    monkeypatch.setattr(api, "load", load)
    async with contextlib.AsyncExitStack() as stack:
        pages = []
        for n, key in enumerate(watched):
            page, watch = await _watching(hub, stack, key, n)
            assert watch.snap.version == 1
            pages.append(page)
        subscriptions[0].put_nowait(RedisConnectionError("Connection closed by server."))
        async with asyncio.timeout(5):
            await all_reading.wait()  # CATCH_UP tables read at once
            newcomer, watch = await _watching(hub, stack, "new", 100)
            assert watch.snap.version == 2, "a new page's stream opens meanwhile"
            subscriptions[1].put_nowait(("new", 3))
            await newcomer.wake.wait()  # and a notice is followed meanwhile
            assert at_once == streams.CATCH_UP, "and no more at once"
            slow.set()
            for page in pages:
                await page.wake.wait()
    assert at_once == streams.CATCH_UP
    await hub.close()


async def test_a_stream_ended_or_opened_unread_tells_its_page_to_wait(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, web: httpx.AsyncClient
) -> None:
    """A stream ended because its table's read was not confirmed (every page of the table
    hears of it at once) says ``retry:`` before it ends, so that its page waits, with
    jitter, before it opens it again (static/live.js); so does one whose first read is
    not confirmed, meets an outage (reported as one) or fails for another reason (no
    outage: WRONGTYPE, say; told in one log line, not an error of the web server's). One
    ended for another reason (a newer stream of the same page: test_webapp_hardening.py)
    says nothing: its page opens it again at once."""
    h = harness
    top, players, param = await table_for_two(h, "durak")
    headers = bearer(await token(web, players[0], param))

    def failing(error: Exception) -> Any:
        async def load(application: Any, key: str) -> Snapshot:
            raise error

        return load

    unconfirmed = Unconfirmed(None, 1, 0, 300)
    async with web.stream("GET", "/app/api/events", headers=headers) as followed:
        lines = followed.aiter_lines()
        assert (await anext(lines)).startswith("data: ")
        monkeypatch.setattr(api, "load", failing(unconfirmed))
        await top.step(players, random.Random(1))  # its notice: a read not confirmed
        assert await said(lines) == [streams.BACK_OFF.strip()]
    wrongtype = ResponseError("WRONGTYPE Operation against a key holding the wrong kind")
    for error in (unconfirmed, wrongtype, RedisConnectionError("Connection refused")):
        monkeypatch.setattr(api, "load", failing(error))
        async with web.stream("GET", "/app/api/events", headers=headers) as opened:
            assert opened.status_code == 200
            assert await said(opened.aiter_lines()) == [streams.BACK_OFF.strip()], error
    (told,) = h.log_errors  # WRONGTYPE's alone
    assert told.getMessage().startswith("the live stream of") and told.exc_info is not None
    h.log_errors.clear()  # the test's own
    assert services(h.app).health.down


async def test_a_table_that_cannot_be_read_ends_its_streams_and_no_other(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table whose read fails with an error that is no outage (one this version cannot
    decode during a rolling deploy, WRONGTYPE, NOPERM) ends its pages' streams, told to
    wait and reopen, and is logged once with its traceback; the other tables' pages go on
    hearing of their changes: on a notice, and in the catch-up after the subscription
    broke."""
    hub = streams.Hub(harness.app)
    subscriptions = _subscriptions(harness, monkeypatch)
    newest = {"good": 1, "bad": 1}
    broken = False

    async def load(application: Any, key: str) -> Snapshot:
        if broken and key == "bad":
            raise ResponseError("WRONGTYPE Operation against a key holding the wrong kind")
        return Snapshot(None, version=newest[key])

    monkeypatch.setattr(api, "load", load)
    told = harness.log_errors
    async with contextlib.AsyncExitStack() as stack, asyncio.timeout(5):
        good, followed = await _watching(hub, stack, "good", 1)
        bad, _ = await _watching(hub, stack, "bad", 2)
        first = [t for t in asyncio.all_tasks() if t.get_name() == "webapp:catch-up"]
        await asyncio.wait(first)  # the first subscription's, which reads the tables again
        good.wake.clear()
        bad.wake.clear()
        broken = True
        subscriptions[-1].put_nowait(("bad", 2))
        await bad.wake.wait()
        assert bad.ended and bad.unread, "its page waits and reopens"
        assert len(told) == 1 and told[0].exc_info
        newest["good"] = 2
        subscriptions[-1].put_nowait(("good", 2))
        await good.wake.wait()
        assert followed.snap.version == 2 and not good.ended
        good.wake.clear()

        broken = False
        again, _ = await _watching(hub, stack, "bad", 3)
        broken = True
        newest["good"] = 3  # its notice lost with the subscription
        subscriptions[-1].put_nowait(RedisConnectionError("Connection closed by server."))
        await again.wake.wait()
        assert again.ended and again.unread, "the catch-up's read"
        await good.wake.wait()
        assert followed.snap.version == 3 and not good.ended
    assert len(told) == 2 and told[1].exc_info
    told.clear()  # the faults were the test's own
    await hub.close()


async def test_a_subscription_ended_by_an_error_is_made_again_by_the_next_stream(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subscription ended by an error that is no outage (NOPERM on its channel) is
    logged once, with its traceback, and the next stream to open makes it again: its
    catch-up brings the pages what they missed."""
    hub = streams.Hub(harness.app)
    subscriptions = _subscriptions(harness, monkeypatch)

    async def load(application: Any, key: str) -> Snapshot:
        return Snapshot(None, version=len(subscriptions))

    monkeypatch.setattr(api, "load", load)
    told = harness.log_errors
    async with contextlib.AsyncExitStack() as stack, asyncio.timeout(5):
        page, first = await _watching(hub, stack, "t", 0)
        subscriptions[-1].put_nowait(ResponseError("NOPERM no permissions to the channel"))
        await asyncio.wait([t for t in asyncio.all_tasks() if t.get_name() == "webapp:changes"])
        assert [r.getMessage() for r in told] == ["webapp:changes failed"] and told[0].exc_info
        page.wake.clear()
        await _watching(hub, stack, "t", 1)
        await page.wake.wait()
        assert len(subscriptions) == 2 and first.snap.version == 2
    told.clear()  # the fault was the test's own
    await hub.close()
