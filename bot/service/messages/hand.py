"""His turn, wherever his hand lives: his move buttons before anything else.

docs/busy.md, first rule: a new prompt is a new message that rings his phone when he has
not been asked for a while (``RING_AFTER``), else his hand is edited in place (he is
looking at it, and it saves a call).
"""

from __future__ import annotations

from bot.core.limiter import Priority
from bot.core.models import Seat
from bot.service.messages.message import How, Message


def his_turn(
    message: Message, seat: Seat, ring_after: float, now: float, may_send: bool = True
) -> Message:
    """His move buttons: first of all; sent anew (his phone rings) unless he was asked a
    moment ago or moved a moment ago, the computer plays for him meanwhile (he is away),
    or no new message may be sent (a hand in the group without a tap to answer)."""
    slot = message.slot
    idle = slot is None or now - slot.quiet >= ring_after
    rings = not seat.away and idle and (slot is None or not slot.prompt) and may_send
    message.priority = Priority.PROMPT
    message.how = How.ANEW if rings else How.EDIT
    return message
