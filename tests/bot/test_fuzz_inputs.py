"""Arbitrary input at everything that takes it from outside (the Mini App's API, callback
data, command arguments, the webhook): never a 500, a logged error or a changed game; a tap
always gets its answer. One game per test, shared by its examples, each checking it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core import inbox
from testing.chats import FakeUser
from testing.fakeserver import SECRET_HEADER
from testing.harness import Harness
from testing.tabletop import Tabletop, stored
from testing.webapp import bearer, client, exchange, init_data, table_for_two, token

FUZZ = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=80),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
# What a page's "data" might be sent as: anything, a callback-data-like string, a real
# button's data edited by one character.
DATA = JSON | st.text(alphabet=st.characters(codec="ascii"), max_size=80)
STATUSES = {400, 401, 403, 404, 409, 429}


@dataclass
class Game:
    """The test's game, the state it is in before every example, and the page's API."""

    h: Harness
    top: Tabletop
    players: list[FakeUser]
    param: str
    before: dict[str, Any]
    api: httpx.AsyncClient
    stranger: FakeUser

    async def unchanged(self) -> None:
        assert await stored(self.h, self.top.group) == self.before
        assert self.h.log_errors == []


@pytest.fixture
async def game(harness: Harness) -> AsyncIterator[Game]:
    top, players, param = await table_for_two(harness, "durak", turn_time=0)
    before = await stored(harness, top.group)
    async with client(harness) as c:
        yield Game(harness, top, players, param, before, c, harness.user("Mallory"))


def _mutated(data: str, index: int, char: str) -> str:
    if not data:
        return char
    i = index % len(data)
    return data[:i] + char + data[i + 1 :]


@FUZZ
@given(
    raw=st.binary(max_size=300) | JSON.map(lambda v: json.dumps(v).encode()),
    wrapped=DATA.map(lambda d: json.dumps({"data": d}).encode()),
)
async def test_any_move_body_is_refused_with_a_4xx(game: Game, raw: bytes, wrapped: bytes) -> None:
    c = game.api
    headers = bearer(await token(c, game.players[1], game.param))  # not his turn: none passes
    for body in (raw, wrapped):
        r = await c.post("/app/api/move", content=body, headers=headers)
        assert r.status_code in STATUSES, (body, r.status_code, r.text)
        assert "error" in r.json() or r.json().get("refusal")
    await game.unchanged()


# initData's fields, each with any value (past the age check, to the rest).
INIT_DATA = st.dictionaries(
    st.sampled_from(["hash", "user", "start_param", "signature", "query_id", "chat_instance"]),
    st.text(max_size=40),
)


@settings(FUZZ, max_examples=60)
@given(
    authorization=st.text(max_size=120) | st.sampled_from(["Bearer ", "tma ", "Bearer a.b"]),
    param=st.text(max_size=70),
    path=st.sampled_from(["session", "state", "events", "move"]),
    fields=INIT_DATA,
    tail=st.binary(max_size=40),
)
async def test_any_credential_or_parameter_is_refused_with_a_4xx(
    game: Game, authorization: str, param: str, path: str, fields: dict[str, str], tail: bytes
) -> None:
    """Anything sent as a credential is refused, and a session asked for with anything
    made like initData, by either scheme, is a 401."""
    c = game.api
    headers = {"Authorization": authorization} if authorization.isascii() else {}
    method = "POST" if path in ("session", "move") else "GET"
    r = await c.request(method, f"/app/api/{path}", params={"t": param}, headers=headers)
    assert r.status_code in STATUSES, (authorization, param, r.status_code, r.text)
    fresh = {"auth_date": str(int(time.time()))}
    raw = urlencode(fresh | fields).encode() + tail.replace(b"\r", b"").replace(b"\n", b"")
    for scheme in (b"tma ", b"Bearer "):
        r = await c.post("/app/api/session", headers={"Authorization": scheme + raw})
        assert r.status_code == 401, (scheme + raw, r.status_code)
    r = await exchange(c, init_data(game.h.user("Eve"), start_param=param), param)
    assert r.status_code in {200, 403}, (param, r.status_code)
    await game.unchanged()


# Callback data someone forges: any text or bytes, or a real button's with one character
# changed (``index``, ``char``: see _mutated).
FORGED = {
    "data": st.text(max_size=70) | st.binary(max_size=64).map(lambda b: b.decode("latin-1")),
    "index": st.integers(0, 63),
    "char": st.characters(codec="ascii"),
}


@settings(FUZZ, max_examples=45)  # about 15 each for the stranger and the two seats
@given(**FORGED, seat=st.sampled_from([None, 0, 1]))
async def test_any_callback_data_gets_an_answer_and_changes_nothing(
    game: Game, data: str, index: int, char: str, seat: int | None
) -> None:
    """Someone not at the table (``seat`` None) taps any data, a real button's with one character
    changed, or as it is; a player at the table, on turn or not, the same on his own prompt
    (reaching the engine's checks) but for the buttons the bot offers, which are left out."""
    h, top, players = game.h, game.top, game.players
    tapper = game.stranger if seat is None else players[seat]
    prompt = top.prompt(players[seat or 0]) or top.prompt(players[1 - (seat or 0)])
    assert prompt is not None
    real = next(b.callback_data for b in prompt.buttons if b.callback_data)
    taps = [data, _mutated(real, index, char)]
    if seat is None:
        taps.append(real)
    else:
        watched = [top.group, *players]
        offered = {b.callback_data for chat in watched for m in h.screen(chat) for b in m.buttons}
        taps = [sent for sent in taps if sent not in offered]
    for sent in taps:
        answer = await h.tap_data(tapper, prompt.chat_id, prompt.message_id, sent)
        assert answer.answered, sent
    await game.unchanged()


@FUZZ
@given(
    command=st.sampled_from(["newgame", "endgame", "start", "help", "rules", "record", "stats"]),
    args=st.text(st.characters(exclude_categories=["Cs"]), max_size=60),
    private=st.booleans(),
)
async def test_any_command_argument_changes_no_game(
    game: Game, command: str, args: str, private: bool
) -> None:
    text = f"/{command} {args}".rstrip()
    await game.h.command(game.stranger, game.stranger if private else game.top.group, text)
    await game.unchanged()


HOOK_SECRET = "s3cret"
# What an update's parts might be sent as: the Bot API's own field names, with any value.
FIELDS = st.sampled_from(["message_id", "date", "chat", "from", "id", "data", "text", "type"])
UPDATES = st.builds(
    lambda update_id, kind, value: {"update_id": update_id, kind: value},
    st.integers() | st.booleans() | st.text(max_size=4) | st.none(),
    st.sampled_from(["message", "callback_query", "my_chat_member", "edited_message", "x"]),
    JSON | st.dictionaries(FIELDS, JSON, max_size=6),
)


async def _stream_empty(h: Harness) -> None:
    """Wait until the worker has handled (and so removed) every stored update."""
    deadline = time.monotonic() + 5
    while await inbox.Inbox(h.redis, "probe").backlog():
        assert time.monotonic() < deadline, "a stored update was not handled"
        await asyncio.sleep(0.01)


@pytest.mark.settings(webhook_url="https://cards.example.org/hook", webhook_secret=HOOK_SECRET)
@FUZZ
@given(body=st.binary(max_size=200) | (JSON | UPDATES).map(lambda v: json.dumps(v).encode()))
async def test_any_webhook_body_is_stored_and_handled_or_refused_with_400(
    harness: Harness, body: bytes
) -> None:
    h = harness
    async with client(h) as c:
        r = await c.post("/hook", content=body, headers={SECRET_HEADER: HOOK_SECRET})
    assert r.status_code in {200, 400}, (body, r.status_code, r.text)
    if r.status_code == 400:  # refused: never stored, so no worker ever sees it
        assert "error" in r.json()
        assert await inbox.Inbox(h.redis, "probe").backlog() == 0
    await _stream_empty(h)
    assert h.log_errors == []
