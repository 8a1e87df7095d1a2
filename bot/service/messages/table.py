"""The group's table message: one message, edited in place, coalesced while play goes on.

docs/busy.md: the table is edited at most every ``TABLE_EDIT_INTERVAL`` seconds, but a
table that has entered a new phase (the lobby, the deal, the result) is never late, and
a new game (Play again) gets a new message below, the old one keeping the last result.
"""

from __future__ import annotations

from bot.core import budget
from bot.core.budget import Mode
from bot.core.keys import TABLE_SLOT
from bot.core.limiter import Priority
from bot.core.models import Slot, Table
from bot.core.screen import Screen
from bot.service.messages.message import Decision, How, Later, Message, shown


def table_message(
    table: Table,
    screen: Screen,
    slot: Slot | None,
    interval: float,
    now: float,
    mode: Mode = "auto",
) -> Decision:
    """The group's message: whether, when and how it shows ``screen`` (see the module
    docstring); ``interval`` is ``TABLE_EDIT_INTERVAL``, ``mode`` the operator's
    ``EPHEMERAL_GROUP_BUDGET``. An inline table's message is the one its creator posted
    via the bot, edited by its id and counted as :func:`bot.core.budget.of_inline` says;
    its next game is played in it too."""
    home = table.inline
    new_game = home is None and slot is not None and slot.game not in ("", table.game_id)
    if not new_game and shown(slot, screen, table.version):
        return None
    how = How.NEW_GAME if new_game else How.EDIT
    message = Message(TABLE_SLOT, table.chat_id, table.thread_id, screen, slot, Priority.TABLE, how)
    if home is not None:
        message.inline = home.message
        message.counts_against = budget.of_inline(mode, home.message, home.group)
    if slot is None:  # the first message answers a command or a tap
        message.priority = Priority.REPLY
        return message
    if new_game or interval <= 0 or slot.phase != table.phase:  # a new phase is never late
        message.priority = Priority.MOVER
        return message
    if slot.at + interval <= now:
        return message
    return Later(slot.at + interval)
