"""Arbitrary input thrown at everything that takes it from outside: the Mini App's API
(bodies, credentials, parameters), callback data, command arguments. Never a 500, never an
unhandled exception or a logged error, never a changed game; a tap always gets its answer.

One game per test, made at its first example and shared by the rest (the harness is the
test's): each example checks that nothing of it changed. The examples are few and the
deadline off, so that the suite stays quick.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testing.chats import FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, stored
from testing.webapp import bearer, client, exchange, init_data, table_for_two, token

FUZZ = settings(
    max_examples=40,
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


async def _game(h: Harness) -> tuple[Tabletop, list[FakeUser], str, dict[str, Any]]:
    """The test's game (made once), and its state before the first example."""
    made: tuple[Tabletop, list[FakeUser], str, dict[str, Any]] | None = getattr(h, "fuzzed", None)
    if made is None:
        top, players, param = await table_for_two(h, "durak", turn_time=0)
        made = (top, players, param, await stored(h, top.group))
        h.fuzzed = made  # type: ignore[attr-defined]
    return made


async def _unchanged(h: Harness, top: Tabletop, before: dict[str, Any]) -> None:
    assert await stored(h, top.group) == before
    assert h.log_errors == []


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
async def test_any_move_body_is_refused_with_a_4xx(
    harness: Harness, raw: bytes, wrapped: bytes
) -> None:
    h = harness
    top, players, param, before = await _game(h)
    async with client(h) as c:
        headers = bearer(await token(c, players[1], param))  # not his turn: nothing may pass
        for body in (raw, wrapped):
            r = await c.post("/app/api/move", content=body, headers=headers)
            assert r.status_code in STATUSES, (body, r.status_code, r.text)
            assert "error" in r.json() or r.json().get("refusal")
    await _unchanged(h, top, before)


@FUZZ
@given(
    authorization=st.text(max_size=120) | st.sampled_from(["Bearer ", "tma ", "Bearer a.b"]),
    param=st.text(max_size=70),
    path=st.sampled_from(["session", "state", "events", "move"]),
)
async def test_any_credential_or_parameter_is_refused_with_a_4xx(
    harness: Harness, authorization: str, param: str, path: str
) -> None:
    h = harness
    top, _, _, before = await _game(h)
    headers = {"Authorization": authorization} if authorization.isascii() else {}
    async with client(h) as c:
        method = "POST" if path in ("session", "move") else "GET"
        r = await c.request(method, f"/app/api/{path}", params={"t": param}, headers=headers)
        assert r.status_code in STATUSES, (authorization, param, r.status_code, r.text)
        r = await exchange(c, init_data(h.user("Eve")), param)
        assert r.status_code in {200, 404}, (param, r.status_code)
    await _unchanged(h, top, before)


@FUZZ
@given(
    data=st.text(max_size=70) | st.binary(max_size=64).map(lambda b: b.decode("latin-1")),
    index=st.integers(0, 63),
    char=st.characters(codec="ascii"),
)
async def test_any_callback_data_gets_an_answer_and_changes_nothing(
    harness: Harness, data: str, index: int, char: str
) -> None:
    h = harness
    top, players, _, before = await _game(h)
    prompt = top.prompt(players[0]) or top.prompt(players[1])
    assert prompt is not None
    real = next(b.callback_data for b in prompt.buttons if b.callback_data)
    # Someone not at the table taps: any data, or a real button's data with one character
    # changed (a stale, forged or replayed tap).
    stranger = getattr(h, "stranger", None) or h.user("Mallory")
    h.stranger = stranger  # type: ignore[attr-defined]
    for sent in (data, _mutated(real, index, char), real):
        answer = await h.tap_data(stranger, prompt.chat_id, prompt.message_id, sent)
        assert answer.answered, sent
    await _unchanged(h, top, before)


@FUZZ
@given(
    command=st.sampled_from(["newgame", "endgame", "start", "help", "rules", "record", "stats"]),
    args=st.text(st.characters(exclude_categories=["Cs"]), max_size=60),
    private=st.booleans(),
)
async def test_any_command_argument_changes_no_game(
    harness: Harness, command: str, args: str, private: bool
) -> None:
    h = harness
    top, _, _, before = await _game(h)
    stranger = getattr(h, "stranger", None) or h.user("Mallory")
    h.stranger = stranger  # type: ignore[attr-defined]
    text = f"/{command} {args}".rstrip()
    await h.command(stranger, stranger if private else top.group, text)
    await _unchanged(h, top, before)
