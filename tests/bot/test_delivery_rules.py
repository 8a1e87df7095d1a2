"""The rules of docs/busy.md, one test each, on the delivery's rules themselves.

Each kind of message has its rule in bot/service/messages/ (the group's table, a hand in
his private chat or in the group, his turn, a watcher's hand, the place a hand has
left, clean-up): given what a message shows now (its slot) and the newest table, it says
whether the message is brought up to date now, at which priority and how, or when. The
end-to-end tests (tests/e2e/test_e2e_delivery.py, test_e2e_group_hands.py, ...) show the same
rules through the fake Bot API; these say each in a few lines.
"""

from __future__ import annotations

import random
from typing import Any

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
        "hash": screen.digest(),
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


# 1. His move buttons, when it is his turn: a new message that rings his phone if he has
# not been asked for a while (RING_AFTER), otherwise his hand message edited in place.


def test_rule_1_his_move_buttons_go_first_and_ring_his_phone_after_a_while() -> None:
    slot = shown(WATCHING, quiet=NOW - 60)
    message = decided(private_hand(SETTINGS, table(), 0, PROMPT, slot, NOW))
    assert (message.priority, message.how) == (Priority.PROMPT, How.ANEW)
    assert message.replaces == 77  # his old hand goes with it


def test_rule_1_a_prompt_soon_after_he_moved_is_his_hand_edited_in_place() -> None:
    slot = shown(WATCHING, quiet=NOW - 2)  # he moved two seconds ago: he is looking
    message = decided(private_hand(SETTINGS, table(), 0, PROMPT, slot, NOW))
    assert (message.priority, message.how) == (Priority.PROMPT, How.EDIT)
    assert message.replaces is None


def test_rule_1_a_player_who_is_away_is_not_rung() -> None:
    seats = table().seats
    seats[0].away = True  # the computer plays for him meanwhile
    slot = shown(WATCHING, quiet=NOW - 60)
    message = decided(private_hand(SETTINGS, table(seats=seats), 0, PROMPT, slot, NOW))
    assert (message.priority, message.how) == (Priority.PROMPT, How.EDIT)


def test_rule_1_in_the_group_his_prompt_is_as_urgent_as_in_his_private_chat() -> None:
    slot = shown(WATCHING, quiet=NOW - 60)
    message = decided(group_hand(SETTINGS, table(delivery=ADMIN), 0, PROMPT, slot, NOW))
    assert (message.priority, message.how) == (Priority.PROMPT, How.ANEW)
    assert message.hand is not None and message.hand.receiver == ALICE


def test_rule_1_in_the_group_without_a_tap_to_answer_a_new_prompt_is_an_edit() -> None:
    # the bot is no administrator and he has not tapped lately: no new message may go
    slot = shown(WATCHING, quiet=NOW - 60)
    message = decided(group_hand(SETTINGS, table(), 0, PROMPT, slot, NOW))
    assert (message.priority, message.how) == (Priority.PROMPT, How.EDIT)


def test_rule_1_a_new_prompt_whose_old_message_may_not_go_now_is_an_edit_of_it() -> None:
    slot = shown(WATCHING, quiet=NOW - 60)
    message = decided(group_hand(SETTINGS, table(delivery=ADMIN), 0, PROMPT, slot, NOW))
    when_old_stays(message)  # the limiter refused the old message's removal
    assert message.how is How.EDIT


# 2. The hand of the player who has just moved (his buttons go), and any message of a
# table that has entered a new phase (the deal, the result).


def test_rule_2_the_hand_of_the_player_who_just_moved_comes_next() -> None:
    slot = shown(PROMPT, at=NOW - 1)  # it carried his buttons a second ago
    message = decided(private_hand(SETTINGS, table(), 0, WATCHING, slot, NOW))
    assert (message.priority, message.how) == (Priority.MOVER, How.EDIT)


def test_rule_2_a_hand_of_a_table_in_a_new_phase_is_never_late() -> None:
    slot = shown(WATCHING, at=NOW - 1)
    result = Screen("you won")
    message = decided(private_hand(SETTINGS, table(phase="finished"), 0, result, slot, NOW))
    assert message.priority is Priority.MOVER


def test_rule_2_the_group_table_of_a_new_phase_is_never_late() -> None:
    slot = shown(TABLE, at=NOW - 1, phase="lobby")
    message = decided(table_message(table(), Screen("dealt"), slot, INTERVAL, NOW))
    assert message.priority is Priority.MOVER


# 3. The group's table message, at most every TABLE_EDIT_INTERVAL seconds.


def test_rule_3_the_table_is_edited_at_most_every_table_edit_interval() -> None:
    slot = shown(TABLE, at=NOW - 1)
    assert table_message(table(), Screen("a move later"), slot, INTERVAL, NOW) == Later(NOW + 2)
    late = shown(TABLE, at=NOW - INTERVAL)
    message = decided(table_message(table(), Screen("a move later"), late, INTERVAL, NOW))
    assert (message.priority, message.how) == (Priority.TABLE, How.EDIT)


def test_rule_3_the_first_table_message_answers_the_command_at_once() -> None:
    message = decided(table_message(table(), TABLE, None, INTERVAL, NOW))
    assert message.priority is Priority.REPLY


def test_rule_3_a_new_game_gets_a_new_table_message_the_old_keeps_its_result() -> None:
    old = shown(TABLE, game="g0", phase="finished")
    message = decided(table_message(table(), TABLE, old, INTERVAL, NOW))
    assert (message.priority, message.how, message.replaces) == (
        Priority.MOVER,
        How.NEW_GAME,
        77,
    )


def test_rule_3_a_message_that_shows_this_state_or_a_newer_one_is_left_alone() -> None:
    assert table_message(table(), TABLE, shown(TABLE), INTERVAL, NOW) is None
    newer = shown(Screen("later"), version=11)
    assert table_message(table(), TABLE, newer, INTERVAL, NOW) is None


# 4. The hands of players who are only watching the turn, likewise.


def test_rule_4_a_watchers_hand_is_coalesced_like_the_table() -> None:
    slot = shown(WATCHING, at=NOW - 1)
    later = Screen("Bob played")
    assert private_hand(SETTINGS, table(), 0, later, slot, NOW) == Later(NOW + 2)
    assert group_hand(SETTINGS, table(), 0, later, slot, NOW) == Later(NOW + 2)
    due = shown(WATCHING, at=NOW - INTERVAL)
    message = decided(private_hand(SETTINGS, table(), 0, later, due, NOW))
    assert message.priority is Priority.WATCHER


# The branches of rules 1 to 4 and of the hands in the group that a reader might take
# for slips, each pinned.


def test_rule_1_a_prompt_that_follows_his_prompt_is_an_edit_he_was_just_asked() -> None:
    # still his turn (he attacked, he may throw in more): he is looking at it already
    slot = shown(PROMPT, quiet=NOW - 60)
    message = decided(private_hand(SETTINGS, table(), 0, Screen("more?", PROMPT.rows), slot, NOW))
    assert (message.priority, message.how) == (Priority.PROMPT, How.EDIT)


def test_rules_3_and_4_without_a_table_edit_interval_nothing_is_coalesced() -> None:
    eager = fake.settings(table_edit_interval=0)
    slot = shown(WATCHING, at=NOW - 0.1)
    watcher = decided(private_hand(eager, table(), 0, Screen("Bob played"), slot, NOW))
    assert watcher.priority is Priority.WATCHER
    group = decided(table_message(table(), Screen("a move later"), shown(TABLE, at=NOW), 0, NOW))
    assert group.priority is Priority.MOVER


def test_rule_3_a_new_game_in_the_same_phase_still_gets_a_new_message() -> None:
    old = shown(TABLE, game="g0", at=NOW - 1)  # the last game's table, edited a second ago
    message = decided(table_message(table(), TABLE, old, INTERVAL, NOW))
    assert (message.priority, message.how) == (Priority.MOVER, How.NEW_GAME)
    # a message saved before the table's message knew its game is not a new game's
    unknown = shown(Screen("older"), game="", at=NOW - INTERVAL)
    assert decided(table_message(table(), TABLE, unknown, INTERVAL, NOW)).how is How.EDIT


def test_a_tap_that_needs_no_new_message_does_not_jump_the_queue() -> None:
    # he moved: his tap is fresh, but his hand is only edited (his buttons go), as a mover's
    fresh = {str(ALICE): LastTap("q3", NOW - 1)}
    tapped = table(delivery=Delivery(bot_admin=True, last_taps=fresh))
    message = decided(group_hand(SETTINGS, tapped, 0, WATCHING, shown(PROMPT), NOW))
    assert (message.priority, message.how) == (Priority.MOVER, How.EDIT)


def test_my_cards_whose_tap_is_too_old_to_answer_is_an_edit_without_an_administrator() -> None:
    seats = table().seats
    seats[0].reach.renew = 1  # he tapped "My cards", and the group's limits held it back since
    old = {str(ALICE): LastTap("q2", NOW - TAP_FRESH - 1)}
    late = table(seats=seats, delivery=Delivery(last_taps=old))
    message = decided(group_hand(SETTINGS, late, 0, WATCHING, shown(WATCHING), NOW))
    assert (message.priority, message.how) == (Priority.REPLY, How.EDIT)
    admin = table(seats=seats, delivery=Delivery(bot_admin=True, last_taps=late.delivery.last_taps))
    assert decided(group_hand(SETTINGS, admin, 0, WATCHING, shown(WATCHING), NOW)).how is How.ANEW


def test_the_place_his_hand_has_left_is_not_edited_where_it_cannot_or_need_not_be() -> None:
    moved = Screen("your cards are in your private chat")
    back = {group_slot(ALICE): shown(PROMPT)}
    seats = table().seats
    seats[0].reach.group_ok = False  # the group refused his hand: it would refuse this too
    assert parked(SETTINGS, table(seats=seats), 0, False, moved, back) is None
    assert parked(SETTINGS, table(chat_id=ALICE), 0, False, moved, back) is None  # his own chat
    never_sent = {group_slot(ALICE): shown(PROMPT, id=None)}
    assert parked(SETTINGS, table(), 0, False, moved, never_sent) is None
    newer = {group_slot(ALICE): shown(PROMPT, version=11)}  # a newer state shows there
    assert parked(SETTINGS, table(), 0, False, moved, newer) is None


# 5. The removal of superseded messages.


def test_rule_5_removals_are_asked_for_after_every_message() -> None:
    junk = (GROUP, 60, False, 0)
    snap = Snapshot(table(), junk=[junk])
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
    lobby = table(phase="lobby", delivery=Delivery(last_taps={str(ALICE): LastTap("q1", NOW - 1)}))
    message = decided(group_hand(SETTINGS, lobby, 0, Screen("you are seated"), None, NOW))
    assert message.priority is Priority.PROMPT
    assert message.hand is not None and message.hand.query == "q1"
    old = table(
        phase="lobby", delivery=Delivery(last_taps={str(ALICE): LastTap("q1", NOW - TAP_FRESH - 1)})
    )
    stale = decided(group_hand(SETTINGS, old, 0, Screen("you are seated"), None, NOW))
    assert stale.priority is Priority.REPLY and stale.hand is not None
    assert (stale.hand.query, stale.hand.may_send) == (None, False)


def test_the_answer_to_his_join_in_his_private_chat_is_a_reply() -> None:
    lobby = table(phase="lobby")
    message = decided(private_hand(SETTINGS, lobby, 0, Screen("you are seated"), None, NOW))
    assert message.priority is Priority.REPLY


def test_my_cards_sends_his_hand_in_the_group_anew_even_if_its_old_one_stays() -> None:
    seats = table().seats
    seats[0].reach.renew = 1  # he tapped "My cards"
    mine = table(seats=seats, delivery=Delivery(last_taps={str(ALICE): LastTap("q2", NOW)}))
    message = decided(group_hand(SETTINGS, mine, 0, WATCHING, shown(WATCHING), NOW))
    assert (message.priority, message.how) == (Priority.PROMPT, How.ANEW)
    when_old_stays(message)  # its removal refused: his new hand goes all the same
    assert message.how is How.ANEW


def test_a_private_chat_that_refused_us_shows_nothing_until_he_opens_it() -> None:
    seats = table().seats
    seats[0].reach.dm_ok = False
    assert private_hand(SETTINGS, table(seats=seats), 0, PROMPT, None, NOW) is None


def test_the_place_his_hand_has_left_gets_one_last_edit_without_buttons() -> None:
    moved = Screen("your cards are in the group")
    slots = {user_slot(ALICE): shown(PROMPT)}
    message = decided(parked(SETTINGS, table(), 0, True, moved, slots))
    assert (message.chat_id, message.priority, message.how) == (ALICE, Priority.MOVER, How.PARKED)
    assert parked(SETTINGS, table(), 0, True, moved, {}) is None  # never showed his hand
    back = {group_slot(ALICE): shown(PROMPT)}  # from the group back to his private chat
    message = decided(parked(SETTINGS, table(), 0, False, moved, back))
    assert message.hand is not None and message.budget == ephemeral_budget(SETTINGS, GROUP, ALICE)


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
