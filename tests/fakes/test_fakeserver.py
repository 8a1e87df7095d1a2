"""Telegram's flood control as the fake models it (testing/flood.py ``FloodLimits``), and
the fake served over HTTP (testing/fakeserver.py) as PTB's own client sees it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

import pytest
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
)
from telegram.error import InvalidToken, RetryAfter

from testing.chats import BOT_TOKEN, FakeGroup, FakeUser
from testing.clock import ManualClock
from testing.errors import ApiError
from testing.fakegram import FakeTelegram
from testing.fakeserver import FakeServer, serving
from testing.flood import FloodLimits


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def telegram(clock: ManualClock) -> FakeTelegram:
    server = FakeTelegram(limits=FloodLimits(clock=clock))
    for i in range(40):
        server.add_user(FakeUser(id=100 + i, first_name=f"U{i}"))
    server.add_group(FakeGroup(id=-1001, title="Card night"))
    return server


def send(telegram: FakeTelegram, chat_id: int) -> Any:
    return telegram.handle("sendMessage", {"chat_id": chat_id, "text": "hi"}, {})


def retry_after(telegram: FakeTelegram, chat_id: int) -> int:
    with pytest.raises(ApiError) as refused:
        send(telegram, chat_id)
    assert refused.value.code == 429
    assert refused.value.parameters is not None
    return int(refused.value.parameters["retry_after"])


def test_a_private_chat_takes_a_burst_of_three_then_one_a_second(
    telegram: FakeTelegram, clock: ManualClock
) -> None:
    for _ in range(3):
        send(telegram, 100)
    assert retry_after(telegram, 100) == 1
    send(telegram, 101)  # another chat is not held back
    clock.now += 0.5
    for _ in range(5):
        assert retry_after(telegram, 100) == 1, "half a token is not a call"
    clock.now += 0.5
    send(telegram, 100)  # the refusals did not push the next token further away
    assert retry_after(telegram, 100) == 1


def test_a_group_gets_twenty_a_minute_after_its_burst(
    telegram: FakeTelegram, clock: ManualClock
) -> None:
    for _ in range(3):
        send(telegram, -1001)
    assert retry_after(telegram, -1001) == 3
    clock.now += 2.9
    assert retry_after(telegram, -1001) == 1, "the chat's own second has passed, not 3 s"
    clock.now += 0.1
    send(telegram, -1001)
    edit = {"chat_id": -1001, "message_id": 1, "text": "changed"}
    with pytest.raises(ApiError) as refused:
        telegram.handle("editMessageText", edit, {})
    assert refused.value.code == 429, "edits count like messages"


def test_the_whole_bot_gets_thirty_chat_messages_a_second_and_nothing_else_is_limited(
    telegram: FakeTelegram, clock: ManualClock
) -> None:
    for i in range(30):
        send(telegram, 100 + i)
    for _ in range(50):
        telegram.handle("getMe", {}, {})
        telegram.handle("getChatMember", {"chat_id": -1001, "user_id": 100}, {})
    assert telegram.limits is not None and telegram.limits.refused == 0
    assert retry_after(telegram, 130) == 1
    clock.now += 1 / 30
    send(telegram, 130)


def hand(chat_id: int, receiver: int) -> dict[str, Any]:
    """An ephemeral message's parameters (the bot an administrator of the group)."""
    return {"chat_id": chat_id, "text": "your hand", **ephemeral(receiver)}


def ephemeral(receiver: int) -> dict[str, Any]:
    return {"ephemeral_message_parameters": {"receiver_user_id": receiver}}


@pytest.mark.parametrize("world", ["group", "receiver"])
def test_hands_in_a_group_count_against_the_group_or_each_receiver_as_the_switch_says(
    telegram: FakeTelegram, clock: ManualClock, world: Literal["group", "receiver"]
) -> None:
    """Telegram publishes no limit for ephemeral messages: the fake plays either world."""
    telegram.limits = FloodLimits(clock=clock, ephemeral=world)
    telegram.groups[-1001].bot_is_admin = True
    refused = []
    for i in range(10):
        try:
            telegram.handle("sendMessage", hand(-1001, 100 + i), {})
        except ApiError as error:
            assert error.code == 429 and error.parameters is not None
            refused.append(error.parameters["retry_after"])
    if world == "group":
        assert refused == [3] * 7  # the group's burst of three, then its 20 a minute
        return
    assert refused == []  # each receiver's own: a burst of three, one a second
    for _ in range(2):
        telegram.handle("sendMessage", hand(-1001, 100), {})
    edit = {"chat_id": -1001, "receiver_user_id": 100, "ephemeral_message_id": 1, "text": "x"}
    with pytest.raises(ApiError) as too_many:
        telegram.handle("editEphemeralMessageText", edit, {})
    assert too_many.value.code == 429
    send(telegram, -1001)  # the group's own budget is untouched


@pytest.fixture
async def served(telegram: FakeTelegram) -> AsyncIterator[FakeServer]:
    async with serving(telegram) as server:
        yield server


# PTB's own RetryAfter constructor reads its deprecated int ``retry_after`` (PTB 22.2+).
@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_over_http_ptb_gets_retry_after_and_every_call_is_logged(
    served: FakeServer, telegram: FakeTelegram
) -> None:
    bot = Bot(BOT_TOKEN, base_url=f"{served.url}/bot")
    async with bot:
        for n in range(3):
            message = await bot.send_message(100, f"<b>move {n}</b>", parse_mode="HTML")
        assert telegram.messages[100][message.message_id].text == "move 2"
        with pytest.raises(RetryAfter) as refused:
            await bot.send_message(100, "one too many")
    assert str(refused.value) == "Flood control exceeded. Retry in 1 seconds"
    sends = [s for s in served.log if s.method == "sendMessage"]
    assert [s.status for s in sends] == [200, 200, 200, 429]
    assert sends[-1].retry_after == 1
    assert sends[0].message_id == 1 and sends[0].params["chat_id"] == 100
    assert all(s.received <= s.done for s in served.log)


async def test_a_wrong_token_is_unauthorized(served: FakeServer) -> None:
    bot = Bot("1:wrong", base_url=f"{served.url}/bot")
    with pytest.raises(InvalidToken):
        await bot.get_me()


async def test_a_document_upload_arrives_whole(served: FakeServer, telegram: FakeTelegram) -> None:
    """Multipart bodies (the game record is sent as a file) reach the simulation as files."""
    record = b'{"moves": ["12", "text \\u00e9"]}'
    bot = Bot(BOT_TOKEN, base_url=f"{served.url}/bot")
    async with bot:
        await bot.send_document(-1001, record, filename="game.json", caption="1e3")
    (message,) = telegram.screen(-1001)
    assert message.document is not None and message.document["file_name"] == "game.json"
    assert message.document_bytes == record
    assert message.caption == "1e3", "a caption that reads as a number stays text"


async def test_inline_answers_and_edits_over_http(
    served: FakeServer, telegram: FakeTelegram
) -> None:
    """An offset that reads as a number stays text; an inline edit answers True."""
    ann, bob = telegram.users[100], telegram.users[101]
    query = telegram.inline.ask(ann, telegram.add_dialog(ann, bob).id, "games", "")
    button = InlineKeyboardButton("Join", callback_data="join")
    result = InlineQueryResultArticle(
        "7",
        "A table",
        InputTextMessageContent("<b>A table</b>", parse_mode="HTML"),
        reply_markup=InlineKeyboardMarkup([[button]]),
    )
    bot = Bot(BOT_TOKEN, base_url=f"{served.url}/bot")
    async with bot:
        assert await bot.answer_inline_query(query.id, [result], next_offset="1e3") is True
        assert query.answer is not None and query.answer.next_offset == "1e3"
        seen = telegram.inline.see(ann, query.chat_id, "games", "", query.answer, cached=False)
        message, chosen = telegram.inline.post(ann, seen, seen.result("7"))
        assert chosen is not None and message.text == "A table"
        edited = await bot.edit_message_text("Joined", inline_message_id=message.inline_message_id)
    assert edited is True and message.text == "Joined"
