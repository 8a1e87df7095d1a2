"""Standings end to end: /stats in the group and in private, the Standings button, /forgetme,
and every finished game counted once."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.core.callbacks import Action
from bot.core.i18n import t
from bot.core.services import services
from bot.core.store import Store, Write
from bot.service import delivery
from bot.tables.stats.finished import Player
from bot.tables.stats.keys import board_key, group_key, groups_key
from bot.tables.stats.standings import Standings, of
from testing.chats import FakeGroup, FakeMessage, FakeUser
from testing.clock import Clock
from testing.harness import AppFactory, Harness, settle
from testing.settings import REDIS_URL
from testing.stats import play_series, played
from testing.tabletop import PASS, TAKE, Tabletop, is_action, playing, stored, table_key

# Where the kind of game is no matter: durak on 24 cards, the defender taking whenever he
# may and an attacker passing only when he must (20-32 taps; a football game takes 35-50).
SHORT = {"deck_size": 24}


def bot_reply(h: Harness, chat: FakeGroup | FakeUser, title: str) -> FakeMessage:
    """The newest message of the bot in the chat that starts with ``title``."""
    found = [m for m in h.screen(chat) if m.from_bot and (m.text or "").startswith(title)]
    assert found, f"no message starting {title!r}"
    return found[-1]


def title(lang: str, key: str, **params: Any) -> str:
    """The plain text a catalogue title starts with (its HTML tags dropped)."""
    return re.sub(r"<[^>]+>", "", t(lang, key, **params)).split("{")[0].strip()


async def test_games_in_a_group_make_its_board_and_everyones_own_figures(
    harness: Harness, deals: Callable[[int], None]
) -> None:
    h = harness
    deals(10)  # three of the shorter games (331 taps; 270-550 with seeds 1-12)
    ann, bob, cid = h.user("Ann"), h.user("Борис", language_code="ru"), h.user("Cid")
    group = h.group(creator=ann)
    top = Tabletop(h, group)
    await play_series(top, [ann, bob, cid], "durak", 3)
    data = await stored(h, group)
    result = top.table_message()
    # The result says who moved up (all three have three games now) and offers the board.
    assert t("en", "stats.moved_up", names="").strip() in (result.text or "")
    for user in (ann, bob, cid):
        assert user.first_name in (result.text or "").split("📈")[1]
    standings_button = is_action(Action.STANDINGS)
    assert any(standings_button(b) for b in result.buttons)

    # Delivering the result again (Record, a lease taken over) asks the standings nothing.
    standings = of(services(h.app).store)
    asked, shown = standings.round_trips, result.text
    await top.tap_group(ann, Action.RECORD)
    assert delivery.start(services(h.app), table_key(group))
    await settle(h.app)
    assert standings.round_trips == asked
    assert result.text == shown and h.last(group).document is not None

    # /stats in the group: the board, in the asker's language.
    await h.command(ann, group, "/stats")
    board = bot_reply(h, group, "📊 Standings")
    rows = [line for line in (board.text or "").splitlines() if line[:2] in ("1.", "2.", "3.")]
    assert len(rows) == 3 and all("games: 3" in row for row in rows)
    names = [row.split(" — ")[0][3:] for row in rows]
    assert sorted(names) == sorted(["Ann", "Борис", "Cid"])
    fools = {s["name"]: data["series"]["score"].get(str(s["user_id"]), 0) for s in data["seats"]}
    # the fewer times a fool, the higher (ratings tie-break aside): the top has the fewest
    assert fools[names[0]] == min(fools.values()) and fools[names[2]] == max(fools.values())
    for row in rows:
        name = row.split(" — ")[0][3:]
        assert f"fool: {round(100 * fools[name] / 3)}%" in row
    await h.command(bob, group, "/stats")
    assert "игр: 3" in (bot_reply(h, group, "📊 Таблица").text or "")

    # Its football button switches the same message to the (empty) football board.
    await h.tap(ann, board, lambda b: is_action(Action.STANDINGS, "sf")(b))
    switched = next(m for m in h.screen(group) if m.message_id == board.message_id)
    assert t("en", "game.football") in (switched.text or "")
    assert title("en", "stats.board_empty", min=3) in (switched.text or "")

    # The result's Standings button posts the board once, however many tap it.
    before = len([m for m in h.screen(group) if m.from_bot])
    await h.tap(cid, result, standings_button)
    answer = await h.tap(bob, result, standings_button)
    assert len([m for m in h.screen(group) if m.from_bot]) == before + 1
    assert answer.text == t("ru", "stats.posted")

    # /stats in private: his own figures, with a trend of his rating.
    await h.private(ann, "/stats")
    mine = bot_reply(h, ann, "📊 Your statistics").text or ""
    assert f"Games: 3 · fool: {fools['Ann']}" in mine
    trend = mine.split("Rating: ")[1].splitlines()[0].split()[1]
    assert len(trend) == 3 and set(trend) <= set("▁▂▃▄▅▆▇")

    # /stats in reply to Cid's message: Cid's figures here, and his record against Ann.
    said = await h.send_text(cid, group, "gg")
    await h.command(ann, group, "/stats", reply_to=said)
    his = bot_reply(h, group, "📊 Cid").text or ""
    assert "Games: 3" in his and "games together: 3" in his


async def test_forgetme_erases_his_figures_after_a_confirmation(harness: Harness) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob", language_code="uk")
    group = h.group(creator=ann)
    await play_series(Tabletop(h, group), [ann, bob], "durak", 3, SHORT, shun=PASS, prefer=TAKE)
    await h.command(bob, group, "/forgetme")
    assert bot_reply(h, group, t("uk", "forget.private")[:10])
    await h.private(bob, "/forgetme")
    question = bot_reply(h, bob, t("uk", "forget.ask")[:20])
    store = services(h.app).store
    standings = of(store)
    assert (await standings.mine(bob.id))[0]["durak"].n == 3  # nothing erased yet
    await store.set_place(bob.id, "private")  # where he chose to keep his hands
    await h.tap(bob, question, is_action(Action.FORGET))
    assert t("uk", "forget.done") in (h.last(bob).text or "")
    assert await store.place(bob.id) is None, "his choice of place is forgotten too"
    await h.private(bob, "/stats")
    assert t("uk", "stats.nothing") in (h.last(bob).text or "")
    await h.command(ann, group, "/stats")
    board = bot_reply(h, group, "📊 Standings").text or ""
    assert "Bob" not in board and "1. Ann" in board


@pytest.mark.telegram_complaints  # the redelivered query cannot be answered twice
async def test_a_finished_game_delivered_again_elsewhere_and_in_its_supergroup_counts_once(
    harness: Harness, make_app: AppFactory
) -> None:
    """Its last tap redelivered to another process, the table delivered again by that one,
    then moved to the group's supergroup and delivered there: one game, its deal's."""
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    old = h.group(kind="group", creator=ann)
    await play_series(Tabletop(h, old), [ann, bob], "durak", 1, SHORT, shun=PASS, prefer=TAKE)
    other = await make_app(h.redis)  # a second process on the same Redis
    last_tap = next(u for u in reversed(h.delivered) if "callback_query" in u)
    await h.deliver(last_tap, other)  # the same update, the same query id
    assert delivery.start(services(other), table_key(old))  # a lease taken over
    await settle(other)
    new = await h.upgrade(old)
    assert (await stored(h, new))["chat_id"] == new.id  # the table followed, and was shown
    standings = Standings(h.redis, 60)
    for user in (ann, bob):
        assert await standings.in_group(old.id, user.id) == {}
        assert (await standings.in_group(new.id, user.id))["durak"].n == 1
        assert (await standings.mine(user.id))[0]["durak"].n == 1
        assert await h.redis.smembers(groups_key(user.id)) == {str(new.id).encode()}


async def test_a_game_whose_finishing_process_died_is_counted_by_another(
    harness: Harness, clock: Clock
) -> None:
    """A game whose finishing process died before delivering it is counted by the next."""
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    group = h.group(creator=ann)
    table, _ = played("football", 3, [Player(ann.id, "Ann"), Player(bob.id, "Bob")], "dead")
    table.chat_id = group.id
    dead = Store(h.redis, 3600, clock)
    snap, _ = await dead.transact(table_key(group), lambda _: (Write(table, fresh=True), None))
    assert snap.lease  # the dead process held the delivery
    standings = Standings(h.redis, 60)
    assert await standings.in_group(group.id, ann.id) == {}
    for _ in range(200):
        if await standings.in_group(group.id, ann.id):
            break
        await clock.advance(0.5)
    for user in (ann, bob):
        assert (await standings.in_group(group.id, user.id))["football"].n == 1
    await settle(h.app)
    assert any(is_action(Action.STANDINGS)(b) for b in h.last(group).buttons)


@pytest.mark.redis
async def test_the_rebuild_command_on_the_handed_out_records_gives_the_live_figures(
    real_harness: Harness, tmp_path: Path
) -> None:
    """``python -m bot.tables.stats rebuild`` on three games' records gives the live figures."""
    h = real_harness
    ann, bob = h.user("Ann"), h.user("Bob")
    # two players and the 24-card deck (36, 52, 24): a third of the moves of three at 36
    top = await playing(h, "durak", [ann, bob], ("d", "d"), h.group(creator=ann))
    paths = []
    for number in range(3):
        if number:
            await top.tap_group(bob, Action.AGAIN)
        await top.play([ann, bob], random.Random(number), shun=PASS, prefer=TAKE)
        await top.tap_group(ann, Action.RECORD)
        _, content = h.last_document(top.group)
        path = tmp_path / f"{number}.json"
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        paths.append(str(path))
    standings = Standings(h.redis, 60)
    live = await standings.board(top.group.id, "durak")
    assert [line.n for line in live] == [3, 3]
    cli = subprocess.run(
        [sys.executable, "-m", "bot.tables.stats", "rebuild", *paths],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "REDIS_URL": REDIS_URL},
    )
    assert cli.stdout.strip() == "3 games counted"
    assert await standings.board(top.group.id, "durak") == live
    for user in (ann, bob):
        mine = next(line for line in live if line.uid == user.id)
        assert await standings.in_group(top.group.id, user.id) == {"durak": mine}


async def test_a_game_in_a_forum_topic_counts_for_its_group(harness: Harness) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    group = h.group(creator=ann, forum=True)
    topic = h.topic(group, "Durak")
    top = Tabletop(h, group, topic)
    await play_series(top, [ann, bob], "durak", 1, SHORT, shun=PASS, prefer=TAKE)
    for user in (ann, bob):
        assert (await Standings(h.redis, 60).in_group(group.id, user.id))["durak"].n == 1
    await h.tap(bob, top.table_message(), is_action(Action.STANDINGS))
    board = bot_reply(h, group, "📊 Standings")
    assert board.thread_id == topic  # posted where the game was played
    await h.command(ann, group, "/stats", thread=topic)  # replies to the topic's start
    assert h.last(group).text == board.text


async def test_every_variant_counts_on_one_board_and_splits_his_own_figures(
    harness: Harness,
) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    group = h.group(creator=ann)
    for number, taps in enumerate((["m"], ["m", "x"], ["m", "x"])):
        top = await playing(h, "durak", [ann, bob], tuple(taps), group)
        await top.play([ann, bob], random.Random(number), shun=PASS, prefer=TAKE)
    # One board, one rating: three games each, whatever the variant.
    board = await h.redis.zrange(board_key(group.id, "durak"), 0, -1)
    assert sorted(int(uid) for uid in board) == sorted([ann.id, bob.id])
    mine = await h.redis.hgetall(group_key(group.id, "durak", ann.id))
    assert mine[b"n"] == b"3" and b"mu" in mine
    await h.private(ann, "/stats")
    text = next(m.text for m in reversed(h.screen(ann)) if (m.text or "").startswith("📊"))
    assert "Games: 3" in (text or "")
    assert "· 🃏 Perevodnoy durak · 36 cards: Games: 2" in (text or "")
    assert "· 🃏 Podkidnoy durak · 36 cards: Games: 1" in (text or "")
