"""Forged, stale, replayed, out-of-turn and garbage taps leave the table as it was: an alert."""

from __future__ import annotations

import random

from bot.core.callbacks import STAMP_LEN, Action, Callback, decode, encode
from engine.games.durak.game import Durak
from testing.chats import Answer, FakeMessage, FakeUser
from testing.harness import Harness
from testing.tabletop import PASS, TAKE, Tabletop, game_for, is_action, opened, stored


async def prompted(
    h: Harness, n: int = 3
) -> tuple[Tabletop, list[FakeUser], FakeUser, FakeMessage, str]:
    """A dealt durak table of ``n``, the player asked to act, his prompt and its first
    button's callback_data."""
    top, players = await game_for(h, "durak", n)
    who = top.asked(players)
    message = top.prompt(who)
    assert message is not None
    data = message.buttons[0].callback_data
    assert data is not None
    return top, players, who, message, data


async def unchanged(top: Tabletop, tap: object) -> Answer:
    """Runs the tap; asserts the stored table did not change and an alert was shown."""
    before = await stored(top.h, top.group, top.thread)
    answer = await tap  # type: ignore[misc]
    after = await stored(top.h, top.group, top.thread)
    assert after == before
    assert answer.answered and answer.show_alert and answer.text, answer
    return answer


def with_token(cb: Callback, token: str) -> str:
    """A move button's data with the move ``token``, its position stamp kept: a tap of
    another position is refused as superseded before its token is read."""
    return encode(cb._replace(arg=cb.arg[:STAMP_LEN] + token))


GARBAGE = ["x", "hello world", "0" * 64, "🃏", "-1:0:abcdM", "1:2:3:4", "-csa1jx1u::zzzzQ"]


async def test_garbage_forged_and_misplaced_taps_on_a_dealt_table_change_nothing(
    harness: Harness,
) -> None:
    """Garbage data, a move out of turn or by a stranger, a hand's button tapped in the group
    (honoured only in his own chat), an illegal or malformed move, a Record mid-game (it
    would show every hand), a stranger's My cards, another group's lobby's Join tapped in
    this group; football's malformed move and a move of another game."""
    h = harness
    top, players, who, message, first = await prompted(h)
    cb = decode(first)
    data = await stored(h, top.group)
    seat = next(i for i, s in enumerate(data["seats"]) if s["user_id"] == who.id)
    mine = set(Durak.from_json(data["state"]).view(seat).hand)
    not_mine = next(c for c in ("6S", "7S", "8S", "9S", "10S", "6H", "7H") if c not in mine)
    eve = h.user("Eve")  # not at the table at all
    await h.private(eve, "/start")
    table = top.table_message().message_id
    record = encode(cb._replace(action=Action.RECORD, arg=""))
    taps = [(who, who.id, message.message_id, garbage) for garbage in GARBAGE]
    for user in [u for u in players if u is not who]:  # on his own hand
        own = [m for m in h.screen(user) if m.from_bot][-1]
        taps.append((user, user.id, own.message_id, first))
    taps += [(eve, eve.id, 1, first), (who, top.group.id, table, first)]
    for arg in (f"a{not_mine}", "t", "p", "zz", "a6X", "aQS" * 5):
        taps.append((who, who.id, message.message_id, with_token(cb, arg)))
    taps += [(user, top.group.id, table, record) for user in players]
    taps.append((eve, top.group.id, table, encode(cb._replace(action=Action.CARDS, arg=""))))
    for tap in taps:
        await unchanged(top, h.tap_data(*tap))
    assert not [m for m in h.screen(top.group) if m.document is not None]
    # Another group's lobby's own Join, its game current, tapped on this group's table:
    # only the group check refuses it (without it, he would join that lobby).
    other = await opened(h, players[0], "durak", h.group("Elsewhere", creator=players[0]))
    join = h.find(other.table_message(), is_action(Action.JOIN)).callback_data
    assert join is not None and decode(join).chat_id == other.group.id
    await unchanged(other, h.tap_data(players[1], top.group.id, table, join))
    # Football reads its own move tokens: a malformed one, and a move of another game.
    top, players = await game_for(h, "football")
    rng = random.Random(2)
    while len((await stored(h, top.group))["played"]["moves"]) < 2:  # both set up
        await top.step(players, rng)
    who = top.asked(players)
    message = top.prompt(who)
    assert message is not None
    cb = decode(h.find(message, is_action(Action.MOVE)).callback_data)
    another = "zzzz" if cb.game_id != "zzzz" else "yyyy"
    for forged in (with_token(cb, "x9"), encode(cb._replace(game_id=another))):
        await unchanged(top, h.tap_data(who, who.id, message.message_id, forged))


async def test_a_tap_from_a_finished_game_is_stale(harness: Harness) -> None:
    h = harness
    top, players, who, _, old = await prompted(h, 2)
    await top.play(players, random.Random(3), shun=PASS, prefer=TAKE)
    hand = [m for m in h.screen(who) if m.from_bot][-1]
    await unchanged(top, h.tap_data(who, who.id, hand.message_id, old))  # the game is over
    await top.tap_group(players[0], Action.AGAIN)
    # The old game's button, replayed on the new game: refused.
    hand = [m for m in h.screen(who) if m.from_bot][-1]
    await unchanged(top, h.tap_data(who, who.id, hand.message_id, old))


async def test_an_ended_lobby_takes_no_more_taps(harness: Harness) -> None:
    h = harness
    ann, bob = h.user("Ann"), h.user("Bob")
    top = await opened(h, ann, "durak")
    lobby = top.table_message()
    join = h.find(lobby, is_action(Action.JOIN)).callback_data
    start = h.find(lobby, is_action(Action.START)).callback_data
    await h.command(ann, top.group, "/endgame")
    assert (await stored(h, top.group))["phase"] == "abandoned"
    assert [b for b in lobby.buttons if b.callback_data] == [], "the lobby lost its buttons"
    await unchanged(top, h.tap_data(bob, top.group.id, lobby.message_id, join or ""))
    await unchanged(top, h.tap_data(ann, top.group.id, lobby.message_id, start or ""))
