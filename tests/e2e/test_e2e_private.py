"""Private chats: users who never opened one, who blocked the bot, who deleted their hand;
and the commands around a game (/help, /start, /record)."""

from __future__ import annotations

import json
import random

import pytest

from bot.core.callbacks import Action
from bot.core.i18n import t
from engine import records
from engine.games.durak.game import Durak
from testing.chats import BOT_USERNAME
from testing.harness import Harness
from testing.tabletop import (
    PASS,
    TAKE,
    LeakWatch,
    Tabletop,
    card_pattern,
    game_for,
    opened,
    stored,
    table_key,
)


def deep_link(top: Tabletop) -> str:
    urls = [b.url for b in top.table_message().buttons if b.url]
    assert urls, f"no deep link on the table: {top.table_message().shown}"
    return urls[0]


async def test_people_who_never_opened_the_bot_join_by_the_deep_link(harness: Harness) -> None:
    """The creator and a joiner without a private chat are told so, then seated by the link."""
    h = harness
    ann = h.user("Ann", started=False)
    bob = h.user("Bob", started=False, language_code="ru")
    top = await opened(h, ann, "durak")
    assert t("en", "join.need_private") in (top.table_message().text or ""), "she is told"
    assert (await stored(h, top.group))["seats"] == []
    url = deep_link(top)
    assert url.startswith(f"https://t.me/{BOT_USERNAME}?start=")
    await h.follow(ann, url)
    assert t("en", "join.need_private") not in (top.table_message().text or "")
    answer = await top.join(bob)
    assert answer.text is None  # answered at once: the lobby then tells him what to do
    assert t("en", "join.need_private") in (top.table_message().text or "")
    assert [s["user_id"] for s in (await stored(h, top.group))["seats"]] == [ann.id]
    await h.follow(bob, deep_link(top))
    assert [s["user_id"] for s in (await stored(h, top.group))["seats"]] == [ann.id, bob.id]
    assert [m for m in h.screen(bob) if m.from_bot], "he got his private confirmation"
    await top.start(ann)
    await top.play_watched([ann, bob], 1, shun=PASS, prefer=TAKE)


async def test_a_deep_link_to_a_game_started_or_ended_without_him_says_so(harness: Harness) -> None:
    """His link, once the game started without him, says so; once it ended, it is stale; a
    forged payload joins nobody either."""
    h = harness
    ann, cid = h.user("Ann"), h.user("Cid")
    bob = h.user("Bob", started=False, language_code="ru")
    top = await opened(h, ann, "durak")
    await top.join(bob)  # refused: he has no private chat yet, the lobby gets the link
    url = deep_link(top)
    await top.join(cid)
    await top.start(ann)
    await h.follow(bob, url)
    assert [s["user_id"] for s in (await stored(h, top.group))["seats"]] == [ann.id, cid.id]
    reply = h.last(bob).text or ""
    assert reply == t("ru", "cmd.link_running")
    assert "уже началась" in reply and reply != t("ru", "tap.stale")
    await h.command(ann, top.group, "/endgame")
    await h.follow(bob, url)
    for payload in ("garbage", "x_y_z", "-1_0_abcd", "A" * 64):
        await h.private(bob, f"/start {payload}")
    assert [s["user_id"] for s in (await stored(h, top.group))["seats"]] == [ann.id, cid.id]
    replies = [m.text for m in h.screen(bob) if m.from_bot]
    assert len(replies) == 6, "each /start got an answer"
    assert replies[1] == t("ru", "tap.stale")  # the game is gone


@pytest.mark.telegram_complaints
async def test_a_player_who_blocks_the_bot_mid_game_sees_his_cards_in_an_alert(
    harness: Harness,
) -> None:
    h = harness
    top, (ann, bob) = await game_for(h, "durak")
    watch = LeakWatch(top)
    await watch.check()
    bob.blocked = True
    rng = random.Random(6)
    # The next move changes Bob's hand: the bot tries his private chat and is refused.
    await top.step([ann, bob], rng)
    await watch.check()
    data = await stored(h, top.group)
    assert [s["reach"]["dm_ok"] for s in data["seats"]] == [
        s["user_id"] != bob.id for s in data["seats"]
    ]
    text = top.table_message().text or ""
    assert "Bob" in text.split("⚠️")[1]  # the warning names him
    answer = await top.tap_group(bob, Action.CARDS)
    seat = next(i for i, s in enumerate(data["seats"]) if s["user_id"] == bob.id)
    view = Durak.from_json(data["state"]).view(seat)
    hand = [*view.hand, *(view.dummy_hand or [])]
    assert answer.show_alert and all(card_pattern(c).search(answer.text or "") for c in hand)
    await watch.check()  # the alert shows only his own cards
    # Someone else tapping "My cards" learns nothing of Bob's hand.
    cid = h.user("Cid")
    refused = await top.tap_group(cid, Action.CARDS)
    assert refused.text and refused.text != answer.text
    await watch.check()
    # He unblocks and opens the link: his hand comes back, the group warning goes.
    bob.blocked = False
    await h.follow(bob, deep_link(top))
    data = await stored(h, top.group)
    assert all(s["reach"]["dm_ok"] for s in data["seats"])
    assert not [b for b in top.table_message().buttons if b.url]
    assert "⚠️" not in (top.table_message().text or "")
    shown = next(m.text or "" for m in h.screen(bob) if "Your hand: " in (m.text or ""))
    line = next(x for x in shown.splitlines() if x.startswith("Your hand: "))  # as it is now
    hand = Durak.from_json(data["state"]).view(seat).hand
    assert len(line.split()) == 2 + len(hand) and all(card_pattern(c).search(line) for c in hand)
    await top.play_watched([ann, bob], 7, watch, shun=PASS, prefer=TAKE)


@pytest.mark.telegram_complaints
async def test_unblocking_the_bot_brings_his_hands_at_every_table(harness: Harness) -> None:
    """Unblocking the bot ("Restart") sends a bare /start, not the deep link."""
    h = harness
    ann, bob, cid = h.user("Ann"), h.user("Bob"), h.user("Cid")
    tables = [Tabletop(h, h.group("One")), Tabletop(h, h.group("Two"))]
    await tables[0].setup_game("durak", [ann, bob])
    await tables[1].setup_game("football", [bob, cid])
    bob.blocked = True
    rng = random.Random(6)
    for top, players in zip(tables, ([ann, bob], [bob, cid]), strict=True):
        while all(s["reach"]["dm_ok"] for s in (await stored(h, top.group))["seats"]):
            await top.step(players, rng)  # until a change of his hand is refused
    # A table where his chat is open already (say its game was played again since) is
    # dropped from his list without anything being sent.
    await h.redis.sadd(f"ct:closed:{bob.id}", table_key(gone := h.group("Three")))
    await h.private(bob, "/start")
    for top in tables:
        assert all(s["reach"]["dm_ok"] for s in (await stored(h, top.group))["seats"])
        assert not [b for b in top.table_message().buttons if b.url], "the warning is gone"
    assert await h.redis.smembers(f"ct:closed:{bob.id}") == set()
    assert not h.screen(gone)
    # Both games go on to the end: whenever it is his turn he has his buttons again.
    await tables[0].play([ann, bob], rng, shun=PASS, prefer=TAKE)
    await tables[1].play([bob, cid], rng)


@pytest.mark.telegram_complaints
async def test_a_deleted_hand_message_is_sent_again(harness: Harness) -> None:
    h = harness
    top, (ann, bob) = await game_for(h, "durak")
    waiting = ann if top.prompt(bob) is not None else bob
    for message in h.screen(waiting):
        message.deleted = True  # he cleared the chat while the other one thinks
    await top.step([ann, bob], random.Random(2))
    assert [m for m in h.screen(waiting) if m.from_bot], "his hand came back"
    assert top.prompt(waiting) is not None
    await top.play([ann, bob], random.Random(2), shun=PASS, prefer=TAKE)


async def test_help_in_a_group_does_not_call_the_group_a_private_chat(harness: Harness) -> None:
    h = harness
    group = h.group()
    private_chat = {
        "en": ("in a private chat with me", "this private chat"),
        "ru": ("в личном чате со мной", "этом личном чате"),
        "uk": ("в особистому чаті зі мною", "цьому особистому чаті"),
    }
    for code, (right, wrong) in private_chat.items():
        await h.command(h.user("Ann", language_code=code), group, "/help")
        text = h.last(group).text or ""
        assert right in text and wrong not in text


async def test_record_answers_with_the_game_that_ended_here_until_the_next_starts(
    harness: Harness,
) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob", language_code="uk")
    top = Tabletop(h, h.group())

    def documents() -> int:
        return sum(m.document is not None for m in h.screen(top.group))

    await h.command(ann, top.group, "/record")  # nothing was played here
    assert h.last(top.group).text == t("en", "cmd.no_record")
    await top.setup_game("durak", [ann, bob])
    await h.command(bob, top.group, "/record")  # mid-game the record would show every hand
    assert h.last(top.group).text == t("uk", "cmd.no_record")
    await top.play([ann, bob], random.Random(4), shun=PASS, prefer=TAKE)
    data = await stored(h, top.group)
    asked = await h.command(bob, top.group, "/record", mention=True)
    name, content = h.last_document(top.group)
    record, replayed = json.loads(content), records.replay(json.loads(content))
    assert name.endswith(".json") and replayed["ok"] and replayed["finished"]
    game = Durak.from_json(data["state"])
    assert (replayed["result"], replayed["summary"]) == (game.result(), game.summary())
    assert record["moves"] == data["played"]["moves"]
    assert record["players"] == [s["name"] for s in data["seats"]]
    reply = h.server.calls_to("sendDocument")[-1].params["reply_parameters"]
    assert reply["message_id"] == asked.message_id
    # The button still posts it once a game (a second tap, anyone's, posts nothing more);
    # the command answers every time it is asked.
    answer = await top.tap_group(ann, Action.RECORD)
    assert answer.answered and answer.text is None
    again = await top.tap_group(bob, Action.RECORD)
    assert again.show_alert and again.text == t("uk", "tap.record_sent")
    await h.command(ann, top.group, "/record")
    assert documents() == 3
    # Play again starts the next game: the finished one's record goes with it.
    await top.tap_group(bob, Action.AGAIN)
    await h.command(ann, top.group, "/record")
    assert h.last(top.group).text == t("en", "cmd.no_record") and documents() == 3
