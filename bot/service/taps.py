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
from functools import partial
from typing import Any, NamedTuple, NoReturn

from telegram import CallbackQuery, Update, User
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.core import callbacks, sender
from bot.core.callbacks import INLINE_CHAT, Action, BadCallback, Callback
from bot.core.i18n import lang_of, plain
from bot.core.keys import table_key
from bot.core.models import LastTap, Table
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


# Actions on an inline table's message: the group's, but the picker (the pick of the
# inline result is the picker) and "My cards" (a hand is an inline query's answer there).
INLINE_ACTIONS = (GROUP_ACTIONS - {Action.PICK, Action.CARDS}) | {Action.BACK}


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


@dataclass(frozen=True)
class Origin:
    """Where a change came from: the tap's callback query and its message. A command, a
    deep link or a table's move comes from nowhere (the defaults)."""

    query_id: str | None = None  # remembered by the table: a redelivered tap is a no-op
    chat_id: int | None = None  # the chat of the tapped message
    ephemeral_id: int | None = None  # the ephemeral message tapped (docs/ephemeral.md)
    # Made in the table's group: his hand there may answer it (docs/ephemeral.md).
    in_group: bool = False
    # An inline table's message tapped: only that table's (its number is a hash) takes the
    # tap, and the first tap tells the table its chat (``chat_instance``).
    inline_message_id: str | None = None
    chat_instance: str | None = None

    @classmethod
    def of(cls, query: CallbackQuery, table_chat: int) -> Origin:
        message = query.message
        inline, instance = query.inline_message_id, query.chat_instance
        if message is None:
            return cls(query.id, inline_message_id=inline, chat_instance=instance)
        chat = message.chat.id
        ephemeral = message.api_kwargs.get("ephemeral_message_id")
        return cls(query.id, chat, ephemeral, chat == table_chat, inline, instance)


NOWHERE = Origin()


@dataclass
class Tap:
    query: CallbackQuery
    cb: Callback
    user: User
    lang: str
    origin: Origin
    # What a tap on an invitation's button carries to open its table (the table may not
    # be open yet: bot.core.callbacks.INVITED), "" for every other tap.
    invited: str = ""

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
    # or on his ephemeral message in the table's group (docs/ephemeral.md); an inline
    # table's button on its message, wherever that was posted.
    origin = Origin.of(query, cb.chat_id) if cb is not None else NOWHERE
    invited = ""
    if cb is None:
        ok = False
    elif query.inline_message_id is not None:
        cb, invited = callbacks.invitation(cb)
        cb = on_inline(cb, query.inline_message_id)
        ok = cb is not None
    elif cb.action in GROUP_ACTIONS:
        ok = origin.in_group
    else:
        ok = origin.chat_id == user.id or (origin.in_group and _his_ephemeral(query))
    if not ok or cb is None:
        await _answer(query, lang, "tap.bad")
        return None
    return Tap(query, cb, user, lang, origin, invited)


def on_inline(cb: Callback, inline_message_id: str) -> Callback | None:
    """The address of a tap on an inline table's message: the table of that message
    (the invitation's buttons, posted before the table had its number, name none), or
    None when the button is not one an inline table carries."""
    number = callbacks.inline_number(inline_message_id)
    if cb.chat_id != INLINE_CHAT or cb.thread_id not in (None, number):
        return None
    if cb.action not in INLINE_ACTIONS:
        return None
    return cb._replace(thread_id=number)


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
    snap, reply = await write(
        context, tap.key, tap.cb.game_id, tap.user.id, change, origin=tap.origin
    )
    if answer or snap is None:
        await tap.answer(reply.key, alert=reply.alert, **reply.params)
    return snap


def _as_is(table: Table) -> Reply | None:
    """No change beyond the table :func:`write` was given."""
    return None


@dataclass(frozen=True)
class Asked:
    """A change asked of a table, as :func:`write` takes it."""

    game_id: str | None
    user_id: int | None
    change: Callable[[Table], Reply | None] = _as_is
    origin: Origin = NOWHERE
    replace: Callable[[Table | None], Table] | None = None


class Decided(NamedTuple):
    """What :func:`decide` made of a change: whether it was applied, how to answer."""

    applied: bool
    reply: Reply


def decide(
    snap: Snapshot, asked: Asked, now: float, computer_delay: float
) -> tuple[Write, Decided]:
    """What to write for ``asked`` on the stored ``snap``, and how to answer (a step of
    the compare-and-set: it runs again on a fresh snapshot after a conflict).

    A tap delivered again after it was applied writes nothing and is answered silently
    (its first handling died before the answer). A refusal writes nothing, except that
    any tap of an away player on his game brings him back (seeds/<game>.md §7.2), even a
    refused one (a prompt the computer has just answered for him): then the table as it
    was, with only that, is written. A change that leaves the table as it was loaded
    writes nothing either, answered as applied."""
    table, user_id, as_loaded = snap.table, asked.user_id, snap.stored
    if table is not None and asked.origin.query_id in table.delivery.taps:
        return Write(None), Decided(False, Reply())
    if as_loaded is None and table is not None:  # not as the store read it: its form now
        as_loaded = table.to_stored().encode()
    loaded_state = table.state if table is not None else None
    back: Table | None = None
    try:
        if asked.replace is not None:
            table = asked.replace(table)
        elif table is None or _stale(snap, table, asked):
            refuse("tap.stale")
        if user_id is not None and turns.is_away(table, user_id):
            back = table.model_copy(deep=True)
        home, origin = table.inline, asked.origin
        if home is not None and origin.inline_message_id is not None:  # its first tap
            home.chat_instance = home.chat_instance or origin.chat_instance or ""
        reply = asked.change(table) or Reply()
    except Refusal as exc:
        refused = Reply(exc.key, True, exc.params)
        if back is None:
            return Write(None), Decided(False, refused)
        table, reply, applied = back, refused, False
    else:
        applied = True
    if user_id is None:
        wake = turns.moved(table)
    else:
        turns.note_active(table, user_id)
        wake = turns.stamp(table, computer_delay, now)
    if applied and asked.replace is None and _unchanged(table, loaded_state, as_loaded):
        # It changed nothing (a reset with nothing to reset): no version to publish, nor
        # a tap to remember (taken again, it changes nothing again).
        return Write(None), Decided(False, reply)
    if applied:
        _note_tap(table, asked.origin, user_id, now)
    return Write(table, fresh=asked.replace is not None, wake=wake), Decided(applied, reply)


def _unchanged(table: Table, loaded_state: str | None, as_loaded: bytes | None) -> bool:
    """The table is stored as it was loaded (``as_loaded``, with the game's state
    ``loaded_state``). A move changes the state, and so the table, with no need to make
    the stored form for the comparison (about 25 µs a table; the commit makes it again)."""
    return table.state == loaded_state and table.to_stored().encode() == as_loaded


def _stale(snap: Snapshot, table: Table, asked: Asked) -> bool:
    """The tap is not on this table as it is: on another game's buttons, on a superseded
    hand of his not removed yet (bot.core.store: the junk), or on an inline message that
    is not this table's."""
    origin = asked.origin
    if asked.game_id not in (None, table.game_id):
        return True
    if origin.ephemeral_id and any(
        j.message_id == origin.ephemeral_id and j.receiver == asked.user_id for j in snap.junk
    ):
        return True
    if origin.inline_message_id is None:
        return False
    return table.inline is None or table.inline.message != origin.inline_message_id


def _note_tap(table: Table, origin: Origin, user_id: int | None, now: float) -> None:
    """Remember an applied tap: a redelivery of it is then a no-op, and his hand in the
    group may answer it (docs/ephemeral.md)."""
    if origin.query_id is None:
        return
    table.delivery.note_tap(origin.query_id)
    seated = user_id is not None and table.seat_of(user_id) is not None
    if origin.in_group and seated:
        table.delivery.last_taps[str(user_id)] = LastTap(origin.query_id, now)


async def write(
    context: AnyApp | ContextTypes.DEFAULT_TYPE,
    key: str,
    game_id: str | None,
    user_id: int | None,
    change: Callable[[Table], Reply | None] = _as_is,
    *,
    origin: Origin = NOWHERE,
    replace: Callable[[Table | None], Table] | None = None,
) -> tuple[Snapshot | None, Reply]:
    """The one way a table changes outside a delivery: a tap, a deep link, a command
    (/newgame, /endgame), the move of a table to its supergroup. ``change`` under
    compare-and-set (:func:`decide`), the messages set off
    (:func:`bot.service.delivery.start`), the timers told in the same commit.
    ``user_id`` is who acts (None: nobody, the table moved to a new key, whose timers are
    told its deadline again), ``game_id`` the game he acts on (another one's table refuses
    him as stale; None: whatever is there, or nothing), ``origin`` where he acted.
    ``replace`` makes the table to change from the stored one (or from none), written as
    a new table with no remembered messages (/newgame).

    ``change`` (and ``replace``) run on a fresh copy of the table (again after a
    conflict) and either mutate it and return how to answer, or raise :class:`Refusal`.
    Returns the committed snapshot (None when nothing of ``change`` was applied) and how
    to answer.
    """
    svc = services(context)
    asked = Asked(game_id, user_id, change, origin, replace)
    delay = svc.settings.play.computer_delay
    async with svc.lock(key):
        # the time of the change, read once for every attempt of the compare-and-set
        step = partial(decide, asked=asked, now=svc.clock(), computer_delay=delay)
        snap, done = await svc.store.transact(key, step)
    delivery.start(svc, key, snap)  # when written: the messages follow in the background
    return (snap if done.applied else None), done.reply


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
