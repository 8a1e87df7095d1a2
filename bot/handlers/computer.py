"""Computer seats in a lobby: the creator adds and removes them and picks their level.

A computer seat is a :class:`bot.core.models.Seat` with ``computer`` set to its level and a
negative user id (no Telegram user has one), so seat order, series scores and names work
as for people; it has no private chat, and its moves are played by :mod:`bot.service.turns`.
The player limits stay the engine's: a seat is refused when the lobby is full, and Start
says when there are too few or too many players, as for people.
"""

from __future__ import annotations

from telegram.ext import ContextTypes

from bot.core.i18n import plain
from bot.core.models import Seat, Table
from bot.screens import registry
from bot.service.taps import Reply, Tap, commit, refuse
from bot.tables import games


def _add(table: Table) -> None:
    if len(table.seats) >= games.seat_cap(table):
        refuse("join.full")
    ids = [s.user_id for s in table.seats if s.user_id < 0]
    number = len(ids) + 1
    level = registry.lobby_level(table)
    level_name = plain(table.lobby.lang, registry.LEVELS[level])
    name = plain(table.lobby.lang, "computer.name", n=number, level=level_name)
    table.seats.append(Seat(user_id=min(ids, default=0) - 1, name=name, computer=level))


def _remove(table: Table) -> None:
    for index in range(len(table.seats) - 1, -1, -1):
        if table.seats[index].computer is not None:
            del table.seats[index]
            return
    refuse("computer.none")


async def on_computer(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The lobby's computer buttons (creator only): add, remove, level of the next one."""

    def change(table: Table) -> Reply | None:
        if table.phase != "lobby":
            refuse("tap.stale")
        if tap.user.id != table.lobby.creator:
            refuse("tap.creator_only")
        arg = tap.cb.arg
        if arg == "+":
            _add(table)
        elif arg == "-":
            _remove(table)
        elif arg == "v":
            levels = registry.entry(table.kind).offered
            current = registry.lobby_level(table)
            table.lobby.computer_level = levels[(levels.index(current) + 1) % len(levels)]
        else:
            refuse("tap.bad")
        table.lobby.notice = ""
        return None

    await commit(context, tap, change)
