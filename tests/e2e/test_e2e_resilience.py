"""Telegram misbehaving: flood control, network errors. The game never loses a move and
every screen catches up with the newest state."""

from __future__ import annotations

import asyncio
import json
import logging
import random

import pytest
from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.core.keys import TABLE_SLOT, family_of
from bot.core.limiter import Priority
from bot.core.services import services
from testing.clock import Clock
from testing.fakegram import FakeTelegram
from testing.harness import Harness
from testing.tabletop import PASS, TAKE, Tabletop, game_for, stored, table_key


async def group_shows_version(h: Harness, top: Tabletop) -> tuple[int, int]:
    """(the version the group message shows, as its slot says, the table's version)."""
    raw = await h.redis.hget(table_key(top.group), TABLE_SLOT)
    return json.loads(raw)["version"], (await stored(h, top.group))["version"]


@pytest.mark.telegram_complaints
async def test_flood_control_on_the_group_table_and_a_prompt_puts_them_off(
    harness: Harness, clock: Clock
) -> None:
    h = harness
    top, players = await game_for(h, "durak")
    table = top.table_message()
    actor = top.asked(players)
    (waiting,) = [u for u in players if u is not actor]
    for method, chat in (("editMessageText", top.group.id), ("sendMessage", waiting.id)):
        h.server.flood(method, retry_after=1, when=lambda p, chat=chat: p.get("chat_id") == chat)
    before = table.text
    await top.step(players, random.Random(1))
    assert table.text == before, "Telegram refused the edit"
    assert top.prompt(waiting) is None, "his prompt was refused by flood control"
    shown, current = await group_shows_version(h, top)
    assert shown < current
    await clock.advance(1.5)
    assert table.text != before
    assert top.prompt(waiting) is not None, "it came once the flood was over"
    shown, current = await group_shows_version(h, top)
    assert shown == current
    await top.play(players, random.Random(2), shun=PASS, prefer=TAKE)
    assert h.server.not_modified == 0


@pytest.mark.telegram_complaints
async def test_lost_callback_answers_lose_no_move_and_a_flaky_network_on_hands_catches_up(
    harness: Harness, clock: Clock
) -> None:
    h = harness
    top, players = await game_for(h, "durak")
    h.server.inject("answerCallbackQuery", 502, "Bad Gateway", times=3)
    for _ in range(3):
        before = len((await stored(h, top.group))["played"]["moves"])
        await top.step(players, random.Random(4))
        assert len((await stored(h, top.group))["played"]["moves"]) == before + 1
    assert h.log_errors == []
    h.server.inject("editMessageText", 502, "Bad Gateway", times=2)
    h.server.inject("sendMessage", 502, "Bad Gateway", times=1)
    rng = random.Random(6)
    for _ in range(4):
        if any(top.prompt(u) for u in players):
            await top.step(players, rng)
        else:
            await clock.advance(0.5)
    await clock.advance(5.5)  # the bot retries after a network error (RETRY_SECONDS)
    await top.play(players, rng, shun=PASS, prefer=TAKE)
    data = await stored(h, top.group)
    assert data["phase"] == "finished"
    assert h.log_errors == [] and h.server.not_modified == 0


@pytest.mark.telegram_complaints
async def test_a_bot_kicked_from_the_group_mid_game_lets_the_players_finish(
    harness: Harness,
) -> None:
    h = harness
    top, players = await game_for(h, "durak")
    await top.step(players, random.Random(1))
    top.group.kicked = True
    rng = random.Random(2)
    while asked := [u for u in players if top.prompt(u) is not None]:
        await top.step(asked, rng)
    assert (await stored(h, top.group))["phase"] == "finished"
    # Each player's private hand says how it ended.
    for user in players:
        assert [m for m in h.screen(user) if m.from_bot][-1].edit_date is not None
    assert h.log_errors == []


@pytest.fixture
def menu_flooded(server: FakeTelegram) -> None:
    """Telegram's flood control on the next command menus the bot sets: requested before
    the harness, it is on when the bot starts."""
    server.flood("setMyCommands", retry_after=30, times=4)


@pytest.mark.telegram_complaints  # the injected flood control
@pytest.mark.settings(rate_limit=True, table_edit_interval=3.0)  # as deployed
async def test_the_production_settings_ride_out_flood_control(
    menu_flooded: None, harness: Harness
) -> None:
    """Flood control on the command menu does not keep the bot from starting; a message
    refused by flood control is shown once it ends: every move reaches its player."""
    h = harness
    assert h.app.running
    menus = [c for c in h.server.calls if c.method == "setMyCommands"]
    assert menus and menus[0].error, "the flood control was on before the bot started"
    top, players = await game_for(h, "durak")
    await top.caught_up(players)
    rng = random.Random(11)
    for move in range(16):
        if move == 5:
            h.server.flood("editMessageText", retry_after=1, times=2)
        before = len((await stored(h, top.group))["played"]["moves"])
        _, answer = await top.step(players, rng)
        assert answer.answered and answer.text is None
        assert len((await stored(h, top.group))["played"]["moves"]) == before + 1
        await top.caught_up(players)
    refused = [c.method for c in h.server.calls if c.error and "Too Many" in c.error]
    assert [method for method in refused if method != "setMyCommands"] == ["editMessageText"] * 2
    assert h.log_errors == [] and h.server.not_modified == 0


@pytest.mark.telegram_complaints  # the injected flood control
@pytest.mark.settings(rate_limit=True, table_edit_interval=0.0)
async def test_flood_control_in_one_group_holds_up_no_other_chat(
    harness: Harness, clock: Clock
) -> None:
    """One group's 429 puts its edit off, rather than being waited out in the tap and
    holding every other chat's calls."""
    h = harness
    (ta, pa), (tb, pb) = await game_for(h, "durak"), await game_for(h, "durak")
    await ta.caught_up(pa)
    await tb.caught_up(pb)
    await clock.advance(10)  # the groups' rate-limit buckets are full again
    rng = random.Random(2)
    h.server.flood(
        "editMessageText", retry_after=60, when=lambda p: p.get("chat_id") == ta.group.id
    )
    b_table = tb.table_message().text
    async with asyncio.timeout(20):  # waiting the flood out would take 60 s
        await asyncio.gather(ta.step(pa, rng), tb.step(pb, rng))
    refused = [c for c in h.server.calls if c.error and "Too Many" in c.error]
    assert [c.chat_id for c in refused] == [ta.group.id]  # tried once, not again
    # Every process holds that group back until flood control ends; the table is due.
    limiter = services(h.app).limiter
    assert limiter is not None
    (wait,) = await limiter.try_acquire([(ta.group.id, Priority.TABLE)])
    assert wait > 50
    key = table_key(ta.group)
    assert await h.redis.zscore(family_of(key).due, key) is not None
    assert tb.table_message().text != b_table  # the other group saw its move at once
    assert h.log_errors == []


def bot_log(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """(level, logger) of every WARNING or worse, with no traceback among them."""
    assert not [r for r in caplog.records if r.exc_info], "no traceback"
    return [(r.levelname, r.name) for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("page", [True, False])
async def test_a_bad_gateway_is_one_warning_line(
    harness: Harness, caplog: pytest.LogCaptureFixture, page: bool
) -> None:
    """A proxy's HTML 502 page or Telegram's own 502 on an uncaught call, or a 502 on a
    reply the bot handles: one warning line."""
    h = harness

    async def uncaught(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None
        await context.bot.send_message(update.effective_chat.id, "pong")

    h.app.add_handler(CommandHandler("ping", uncaught))
    ann = h.user("Ann")
    if page:
        h.server.bad_gateway("sendMessage")
    else:
        h.server.inject("sendMessage", 502, "Bad Gateway")
    await h.private(ann, "/ping")
    assert bot_log(caplog) == [("WARNING", "bot.app")]
    (line,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    # PTB words a page it cannot parse by the HTTP status, else it quotes Telegram.
    assert line.endswith("the Bot API failed: " + ("Bad Gateway (502)" if page else "Bad Gateway"))
    await h.private(ann, "/ping")  # the next call goes through
    assert [m.text for m in h.screen(ann) if m.from_bot] == ["pong"]
    h.server.bad_gateway("sendMessage")
    await h.private(ann, "/help")
    assert bot_log(caplog) == [("WARNING", "bot.app"), ("WARNING", "bot.handlers.commands")]
