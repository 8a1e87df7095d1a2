"""Games in inline mode (issue 34): ``@bot`` in a chat, a table posted, moves picked inline."""

from __future__ import annotations

import random
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.callbacks import INLINE_CHAT, inline_number
from bot.core.i18n import plain
from bot.core.keys import table_key
from bot.core.models import Table
from bot.core.services import services
from bot.screens import views
from testing.botproc import Bots
from testing.chats import BOT_USERNAME, FakeMessage, FakeUser
from testing.fakeinline import Shown
from testing.fakeserver import FakeServer
from testing.harness import Chat, Harness
from testing.ownredis import OwnRedis
from testing.tabletop import PASS, TAKE, later, set_lobby
from testing.webapp import bearer, client, token

HAND = plain("en", "btn.inline_hand")
WEBAPP = "https://cards.example.org/app/"


def titled(title: str) -> Any:
    return lambda r: r["title"] == title


async def post_game(h: Harness, creator: FakeUser, chat: Chat, game: str) -> FakeMessage:
    """``creator`` types @bot in ``chat`` and picks ``game``: its table, posted there."""
    seen = await h.inline(creator, chat, "")
    return await h.pick(creator, seen, titled(plain(creator.language_code or "en", game)))


def moves(seen: Shown) -> list[dict[str, Any]]:
    """The results that play something: all but the hand (always first)."""
    return seen.results[1:]


async def play_out(
    h: Harness,
    table: FakeMessage,
    players: list[FakeUser],
    rng: random.Random,
    most: int = 900,
    *,
    shun: str | None = None,
    prefer: str | None = None,
) -> int:
    """Each player in turn picks a random move from his hand (nobody asked: a second passes)
    until the game is over: the picks made. The move titled ``prefer`` is picked whenever
    it is offered, else not one titled ``shun`` while there is another (Tabletop.step's)."""
    picks = 0
    for _ in range(most):
        moved = False
        for user in players:
            if HAND not in [b.text for b in table.buttons]:  # the game is over
                return picks
            seen = await h.switch(user, table, HAND)
            if offered := moves(seen):
                preferred = [r for r in offered if r["title"] == prefer]
                pick = rng.choice(
                    preferred or [r for r in offered if r["title"] != shun] or offered
                )
                await h.pick(user, seen, pick["id"])
                picks += 1
                moved = True
        if not moved:
            await later(h, 1.0)
    raise AssertionError("the game did not end")


def never_shared(h: Harness) -> None:
    """No answer listing someone's moves or cards came from a cache or may be served again."""
    for seen in h.server.inline.shown:
        assert not seen.cached
        assert seen.answer is not None
        assert seen.answer.is_personal and seen.answer.cache_time == 0


def chosen(user: FakeUser, result_id: str, query: str, table: FakeMessage | None = None) -> Any:
    """Telegram's report that ``user`` picked ``result_id`` (posted as ``table``)."""
    report = {"result_id": result_id, "from": user.to_json(), "query": query}
    if table is not None:
        report["inline_message_id"] = table.inline_message_id
    return {"chosen_inline_result": report}


def only_via_bot(h: Harness, chat: Chat) -> None:
    """The bot sent nothing to the chat itself: every message there a user posted."""
    assert h.screen(chat.id)
    assert all(m.via_bot is not None for m in h.screen(chat.id))


async def test_football_in_a_one_to_one_chat_from_at_bot_to_the_record(harness: Harness) -> None:
    h = harness
    ann, bob, chat, table = await football_for_two(h)  # the lobby: see the pick reported late
    picks = await play_out(h, table, [ann, bob], random.Random(4))
    assert picks > 10 and table.text
    assert plain("en", "btn.again") in [b.text for b in table.buttons]
    await h.tap(bob, table, plain("en", "btn.record"))
    name, body = h.last_document(bob)
    assert name.endswith(".json") and b'"moves"' in body
    # two more games, then the chat's own board (kept by its chat_instance, from the
    # third game on): an alert, the bot not being in the chat
    for seed in (5, 6):
        await h.tap(bob, table, plain("en", "btn.again"))
        await play_out(h, table, [ann, bob], random.Random(seed))
    board = await h.tap(ann, table, plain("en", "btn.standings"))
    assert board.show_alert and "Standings: ⚽ Belarusian football" in (board.text or "")
    assert "Ann" in (board.text or "") and "Bob" in (board.text or "")
    never_shared(h)
    only_via_bot(h, chat)


async def test_durak_for_three_in_a_group_the_bot_is_not_in(harness: Harness) -> None:
    h = harness
    ann, bob, cid = h.user("Ann"), h.user("Bob", language_code="ru"), h.user("Cid", started=False)
    group = h.group(creator=ann, bot=False)
    table = await post_game(h, ann, group, "game.durak")
    for user in (bob, cid):
        await h.tap(user, table, plain("en", "btn.join"))  # the creator's language
    await h.tap(ann, table, plain("en", "btn.start"))
    dan = h.user("Dan")  # in the group, not at the table: the public view, no cards
    watched = await h.switch(dan, table, HAND)
    assert len(watched.results) == 1 and watched.ids[0].startswith("V")
    assert watched.results[0]["description"] == plain("en", "inline.watch")
    await play_out(h, table, [ann, bob, cid], random.Random(7))
    assert plain("en", "btn.again") in [b.text for b in table.buttons]
    # Cid never started the bot: the answer opens it, and Start brings the record
    answer = await h.tap(cid, table, plain("en", "btn.record"))
    assert answer.url is not None and not h.screen(cid.id)
    cid.started = True
    await h.follow(cid, answer.url)
    name, body = h.last_document(cid)
    assert name.endswith(".json") and b'"moves"' in body
    never_shared(h)
    only_via_bot(h, group)
    assert not h.screen(ann.id) and not h.screen(bob.id)  # no hand came as a message


async def test_football_against_the_computer_and_play_again_in_the_same_message(
    harness: Harness,
) -> None:
    h = harness
    ann = h.user("Ann")
    table = await post_game(h, ann, ann, "game.football")  # his own chat with the bot
    await h.tap(ann, table, plain("en", "btn.add_computer"))
    await h.tap(ann, table, plain("en", "btn.start"))
    await play_out(h, table, [ann], random.Random(2))
    await h.tap(ann, table, plain("en", "btn.again"))
    assert HAND in [b.text for b in table.buttons]  # the next game, in the same message
    await play_out(h, table, [ann], random.Random(3))
    assert "Series after 2 games" in (table.text or "")  # the series kept
    tables = [m for m in h.screen(ann.id) if any(b.callback_data for b in m.buttons)]
    assert tables == [table]


async def stored(h: Harness, table: FakeMessage) -> Table:
    """The inline table of a posted message, as Redis holds it."""
    assert table.inline_message_id is not None
    key = table_key(INLINE_CHAT, inline_number(table.inline_message_id))
    found = (await services(h.app).store.load(key)).table
    assert found is not None
    return found


async def football_for_two(h: Harness) -> tuple[FakeUser, FakeUser, Chat, FakeMessage]:
    """Ann posts football in her private chat with Bob, Bob joins, Ann starts."""
    ann, bob = h.user("Ann"), h.user("Bob")
    chat = h.dialog(ann, bob)
    table = await post_game(h, ann, chat, "game.football")
    await h.tap(bob, table, plain("en", "btn.join"))
    await h.tap(ann, table, plain("en", "btn.start"))
    return ann, bob, chat, table


async def set_up(h: Harness, table: FakeMessage, user: FakeUser) -> None:
    """His football set-up, picked card by card from his hand, then confirmed."""
    for _ in range(10):
        seen = await h.switch(user, table, HAND)
        offered = [r for r in moves(seen) if r["title"] != plain("en", "btn.reset")]
        confirm = [r for r in offered if r["title"] == plain("en", "btn.confirm")]
        if not offered:
            return
        await h.pick(user, seen, (confirm or offered)[0]["id"])


async def in_play(h: Harness) -> tuple[FakeMessage, FakeUser, FakeUser, dict[int, Shown]]:
    """A football game for two, both set up: its table, who is to move and the other,
    and what each sees in his hand now."""
    ann, bob, _, table = await football_for_two(h)
    await set_up(h, table, ann)
    await set_up(h, table, bob)
    offers = {u.id: await h.switch(u, table, HAND) for u in (ann, bob)}
    mover = next(u for u in (ann, bob) if moves(offers[u.id]))
    return table, mover, bob if mover is ann else ann, offers


async def test_a_stale_a_forged_and_a_repeated_pick_change_nothing(harness: Harness) -> None:
    h = harness
    table, mover, other, offers = await in_play(h)
    seen = offers[mover.id]
    line = await h.pick(mover, seen, moves(seen)[0]["id"])
    played = await stored(h, table)
    await h.feed(chosen(mover, moves(seen)[0]["id"], seen.query, line))  # sent again: one move
    assert (await stored(h, table)).played.moves == played.played.moves
    assert "not played" not in (line.text or "")
    # A result of the list he saw before his move: not played, and its line says so
    stale = await h.pick(mover, seen, moves(seen)[-1]["id"])
    assert (await stored(h, table)).version == played.version
    assert "this move was not played" in (stale.text or "")
    assert HAND in [b.text for b in stale.buttons]
    # Forged picks: ids the bot never offered, or another player's move
    for result_id in (
        "0:zz:abcdM000x",
        moves(seen)[0]["id"].replace("0:", "-5:", 1),
        "Nfgzzzz",
        "N?p",
        "x" * 64,
        moves(seen)[0]["id"],
    ):
        await h.feed(chosen(other, result_id, ""))
    assert (await stored(h, table)).version == played.version


async def test_a_process_killed_mid_game_and_the_game_goes_on(
    own_redis: OwnRedis, served: FakeServer, bots: Bots
) -> None:
    """After kill -9 of the bot mid-game the next process takes the players' picks to the end."""
    first = await bots.start(served.url, "first", REDIS_URL=own_redis.url)
    h = bots.harness(served.telegram, first)
    ann, bob = h.user("Ann"), h.user("Bob")
    chat = h.dialog(ann, bob)
    table = await post_game(h, ann, chat, "game.durak")
    await h.tap(bob, table, plain("en", "btn.join"))
    assert table.inline_message_id is not None
    key = table_key(INLINE_CHAT, inline_number(table.inline_message_id))
    async with aioredis.Redis.from_url(own_redis.url) as redis:  # a short game, set untapped
        await set_lobby(redis, key, {"deck_size": 24})
    await h.tap(ann, table, plain("en", "btn.start"))
    for user in (ann, bob):  # the lead, on the first process
        if moves(seen := await h.switch(user, table, HAND)):
            await h.pick(user, seen, moves(seen)[0]["id"])
            break
    else:
        raise AssertionError("nobody leads")
    first.kill()
    h.serve_by(await bots.start(served.url, "second", REDIS_URL=own_redis.url))
    # to its end the shortest way: about 20 picks (a football game took 26 and a set-up)
    picks = await play_out(h, table, [ann, bob], random.Random(6), shun=PASS, prefer=TAKE)
    assert picks > 0
    assert plain("en", "btn.again") in [b.text for b in table.buttons]
    only_via_bot(h, chat)


async def test_a_turn_that_waits_rings_its_player_once_and_he_can_stop_that(
    harness: Harness,
) -> None:
    h = harness
    table, actor, other, _ = await in_play(h)

    def reminders(user: FakeUser) -> list[FakeMessage]:
        return [m for m in h.screen(user.id) if m.from_bot]

    await later(h, 5)
    assert not reminders(actor)  # not yet: he may be looking at it
    await later(h, 6)
    move = len((await stored(h, table)).played.moves) + 1
    assert [m.text for m in reminders(actor)] == [
        f"⏰ Your turn: ⚽ Belarusian football, move {move}. Tap {HAND} in the chat you play in."
    ]
    await later(h, 20)
    assert len(reminders(actor)) == 1 and not reminders(other)  # once a turn
    answer = await h.tap(actor, reminders(actor)[0], plain("en", "btn.quiet"))
    assert answer.text == plain("en", "inline.quiet_done")
    seen = await h.switch(actor, table, HAND)
    await h.pick(actor, seen, moves(seen)[0]["id"])
    offers = {u.id: await h.switch(u, table, HAND) for u in (actor, other)}
    await later(h, 11)  # whoever acts now has waited: only the one who did not stop them
    assert [m.text for m in reminders(actor)] == [reminders(actor)[0].text]
    assert f"move {move}." in (reminders(actor)[0].text or "")
    assert len(reminders(other)) == (1 if moves(offers[other.id]) else 0)


@pytest.mark.settings(webapp_url=WEBAPP, webapp_name="table")
async def test_the_table_opens_the_mini_app_by_its_direct_link(harness: Harness) -> None:
    h = harness
    table, actor, _, _ = await in_play(h)
    param = views.hand_query(await stored(h, table))
    opens = [b for b in table.buttons if b.text == plain("en", "webapp.open")]
    # a url button: Telegram takes no web_app button in a message sent via the bot
    assert [b.url for b in opens] == [f"https://t.me/{BOT_USERNAME}/table?startapp={param}"]
    await later(h, 11)
    reminder = next(m for m in h.screen(actor.id) if m.from_bot)
    assert any(b.web_app is not None for b in reminder.buttons)  # his private chat: the app
    # the page shows each his own seat, a stranger the public view
    seated = (await stored(h, table)).seat_of(actor.id)
    async with client(h) as c:
        for user, seat in ((actor, seated), (h.user("Eve"), None)):
            ticket = await token(c, user, param)
            r = await c.get("/app/api/state", headers=bearer(ticket))
            assert r.status_code == 200 and r.json()["seat"] == seat


async def test_the_list_offers_durak_s_variants_by_name_and_his_last_settings(
    harness: Harness,
) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    chat = h.dialog(ann, bob)
    seen = await h.inline(ann, chat, "no such game")  # any text: the games, never an error
    assert "🃏 Perevodnoy durak · 36 cards" in seen.titles
    assert "🃏 Podkidnoy durak · 36 cards" in seen.titles
    table = await h.pick(ann, seen, titled("🃏 Perevodnoy durak · 36 cards"))
    assert "Perevodnoy durak" in (table.text or "")
    await h.tap(ann, table, plain("en", "btn.settings"))
    await h.tap(ann, table, lambda b: b.text.startswith("Throw in"))
    await h.tap(bob, table, plain("en", "btn.join"))
    await h.tap(ann, table, plain("en", "btn.start"))
    again = await h.inline(ann, chat, "")
    last = "🃏 Perevodnoy durak · 36 cards · neighbours, as you last set it up"
    assert again.titles.index(last) < again.titles.index(plain("en", "game.durak"))
    others = (await h.inline(bob, chat, "")).titles
    assert not any(t.endswith("as you last set it up") for t in others)
    posted = await h.pick(ann, again, titled(last))
    assert "Perevodnoy durak · 36 cards · neighbours" in (posted.text or "")


async def test_a_set_up_step_picked_from_an_old_list_is_not_played(harness: Harness) -> None:
    """A set-up step ("this card, in the next place") from a list seen before is refused."""
    h = harness
    ann, _, _, table = await football_for_two(h)
    seen = await h.switch(ann, table, HAND)
    cards = [r for r in moves(seen) if r["title"] != plain("en", "btn.reset")]
    await h.pick(ann, seen, cards[0]["id"])
    seat = (await stored(h, table)).seat_of(ann.id)
    assert seat is not None
    picked = (await stored(h, table)).seats[seat].setup
    assert len(picked) == 1
    stale = await h.pick(ann, seen, cards[1]["id"])  # still a card he may place, elsewhere
    assert (await stored(h, table)).seats[seat].setup == picked
    assert "not played" in (stale.text or "")
    again = await h.switch(ann, table, HAND)  # the list he sees now plays
    fresh = [r for r in moves(again) if r["title"] == cards[1]["title"]]
    await h.pick(ann, again, fresh[0]["id"])
    assert len((await stored(h, table)).seats[seat].setup) == 2


async def test_a_join_before_telegram_reports_the_pick_opens_the_table_once(
    harness: Harness,
) -> None:
    """A pick Telegram reports late (or never): the first tap opens its table, the report
    leaves it as it is, and Start waits for the report."""
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    chat = h.dialog(ann, bob)
    h.server.inline.feedback = False  # the pick is reported by hand below
    seen = await h.inline(ann, chat, "")
    result = seen.result(titled(plain("en", "game.football")))
    table = await h.pick(ann, seen, result["id"])
    answer = await h.tap(bob, table, plain("en", "btn.join"))
    assert not answer.show_alert
    assert "Ann" in (table.text or "") and "Bob" in (table.text or "")
    # no report of the pick, none of a move picked either: no game starts, and he is told
    refused = await h.tap(ann, table, plain("en", "btn.start"))
    assert refused.show_alert and refused.text == plain("en", "inline.no_feedback")
    opened = await stored(h, table)
    assert opened.phase == "lobby"
    for _ in range(2):  # reported late, then again: the same table, the same lobby
        await h.feed(chosen(ann, result["id"], seen.query, table))
        reported = await stored(h, table)
        assert (reported.game_id, reported.seats) == (opened.game_id, opened.seats)
    await h.tap(ann, table, plain("en", "btn.start"))
    assert HAND in [b.text for b in table.buttons]
    seen = await h.switch(ann, table, HAND)
    await h.pick(ann, seen, moves(seen)[0]["id"])  # feedback off: Telegram reports nothing
    assert not (await stored(h, table)).seats[0].setup
