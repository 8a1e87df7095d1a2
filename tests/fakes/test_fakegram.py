"""The fake Telegram itself: it must fail where Telegram fails, or the e2e tests lie.

These drive a tiny Application (not the bot) through the real python-telegram-bot stack.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest, EndPointNotFound, Forbidden, NetworkError, RetryAfter
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
)

from bot.core.services import services
from testing.chats import BOT_ID, BOT_TOKEN, BOT_USERNAME
from testing.fakegram import FakeRequest, FakeTelegram
from testing.harness import Harness, marked_settings, start_app, stop_app
from testing.html import parse_html

SEEN: list[Update] = []
AGAIN = InlineKeyboardMarkup([[InlineKeyboardButton("Again", callback_data="a")]])


async def on_ping(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    SEEN.append(update)
    assert update.effective_message is not None
    await update.effective_message.reply_text(
        "<b>pong</b>  ", parse_mode="HTML", reply_markup=AGAIN, do_quote=False
    )


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    SEEN.append(update)
    query = update.callback_query
    assert query is not None
    await query.answer(f"got {query.data}", show_alert=True)
    await query.edit_message_text(f"tapped {query.data}")


@pytest.fixture
async def tiny() -> AsyncIterator[Harness]:
    SEEN.clear()
    server = FakeTelegram()
    app = Application.builder().token(BOT_TOKEN).request(FakeRequest(server)).build()
    app.add_handler(CommandHandler("ping", on_ping))
    app.add_handler(CallbackQueryHandler(on_tap))
    await start_app(app)
    yield Harness(server, [app])
    await stop_app(app)


async def test_a_command_arrives_as_telegram_sends_it_and_a_tap_answers_and_edits(
    tiny: Harness,
) -> None:
    ann = tiny.user("Ann", language_code="uk")
    group = tiny.group(forum=True)
    topic = tiny.topic(group, "Cards")
    await tiny.command(ann, group, "/ping now", thread=topic, mention=True)
    update = SEEN[-1]
    assert update.effective_user is not None and update.effective_user.language_code == "uk"
    assert update.effective_chat is not None and update.effective_chat.id == group.id
    message = update.effective_message
    assert message is not None and message.message_thread_id == topic
    assert message.text == f"/ping@{BOT_USERNAME} now"
    assert message.entities[0].type == "bot_command"
    # reply_text in a topic answers in that topic; its HTML parsed, its text trimmed
    reply = tiny.last(group)
    assert reply.thread_id == topic and reply.text == "pong"
    assert reply.entities == [{"type": "bold", "offset": 0, "length": 4}]
    assert [b.text for b in reply.buttons] == ["Again"]
    answer = await tiny.tap(ann, reply, "Again")
    assert answer.answered and answer.show_alert and answer.text == "got a"
    assert tiny.alerts(ann) == ["got a"]
    query = SEEN[-1].callback_query
    assert query is not None and query.message is not None
    assert query.message.chat.id == group.id
    assert tiny.last(group).text == "tapped a"
    assert tiny.last(group).buttons == []  # editMessageText without markup drops the keyboard
    assert tiny.problems() == []
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):  # answered once only
        await query.answer("again")


def test_html_errors_are_telegrams() -> None:
    assert parse_html("a &lt;b&gt; &#9824; <i>x</i>") == (
        "a <b> ♠ x",
        [{"type": "italic", "offset": 8, "length": 1}],
    )
    with pytest.raises(Exception, match="Unsupported start tag"):
        parse_html("<div>x</div>")
    with pytest.raises(Exception, match="Can't find end tag"):
        parse_html("<b>x")


async def test_an_edit_that_changes_nothing_is_refused_and_a_deleted_message_s_tap_delivered(
    tiny: Harness,
) -> None:
    ann = tiny.user("Ann")
    await tiny.private(ann, "/ping")
    message = tiny.last(ann)
    bot = tiny.app.bot
    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await bot.edit_message_text(
            "<b>pong</b>", ann.id, message.message_id, parse_mode="HTML", reply_markup=AGAIN
        )
    assert tiny.server.not_modified == 1
    # Same text without bold is a change; so is dropping the keyboard.
    await bot.edit_message_text("pong", ann.id, message.message_id)
    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await bot.edit_message_reply_markup(ann.id, message.message_id, reply_markup=None)
    assert tiny.server.not_modified == 2
    where = f"of message {message.message_id} in chat {ann.id}"
    assert tiny.problems() == [
        f"2 edits changed nothing (editMessageText {where}; editMessageReplyMarkup {where})"
    ]
    await bot.delete_message(ann.id, message.message_id)
    assert tiny.screen(ann) == [m for m in tiny.screen(ann) if not m.from_bot]
    await tiny.tap_data(ann, ann.id, message.message_id, "zz")  # forged data
    query = SEEN[-1].callback_query
    assert query is not None and query.data == "zz"
    assert query.message is not None and not query.message.is_accessible
    assert tiny.alerts(ann) == ["got zz"]


async def test_private_chats_need_start_and_respect_blocks_and_bad_calls_are_refused(
    tiny: Harness,
) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob", started=False)
    bot = tiny.app.bot
    with pytest.raises(Forbidden, match="bot can't initiate conversation with a user"):
        await bot.send_message(bob.id, "hi")
    await tiny.follow(bob, f"https://t.me/{BOT_USERNAME}?start=join_123")
    assert SEEN == []  # no /start handler in the tiny app, but the chat is open now
    await bot.send_message(bob.id, "hi")
    bob.blocked = True
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(bob.id, "hi")
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await bot.edit_message_text("x", ann.id, 999)
    with pytest.raises(BadRequest, match=r"(?i)message to delete not found"):
        await bot.delete_message(ann.id, 999)
    too_long = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="d" * 65)]])
    with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
        await bot.send_message(ann.id, "x", reply_markup=too_long)
    with pytest.raises(BadRequest, match=r"(?i)chat not found"):
        await bot.send_message(12345, "x")


async def test_flood_control_a_bad_gateway_and_unknown_methods(tiny: Harness) -> None:
    ann = tiny.user("Ann")
    tiny.server.flood("sendMessage", retry_after=7)
    with pytest.raises(RetryAfter) as caught:
        await tiny.app.bot.send_message(ann.id, "x")
    assert caught.value.retry_after in (7, dt.timedelta(seconds=7))
    await tiny.app.bot.send_message(ann.id, "x")  # one flood only
    with pytest.raises(EndPointNotFound):
        await tiny.app.bot.do_api_request("sendHologram", {"chat_id": ann.id})
    assert [c.method for c in tiny.server.unknown_calls] == ["sendHologram"]
    tiny.server.bad_gateway("sendMessage")  # a proxy's 502 page, which is not JSON
    with pytest.raises(NetworkError) as failed:
        await tiny.app.bot.send_message(ann.id, "hello")
    assert "Bad Gateway (502)" in failed.value.message
    assert "<html>" in failed.value.message  # PTB quotes the page it could not parse
    await tiny.app.bot.send_message(ann.id, "hello")  # once only


async def test_documents_and_members(tiny: Harness) -> None:
    ann = tiny.user("Ann")
    bob = tiny.user("Bob")
    group = tiny.group(creator=ann, admins=[bob])
    carl = tiny.user("Carl")
    bot = tiny.app.bot
    sent = await bot.send_document(group.id, b'{"a": 1}', filename="game.json", caption="rec")
    assert sent.document is not None and sent.document.file_name == "game.json"
    name, content = tiny.last_document(group)
    assert (name, json.loads(content)) == ("game.json", {"a": 1})
    dora = tiny.user("Dora")
    group.outsiders.add(dora.id)
    statuses: dict[str, Any] = {}
    for user in (ann, bob, carl, dora):
        statuses[user.first_name] = (await bot.get_chat_member(group.id, user.id)).status
    assert statuses == {"Ann": "creator", "Bob": "administrator", "Carl": "member", "Dora": "left"}
    admins = await bot.get_chat_administrators(group.id)
    assert {a.user.id for a in admins} == {ann.id, bob.id}
    chat = await bot.get_chat(group.id)
    assert chat.title == group.title


async def test_removing_the_bot_closes_the_group_and_says_so(tiny: Harness) -> None:
    seen: list[Update] = []

    async def on_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        seen.append(update)

    tiny.app.add_handler(ChatMemberHandler(on_member, ChatMemberHandler.MY_CHAT_MEMBER))
    ann = tiny.user("Ann")
    group = tiny.group(creator=ann)
    await tiny.remove_bot(group, ann)
    (update,) = seen
    change = update.my_chat_member
    assert change is not None and change.chat.id == group.id and change.from_user.id == ann.id
    assert (change.old_chat_member.status, change.new_chat_member.status) == ("member", "kicked")
    assert change.new_chat_member.user.id == BOT_ID
    with pytest.raises(Forbidden):
        await tiny.app.bot.send_message(group.id, "still here?")


@pytest.mark.settings(hands="private")  # against the fixture's own hands="group"
async def test_a_harness_fixture_builds_its_bot_with_the_tests_settings(
    group_harness: Harness,
) -> None:
    assert services(group_harness.app).settings.messages.hands == "private"


def test_the_settings_marker_names_each_setting(request: pytest.FixtureRequest) -> None:
    request.node.add_marker(pytest.mark.settings("private"))
    with pytest.raises(TypeError, match="name=value only"):
        marked_settings(request)
