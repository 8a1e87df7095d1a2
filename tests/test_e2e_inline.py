"""Games played in inline mode (issue 34), end to end through the fake Bot API as the
users' clients do it: ``@bot`` in a chat the bot is not in, the pick of a game, taps on
the posted table, and every move picked from the player's own inline query.
"""

from __future__ import annotations

import random
from typing import Any

from bot.core.i18n import plain
from bot.core.services import services
from testing.chats import FakeMessage, FakeUser
from testing.clock import Clock
from testing.fakeinline import Shown
from testing.harness import Chat, Harness

HAND = plain("en", "btn.inline_hand")


def titled(title: str) -> Any:
    return lambda r: r["title"] == title


async def post_game(h: Harness, creator: FakeUser, chat: Chat, game: str) -> FakeMessage:
    """``creator`` types @bot in ``chat`` and picks ``game``: its table, posted there."""
    seen = await h.inline(creator, chat, "")
    return await h.pick(creator, seen, titled(plain(creator.language_code or "en", game)))


async def later(h: Harness, seconds: float) -> None:
    """Time passes on the bot's clock (testing/clock.py): its timers fire."""
    clock = services(h.app).clock
    assert isinstance(clock, Clock)
    await clock.advance(seconds)


def moves(seen: Shown) -> list[dict[str, Any]]:
    """The results that play something: all but the hand (always first)."""
    return seen.results[1:]


async def play_out(
    h: Harness, table: FakeMessage, players: list[FakeUser], rng: random.Random, most: int = 900
) -> int:
    """Each player in turn opens his hand from the table's button and picks one of his
    moves at random (a computer's turn: a second passes), until the game is over: the
    picks made."""
    picks = 0
    for _ in range(most):
        moved = False
        for user in players:
            if HAND not in [b.text for b in table.buttons]:  # the game is over
                return picks
            seen = await h.switch(user, table, HAND)
            if moves(seen):
                await h.pick(user, seen, rng.choice(moves(seen))["id"])
                picks += 1
                moved = True
        if not moved:
            await later(h, 1.0)
    raise AssertionError("the game did not end")


def never_shared(h: Harness) -> None:
    """No answer that lists someone's moves or cards came from a cache, or may be served
    to anyone else, or later."""
    for seen in h.server.inline.shown:
        assert not seen.cached
        assert seen.answer is not None
        assert seen.answer.is_personal and seen.answer.cache_time == 0


def only_via_bot(h: Harness, chat: Chat) -> None:
    """The bot sent nothing to the chat itself: every message there a user posted."""
    assert h.screen(chat.id)
    assert all(m.via_bot is not None for m in h.screen(chat.id))


async def test_football_in_a_one_to_one_chat_from_at_bot_to_the_record(harness: Harness) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    chat = h.dialog(ann, bob)
    table = await post_game(h, ann, chat, "game.football")
    assert "Ann" in (table.text or "")
    await h.tap(bob, table, plain("en", "btn.join"))
    assert "Bob" in (table.text or "")
    await h.tap(ann, table, plain("en", "btn.start"))
    picks = await play_out(h, table, [ann, bob], random.Random(4))
    assert picks > 10
    text = table.text or ""
    assert plain("en", "btn.again") in [b.text for b in table.buttons]
    await h.tap(bob, table, plain("en", "btn.record"))
    name, body = h.last_document(bob)
    assert name.endswith(".json") and b'"moves"' in body
    never_shared(h)
    only_via_bot(h, chat)
    assert text


async def test_durak_for_three_in_a_group_the_bot_is_not_in(harness: Harness) -> None:
    h = harness
    ann, bob, cid = h.user("Ann"), h.user("Bob", language_code="ru"), h.user("Cid", started=False)
    group = h.group(creator=ann, bot=False)
    table = await post_game(h, ann, group, "game.durak")
    for user in (bob, cid):
        await h.tap(user, table, plain("en", "btn.join"))  # the creator's language
    await h.tap(ann, table, plain("en", "btn.start"))
    await play_out(h, table, [ann, bob, cid], random.Random(7))
    assert plain("en", "btn.again") in [b.text for b in table.buttons]
    never_shared(h)
    only_via_bot(h, group)
    assert not h.screen(ann.id) and not h.screen(cid.id)  # no hand came as a message


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
