"""The place a hand has left: one last edit there, saying where his cards are now.

A seat's hand lives in one place at a time (his private chat, or the group); when he
switches it, or the group refuses it, the old place's message loses its buttons and
says where to look, as urgently as a mover's hand (docs/busy.md, second rule).
"""

from __future__ import annotations

from typing import NamedTuple

from bot.core.config import Settings
from bot.core.keys import group_slot, user_slot
from bot.core.limiter import Priority
from bot.core.models import Slot, Table
from bot.core.screen import Screen
from bot.service.messages.group_hand import ephemeral_budget
from bot.service.messages.message import How, InGroup, Message, shown

# The phases whose hand has a place to leave (before the game his place is not settled).
PLAYED = ("playing", "finished", "abandoned")


class Left(NamedTuple):
    """The place a hand has left: its slot's name, its chat and topic, and the slot."""

    name: str
    chat: int
    thread: int | None
    slot: Slot


def left(table: Table, index: int, in_group: bool, slots: dict[str, Slot]) -> Left | None:
    """The place seat ``index``'s hand has left (``in_group``: it lives in the group now,
    so his private chat is the old place), if that place showed his hand: else there is
    nothing to edit there, and its screen need not be made (the delivery asks this
    first). None too where it had no other place (a group that refused it, his own chat)."""
    if table.phase not in PLAYED:
        return None
    seat = table.seats[index]
    if in_group:
        name, chat, thread = user_slot(seat.user_id), seat.user_id, None
    elif seat.reach.group_ok and not table.private:
        name, chat, thread = group_slot(seat.user_id), table.chat_id, table.thread_id
    else:
        return None
    slot = slots.get(name)
    if slot is None or slot.id is None:
        return None
    return Left(name, chat, thread, slot)


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
    was = left(table, index, in_group, slots)
    if was is None:
        return None
    name, chat, thread, slot = was
    if shown(slot, screen, table.version):
        return None
    message = Message(name, chat, thread, screen, slot, Priority.MOVER, How.PARKED)
    if not in_group:  # the group's ephemeral message to him
        user_id = table.seats[index].user_id
        message.hand = InGroup(user_id, renew=slot.renew)
        message.counts_against = ephemeral_budget(settings, chat, user_id)
    return message
