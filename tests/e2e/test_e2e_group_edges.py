"""Hands in the group when things go wrong or change (docs/ephemeral.md)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from bot.core.callbacks import Action
from bot.core.keys import place_key
from bot.core.limiter import Priority
from bot.core.services import services
from bot.service.messages import cleanup
from bot.service.messages.group_hand import TAP_FRESH
from testing.chats import FakeGroup, FakeMessage, FakeUser
from testing.computers import lobby_with_computers, until
from testing.group_hands import live_buttons, no_private_messages, strangers
from testing.harness import Harness
from testing.tabletop import (
    PASS,
    PLAY_ACTIONS,
    TAKE,
    LeakWatch,
    Tabletop,
    action_of,
    clock_of,
    is_action,
    opened,
    playing,
    stored,
)


async def started(
    h: Harness, players: list[FakeUser], admin: bool, game: str = "durak"
) -> Tabletop:
    group = h.group(creator=players[0])
    group.bot_is_admin = admin
    return await playing(h, game, players, group=group)


async def two_started(
    h: Harness, admin: bool
) -> tuple[Tabletop, list[FakeUser], FakeUser, FakeUser]:
    """A durak game for two strangers: its table, its players in seat order, who leads,
    and who answers him."""
    players = strangers(h, 2, ("en",))
    top = await started(h, players, admin=admin)
    first = await top.actor(players)
    assert first is not None
    return top, players, first, next(u for u in players if u is not first)


async def move(h: Harness, top: Tabletop, user: FakeUser | None, rng: random.Random) -> None:
    assert user is not None, "nobody is to act"
    message = top.prompt(user)
    assert message is not None, f"{user.first_name} is not asked"
    button = rng.choice([b for b in message.buttons if action_of(b) in PLAY_ACTIONS])
    answer = await h.tap(user, message, button.__eq__)
    assert answer.text is None, answer.text


async def refused_unseen(
    h: Harness, cleared: bool = False
) -> tuple[Tabletop, list[FakeUser], FakeUser]:
    """:func:`two_started`, the bot demoted unseen, a move after a quiet while: the answerer's
    prompt is refused. ``cleared``: his old hand is gone from his client too."""
    top, players, first, other = await two_started(h, admin=True)
    top.group.bot_is_admin = False  # its my_chat_member never came
    if cleared:
        for message in h.hands(other, top.group):  # nothing left to edit
            message.deleted = True
    await clock_of(h).advance(TAP_FRESH + 1)  # his Join is too old to answer
    await move(h, top, first, random.Random(2))
    return top, players, other


def group_text(top: Tabletop) -> str:
    return top.table_message().text or ""


async def seat_of(top: Tabletop, user: FakeUser) -> dict[str, Any]:
    """``user``'s seat as stored."""
    return next(s for s in (await stored(top.h, top.group))["seats"] if s["user_id"] == user.id)


async def test_an_offline_player_gets_his_hand_back_through_my_cards(
    group_harness: Harness,
) -> None:
    h = group_harness
    top, players, first, other = await two_started(h, admin=True)
    rng = random.Random(1)
    other.online = False  # his phone is off: what is sent to him now never arrives
    await clock_of(h).advance(services(h.app).settings.messages.ring_after + 1)
    await move(h, top, first, rng)  # now he must answer: a new prompt, which he never gets
    assert await top.actor(players) is other
    assert top.prompt(other) is None, "he sees no buttons: the prompt never reached him"
    assert h.server.ephemerals(top.group.id, other.id, dropped=True)[-1].dropped
    other.online = True
    answer = await top.tap_group(other, Action.CARDS)
    assert answer.text is None  # answered at once; his hand is the answer
    assert top.prompt(other) is not None, "My cards brought his hand with its buttons"
    assert len(h.hands(other, top.group)) == 1, "the one he missed was deleted"
    await move(h, top, other, rng)
    await top.play(players, rng, shun=PASS, prefer=TAKE)
    no_private_messages(h, players)


@pytest.mark.telegram_complaints  # Telegram refuses the hand on purpose
async def test_a_hand_the_group_refuses_goes_to_my_cards_and_says_so_once(
    group_harness: Harness,
) -> None:
    """Demoted unseen, the next hand is refused: the group says so once, My cards brings it."""
    h = group_harness
    top, players, other = await refused_unseen(h, cleared=True)
    reach = (await seat_of(top, other))["reach"]
    assert not reach["group_ok"] and not reach["dm_ok"]
    assert not (await stored(h, top.group))["delivery"]["bot_admin"]
    said = group_text(top)
    assert said.count("the group could not show your cards") == 1
    assert f"{other.first_name}: tap “My cards” for your hand." in said
    await top.tap_group(other, Action.CARDS)
    assert h.hands(other, top.group), "My cards answered with his hand"
    assert (await seat_of(top, other))["reach"]["group_ok"]
    assert f"{other.first_name}: tap “My cards”" not in group_text(top)
    await LeakWatch(top).check()
    await top.play(players, random.Random(2), shun=PASS, prefer=TAKE)
    assert group_text(top).count("the group could not show your cards") <= 1


@pytest.mark.telegram_complaints  # Telegram refuses the hand on purpose
async def test_a_hand_that_left_the_group_keeps_no_buttons_there(group_harness: Harness) -> None:
    """Demoted unseen, the bot strips his old hand in the group: no button outlives /endgame."""
    h = group_harness
    top, players, other = await refused_unseen(h)
    seat = await seat_of(top, other)
    assert not seat["reach"]["group_ok"] and h.hands(other, top.group)
    await h.command(players[0], top.group, "/endgame")
    assert live_buttons(h, players, top.group) == []


@pytest.mark.telegram_complaints  # Telegram refuses the hand on purpose
async def test_a_hand_refused_for_want_of_an_administrator_comes_back_when_there_is_one(
    group_harness: Harness,
) -> None:
    h = group_harness
    top, players, other = await refused_unseen(h)
    assert top.prompt(other) is None, "his prompt was refused"
    await h.promote(top.group, players[0])  # the bot is made one
    seat = await seat_of(top, other)
    assert seat["reach"]["group_ok"]
    assert top.prompt(other) is not None, "his hand is back in the group, his buttons on it"


@pytest.mark.telegram_complaints  # Telegram refuses the hand on purpose
async def test_only_telegrams_own_words_say_the_bot_is_no_administrator(
    group_harness: Harness,
) -> None:
    """A refusal with "admin" in it but no CHAT_ADMIN_REQUIRED (a hand the group refuses)
    moves the hand out of the group, the bot still an administrator."""
    h = group_harness
    top, _, first, other = await two_started(h, admin=True)
    for message in h.hands(other, top.group):  # nothing to edit: a new hand must be sent
        message.deleted = True
    await clock_of(h).advance(TAP_FRESH + 1)
    description = 'Bad Request: can\'t parse entities: unsupported start tag "admin"'
    h.server.inject(
        "sendMessage", 400, description, when=lambda p: "ephemeral_message_parameters" in p
    )
    await move(h, top, first, random.Random(2))
    assert not (await seat_of(top, other))["reach"]["group_ok"], "his hand left the group"
    assert (await stored(h, top.group))["delivery"]["bot_admin"]


async def test_a_hand_moves_between_group_and_private_chat_mid_game(
    group_harness: Harness,
) -> None:
    h = group_harness
    ann, bob = h.user("Ann"), h.user("Bob", started=False)  # Ann has a private chat
    top = await started(h, [ann, bob], admin=False)
    rng = random.Random(3)
    watch = LeakWatch(top)
    (hand,) = h.hands(ann, top.group)
    await h.tap(ann, hand, is_action(Action.PLACE))
    moved = h.hands(ann, top.group)[-1]
    assert "private chat" in (moved.text or "") and moved.buttons == []
    (private,) = [m for m in h.screen(ann) if m.from_bot]
    assert "Your hand" in (private.text or "")
    assert await h.redis.get(place_key(ann.id)) == b"private"
    await watch.check()
    for _ in range(3):
        await move(h, top, await top.actor([ann, bob]), rng)
        await watch.check()
    mine = h.last(ann)  # her hand, in her private chat
    other = await opened(h, bob, "durak", h.group("Other night", creator=bob))
    await other.join(ann)  # her choice is kept for her next game
    assert h.hands(ann, other.group) == []
    assert "Other night" in (h.last(ann).text or ""), "her seat's confirmation, privately"
    # back to the group from the private chat: a new message there answers that tap
    await h.tap(ann, mine, is_action(Action.PLACE))
    assert "in the group now" in (mine.text or "") and mine.buttons == []
    assert "Your hand" in (h.hands(ann, top.group)[-1].text or "")
    assert await h.redis.get(place_key(ann.id)) == b"group"
    await top.play_watched([ann, bob], rng, watch, shun=PASS, prefer=TAKE)


@pytest.mark.telegram_complaints  # his old message is gone: the edit of it is refused
async def test_back_to_the_group_without_a_message_there_waits_for_my_cards(
    group_harness: Harness,
) -> None:
    """With no administrator and no old message to edit, the hand waits for *My cards*."""
    h = group_harness
    ann, bob = h.user("Ann"), h.user("Bob", started=False)  # Ann has a private chat
    top = await started(h, [ann, bob], admin=False)
    await h.tap(ann, h.hands(ann, top.group)[0], is_action(Action.PLACE))
    for message in h.hands(ann, top.group):  # she cleared her client
        message.deleted = True
    await clock_of(h).advance(TAP_FRESH + 1)
    said = group_text(top)
    await h.tap(ann, h.last(ann), is_action(Action.PLACE))
    seat = await seat_of(top, ann)
    assert (seat["reach"]["place"], seat["reach"]["group_ok"]) == ("group", True)
    assert "in the group now" in (h.last(ann).text or "") and h.last(ann).buttons == []
    assert group_text(top) == said, "the table says nothing: she waits for My cards"
    await top.tap_group(ann, Action.CARDS)
    assert "Your hand" in (h.hands(ann, top.group)[-1].text or "")


async def test_two_quick_switches_each_move_the_hand(group_harness: Harness) -> None:
    """Two switches at once take the hand away and back."""
    h = group_harness
    ann, bob = h.user("Ann"), h.user("Bob", started=False)
    top = await started(h, [ann, bob], admin=False)
    (hand,) = h.hands(ann, top.group)
    await asyncio.gather(*(h.tap(ann, hand, is_action(Action.PLACE)) for _ in range(2)))
    seat = await seat_of(top, ann)
    assert seat["reach"]["place"] == "group"
    assert await h.redis.get(place_key(ann.id)) == b"group"


async def test_against_the_computer_in_a_private_chat_the_hand_stays_there(
    quick_group: Harness,
) -> None:
    h = quick_group
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "football", 1, start=True)  # type: ignore[arg-type]
    assert top.prompt(ann) is not None and top.prompt(ann) in h.screen(ann)
    assert h.server.ephemeral == {}


async def test_a_game_ended_by_timeouts_leaves_no_live_buttons(quick_group: Harness) -> None:
    h = quick_group
    players = strangers(h, 2)
    group = h.group(creator=players[0])
    await Tabletop(h, group).setup_game("durak", players, settings={"turn_time": 1})

    async def over() -> bool:  # nobody taps: the computer plays for the absent, to the end
        return (await stored(h, group))["phase"] != "playing"

    await until(h, over, timeout=900, what="the game's end")
    assert live_buttons(h, players, group) == []


async def test_the_bots_removal_leaves_no_live_buttons(group_harness: Harness) -> None:
    """Every button left on the hands after the bot's removal is refused, changing nothing."""
    h = group_harness
    players = strangers(h, 2)
    top = await started(h, players, admin=True)
    await h.remove_bot(top.group, players[0])
    assert await stored(h, top.group) == {}
    left: list[tuple[FakeUser, FakeMessage]] = [
        (u, m) for u in players for m in h.hands(u, top.group) if m.buttons
    ]
    assert left
    for user, message in left:
        for button in message.buttons:
            answer = await h.tap(user, message, button.__eq__)
            assert answer.show_alert and answer.text, "a dead button says so"
    assert await stored(h, top.group) == {}


async def test_the_lobby_says_once_what_an_administrator_bot_does(group_harness: Harness) -> None:
    h = group_harness
    ann, bob = strangers(h, 2)
    group: FakeGroup = h.group(creator=ann)
    top = await opened(h, ann, "durak", group)
    hint = "make the bot an administrator"
    assert group_text(top).count(hint) == 1
    await h.promote(group, ann)
    assert (await stored(h, group))["delivery"]["bot_admin"]
    assert hint not in group_text(top)
    await top.join(bob)
    await top.start(ann)
    await h.promote(group, ann, admin=False)
    assert not (await stored(h, group))["delivery"]["bot_admin"]


@pytest.mark.telegram_complaints  # flood control, on purpose
async def test_a_join_answered_too_late_keeps_him_seated_and_my_cards_brings_his_hand(
    group_harness: Harness,
) -> None:
    """A Join answered past Telegram's 15 s keeps him seated; the group then asks for My cards."""
    h = group_harness
    ann, bob = strangers(h, 2, ("en",))
    group = h.group(creator=ann)
    top = await opened(h, ann, "durak", group)
    h.server.flood(
        "sendMessage", retry_after=20, when=lambda p: "ephemeral_message_parameters" in p
    )
    assert (await top.join(bob)).text is None
    await clock_of(h).advance(21)
    assert h.hands(bob, group) == [] and len((await stored(h, group))["seats"]) == 2
    await top.start(ann)
    assert f"{bob.first_name}: tap “My cards” for your hand." in group_text(top)
    await top.tap_group(bob, Action.CARDS)
    assert "Your hand" in (h.hands(bob, group)[-1].text or "")
    await top.play([ann, bob], random.Random(8), shun=PASS, prefer=TAKE)


@pytest.mark.settings(hands="group", rate_limit=True, ephemeral_group_budget=True)
async def test_superseded_hands_keep_no_buttons_under_the_limits(harness: Harness) -> None:
    """Old hands the limiter removes later are stale; none keeps a button after /endgame."""
    h = harness
    top, players, first, _ = await two_started(h, admin=True)
    await clock_of(h).advance(30)
    for _ in range(3):  # each a new hand; the old one's deletion waits for the limits
        await top.tap_group(first, Action.CARDS)
        await clock_of(h).advance(4)
    old = [m for m in h.hands(first, top.group)[:-1] if any(map(is_play, m.buttons))]
    assert old, "the limiter left an old hand for later"
    before = await stored(h, top.group)
    answer = await h.tap(first, old[0], is_play)
    assert answer.show_alert and answer.text, "a superseded hand is stale"
    assert (await stored(h, top.group))["played"]["moves"] == before["played"]["moves"]
    await clock_of(h).advance(30)
    await h.command(players[0], top.group, "/endgame")
    await clock_of(h).advance(60)
    assert (await stored(h, top.group))["phase"] == "abandoned"
    assert live_buttons(h, players, top.group) == []


def is_play(button: Any) -> bool:
    return action_of(button) in PLAY_ACTIONS


class _NoRemovalsYet:
    """A limiter that grants every call but the removal of a hand sent anew (cleanup.REPLACED)."""

    async def try_acquire(self, requests: list[tuple[int, Priority]]) -> list[float]:
        return [5.0 if priority is cleanup.REPLACED else 0.0 for _, priority in requests]


@pytest.mark.parametrize(
    ("admin", "removals", "rings"),
    [(True, True, True), (False, True, False), (True, False, False)],
)
async def test_a_prompt_after_a_quiet_while_is_a_new_message_where_one_may_be(
    group_harness: Harness, admin: bool, removals: bool, rings: bool
) -> None:
    """An administrator rings him with a new hand and deletes the old one; otherwise (no
    administrator, or no removal granted at once) his hand is edited in place."""
    h = group_harness
    top, players, first, other = await two_started(h, admin=admin)
    (before,) = h.hands(other, top.group)
    if not removals:
        services(h.app).limiter = _NoRemovalsYet()  # type: ignore[assignment]
    await clock_of(h).advance(TAP_FRESH + 1)  # a quiet while; his Join is too old to answer
    await move(h, top, first, random.Random(7))
    assert await top.actor(players) is other
    (now,) = h.hands(other, top.group)
    assert top.prompt(other) is now
    assert (now.message_id != before.message_id) is rings
