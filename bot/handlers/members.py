"""Who may sit at a group's table, and what happens when the bot leaves the group.

Joining a group's game needs being a member of the group: the lobby's link is shown on
the table and can be forwarded anywhere, and a public group's messages can be read (and
their buttons tapped) from outside. Telegram is asked (``getChatMember``); a "yes" is
remembered for :data:`MEMBER_TTL` seconds in ``ct:member:<chat_id>:<user_id>`` (someone
who joins, leaves and joins again is asked about once; the table's creator, who opened it
from the group, not at all). A "no" is not remembered: someone who has just joined the
group may try again at once.

When the bot is removed from a group (``my_chat_member``: left or kicked), the games there
end as /endgame would end them (no fool, no score), without a word in the group, which is
closed to us now. Their tables and index entries are deleted, and each seated person is
told in his private chat, where his hand loses its buttons (best effort: a closed chat is
skipped).
"""

from __future__ import annotations

import contextlib
import logging

from telegram import ChatMember, ChatMemberRestricted, ChatMemberUpdated, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import BadRequest, TelegramError
from telegram.ext import ContextTypes

from bot.core import sender
from bot.core.i18n import t
from bot.core.keys import KEY_PREFIX, user_slot
from bot.core.services import services
from bot.core.store import Snapshot, Write
from bot.screens import registry
from bot.service import delivery

log = logging.getLogger(__name__)

MEMBER_TTL = 60


def member_key(chat_id: int, user_id: int) -> str:
    return f"{KEY_PREFIX}:member:{chat_id}:{user_id}"


class CannotTell(Exception):
    """Telegram did not say whether he is a member (a network error, flood control)."""


def _is_in(member: ChatMember) -> bool:
    if isinstance(member, ChatMemberRestricted):  # restricted, in the group or not
        return member.is_member
    return member.status not in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED)


async def is_member(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """Whether ``user_id`` is in the group ``chat_id`` (see the module docstring); raises
    :class:`CannotTell` when Telegram does not answer."""
    redis = services(context).store.redis
    key = member_key(chat_id, user_id)
    if await redis.get(key):
        return True
    try:
        member = await sender.member(context.bot, chat_id, user_id)
    except BadRequest:  # "user not found", "chat not found": not in it, as far as we can tell
        return False
    except TelegramError as exc:
        raise CannotTell from exc
    if not _is_in(member):
        return False
    await redis.set(key, b"1", ex=MEMBER_TTL)
    return True


def _removed(change: ChatMemberUpdated) -> bool:
    return change.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP) and not _is_in(
        change.new_chat_member
    )


async def on_my_chat_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bot's own membership changed: when it was removed from a group, end its games;
    when it became an administrator there or stopped being one, its tables know (hands
    then follow the game on their own, or answer taps only: docs/ephemeral.md)."""
    change = update.my_chat_member
    # a forged or malformed body may lack what Telegram always sends (PTB keeps None)
    if change is None or change.chat is None or change.new_chat_member is None:
        return
    if not _removed(change):
        admin = change.new_chat_member.status == ChatMemberStatus.ADMINISTRATOR
        await _admin(context, change.chat.id, admin)
        return
    svc = services(context)
    chat_id = change.chat.id
    keys = await svc.store.chat_tables(chat_id)
    for key in keys:
        async with svc.lock(key):
            snap = await svc.store.drop(key)
        if snap.table is not None and snap.table.phase in ("lobby", "playing"):
            await _tell_players(context, snap)
    log.info("removed from chat %s: %d table(s) dropped", chat_id, len(keys))


async def _admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, admin: bool) -> None:
    """The bot is (or is no longer) an administrator of ``chat_id``: every table there
    knows it (its lobby stops or starts suggesting it), and the hands that left the group
    only because it was not one come back to it (as a new message, as "My cards" does)."""
    svc = services(context)

    def decide(snap: Snapshot) -> tuple[Write, None]:
        table = snap.table
        if table is None or table.delivery.bot_admin == admin:
            return Write(None), None
        table.delivery.bot_admin = admin
        for seat in table.seats if admin else ():
            if not seat.reach.group_ok and seat.reach.admin_refused:
                seat.reach.group_ok, seat.reach.admin_refused, seat.reach.renew = (
                    True,
                    False,
                    seat.reach.renew + 1,
                )
        return Write(table), None

    for key in await svc.store.chat_tables(chat_id):
        async with svc.lock(key):
            snap, _ = await svc.store.transact(key, decide)
        delivery.start(svc, key, snap)


async def _tell_players(context: ContextTypes.DEFAULT_TYPE, snap: Snapshot) -> None:
    table = snap.table
    assert table is not None
    for seat in table.seats:
        if seat.computer is not None:
            continue
        slot = snap.slots.get(user_slot(seat.user_id))
        if slot is not None and slot.id is not None and slot.prompt:
            with contextlib.suppress(TelegramError):
                await sender.strip_buttons(context.bot, seat.user_id, slot.id)
        with contextlib.suppress(TelegramError):
            await sender.send_text(
                context.bot,
                seat.user_id,
                t(
                    seat.lang,
                    "removed.ended",
                    chat=table.chat_title,
                    game=registry.entry(table.kind).variant(seat.lang, table.lobby.settings),
                ),
                html=True,
            )
