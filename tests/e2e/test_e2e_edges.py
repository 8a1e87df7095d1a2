"""Edges a real group finds quickly: odd names, one player at two tables, admins."""

from __future__ import annotations

import asyncio
import json
import random
import re

import pytest

from bot.core.callbacks import Action
from bot.core.i18n import catalogue
from bot.screens import render_stats
from bot.tables.stats import count
from testing.harness import Harness
from testing.html import parse_html
from testing.stats import play_series
from testing.tabletop import PASS, TAKE, LeakWatch, Tabletop, playing, stored


async def test_a_name_with_html_characters_reads_as_written_on_every_screen(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``<b>&Ann`` in ``Tom & Jerry <club>`` reads as written on every screen of both games:
    escaped once, never twice (and a call Telegram refuses fails the test)."""
    h = harness
    for module in (count, render_stats):  # on the board after one game (its screens alike)
        monkeypatch.setattr(module, "MIN_GAMES", 1)
    name, chat = "<b>&Ann", "Tom & Jerry <club>"
    ann, bob = h.user(name), h.user("Bob")
    group = h.group(chat, creator=ann)
    await play_series(Tabletop(h, group), [ann, bob], "football", 1)
    durak = await playing(h, "durak", [ann, bob], group=group)
    await durak.play([ann, bob], random.Random(1), shun=PASS, prefer=TAKE)
    await durak.tap_group(bob, Action.RECORD)
    assert name in json.loads(h.last_document(group)[1])["players"]  # and in the record
    await h.command(bob, group, "/stats")
    await h.command(bob, group, "/stats", reply_to=await h.send_text(ann, group, "gg"))
    shown: dict[int, list[str]] = {group.id: [], ann.id: [], bob.id: []}
    for call in h.server.calls:
        if call.method in ("sendMessage", "editMessageText") and not call.error:
            text = str(call.params["text"])
            if call.params.get("parse_mode") == "HTML":
                text = parse_html(text)[0]
            shown[int(call.params["chat_id"])].append(text)
    texts = [text for chat_texts in shown.values() for text in chat_texts]
    assert [text for text in texts if "&amp;" in text or "&lt;" in text] == []

    def with_name(chat_id: int, key: str) -> list[str]:
        """What was shown there with the text of ``key`` up to its first placeholder."""
        words = re.sub(r"<[^>]+>", "", str(catalogue("en")[key])).split("{")[0]
        return [text for text in shown[chat_id] if words in text and name in text]

    assert with_name(group.id, "lobby.players")  # the lobby
    assert with_name(group.id, "football.setting_up")  # the table during the set-up
    assert with_name(group.id, "event.durak.bout")  # a durak game's narration
    assert with_name(group.id, "stats.moved_up")  # the result
    assert with_name(group.id, "stats.board_title")  # the standings
    assert with_name(group.id, "stats.h2h")  # her figures
    assert [text for text in shown[ann.id] if chat in text]  # her hand's header


async def test_one_player_at_two_tables_in_two_topics_of_one_forum(harness: Harness) -> None:
    """Ann at a durak and a football table at once, each in a topic of its own: a hand
    message per table, each saying where it belongs, each shown only what it may."""
    h = harness
    a, b, c = (h.user(n) for n in ("Ann", "Bob", "Cid"))
    group = h.group(forum=True)
    tops = [Tabletop(h, group, h.topic(group, "One")), Tabletop(h, group, h.topic(group, "Two"))]
    chat = h.topic(group, "Chat")
    await tops[0].setup_game("durak", [a, b])
    await tops[1].setup_game("football", [c, a])  # Ann plays at both tables
    # Her two hand messages say which topic each belongs to.
    headers = {m.text.splitlines()[0] for m in h.screen(a) if m.from_bot and m.text}
    assert sorted(line.split(" › ")[-1] for line in headers) == ["One", "Two"], headers
    watches = [LeakWatch(top) for top in tops]  # each topic's table judged on its own
    await asyncio.gather(
        tops[0].play([a, b], random.Random(1), after_each=watches[0].check),
        tops[1].play([c, a], random.Random(2), after_each=watches[1].check),
    )
    for top in tops:
        assert (await stored(h, group, top.thread))["phase"] == "finished"
    # Everything the bot posted in the group went to a game's topic, none to the others.
    assert {m.thread_id for m in h.screen(group) if m.from_bot} == {t.thread for t in tops}
    assert h.screen(group, chat) == []


async def test_a_command_sent_as_a_reply_opens_the_table_in_the_main_chat(
    harness: Harness,
) -> None:
    """A reply's message_thread_id in a supergroup that is no forum is not a topic."""
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    group = h.group()
    hello = await h.send_text(bob, group, "anyone for cards?")
    await h.command(ann, group, "/newgame", reply_to=hello)
    top = Tabletop(h, group)
    await top.tap_group(ann, Action.PICK, "d")
    await top.join(bob)
    await top.start(ann)
    assert (await stored(h, group))["phase"] == "playing"
    await h.command(bob, group, "/newgame", reply_to=top.table_message())
    assert (await stored(h, group))["phase"] == "playing"


async def test_an_anonymous_admin_is_told_to_speak_for_himself_and_may_end_a_game(
    harness: Harness,
) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    group = h.group()
    await h.as_group(group, "/newgame")
    assert await stored(h, group) == {}  # no table nobody could pick a game for
    assert "as yourself" in h.last(group).text
    await playing(h, "durak", [ann, bob], group=group)
    await h.as_group(group, "/endgame")
    assert (await stored(h, group))["phase"] == "abandoned"
