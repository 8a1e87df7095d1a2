"""Joining needs being in the group; the bot removed from a group ends its games
(bot.handlers.members)."""

from __future__ import annotations

import pytest

from bot.core.callbacks import Action
from bot.core.i18n import LANGS, t
from bot.core.keys import closed_key, family_of
from bot.core.models import GameSettings
from bot.screens.registry import GAMES
from testing.chats import FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, opened, playing, stored, table_key

DURAK = GAMES["durak"]  # its name in a text is its variant's (the default settings here)


def seated(data: dict[str, object], user: FakeUser) -> bool:
    return any(s["user_id"] == user.id for s in data["seats"])  # type: ignore[attr-defined]


def member_checks(h: Harness, user: FakeUser) -> int:
    return len([c for c in h.server.calls_to("getChatMember") if c.params["user_id"] == user.id])


async def lobby(h: Harness) -> tuple[Tabletop, FakeUser]:
    """A lobby in a public group: an outsider sees its buttons too."""
    ann = h.user("Ann")
    top = await opened(h, ann, "durak", h.group("Card night", username="cardnight"))
    return top, ann


@pytest.mark.parametrize("lang", LANGS)
async def test_an_outsider_cannot_join_with_the_button_or_a_forwarded_link(
    harness: Harness, lang: str
) -> None:
    h = harness
    top, _ = await lobby(h)
    eve = h.user("Eve", language_code=lang)
    top.group.outsiders.add(eve.id)
    refused = t(lang, "join.not_member", chat="Card night")
    answer = await top.join(eve)
    assert answer.show_alert and answer.text == refused
    assert [m for m in h.screen(eve) if m.from_bot] == [], "no 'you joined' to an outsider"
    shy = h.user("Shy", started=False)  # his private chat is closed: the lobby offers a link
    await top.join(shy)
    link = next(b.url for b in top.table_message().buttons if b.url)
    assert link is not None
    await h.follow(eve, link)
    assert [m.text for m in h.screen(eve) if m.from_bot] == [refused]
    assert not seated(await stored(h, top.group), eve)
    await h.follow(shy, link)  # a member follows the same link: he is in
    assert seated(await stored(h, top.group), shy)


async def test_membership_is_asked_once_a_minute_and_again_when_telegram_cannot_say(
    harness: Harness,
) -> None:
    """A member who joins, leaves and joins again is looked up once; an outsider every time;
    the creator not at all; a join Telegram cannot check is to be tried again."""
    h = harness
    top, ann = await lobby(h)
    assert member_checks(h, ann) == 0, "the creator opened the table from the group"
    bob, cid, eve = h.user("Bob"), h.user("Cid"), h.user("Eve")
    top.group.outsiders.add(eve.id)
    for _ in range(2):
        assert (await top.join(bob)).text is None
        await top.tap_group(bob, Action.LEAVE)
        await top.join(eve)
    assert (member_checks(h, bob), member_checks(h, eve)) == (1, 2)
    top.group.outsiders.discard(eve.id)  # she joins the group
    assert (await top.join(eve)).text is None
    assert seated(await stored(h, top.group), eve)
    h.server.inject("getChatMember", 502, "Bad Gateway")
    assert (await top.join(cid)).text == t("en", "common.try_again")
    assert not seated(await stored(h, top.group), cid)
    assert (await top.join(cid)).text is None
    assert seated(await stored(h, top.group), cid)


async def test_a_join_tap_in_a_private_group_asks_telegram_nothing(harness: Harness) -> None:
    """Only members see a private group's lobby: a Join there (or again) asks Telegram nothing."""
    h = harness
    top = await opened(h, h.user("Ann"), "durak", h.group("Card night"))
    bob = h.user("Bob")
    assert (await top.join(bob)).text is None
    assert seated(await stored(h, top.group), bob)
    again = await top.join(bob)
    assert again.text != t("en", "common.try_again")
    assert member_checks(h, bob) == 0


@pytest.mark.parametrize("status", ["kicked", "left"])
async def test_the_bot_removed_mid_game_ends_it_and_tells_the_players(
    harness: Harness, status: str
) -> None:
    h = harness
    group = h.group("Card night")
    players = [h.user("Ann"), h.user("Bob", language_code="ru"), h.user("Cid", language_code="uk")]
    top = await playing(h, "durak", players, group=group)
    key = table_key(group)
    await h.redis.sadd(closed_key(players[2].id), key)  # as if Cid's private chat had refused
    await h.redis.zadd(family_of(key).due, {key: 1})  # and a group edit were due
    assert await h.redis.zscore(family_of(key).turns, key) is not None  # the turn time runs
    others = [h.user("Dan"), h.user("Eli")]  # another group's game is not touched
    elsewhere = await playing(h, "football", others, group=h.group("Other"))
    calls = len(h.server.calls)

    await h.remove_bot(group, players[0], status=status)

    assert not await h.redis.exists(key)
    assert await h.redis.zscore(family_of(key).due, key) is None
    assert await h.redis.zscore(family_of(key).turns, key) is None
    assert not await h.redis.sismember(closed_key(players[2].id), key)
    for user in players:
        lang = user.language_code or "en"
        expected = t(
            lang, "removed.ended", chat="Card night", game=DURAK.variant(lang, GameSettings())
        )
        assert [m for m in h.screen(user) if m.from_bot][-1].text == expected
        assert top.prompts(user) == [], "no move button outlives the game"
    assert not [c for c in h.server.calls[calls:] if c.chat_id == group.id]
    assert (await stored(h, elsewhere.group))["phase"] == "playing"
    assert [r.getMessage() for r in h.log_errors] == []


async def test_the_bot_removed_from_a_group_without_a_game_tells_nobody(
    harness: Harness,
) -> None:
    h = harness
    group = h.group()
    ann = h.user("Ann")
    await h.command(ann, group, "/newgame")
    await h.remove_bot(group, ann)
    assert not await h.redis.exists(table_key(group))
    assert [m for m in h.screen(ann) if m.from_bot] == []
