"""An inline table's "your turn": a private message to the player whose turn has waited.

Editing the table's message rings nobody, and at an inline table a hand is no message
that could ring either. So the player to act, when his turn has waited for him
``RING_AFTER`` seconds (the wait after which a hand's new prompt rings: his_turn's rule,
bot.service.messages.hand), gets one private message that rings, once a turn (its text
names the move, so the same turn shows it already), if his private chat takes the bot's
messages (a refusal marks his seat, as for a hand) and he has not switched it off there.
The previous one is removed (a new one replaces it).
"""

from __future__ import annotations

from bot.core.config import Settings
from bot.core.keys import user_slot
from bot.core.limiter import Priority
from bot.core.models import Slot, Table
from bot.core.screen import Screen
from bot.service.messages.message import Decision, How, Later, Message, shown
from bot.tables import games


def your_turn(
    settings: Settings, table: Table, index: int, screen: Screen, slot: Slot | None, now: float
) -> Decision:
    """Seat ``index``'s "your turn" message (``screen``): whether and when it is sent."""
    seat = table.seats[index]
    waiting = table.phase == "playing" and games.actor(table) == index and not seat.away
    if (
        not waiting
        or not seat.reach.nudge
        or not seat.reach.dm_ok
        or shown(slot, screen, table.version)
    ):
        return None
    due = table.clock.turn_since + settings.messages.ring_after
    if now < due:
        return Later(due)
    return Message(
        user_slot(seat.user_id), seat.user_id, None, screen, slot, Priority.WATCHER, How.ANEW
    )
