"""Counting a finished game in the standings: a step of its own after the commit that ends it.

The delivery takes this step once, before its first pass over a finished table that does
not say yet that it was counted (``Delivery.counted``): it counts the game
(:mod:`bot.tables.stats`) and commits who moved up on the group's board into the table, so
the result shows them from its first edit and no later pass asks the standings again.

Exactly once, whatever fails or repeats: the standings count a game once (its marker), so
a count whose commit was lost, or that two processes make, counts nothing the second time;
a process that dies before the step leaves its lease to run out, and the table comes due
for another process, whose delivery takes the step then.
"""

from __future__ import annotations

from dataclasses import replace

from bot.core.services import Services
from bot.core.store import Snapshot, Write
from bot.tables.stats.standings import settle


async def count_finished(svc: Services, key: str, snap: Snapshot) -> Snapshot:
    """Count the finished game of ``snap`` if the table has not counted it yet; the
    snapshot to deliver (the committed one when the step was taken)."""
    table = snap.table
    if table is None or table.phase != "finished" or table.delivery.counted:
        return snap
    moved = await settle(svc.store, table)
    up = None if moved is None else list(moved.up)

    def decide(now: Snapshot) -> tuple[Write, None]:
        found = now.table
        if found is None or found.delivery.counted or found.state != table.state:
            return Write(None), None  # counted meanwhile, or the table went on
        found.delivery.counted, found.delivery.moved_up = True, up
        return Write(found), None

    committed, _ = await svc.store.transact(key, decide)
    return replace(committed, lease=snap.lease)  # still ours: the pass delivers it
