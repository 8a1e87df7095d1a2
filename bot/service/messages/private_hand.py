"""A seat's hand in his private chat: the lobby's confirmation, then his hand.

docs/busy.md: his prompt first (:func:`bot.service.messages.hand.his_turn`); the answer
to his Join goes as a reply; without buttons his hand is the mover's or a watcher's
(:func:`bot.service.messages.watcher.not_to_act`). A chat that refused us shows nothing
until he opens it again ("My cards" shows his hand meanwhile).
"""

from __future__ import annotations

from bot.core.config import Settings
from bot.core.keys import user_slot
from bot.core.limiter import Priority
from bot.core.models import Slot, Table
from bot.core.screen import Screen
from bot.service.messages.hand import his_turn
from bot.service.messages.message import Decision, Later, Message, shown
from bot.service.messages.watcher import not_to_act


def private_hand(
    settings: Settings, table: Table, index: int, screen: Screen, slot: Slot | None, now: float
) -> Decision:
    """Seat ``index``'s private message: whether, when and how it shows ``screen``."""
    seat = table.seats[index]
    if not seat.reach.dm_ok or shown(slot, screen, table.version):
        return None
    message = Message(user_slot(seat.user_id), seat.user_id, None, screen, slot, Priority.WATCHER)
    if screen.prompt:
        return his_turn(message, seat, settings.messages.ring_after, now)
    answer = Priority.REPLY if table.phase == "lobby" else Priority.WATCHER
    priority = not_to_act(table, slot, settings.messages.table_edit_interval, now, answer)
    if isinstance(priority, Later):
        return priority
    message.priority = priority
    return message
