"""The fake's inline mode: as the Bot API documents it, or the e2e tests of inline play lie.

A tiny Application (not the bot) answers inline queries, picks and taps through the real
python-telegram-bot stack; the users' side is the Harness; the world's clock is the test's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
    Update,
    WebAppInfo,
)
from telegram.error import BadRequest, Forbidden, RetryAfter
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChosenInlineResultHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    filters,
)

from bot.webapp.auth import Checker
from testing.chats import BOT_ID, BOT_TOKEN, BOT_USERNAME, FakeUser
from testing.fakegram import FakeRequest, FakeTelegram
from testing.flood import FloodLimits
from testing.harness import Harness, start_app, stop_app
from testing.webapp import open_direct_link

NOW = [1_800_000_000.0]
UPDATES: list[dict[str, Any]] = []  # what the tiny bot received, as Telegram sent it
TABLE = InlineKeyboardMarkup(
    [
        [InlineKeyboardButton("Join", callback_data="join")],
        [InlineKeyboardButton("My cards", switch_inline_query_current_chat="hand 7")],
        [InlineKeyboardButton("Open", url=f"https://t.me/{BOT_USERNAME}/table?startapp=t1")],
    ]
)
APP_BUTTON = InlineKeyboardMarkup(
    [[InlineKeyboardButton("Open", web_app=WebAppInfo("https://e.org"))]]
)
RESULT = {
    "type": "article",
    "id": "r",
    "title": "t",
    "input_message_content": {"message_text": "x"},
}


def article(result_id: str, text: str, markup: InlineKeyboardMarkup | None = None) -> Any:
    return InlineQueryResultArticle(
        result_id, text, InputTextMessageContent(text), reply_markup=markup
    )


async def on_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "games": a table, shared and cached as by default; "hand": the asker's cards,
    personal and never cached; "leak": his cards, wrongly shared; "many": 120 results,
    50 a page; "silent": no answer (the test answers it)."""
    query = update.inline_query
    assert query is not None
    UPDATES.append(query.to_dict())
    name = query.from_user.first_name
    if query.query == "games":
        await query.answer([article("table", "A table", TABLE), article("rules", "The rules")])
    elif query.query.startswith("hand"):
        await query.answer([article("hand", f"{name}'s cards")], is_personal=True, cache_time=0)
    elif query.query == "leak":
        await query.answer([article("hand", f"{name}'s cards")], cache_time=60)
    elif query.query == "mine":
        await query.answer([article("hand", f"{name}'s cards")], is_personal=True, cache_time=60)
    elif query.query == "raw":  # a catalogue key shown as it is
        await query.answer([article("raw", "game.football")])
    elif query.query == "many":
        start = int(query.offset or 0)
        page = [article(str(i), f"Result {i}") for i in range(start, min(start + 50, 120))]
        await query.answer(page, next_offset=str(start + 50) if start + 50 < 120 else "")


async def on_chosen(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.chosen_inline_result is not None
    UPDATES.append(update.chosen_inline_result.to_dict())


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Join: the table names who joined, edited by its inline_message_id."""
    query = update.callback_query
    assert query is not None
    UPDATES.append(query.to_dict())
    await query.answer()
    if query.inline_message_id is not None:
        context.bot_data["edited"] = await query.edit_message_text(
            f"Joined: {query.from_user.first_name}", reply_markup=TABLE
        )


async def on_menu(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    await update.effective_message.reply_text("Menu", reply_markup=TABLE, do_quote=False)


async def on_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.message is not None
    UPDATES.append(update.message.to_dict())


@pytest.fixture
async def tiny() -> AsyncIterator[Harness]:
    UPDATES.clear()
    server = FakeTelegram(clock=lambda: NOW[0])
    app = Application.builder().token(BOT_TOKEN).request(FakeRequest(server)).build()
    app.add_handler(InlineQueryHandler(on_query))
    app.add_handler(ChosenInlineResultHandler(on_chosen))
    app.add_handler(CallbackQueryHandler(on_tap))
    app.add_handler(CommandHandler("menu", on_menu))
    app.add_handler(MessageHandler(filters.ALL, on_message))
    await start_app(app)
    yield Harness(server, [app])
    await stop_app(app)


def asked(kind: str) -> list[dict[str, Any]]:
    """The updates of one kind the bot received (inline queries: those with ``offset``)."""
    keys = {"inline": "offset", "chosen": "result_id", "tap": "chat_instance", "message": "date"}
    return [u for u in UPDATES if keys[kind] in u]


async def test_a_query_says_the_chat_type_and_never_the_chat(tiny: Harness) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    places = [
        (ann, "sender"),
        (tiny.dialog(ann, bob), "private"),
        (tiny.group(bot=False), "supergroup"),
        (tiny.group(kind="group"), "group"),
    ]
    for chat, kind in places:
        await tiny.inline(ann, chat, f"hand {kind}")
    assert [q["chat_type"] for q in asked("inline")] == [kind for _, kind in places]
    assert {frozenset(q) for q in asked("inline")} == {
        frozenset({"id", "from", "query", "offset", "chat_type"})
    }
    with pytest.raises(AssertionError, match="private chat"):
        await tiny.inline(tiny.user("Carl"), places[1][0], "games")
    assert tiny.problems() == []


async def test_a_shared_answer_goes_to_anyone_until_its_cache_time_cards_too(tiny: Harness) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    dialog = tiny.dialog(ann, bob)
    first = await tiny.inline(ann, dialog, "games")
    assert not first.cached and first.answer is not None
    assert first.answer.cache_time == 300 and not first.answer.is_personal  # the defaults
    NOW[0] += 299
    again = await tiny.inline(bob, tiny.group(bot=False), "games")
    assert again.cached and again.titles == first.titles
    assert len(asked("inline")) == 1  # the bot was not asked
    NOW[0] += 2
    assert not (await tiny.inline(bob, dialog, "games")).cached
    assert len(asked("inline")) == 2
    # The leak a test must be able to catch: his cards, not personal, cached, same text.
    await tiny.inline(ann, dialog, "leak")
    seen = await tiny.inline(bob, dialog, "leak")
    assert seen.cached and seen.borrowed and seen.titles == ["Ann's cards"]
    assert [s.titles for s in tiny.results_seen(bob)][-1] == ["Ann's cards"]


async def test_a_personal_answer_is_cached_for_its_asker_only(tiny: Harness) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    dialog = tiny.dialog(ann, bob)
    await tiny.inline(ann, dialog, "mine")
    assert (await tiny.inline(bob, dialog, "mine")).titles == ["Bob's cards"]
    mine = await tiny.inline(ann, dialog, "mine")
    assert mine.cached and mine.titles == ["Ann's cards"]
    assert len(asked("inline")) == 2
    for _ in range(2):  # cache_time 0: asked every time
        assert not (await tiny.inline(ann, dialog, "hand")).cached
    assert len(asked("inline")) == 4


async def test_scrolling_asks_for_the_next_page_with_its_offset(tiny: Harness) -> None:
    ann = tiny.user("Ann")
    page = await tiny.inline(ann, ann, "many")
    pages = [page]
    while page.next_offset:
        page = await tiny.scroll(ann, page)
        pages.append(page)
    assert [len(p.results) for p in pages] == [50, 50, 20]
    assert [q["offset"] for q in asked("inline")] == ["", "50", "100"]
    with pytest.raises(AssertionError, match="no more results"):
        await tiny.scroll(ann, page)


async def test_a_pick_is_posted_by_the_user_via_the_bot(tiny: Harness) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    dialog = tiny.dialog(ann, bob)
    table = await tiny.pick(ann, await tiny.inline(ann, dialog, "games"), "table")
    assert tiny.screen(dialog) == [table] and tiny.via_bot(dialog) == [table]
    data = table.to_json()
    assert data["from"]["id"] == ann.id and data["via_bot"]["username"] == BOT_USERNAME
    assert [b.text for b in table.buttons] == ["Join", "My cards", "Open"]
    (chosen,) = asked("chosen")
    assert chosen == {
        "result_id": "table",
        "from": ann.to_json(),
        "query": "games",
        "inline_message_id": table.inline_message_id,
    }
    rules = await tiny.pick(bob, await tiny.inline(bob, dialog, "games"), "rules")
    assert rules.inline_message_id is None  # no keyboard: no id, none in the update
    assert "inline_message_id" not in asked("chosen")[1]
    assert asked("message") == []  # the bot is not in their chat; it is in his own:
    await tiny.pick(ann, await tiny.inline(ann, ann, "games"), "rules")
    (message,) = asked("message")
    assert message["from"]["id"] == ann.id and message["via_bot"]["username"] == BOT_USERNAME
    assert message["text"] == "The rules"
    tiny.server.inline.feedback = False  # /setinlinefeedback off: picks are not reported
    await tiny.pick(bob, await tiny.inline(bob, dialog, "games"), 0)
    assert len(asked("chosen")) == 3 and len(tiny.via_bot(dialog)) == 3
    assert tiny.server.calls_to("sendMessage") == []  # the bot sent nothing itself


async def test_a_tap_and_a_direct_link_carry_the_inline_message_s_chat_instance(
    tiny: Harness,
) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    dialog, other = tiny.dialog(ann, bob), tiny.dialog(ann, tiny.user("Carl"))
    group = tiny.group()
    tables = {}
    for chat in (dialog, other, group):
        tables[chat.id] = await tiny.pick(ann, await tiny.inline(ann, chat, "games"), "table")
    await tiny.tap(bob, tables[dialog.id], "Join")
    tap = asked("tap")[-1]
    assert "message" not in tap and tap["inline_message_id"] == tables[dialog.id].inline_message_id
    assert tables[dialog.id].text == "Joined: Bob"  # what both of them see
    assert tiny.app.bot_data["edited"] is True  # an inline edit answers True
    await tiny.tap(ann, tables[dialog.id], "Join")
    await tiny.tap(ann, tables[other.id], "Join")
    await tiny.tap(ann, tables[group.id], "Join")
    await tiny.command(ann, group, "/menu")  # the bot's own message in the same group
    await tiny.tap(ann, tiny.last(group), "Join")
    instances = [t["chat_instance"] for t in asked("tap")]
    assert instances[0] == instances[1] != instances[2]
    assert instances[3] == instances[4] != instances[0]
    with pytest.raises(AssertionError, match="private chat"):
        await tiny.tap(tiny.user("Dan"), tables[dialog.id], "Join")
    # The Mini App opened by the table's direct link: with the chat it was opened from.
    app, data = open_direct_link(tiny, bob, tables[dialog.id], "Open")
    fields = {k: v[0] for k, v in parse_qs(data).items()}
    assert (app, fields["start_param"], fields["chat_type"]) == ("table", "t1", "private")
    assert fields["chat_instance"] == instances[0]
    assert Checker(BOT_TOKEN).init_data(data).viewer.user_id == bob.id  # signed as Telegram signs
    with pytest.raises(AssertionError, match="not a direct link"):
        open_direct_link(tiny, bob, tables[dialog.id], "Join")
    assert tiny.problems() == []


async def test_inline_edits_are_refused_as_telegram_refuses_them(tiny: Harness) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    dialog = tiny.dialog(ann, bob)
    table = await tiny.pick(ann, await tiny.inline(ann, dialog, "games"), 0)
    bot, inline_id = tiny.app.bot, table.inline_message_id
    assert inline_id is not None
    with pytest.raises(BadRequest, match=r"(?i)not modified"):
        await bot.edit_message_text("A table", inline_message_id=inline_id, reply_markup=TABLE)
    assert await bot.edit_message_reply_markup(inline_message_id=inline_id) is True
    assert table.buttons == []
    with pytest.raises(BadRequest, match=r"(?i)invalid inline message identifier"):
        await bot.edit_message_text("x", inline_message_id="not-an-id")
    forged = inline_id[:-4] + ("AAAA" if not inline_id.endswith("AAAA") else "BBBB")
    with pytest.raises(BadRequest, match=r"(?i)MESSAGE_ID_INVALID"):
        await bot.edit_message_text("x", inline_message_id=forged)
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_TYPE_INVALID"):
        await bot.edit_message_reply_markup(inline_message_id=inline_id, reply_markup=APP_BUTTON)
    with pytest.raises(AssertionError, match="his own"):  # deleted: by its sender only
        tiny.delete(bob, table)
    tiny.delete(ann, table)
    assert tiny.screen(dialog) == []
    with pytest.raises(BadRequest, match=r"(?i)MESSAGE_ID_INVALID"):  # and no longer edited
        await bot.edit_message_text("x", inline_message_id=inline_id)


async def test_answers_are_checked_as_telegram_checks_them(tiny: Harness) -> None:
    ann = tiny.user("Ann")
    bot = tiny.app.bot
    cases: list[tuple[dict[str, Any], str]] = [
        ({"results": [article(str(i), "x") for i in range(51)]}, "RESULTS_TOO_MUCH"),
        ({"results": [article("a", "x"), article("a", "y")]}, "RESULT_ID_DUPLICATE"),
        ({"results": [article("é" * 33, "x")]}, "RESULT_ID_INVALID"),  # 66 bytes
        ({"results": [], "next_offset": "9" * 65}, "NEXT_OFFSET_INVALID"),
        ({"results": [article("a", "x", APP_BUTTON)]}, "BUTTON_TYPE_INVALID"),
        (
            {"results": [], "button": InlineQueryResultsButton("Start", start_parameter="a b")},
            "START_PARAM_INVALID",
        ),
    ]
    for n, (kwargs, error) in enumerate(cases):
        await tiny.inline(ann, ann, f"silent {n}")
        query_id = asked("inline")[-1]["id"]
        with pytest.raises(BadRequest, match=r"(?i)" + error):
            await bot.answer_inline_query(query_id, **kwargs)
        assert await bot.answer_inline_query(query_id, [article("a", "x")]) is True
        with pytest.raises(BadRequest, match=r"(?i)query is too old"):  # answered already
            await bot.answer_inline_query(query_id, [])


async def test_in_a_group_it_is_not_in_the_bot_is_typed_to_and_edits_inline_only(
    tiny: Harness,
) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    group, public = tiny.group(bot=False), tiny.group(bot=False, username="cards")
    bot = tiny.app.bot
    with pytest.raises(BadRequest, match=r"(?i)chat not found"):
        await bot.send_message(group.id, "hello")
    with pytest.raises(BadRequest, match=r"(?i)chat not found"):
        await bot.get_chat(group.id)
    with pytest.raises(Forbidden, match=r"(?i)bot is not a member of the supergroup chat"):
        await bot.send_message(public.id, "hello")
    table = await tiny.pick(ann, await tiny.inline(ann, group, "games"), "table")
    # Switching to inline mode types the query in that chat.
    seen = await tiny.switch(bob, table, "My cards")
    assert seen.titles == ["Bob's cards"] and seen.chat_id == group.id
    assert asked("inline")[-1]["query"] == "hand 7"
    assert asked("inline")[-1]["chat_type"] == "supergroup"
    assert table.inline_message_id is not None
    assert await bot.edit_message_text("Edited", inline_message_id=table.inline_message_id)
    assert [m.text for m in tiny.screen(group)] == ["Edited"]


async def test_get_me_says_the_bots_name_and_whether_inline_mode_is_on(tiny: Harness) -> None:
    assert (tiny.app.bot.username, tiny.app.bot.id) == (BOT_USERNAME, BOT_ID)
    assert (await tiny.app.bot.get_me()).supports_inline_queries is True
    tiny.server.inline.mode = False
    assert (await tiny.app.bot.get_me()).supports_inline_queries is False
    ann = tiny.user("Ann")
    with pytest.raises(AssertionError, match="inline mode is off"):
        await tiny.inline(ann, ann, "games")


@pytest.mark.parametrize(("switch", "refused"), [("chat", True), ("none", False)])
async def test_inline_edits_count_against_their_chat_as_the_switch_says(
    tiny: Harness, switch: str, refused: bool
) -> None:
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    group = tiny.group(bot=False)
    tables = [
        await tiny.pick(ann, await tiny.inline(ann, chat, "games"), "table")
        for chat in (group, tiny.dialog(ann, bob))
    ]
    tiny.server.limits = FloodLimits(clock=lambda: NOW[0], inline=switch)  # type: ignore[arg-type]
    bot = tiny.app.bot
    for table in tables:  # each chat's burst of 3
        for n in range(3):
            await bot.edit_message_text(f"Edit {n}", inline_message_id=table.inline_message_id)
    waits = []
    for table in tables:
        try:
            await bot.edit_message_text("One more", inline_message_id=table.inline_message_id)
        except RetryAfter as error:
            wait = error.retry_after
            waits.append(wait if isinstance(wait, int) else int(wait.total_seconds()))
    # the group's 20 a minute (a token every 3 s); the private chat's 1 a second
    assert waits == ([3, 1] if refused else [])


async def test_updates_the_bot_did_not_ask_for_are_never_sent(tiny: Harness) -> None:
    """setWebhook's allowed_updates: only those; none named: all but a few (the Bot API)."""
    ann, bob = tiny.user("Ann"), tiny.user("Bob")
    dialog = tiny.dialog(ann, bob)
    bot = tiny.app.bot
    await bot.set_webhook("https://example.org/hook", allowed_updates=["callback_query"])
    unasked = await tiny.inline(ann, dialog, "games")
    assert unasked.answer is None and unasked.results == [] and asked("inline") == []
    await bot.set_webhook("https://example.org/hook")  # none named: the previous setting
    assert tiny.server.allowed_updates == ["callback_query"]
    await bot.set_webhook("https://example.org/hook", allowed_updates=["inline_query"])
    await tiny.pick(ann, await tiny.inline(ann, dialog, "games"), "table")
    assert asked("chosen") == []
    assert tiny.problems() == [
        "inline_query update not sent: the bot's allowed_updates leaves it out",
        "chosen_inline_result update not sent: the bot's allowed_updates leaves it out",
        "inline query 'games' never answered",
    ]
    await bot.set_webhook("https://example.org/hook", allowed_updates=[])  # the default
    await tiny.pick(bob, await tiny.inline(bob, dialog, "many"), 0)
    assert len(asked("inline")) == 2 and len(asked("chosen")) == 1


async def test_a_catalogue_key_shown_raw_in_a_result_or_a_message_is_a_problem(
    tiny: Harness,
) -> None:
    ann = tiny.user("Ann")
    await tiny.inline(ann, ann, "raw")
    await tiny.app.bot.send_message(ann.id, "Hand\n• event.durak.unknown_kind\nAnn leads 7♣.")
    assert sorted(tiny.problems()) == [
        "untranslated: event.durak.unknown_kind",
        "untranslated: game.football",
    ]


STEP = st.tuples(
    st.integers(0, 2),  # who types
    st.sampled_from(["a", "b"]),  # what
    st.booleans(),  # the bot's answer: personal?
    st.sampled_from([0, 5, 300]),  # its cache_time
    st.integers(0, 400),  # seconds since the step before
)


@settings(max_examples=60, deadline=None)
@given(st.lists(STEP, max_size=25))
def test_the_cache_serves_an_answer_only_to_whom_and_while_it_may(
    steps: list[tuple[int, str, bool, int, int]],
) -> None:
    """Whatever is typed when: a cached answer is served only within its cache_time,
    a personal one only to its asker, and an answer that may be cached is served again."""
    now = [0.0]
    server = FakeTelegram(clock=lambda: now[0])
    users = [server.add_user(FakeUser(id=10 + i, first_name=f"U{i}")) for i in range(3)]
    inline = server.inline
    for who, text, personal, cache_time, wait in steps:
        now[0] += wait
        user = users[who]
        cached = inline.cached(user, text, "")
        if cached is not None:
            assert now[0] < cached.at + cached.cache_time
            assert cached.user_id == user.id or not cached.is_personal
            continue
        asked = inline.ask(user, user.id, text, "")
        params = {"results": [RESULT], "is_personal": personal, "cache_time": cache_time}
        inline.answer({"inline_query_id": asked.id, **params})
        served = inline.cached(user, text, "")  # he types it again at once
        assert (served is asked.answer) == (cache_time > 0)


def test_without_history_the_fake_forgets_answered_queries_and_expired_answers() -> None:
    """The benchmark's fake (history False) must not grow with the run."""
    now = [0.0]
    server = FakeTelegram(clock=lambda: now[0], history=False)
    ann = server.add_user(FakeUser(id=10, first_name="Ann"))
    for n in range(5):
        asked = server.inline.ask(ann, ann.id, f"query {n}", "")
        server.inline.answer({"inline_query_id": asked.id, "results": [RESULT], "cache_time": 5})
        server.inline.see(ann, ann.id, asked.query, "", asked.answer, cached=False)
        now[0] += 10
    assert server.inline.queries == {} and server.inline.shown == []
    assert [key[0] for key in server.inline.cache] == ["query 4"]
