"""A hand whose player is not to act: the mover's at once, a watcher's coalesced.

docs/busy.md: the hand of the player who has just moved goes right after the prompts
(his buttons must go), and so does a hand of a table that has entered a new phase; the
hands of players who only watch the turn are edited at most every
``TABLE_EDIT_INTERVAL`` seconds, like the group's table, and wait behind it.
"""

from __future__ import annotations

from bot.core.limiter import Priority
from bot.core.models import Slot, Table
from bot.service.messages.message import Later


def not_to_act(
    table: Table, slot: Slot | None, interval: float, now: float, otherwise: Priority
) -> Priority | Later:
    """The priority of a hand without move buttons, or when it is due (``otherwise``:
    its priority when it is neither the mover's nor coalesced, a watcher's or an answer's)."""
    if slot is not None and (slot.prompt or slot.phase != table.phase):
        return Priority.MOVER  # his buttons go, or a new phase: never late
    if slot is not None and interval > 0 and slot.at + interval > now:
        return Later(slot.at + interval)
    return otherwise
