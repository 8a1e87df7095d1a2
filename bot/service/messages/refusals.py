"""What Telegram's refusals change at the table: a private chat that refuses us (or
takes our messages again), a group that refuses a player's hand."""

from __future__ import annotations

from bot.core.services import Services
from bot.core.store import Snapshot, Write

# The events that say where a hand went.
_FALLBACKS = ("hand_private", "hand_wait")


async def refused_hands(svc: Services, key: str, refused: dict[int, bool]) -> None:
    """The group refused these players' hands: they go to the private chat (or wait for
    "My cards"), and the group says so once (an event line). A refusal that said the bot
    is not an administrator tells the table so."""

    def decide(snap: Snapshot) -> tuple[Write, None]:
        table = snap.table
        if table is None:
            return Write(None), None
        changed = False
        for index, seat in enumerate(table.seats):
            if seat.user_id not in refused or not seat.reach.group_ok:
                continue
            seat.reach.group_ok, seat.reach.admin_refused, changed = (
                False,
                refused[seat.user_id],
                True,
            )
            told = any(k in _FALLBACKS and d.get("seat") == index for k, d in table.played.events)
            if table.phase != "playing" or told:  # said once (while the log shows it)
                continue
            if seat.reach.dm_ok:
                table.played.add_events([("hand_private", {"seat": index})])
            else:
                table.played.add_events([("hand_wait", {"seat": index})])
        if any(refused.values()) and table.delivery.bot_admin:
            table.delivery.bot_admin, changed = False, True
        return Write(table if changed else None), None

    await svc.store.transact(key, decide)


async def set_reachable(svc: Services, key: str, reach: dict[int, bool]) -> Snapshot | None:
    """Record that private chats refuse (or accept again) us; the committed snapshot."""

    def decide(snap: Snapshot) -> tuple[Write, dict[int, bool]]:
        table = snap.table
        if table is None:
            return Write(None), {}
        changed = {}
        if table.phase == "lobby":  # his confirmation was refused: he is not seated yet
            refused = [s for s in table.seats if reach.get(s.user_id) is False]
            if refused:
                table.seats = [s for s in table.seats if s not in refused]
                table.lobby.lobby_link, table.lobby.notice = True, "join.need_private"
                changed = {s.user_id: False for s in refused}
            return Write(table if changed else None), changed
        for seat in table.seats:
            if seat.user_id in reach and seat.reach.dm_ok != reach[seat.user_id]:
                seat.reach.dm_ok = changed[seat.user_id] = reach[seat.user_id]
        return Write(table if changed else None), changed

    snap, changed = await svc.store.transact(key, decide)
    await svc.store.note_reach(key, reach)  # also drops a table that is gone
    return snap if changed else None
