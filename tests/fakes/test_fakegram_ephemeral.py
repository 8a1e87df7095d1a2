"""The fake's ephemeral messages: as docs/ephemeral.md reads the Bot API, or the e2e tests
of hands in the group lie.

A tiny Application (not the bot) answers a tap with an ephemeral message through
bot.core.sender, the calls the bot makes; the world's clock is the test's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from bot.core import sender
from bot.core.screen import Button, Screen
from testing.chats import BOT_TOKEN, FakeGroup, FakeUser
from testing.fakegram import FakeRequest, FakeTelegram
from testing.harness import Harness, start_app, stop_app

SENT: dict[str, int] = {}
NOW = [1_800_000_000.0]
HAND = Screen("<b>Your cards</b>: 7♠", ((Button("Play 7♠", "p7"),),))


async def on_deal(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("My cards", callback_data="c")]])
    await update.effective_message.reply_text("Table", reply_markup=markup, do_quote=False)


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "My cards": his hand as an ephemeral message answering the tap; a tap on that
    hand is answered and edits it."""
    query = update.callback_query
    assert query is not None and query.message is not None
    await query.answer()
    chat = query.message.chat.id
    if query.data == "c":
        SENT[str(query.from_user.id)] = await sender.send_ephemeral(
            context.bot, chat, None, query.from_user.id, HAND, query_id=query.id
        )
    else:
        ephemeral = query.message.api_kwargs["ephemeral_message_id"]
        assert query.message.message_id == 0
        await sender.edit_ephemeral(
            context.bot, chat, query.from_user.id, int(ephemeral), Screen("played 7♠")
        )


@pytest.fixture
async def tiny() -> AsyncIterator[Harness]:
    SENT.clear()
    server = FakeTelegram(clock=lambda: NOW[0])
    app = Application.builder().token(BOT_TOKEN).request(FakeRequest(server)).build()
    app.add_handler(CommandHandler("deal", on_deal))
    app.add_handler(CallbackQueryHandler(on_tap))
    await start_app(app)
    yield Harness(server, [app])
    await stop_app(app)


async def _table(tiny: Harness) -> tuple[FakeUser, FakeUser, FakeGroup]:
    ann, bob = tiny.user("Ann", started=False), tiny.user("Bob", started=False)
    group = tiny.group()
    await tiny.command(ann, group, "/deal")
    return ann, bob, group


async def test_a_tap_gets_an_ephemeral_answer_only_its_user_sees_within_15_s(tiny: Harness) -> None:
    ann, bob, group = await _table(tiny)
    await tiny.tap(ann, tiny.last(group), "My cards")
    (hand,) = tiny.hands(ann, group)
    assert hand.text == "Your cards: 7♠" and [b.text for b in hand.buttons] == ["Play 7♠"]
    assert tiny.hands(bob, group) == []
    assert hand not in tiny.screen(group)  # the group's own messages: everyone's
    assert hand in tiny.server.seen_by(group.id, ann.id)
    assert hand not in tiny.server.seen_by(group.id, bob.id)
    with pytest.raises(AssertionError, match=r"(?i)receiver"):
        await tiny.tap(bob, hand, "Play 7♠")
    # his tap on it arrives from the ephemeral message (message_id 0) and edits it by id
    await tiny.tap(ann, hand, "Play 7♠")
    assert hand.text == "played 7♠" and hand.buttons == []
    assert hand.to_json()["message_id"] == 0
    assert hand.to_json()["receiver_user"]["id"] == ann.id
    assert tiny.problems() == []
    # Bob's tap: answered for him only, and no later than 15 seconds after it.
    answer = await tiny.tap(bob, tiny.last(group), "My cards")
    query = next(q for q, a in tiny.server.queries.items() if a is answer)
    bot = tiny.app.bot
    with pytest.raises(BadRequest, match=r"(?i)another user"):
        await sender.send_ephemeral(bot, group.id, None, ann.id, HAND, query_id=query)
    NOW[0] += 16
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await sender.send_ephemeral(bot, group.id, None, bob.id, HAND, query_id=query)
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await sender.send_ephemeral(bot, group.id, None, bob.id, HAND, query_id="42")
    carl = tiny.user("Carl")  # his private chat is open, but no chat has only one reader
    with pytest.raises(BadRequest, match=r"(?i)only to groups"):
        await sender.send_ephemeral(bot, carl.id, None, carl.id, HAND, query_id=query)


async def test_without_a_tap_only_an_administrator_may_send_one_to_an_online_person(
    tiny: Harness,
) -> None:
    ann, _, group = await _table(tiny)
    bot = tiny.app.bot
    with pytest.raises(BadRequest, match=r"(?i)CHAT_ADMIN_REQUIRED"):
        await sender.send_ephemeral(bot, group.id, None, ann.id, HAND)
    group.bot_is_admin = True
    # The receiver is "a non-bot member of the chat" (the Bot API): neither the bot
    # itself nor another bot in the group.
    other = tiny.server.add_user(FakeUser(id=777, first_name="Helper", is_bot=True))
    for receiver in (bot.id, other.id):
        with pytest.raises(BadRequest, match=r"(?i)USER_IS_BOT"):
            await sender.send_ephemeral(bot, group.id, None, receiver, HAND)
    assert tiny.server.ephemeral == {}
    ephemeral = await sender.send_ephemeral(bot, group.id, None, ann.id, HAND)
    assert [m.message_id for m in tiny.hands(ann, group)] == [ephemeral]
    ann.online = False  # an offline user never gets one
    await sender.send_ephemeral(bot, group.id, None, ann.id, HAND)  # the bot can't tell
    assert [m.message_id for m in tiny.hands(ann, group)] == [ephemeral]
    assert len(tiny.server.ephemerals(group.id, ann.id, dropped=True)) == 2  # and the dropped
    ann.online = True
    await tiny.tap(ann, tiny.last(group), "My cards")
    assert [m.text for m in tiny.hands(ann, group)] == ["Your cards: 7♠"] * 2


async def test_unknown_or_missing_parameters_are_400s_and_edits_name_whose_hand(
    tiny: Harness,
) -> None:
    ann, bob, group = await _table(tiny)
    group.bot_is_admin = True
    bot = tiny.app.bot
    ephemeral = await sender.send_ephemeral(bot, group.id, None, ann.id, HAND)
    text = {"chat_id": group.id, "text": "x"}
    to_ann = {"chat_id": group.id, "receiver_user_id": ann.id}
    for method, params, reason in [
        ("sendmessage", {"receiver_user_id": ann.id, "silent": True}, "unknown field silent"),
        ("sendmessage", {"callback_query_id": "1"}, "receiver_user_id is required"),
        ("sendmessage", {**text, "receiver_user_id": ann.id}, "use ephemeral_message_parameters"),
        (
            "editephemeralmessagereplymarkup",
            {**to_ann, "ephemeral_message_id": ephemeral, "message_id": 1},
            "unknown parameter message_id",
        ),
        ("deleteephemeralmessage", to_ann, "are required"),
    ]:
        if "chat_id" not in params:  # the parameters of an ephemeral message
            params = {**text, "ephemeral_message_parameters": params}
        with pytest.raises(BadRequest, match=r"(?i)" + reason):
            await bot.do_api_request(method, api_kwargs=params)
    # Edits and deletions name the chat, the receiver and the id.
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):  # not Bob's
        await sender.edit_ephemeral(bot, group.id, bob.id, ephemeral, Screen("x"))
    with pytest.raises(BadRequest, match=r"(?i)not modified"):
        await sender.edit_ephemeral(bot, group.id, ann.id, ephemeral, HAND)
    await sender.strip_ephemeral(bot, group.id, ann.id, ephemeral)
    assert tiny.hands(ann, group)[0].buttons == []
    await sender.delete_ephemeral(bot, group.id, ann.id, ephemeral)
    assert tiny.hands(ann, group) == []
    with pytest.raises(BadRequest, match=r"(?i)message to delete not found"):
        await sender.delete_ephemeral(bot, group.id, ann.id, ephemeral)
    tiny.server.unchanged.clear()
