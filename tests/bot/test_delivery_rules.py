"""The rules of docs/busy.md on bot/service/messages/ itself: given what a message shows (its
slot) and the newest table, whether it is brought up to date now, at which priority and how,
or when (tests/e2e/test_e2e_delivery.py shows them through the fake Bot API)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot.core import budget
from bot.core.budget import Budget
from bot.core.callbacks import inline_number
from bot.core.keys import group_slot, user_slot
from bot.core.limiter import Priority
from bot.core.models import Delivery, Inline, LastTap, Lobby, Seat, Slot, Table, TurnClock
from bot.core.screen import Button, Screen
from bot.core.store import Snapshot
from bot.service.messages import cleanup
from bot.service.messages.group_hand import (
    TAP_FRESH,
    ephemeral_budget,
    group_hand,
    removal_budget,
    when_old_stays,
)
from bot.service.messages.message import How, Later, Message
from bot.service.messages.parked import parked
from bot.service.messages.private_hand import private_hand
from bot.service.messages.rounds import asks_for
from bot.service.messages.table import table_message
from bot.service.messages.your_turn import your_turn
from bot.tables import games
from testing import settings as fake

GROUP = -100777
ALICE, BOB = 501, 502
NOW = 1_000_000.0
INTERVAL = 3.0  # TABLE_EDIT_INTERVAL, RING_AFTER 10 s (the defaults)
SETTINGS = fake.settings(table_edit_interval=INTERVAL)

PROMPT = Screen("your turn", ((Button("7♠", data="m:1"),),))
WATCHING = Screen("Bob's turn")
TABLE = Screen("the table")


ADMIN = Delivery(bot_admin=True)  # the bot is an administrator of the group


def table(**changes: Any) -> Table:
    """A game being played in the group: Alice and Bob, both hands in the group."""
    seats = [Seat(user_id=ALICE, name="Alice"), Seat(user_id=BOB, name="Bob")]
    values: dict[str, Any] = {
        "game_id": "g1",
        "chat_id": GROUP,
        "kind": "football",
        "phase": "playing",
        "lobby": Lobby(creator=ALICE),
        "seats": seats,
        "version": 10,
    }
    return Table(**{**values, **changes})


def shown(screen: Screen, **changes: Any) -> Slot:
    """A message that showed ``screen`` (a version ago, a while ago)."""
    values: dict[str, Any] = {
        "id": 77,
        "hash": screen.digest,
        "version": 9,
        "prompt": screen.prompt,
        "at": NOW - 60,
        "phase": "playing",
        "game": "g1",
    }
    return Slot(**{**values, **changes})


def decided(decision: Message | Later | None) -> Message:
    assert isinstance(decision, Message), decision
    return decision


def alice(away: bool = False, **reach: Any) -> list[Seat]:
    """The seats, Alice away or her reach's flags changed."""
    seats = table().seats
    seats[0].away = away
    seats[0].reach = seats[0].reach.model_copy(update=reach)
    return seats


def tapped(at: float, admin: bool = False, **changes: Any) -> Table:
    """Alice tapped in the group ``at`` then (the bot an administrator or not)."""
    last = {str(ALICE): LastTap("q1", at)}
    return table(delivery=Delivery(bot_admin=admin, last_taps=last), **changes)


ASKED, LOOKING = shown(WATCHING, quiet=NOW - 60), shown(WATCHING, quiet=NOW - 2)
SEEN, DUE, MOVED = shown(WATCHING), shown(WATCHING, at=NOW - INTERVAL), shown(WATCHING, at=NOW - 1)
P, G, OLD = private_hand, group_hand, NOW - TAP_FRESH - 1
MINE = alice(renew=1)  # he tapped "My cards"


# Rules 1 (his move buttons: a new message ringing his phone if not asked for RING_AFTER, else
# his hand edited in place), 2 (the mover's hand; a new phase's), 4 (a watcher's hand, as the
# table), and the branches of the hands in the group a reader might take for slips.
@pytest.mark.parametrize(
    ("hand", "game", "screen", "slot", "expected"),
    [
        (P, table(), PROMPT, ASKED, "PROMPT ANEW"),
        (P, table(), PROMPT, LOOKING, "PROMPT EDIT"),
        (P, table(seats=alice(away=True)), PROMPT, ASKED, "PROMPT EDIT"),
        (P, table(), Screen("more?", PROMPT.rows), shown(PROMPT, quiet=NOW - 60), "PROMPT EDIT"),
        (G, table(delivery=ADMIN), PROMPT, ASKED, "PROMPT ANEW"),
        (G, table(), PROMPT, ASKED, "PROMPT EDIT"),
        (P, table(), WATCHING, shown(PROMPT, at=NOW - 1), "MOVER EDIT"),
        (P, table(phase="finished"), Screen("won"), MOVED, "MOVER EDIT"),
        (G, tapped(NOW - 1, admin=True), WATCHING, shown(PROMPT), "MOVER EDIT"),
        (G, tapped(OLD, seats=MINE), WATCHING, SEEN, "REPLY EDIT"),
        (G, tapped(OLD, admin=True, seats=MINE), WATCHING, SEEN, "REPLY ANEW"),
        (G, tapped(NOW, seats=MINE), WATCHING, SEEN, "PROMPT ANEW"),
        (P, table(phase="lobby"), Screen("seated"), None, "REPLY EDIT"),
        (P, table(), Screen("Bob played"), DUE, "WATCHER EDIT"),
    ],
    ids=[
        "1 his prompt rings his phone after a while, his old hand goes",
        "1 a prompt soon after he moved is his hand edited in place",
        "1 a player who is away is not rung",
        "1 a prompt that follows his prompt is an edit: he was just asked",
        "1 in the group his prompt is as urgent as in his private chat",
        "1 in the group without a tap to answer a new prompt is an edit",
        "2 the hand of the player who just moved comes next",
        "2 a hand of a table in a new phase is never late",
        "a tap that needs no new message does not jump the queue",
        "my cards whose tap is too old to answer is an edit without an administrator",
        "my cards whose tap is too old to answer, with an administrator, is a new message",
        "my cards sends his hand in the group anew",
        "the answer to his join in his private chat is a reply",
        "4 a watcher's hand once due",
    ],
)
def test_a_hand_goes_at_its_priority_and_how(
    hand: Any, game: Table, screen: Screen, slot: Slot | None, expected: str
) -> None:
    message = decided(hand(SETTINGS, game, 0, screen, slot, NOW))
    assert f"{message.priority.name} {message.how.name}" == expected
    assert message.replaces == (77 if message.how is How.ANEW else None)  # his old hand goes
    assert hand is P or (message.hand is not None and message.hand.receiver == ALICE)


def test_rule_1_a_new_prompt_whose_old_message_may_not_go_now_is_an_edit_of_it() -> None:
    message = decided(group_hand(SETTINGS, table(delivery=ADMIN), 0, PROMPT, ASKED, NOW))
    when_old_stays(message)  # the limiter refused the old message's removal
    assert message.how is How.EDIT
    mine = decided(group_hand(SETTINGS, tapped(NOW, seats=MINE), 0, WATCHING, SEEN, NOW))
    when_old_stays(mine)  # "My cards": his new hand goes all the same
    assert mine.how is How.ANEW


# Rule 3: the group's table message, at most every TABLE_EDIT_INTERVAL seconds.
@pytest.mark.parametrize(
    ("screen", "slot", "interval", "expected"),
    [
        (Screen("dealt"), shown(TABLE, at=NOW - 1, phase="lobby"), INTERVAL, "MOVER EDIT"),
        (Screen("later"), shown(TABLE, at=NOW - INTERVAL), INTERVAL, "TABLE EDIT"),
        (TABLE, None, INTERVAL, "REPLY EDIT"),
        (TABLE, shown(TABLE, game="g0", phase="finished"), INTERVAL, "MOVER NEW_GAME"),
        (TABLE, shown(TABLE, game="g0", at=NOW - 1), INTERVAL, "MOVER NEW_GAME"),
        (TABLE, shown(Screen("old"), game="", at=NOW - INTERVAL), INTERVAL, "TABLE EDIT"),
        (Screen("later"), shown(TABLE, at=NOW), 0, "MOVER EDIT"),
    ],
    ids=[
        "2 the group table of a new phase is never late",
        "3 edited once the interval has passed",
        "3 the first table message answers the command at once",
        "3 a new game gets a new table message, the old keeps its result",
        "3 a new game in the same phase still gets a new message",
        "3 a message saved before the table's message knew its game is not a new game's",
        "3 without a table edit interval nothing is coalesced",
    ],
)
def test_the_group_table_goes_at_its_priority_and_how(
    screen: Screen, slot: Slot | None, interval: float, expected: str
) -> None:
    message = decided(table_message(table(), screen, slot, interval, NOW))
    assert f"{message.priority.name} {message.how.name}" == expected
    assert message.replaces == (77 if message.how is How.NEW_GAME else None)


def test_rules_3_and_4_coalesce_edits_and_leave_alone_what_shows_this_state_or_newer() -> None:
    slot, later = shown(WATCHING, at=NOW - 1), Screen("Bob played")
    assert table_message(table(), later, shown(TABLE, at=NOW - 1), INTERVAL, NOW) == Later(NOW + 2)
    assert private_hand(SETTINGS, table(), 0, later, slot, NOW) == Later(NOW + 2)
    assert group_hand(SETTINGS, table(), 0, later, slot, NOW) == Later(NOW + 2)
    eager = fake.settings(table_edit_interval=0)
    watcher = decided(private_hand(eager, table(), 0, later, shown(WATCHING, at=NOW - 0.1), NOW))
    assert watcher.priority is Priority.WATCHER
    assert table_message(table(), TABLE, shown(TABLE), INTERVAL, NOW) is None
    assert table_message(table(), TABLE, shown(later, version=11), INTERVAL, NOW) is None


def test_rule_5_removals_are_asked_for_after_every_message() -> None:
    snap = Snapshot(table(), junk=[(GROUP, 60, False, 0)])
    ring = decided(private_hand(SETTINGS, table(), 0, PROMPT, shown(WATCHING), NOW))
    watcher = decided(private_hand(SETTINGS, table(), 1, WATCHING, None, NOW))
    asks = asks_for(SETTINGS, [ring, watcher], snap)
    order = [(a.chat, a.priority) for a in asks.in_order()]
    assert order == [
        (ALICE, Priority.PROMPT),  # his prompt
        (BOB, Priority.WATCHER),
        (ALICE, cleanup.REPLACED),  # the hand it replaces, as urgently as a mover's
        (GROUP, Priority.CLEANUP),  # what earlier passes left: last
    ]
    assert cleanup.REPLACED is Priority.MOVER


def test_the_record_is_asked_for_last_as_a_reply() -> None:
    snap = Snapshot(table(phase="finished", delivery=Delivery(record_asked=True)))
    asks = asks_for(SETTINGS, [decided(table_message(table(), TABLE, None, 3, NOW))], snap)
    assert asks.record is not None and asks.in_order()[-1] is asks.record
    assert (asks.record.chat, asks.record.priority) == (GROUP, Priority.REPLY)


# Hands in the group: the same path, in the same order; Telegram publishes no limits of
# their own for them, so each call counts against the player's own one a second, and
# against the group's 20 a minute too once that group has learned from a 429 that they
# count there (bot.core.budget; EPHEMERAL_GROUP_BUDGET=true: always, false: never).
def test_an_ephemeral_call_counts_against_its_player_and_the_group_once_learned() -> None:
    always = fake.settings(ephemeral_group_budget=True)
    own = fake.settings(ephemeral_group_budget=False)
    learning = Budget(ALICE, group=GROUP)
    assert ephemeral_budget(SETTINGS, GROUP, ALICE) == learning
    assert ephemeral_budget(always, GROUP, ALICE) == Budget(GROUP)
    assert ephemeral_budget(own, GROUP, ALICE) == Budget(ALICE)
    slot = shown(WATCHING, at=NOW - 60)
    assert decided(group_hand(SETTINGS, table(), 0, PROMPT, slot, NOW)).budget == learning
    assert decided(group_hand(always, table(), 0, PROMPT, slot, NOW)).budget == Budget(GROUP)
    # and so does the removal of his old ephemeral hand
    assert removal_budget(SETTINGS, (GROUP, 60, False, ALICE)) == learning
    assert removal_budget(own, (GROUP, 60, False, ALICE)) == Budget(ALICE)


def test_a_new_message_answering_his_tap_goes_before_the_groups_table() -> None:
    # his Join: the lobby's answer is a new ephemeral message that answers the tap, which
    # Telegram takes for 15 seconds only
    seated = Screen("you are seated")
    message = decided(group_hand(SETTINGS, tapped(NOW - 1, phase="lobby"), 0, seated, None, NOW))
    assert message.priority is Priority.PROMPT
    assert message.hand is not None and message.hand.query == "q1"
    old = tapped(NOW - TAP_FRESH - 1, phase="lobby")
    stale = decided(group_hand(SETTINGS, old, 0, seated, None, NOW))
    assert stale.priority is Priority.REPLY and stale.hand is not None
    assert (stale.hand.query, stale.hand.may_send) == (None, False)


def test_a_private_chat_that_refused_us_shows_nothing_until_he_opens_it() -> None:
    assert private_hand(SETTINGS, table(seats=alice(dm_ok=False)), 0, PROMPT, None, NOW) is None


def test_the_place_his_hand_has_left_gets_one_last_edit_without_buttons_where_it_may() -> None:
    moved = Screen("your cards are elsewhere")
    slots = {user_slot(ALICE): shown(PROMPT)}
    message = decided(parked(SETTINGS, table(), 0, True, moved, slots))
    assert (message.chat_id, message.priority, message.how) == (ALICE, Priority.MOVER, How.PARKED)
    assert parked(SETTINGS, table(), 0, True, moved, {}) is None  # never showed his hand
    back = {group_slot(ALICE): shown(PROMPT)}  # from the group back to his private chat
    message = decided(parked(SETTINGS, table(), 0, False, moved, back))
    assert message.hand is not None and message.budget == ephemeral_budget(SETTINGS, GROUP, ALICE)
    refused = table(seats=alice(group_ok=False))  # the group refused his hand: and this too
    assert parked(SETTINGS, refused, 0, False, moved, back) is None
    assert parked(SETTINGS, table(chat_id=ALICE), 0, False, moved, back) is None  # his own chat
    never_sent = {group_slot(ALICE): shown(PROMPT, id=None)}
    assert parked(SETTINGS, table(), 0, False, moved, never_sent) is None
    newer = {group_slot(ALICE): shown(PROMPT, version=11)}  # a newer state shows there
    assert parked(SETTINGS, table(), 0, False, moved, newer) is None


# An inline table (issue 34): its message is edited by its inline_message_id, counted as
# bot.core.budget.of_inline says, and its next game is played in the same message; the
# player whose turn has waited gets one private "your turn" a turn.

INLINE = "AgAAAinline"


def inline_table(**changes: Any) -> Table:
    values = {"chat_id": 0, "thread_id": inline_number(INLINE), "inline": Inline(message=INLINE)}
    return table(**{**values, **changes})


def test_an_inline_table_is_edited_by_its_id_and_its_next_game_in_the_same_message() -> None:
    message = decided(table_message(inline_table(game_id="g2"), TABLE, shown(WATCHING), 0, NOW))
    assert message.how is How.EDIT and message.inline == INLINE
    assert message.budget == budget.of_inline("auto", INLINE)
    grouped = decided(
        table_message(inline_table(inline=Inline(message=INLINE, group=True)), TABLE, None, 0, NOW)
    )
    assert grouped.budget == budget.of_inline("auto", INLINE, group=True)


def test_your_turn_rings_once_a_turn_after_he_waited_if_he_may_be_written_to() -> None:
    def dealt(**changes: Any) -> tuple[Table, int]:
        game = inline_table(phase="lobby", **changes)
        games.start(game, random.Random(1))
        actor = games.actor(game)
        assert actor is not None
        return game, actor

    def at(game: Table, seat: int, slot: Slot | None = None) -> Any:
        return your_turn(SETTINGS, game, seat, PROMPT, slot, NOW)

    waiting, actor = dealt(clock=TurnClock(turn_since=NOW - 10))
    message = decided(at(waiting, actor))
    assert message.how is How.ANEW and message.chat_id == waiting.seats[actor].user_id
    assert at(waiting, 1 - actor) is None  # not his turn
    assert at(waiting, actor, shown(PROMPT, version=waiting.version)) is None  # shown
    soon, actor = dealt(clock=TurnClock(turn_since=NOW - 3))
    assert at(soon, actor) == Later(NOW + 7)  # RING_AFTER: he may be looking at it
    for switch in ({"nudge": False}, {"dm_ok": False}):
        game, actor = dealt(clock=TurnClock(turn_since=NOW - 10))
        seat = game.seats[actor]
        seat.reach = seat.reach.model_copy(update=switch)
        assert at(game, actor) is None
