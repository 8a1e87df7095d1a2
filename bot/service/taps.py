"""Button taps: strict decoding, the checks every tap shares, and the one write path.

Why one path: every change a person makes (a tap, the deep link that joins a lobby, a
command) and the move of a table to its supergroup go through :func:`write`, so that
the redelivery check, the compare-and-set, the timers and the delivery are the same for
all. A tap is answered exactly once and at
once, before any message it sets off: with a short alert when it is refused (stale,
forged, not the tapper's turn, illegal...), silently when it changed the table, and
silently again when it comes back after it was applied (the table remembers its callback
query). A refused tap writes nothing, except that an away player's tap on his game brings
him back.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from telegram import CallbackQuery, Update, User
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.core import callbacks, sender
from bot.core.callbacks import Action, BadCallback, Callback
from bot.core.i18n import lang_of, plain
from bot.core.keys import table_key
from bot.core.models import Table
from bot.core.services import AnyApp, services
from bot.core.store import Snapshot, Write
from bot.service import delivery, turns

log = logging.getLogger(__name__)

# Actions on the group message; the others are taps on a private hand message.
GROUP_ACTIONS = frozenset(
    {
        Action.PICK,
        Action.JOIN,
        Action.LEAVE,
        Action.SETTINGS,
        Action.OPTION,
        Action.START,
        Action.AGAIN,
        Action.RECORD,
        Action.CARDS,
        Action.COMPUTER,
        Action.STANDINGS,
    }
)


class Refusal(Exception):
    """A tap that changes nothing: its alert text key and parameters."""

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


def refuse(key: str, **params: Any) -> NoReturn:
    raise Refusal(key, **params)


@dataclass
class Reply:
    """How a tap that changed the table is answered: a toast, or an alert."""

    key: str | None = None
    alert: bool = False
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Tap:
    query: CallbackQuery
    cb: Callback
    user: User
    lang: str

    @property
    def key(self) -> str:
        return table_key(self.cb.chat_id, self.cb.thread_id)

    async def answer(self, key: str | None = None, *, alert: bool = True, **params: Any) -> None:
        await _answer(self.query, self.lang, key, alert, **params)


async def _answer(
    query: CallbackQuery, lang: str, key: str | None, alert: bool = True, **params: Any
) -> None:
    """Answer a tap once: silently, or with a short text (an alert by default)."""
    text = plain(lang, key, **params)[:200] if key else None
    try:
        await sender.answer(query, text, alert=alert and text is not None)
    except TelegramError as exc:  # too old to answer: nothing to tell anyone
        log.info("callback query not answered: %s", exc)


TapHandler = Callable[[Tap, ContextTypes.DEFAULT_TYPE], Awaitable[None]]


async def parse(update: Update) -> Tap | None:
    """The tap, or None when it is not ours or not well-formed (then already answered)."""
    query = update.callback_query
    if query is None:
        return None
    user = query.from_user
    lang = lang_of(user.language_code)
    try:
        cb = callbacks.decode(query.data)
    except BadCallback:
        cb = None
    # A group button is tapped in its group; a hand button in the tapper's private chat,
    # or on his ephemeral message in the table's group (docs/ephemeral.md).
    message = query.message
    where = message.chat.id if message is not None else None
    if cb is None:
        ok = False
    elif cb.action in GROUP_ACTIONS:
        ok = where == cb.chat_id
    else:
        ok = where == user.id or (where == cb.chat_id and _his_ephemeral(query))
    if not ok or cb is None:
        await _answer(query, lang, "tap.bad")
        return None
    return Tap(query, cb, user, lang)


def _his_ephemeral(query: CallbackQuery) -> bool:
    """The tapped message is an ephemeral message to the tapper (Bot API 10.2 fields,
    which PTB 22.8 keeps in ``api_kwargs``)."""
    extra = query.message.api_kwargs if query.message is not None else {}
    receiver = extra.get("receiver_user")
    return bool(extra.get("ephemeral_message_id")) and (
        isinstance(receiver, dict) and receiver.get("id") == query.from_user.id
    )


async def commit(
    context: ContextTypes.DEFAULT_TYPE,
    tap: Tap,
    change: Callable[[Table], Reply | None],
    *,
    answer: bool = True,
) -> Snapshot | None:
    """Apply ``change`` to the tapped table (:func:`write`) and answer the tap at once:
    the messages follow in the background. The committed snapshot comes back when
    ``change`` was applied, None when it was refused (or the tap was applied before).
    ``answer`` False: a refusal is answered here, an applied change is left for the
    caller to answer."""
    message = tap.query.message
    snap, reply = await write(
        context,
        tap.key,
        tap.cb.game_id,
        tap.user.id,
        change,
        query_id=tap.query.id,
        in_group=message is not None and message.chat.id == tap.cb.chat_id,
        ephemeral_id=message.api_kwargs.get("ephemeral_message_id") if message else None,
    )
    if answer or snap is None:
        await tap.answer(reply.key, alert=reply.alert, **reply.params)
    return snap


def _as_is(table: Table) -> Reply | None:
    """No change beyond the table :func:`write` was given."""
    return None


async def write(
    context: AnyApp | ContextTypes.DEFAULT_TYPE,
    key: str,
    game_id: str | None,
    user_id: int | None,
    change: Callable[[Table], Reply | None] = _as_is,
    *,
    query_id: str | None = None,
    in_group: bool = False,
    ephemeral_id: int | None = None,
    replace: Callable[[Table | None], Table] | None = None,
) -> tuple[Snapshot | None, Reply]:
    """The one way a table changes outside a delivery: a tap, a deep link, a command
    (/newgame, /endgame), the move of a table to its supergroup. ``change`` under
    compare-and-set, the messages set off (:func:`bot.service.delivery.publish`), the
    timers told in the same commit. ``user_id`` is who acts (None: nobody, the table
    moved to a new key, whose timers are told its deadline again), ``game_id`` the game
    he acts on (another one's table refuses him as stale; None: whatever is there, or
    nothing), ``query_id`` his tap, remembered by the table so that a tap delivered again
    after it was applied is a no-op; ``in_group``: the tap was made in the table's group,
    so that his hand there may answer it (docs/ephemeral.md); ``ephemeral_id``: the
    ephemeral message tapped, stale when a newer hand superseded it. ``replace`` makes the table
    to change from the stored one (or from none), written as a new table with no
    remembered messages (/newgame).

    ``change`` (and ``replace``) run on a fresh copy of the table (again after a
    conflict) and either mutate it and return how to answer, or raise :class:`Refusal`.
    Returns the committed snapshot (None when nothing of ``change`` was applied, or when
    it left the table as it was: then nothing is written) and how to answer.
    """
    svc = services(context)

    def decide(snap: Snapshot) -> tuple[Write, tuple[bool, Reply]]:
        """(what to write, (whether ``change`` was applied, how to answer))."""
        table = snap.table
        if table is not None and query_id is not None and query_id in table.taps:
            # Delivered again after it was applied (its first handling died before the
            # answer): the tapper has what he asked for, so nothing to say.
            return Write(None), (False, Reply())
        # Any tap of an away player on his game brings him back (seeds/<game>.md §7.2), even one
        # that is refused (a prompt the computer has just answered for him): then the
        # table as it was, with only that, is written.
        back: Table | None = None
        # a superseded hand of his, not removed yet (bot.core.store: the junk)
        superseded = bool(ephemeral_id) and any(
            j[1] == ephemeral_id and j[3] == user_id for j in snap.junk
        )
        as_loaded = table.model_dump_json() if table is not None else None
        try:
            if replace is not None:
                table = replace(table)
            elif table is None or game_id not in (None, table.game_id) or superseded:
                refuse("tap.stale")
            if user_id is not None and turns.is_away(table, user_id):
                back = table.model_copy(deep=True)
            reply = change(table)
        except Refusal as exc:
            refused = Reply(exc.key, True, exc.params)
            if back is None:
                return Write(None), (False, refused)
            table, reply = back, refused
            applied = False
        else:
            applied = True
        if user_id is None:
            wake = turns.moved(table)
        else:
            wake = turns.tapped(table, user_id, svc.settings.computer_delay, svc.clock())
        if applied and replace is None and table.model_dump_json() == as_loaded:
            # It changed nothing (a reset with nothing to reset): no version to publish,
            # nor to remember the tap by (taken again, it changes nothing again).
            return Write(None), (False, reply or Reply())
        if applied and query_id is not None:
            table.note_tap(query_id)
            seated = user_id is not None and table.seat_of(user_id) is not None
            if in_group and seated:  # his hand in the group may answer this tap
                table.last_taps[str(user_id)] = (query_id, svc.clock())
        write = Write(table, fresh=replace is not None, wake=wake)
        return write, (applied, reply or Reply())

    async with svc.lock(key):
        snap, (applied, reply) = await svc.store.transact(key, decide)
    delivery.publish(context, snap)  # when written: the messages follow in the background
    return (snap if applied else None), reply


async def current_table(tap: Tap, context: ContextTypes.DEFAULT_TYPE, *phases: str) -> Table | None:
    """The tapped game's table if it is still in one of ``phases``; otherwise the tap is
    answered as stale and None comes back (a button of an older game, or of a phase gone)."""
    table = (await services(context).store.load(tap.key)).table
    if table is None or table.game_id != tap.cb.game_id or table.phase not in phases:
        await tap.answer("tap.stale")
        return None
    return table


async def is_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    try:
        member = await sender.member(context.bot, chat_id, user_id)
    except TelegramError:
        return False
    return member.status in ("creator", "administrator")
