"""The place a hand has left: one last edit there, saying where his cards are now.

A seat's hand lives in one place at a time (his private chat, or the group); when he
switches it, or the group refuses it, the old place's message loses its buttons and
says where to look, as urgently as a mover's hand (docs/busy.md, second rule).
"""

from __future__ import annotations

from bot.core.config import Settings
from bot.core.keys import group_slot, user_slot
from bot.core.limiter import Priority
from bot.core.models import Slot, Table
from bot.core.screen import Screen
from bot.service.messages.group_hand import ephemeral_budget
from bot.service.messages.message import How, InGroup, Message, shown

# The phases whose hand has a place to leave (before the game his place is not settled).
PLAYED = ("playing", "finished", "abandoned")


def _place(table: Table, index: int, in_group: bool) -> tuple[str, int, int | None] | None:
    """The place seat ``index``'s hand has left (``in_group``: it lives in the group now,
    so his private chat is the old place): its slot's name, its chat and topic; None where
    it had no other place (a group that refused it, his own chat)."""
    seat = table.seats[index]
    if in_group:
        return user_slot(seat.user_id), seat.user_id, None
    if seat.reach.group_ok and not table.private:
        return group_slot(seat.user_id), table.chat_id, table.thread_id
    return None


def left(table: Table, index: int, in_group: bool, slots: dict[str, Slot]) -> Slot | None:
    """The slot of the place seat ``index``'s hand has left (:func:`_place`), if that
    place showed his hand: else there is nothing to edit there, and its screen need not be
    made (the delivery asks this first)."""
    place = _place(table, index, in_group)
    slot = slots.get(place[0]) if place is not None else None
    if slot is None or slot.id is None or table.phase not in PLAYED:
        return None
    return slot


def parked(
    settings: Settings,
    table: Table,
    index: int,
    in_group: bool,
    screen: Screen,
    slots: dict[str, Slot],
) -> Message | None:
    """The place seat ``index``'s hand has left (:func:`left`), edited once to ``screen``.
    A place that never showed his hand is left alone, and so is a group that refused it
    (it would refuse this too)."""
    slot, place = left(table, index, in_group, slots), _place(table, index, in_group)
    if slot is None or place is None:
        return None
    name, chat, thread = place
    if shown(slot, screen, table.version):
        return None
    message = Message(name, chat, thread, screen, slot, Priority.MOVER, How.PARKED)
    if not in_group:  # the group's ephemeral message to him
        user_id = table.seats[index].user_id
        message.hand = InGroup(user_id, renew=slot.renew)
        message.counts_against = ephemeral_budget(settings, chat, user_id)
    return message
