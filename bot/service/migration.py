"""A basic group upgraded to a supergroup: its table follows it to the new chat id.

Telegram says so twice (``migrate_to_chat_id`` in the old chat, ``migrate_from_chat_id``
in the new one) and refuses the old id meanwhile (ChatMigrated, which delivery passes on
here). Whichever comes first moves the table (:meth:`bot.core.store.Store.move`); the others
find nothing to move, but each finishes a move that an error cut short. The table's chat
id changes, and with it every button's callback data: the hands are edited in place, and
the table is posted anew in the supergroup, since the old group's message can no longer
be edited.
"""

from __future__ import annotations

import asyncio
import logging

from telegram.ext import ContextTypes

from bot.core.keys import table_key
from bot.core.models import Table
from bot.core.services import AnyApp, services
from bot.core.store import BUSY, MOVED
from bot.service.taps import Reply, refuse, write
from bot.tables.stats.finished import from_table
from bot.tables.stats.standings import of

log = logging.getLogger(__name__)

BUSY_RETRY = 0.25  # seconds between tries while another process delivers the table
BUSY_TRIES = 200  # a delivery ends within seconds (its calls time out); a dead one within LEASE_MS


async def follow(app: AnyApp | ContextTypes.DEFAULT_TYPE, old_chat: int, new_chat: int) -> None:
    """Move the table of ``old_chat`` (if any) to ``new_chat`` and show it there."""
    svc = services(app)
    old, new = table_key(old_chat, None), table_key(new_chat, None)
    for _ in range(BUSY_TRIES):
        async with svc.lock(old):
            moved = await svc.store.move(old, new)
        if moved != BUSY:
            break
        await asyncio.sleep(BUSY_RETRY)
    if moved == MOVED:
        log.info("table of chat %s moved to its supergroup %s", old_chat, new_chat)
    moving = (await svc.store.load(new)).table  # its chat id still the old one, if any
    finished = from_table(moving) if moving is not None else None
    await of(svc.store).move_group(old_chat, new_chat, finished)

    def rewrite(table: Table) -> Reply | None:
        if table.chat_id != old_chat:  # its move is done
            refuse("tap.stale")
        table.chat_id = new_chat
        return None

    snap, _ = await write(app, new, None, None, rewrite)
    if snap is None or snap.table is None:
        return
    # The private chats that refused us are indexed by table key.
    closed = {s.user_id for s in snap.table.seats if not s.reach.dm_ok}
    if closed:
        await svc.store.note_reach(new, dict.fromkeys(closed, False))
        await svc.store.note_reach(old, dict.fromkeys(closed, True))
