"""One pass over a table: each message's rule decides, the limiter grants, the calls go.

Every message of the table is looked at by the rule of its kind (the group's table:
:mod:`~bot.service.messages.table`; a hand in his private chat or in the group:
:mod:`~bot.service.messages.private_hand`, :mod:`~bot.service.messages.group_hand`; the
place a hand has left: :mod:`~bot.service.messages.parked`). What is due now is asked of
the limiter in one round trip, most urgent first, each call with its named
:class:`Ask`: the message's own call, the removal of the message it replaces
(:mod:`~bot.service.messages.cleanup`), the junk left by earlier passes, the Record
button's document. The granted calls go side by side; the others, and whatever its rule
coalesced, make the table due again (``done.due``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass

from bot.core import metrics
from bot.core.budget import Budget
from bot.core.config import Settings
from bot.core.keys import TABLE_SLOT, Junk, group_slot, user_slot
from bot.core.limiter import Priority, granted
from bot.core.models import Table
from bot.core.services import AnyApp, Services
from bot.core.store import Snapshot
from bot.screens import inline, links, views
from bot.service.messages import cleanup
from bot.service.messages.calls import show
from bot.service.messages.group_hand import group_hand, removal_budget, when_old_stays
from bot.service.messages.message import Decision, Later, Message
from bot.service.messages.outcome import Outcome
from bot.service.messages.parked import left, parked
from bot.service.messages.private_hand import private_hand
from bot.service.messages.record import post_record, record_due
from bot.service.messages.refusals import refused_hands, set_reachable
from bot.service.messages.table import table_message
from bot.service.messages.your_turn import your_turn

# The least a message the limiter refused waits before it is asked for again. The limiter
# says when a call would fit, but while the bot is busy more urgent calls take that room
# first; asking again at once would only cost another round over the whole table.
RETRY_AFTER_REFUSAL = {
    Priority.PROMPT: 0.0,
    Priority.MOVER: 0.25,
    Priority.REPLY: 0.25,
    Priority.TABLE: 1.0,
    Priority.WATCHER: 1.0,
    Priority.CLEANUP: 0.5,
}


@dataclass
class Ask:
    """One call asked of the limiter: to (or counted against) ``chat``, at ``priority``;
    ``wait`` is its answer (0: granted, else the seconds until it would fit)."""

    chat: int | Budget
    priority: Priority
    wait: float = 0.0

    @property
    def granted(self) -> bool:
        """The call may be made in this pass (no limiter: every call may)."""
        return self.wait <= 0

    def retry_at(self, now: float) -> float:
        """When a refused call is asked for again."""
        return now + max(self.wait, RETRY_AFTER_REFUSAL[self.priority])


@dataclass
class Asks:
    """The calls one pass asks the limiter for, each named by what it is for."""

    sends: dict[Message, Ask]  # each message's own call
    replaced: dict[Message, Ask]  # the removal of the old message a new one replaces
    leftovers: list[tuple[Junk, Ask]]  # the removals that earlier passes left
    record: Ask | None  # the Record button's document

    def in_order(self) -> list[Ask]:
        """In the order the limiter grants them: the messages most urgent first, so a
        prompt is never refused for a removal's sake; the record last (the result it
        belongs to goes first)."""
        asks = [*self.sends.values(), *self.replaced.values(), *(a for _, a in self.leftovers)]
        return asks + ([self.record] if self.record is not None else [])


def asks_for(settings: Settings, messages: list[Message], snap: Snapshot) -> Asks:
    """What a pass asks for: ``messages`` (most urgent first), the removals the table
    keeps, and the record if one is asked for."""
    assert snap.table is not None
    return Asks(
        sends={m: Ask(m.budget, m.priority) for m in messages},
        replaced={m: Ask(m.budget, cleanup.REPLACED) for m in messages if m.replaces},
        leftovers=[(j, Ask(removal_budget(settings, j), cleanup.LEFTOVER)) for j in snap.junk],
        record=Ask(snap.table.chat_id, Priority.REPLY) if record_due(snap) else None,
    )


async def _grant(svc: Services, asks: list[Ask]) -> None:
    """Ask the limiter for every call in order (one round trip) and note its answers."""
    if svc.limiter is None or not asks:
        return
    waits = await svc.limiter.try_acquire([(a.chat, a.priority) for a in asks])
    for ask, wait in zip(asks, waits, strict=True):
        metrics.waited("deferred", wait)
        ask.wait = wait


async def deliver_once(app: AnyApp, svc: Services, key: str, snap: Snapshot) -> Outcome:
    """One round: every message that differs, asked of the limiter in priority order,
    the granted calls made side by side, and when the rest is due."""
    done = Outcome(snap, svc.clock)
    if snap.table is None:  # gone, or unreadable: nothing to show
        return done
    messages = _plan(svc, snap, done)
    asks = asks_for(svc.settings, messages, snap)
    await _grant(svc, asks.in_order())
    now = svc.clock()
    calls: list[Awaitable[None]] = []
    for message, send in asks.sends.items():
        old_goes = asks.replaced.get(message)
        if not send.granted:
            done.later(send.retry_at(now))
            continue
        if old_goes is not None and not old_goes.granted:
            when_old_stays(message)
        calls.append(show(app.bot, message, old_goes is not None and old_goes.granted, done))
    for junk, ask in asks.leftovers:
        if ask.granted:
            calls.append(cleanup.clean(app.bot, junk, done))
        else:
            done.later(ask.retry_at(now))
    if asks.record is not None:
        if asks.record.granted:
            calls.append(post_record(svc, app.bot, key, done))
        else:
            done.later(asks.record.retry_at(now))
    with granted():
        await asyncio.gather(*calls)
    # A table changed here is committed a newer version: the release sends us round again.
    if done.reach:  # the group says who must open his private chat
        await set_reachable(svc, key, done.reach)
    if done.refused:  # their hands leave the group until "My cards"
        await refused_hands(svc, key, done.refused)
    return done


def _your_turn(svc: Services, table: Table, index: int, snap: Snapshot, now: float) -> Decision:
    """An inline table's "your turn" for seat ``index``, with the Mini App's button."""
    screen = inline.your_turn(table, index)
    screen = links.hand(screen, svc.settings, table, index, bot_username=svc.bot_username)
    slot = snap.slots.get(user_slot(table.seats[index].user_id))
    return your_turn(svc.settings, table, index, screen, slot, now)


def _plan(svc: Services, snap: Snapshot, done: Outcome) -> list[Message]:
    """The messages that differ from what they should show, most urgent first (each
    decided by its kind's rule). Coalesced ones that are not due yet only set ``due``."""
    table = snap.table
    assert table is not None
    now = svc.clock()
    decisions: list[Decision] = []
    for index, seat in enumerate(table.seats):
        # a computer seat has no chat; at an inline table a hand is an answer to its
        # player's inline query (bot.screens.inline), never a message
        if seat.computer is not None or table.inline is not None:
            continue
        screen = views.hand_screen(table, index)
        if screen is None:
            continue
        here = views.in_group(table, index)
        screen = links.hand(
            screen, svc.settings, table, index, in_group=here, bot_username=svc.bot_username
        )
        if here:
            slot = snap.slots.get(group_slot(seat.user_id))
            decisions.append(group_hand(svc.settings, table, index, screen, slot, now))
        else:
            slot = snap.slots.get(user_slot(seat.user_id))
            decisions.append(private_hand(svc.settings, table, index, screen, slot, now))
        if left(table, index, here, snap.slots) is not None:  # the other place showed it
            moved = views.parked_screen(table, index)
            decisions.append(parked(svc.settings, table, index, here, moved, snap.slots))
    if table.inline is not None:  # his turn has waited: a private message rings
        decisions += [_your_turn(svc, table, i, snap, now) for i in views.people(table)]
    screen = views.group_screen(table, svc.bot_username)
    screen = links.group(screen, svc.settings, table, svc.bot_username)
    interval = svc.settings.messages.table_edit_interval
    slot = snap.slots.get(TABLE_SLOT)
    mode = svc.settings.messages.ephemeral_group_budget
    decisions.append(table_message(table, screen, slot, interval, now, mode))
    messages: list[Message] = []
    for decision in decisions:
        if isinstance(decision, Later):
            done.later(decision.when)
        elif decision is not None:
            messages.append(decision)
    messages.sort(key=lambda m: m.priority)
    return messages
