"""Before and between games: the picker, joining, settings, start, play again, stop."""

from __future__ import annotations

import contextlib
from typing import cast

from telegram import User
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.core import names, sender
from bot.core.callbacks import INLINE_CHAT, new_game_id
from bot.core.i18n import LANGS, lang_of, t
from bot.core.keys import table_key
from bot.core.models import TURN_TIMES, DeckSize, Delivery, Lobby, Place, Reach, Seat, Table
from bot.core.services import services
from bot.core.store import Snapshot
from bot.handlers import members
from bot.screens import registry
from bot.service.taps import (
    NOWHERE,
    Reply,
    Tap,
    commit,
    current_table,
    is_admin,
    refuse,
    write,
)
from bot.tables import games

OPEN = ("pick", "lobby", "playing")  # a table in these phases is in use


def _creator(table: Table, tap: Tap) -> None:
    if tap.user.id != table.lobby.creator:
        refuse("tap.creator_only")


def _in_lobby(table: Table) -> None:
    if table.phase != "lobby":
        refuse("tap.stale")


def display_name(user: User) -> str:
    return names.of(user)


def _seat(table: Table, user: User, place: Place) -> None:
    """Seat ``user`` in the lobby, or refuse to say why he cannot sit down now (that it is
    still his game, :func:`bot.service.taps.write` has checked). His confirmation is the
    delivery's (it becomes his hand message): ``place`` says where he keeps his hands (in
    the group, the confirmation is an ephemeral message answering his tap); if his private
    chat refuses it, he is unseated and the lobby offers the deep link
    (:func:`bot.service.messages.refusals.set_reachable`)."""
    _in_lobby(table)
    if table.private and table.chat_id != user.id:
        refuse("join.not_yours")
    if table.seat_of(user.id) is not None:
        refuse("join.already")
    if len(table.seats) >= games.seat_cap(table):
        refuse("join.full")
    lang = lang_of(user.language_code)
    table.seats.append(
        Seat(user_id=user.id, name=display_name(user), lang=lang, reach=Reach(place=place))
    )
    table.lobby.notice = ""


async def _place(context: ContextTypes.DEFAULT_TYPE, user_id: int) -> Place:
    """Where his hands live: his choice, else the bot's default (the HANDS setting)."""
    svc = services(context)
    return await svc.store.place(user_id) or svc.settings.messages.hands


async def on_pick(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    picked = registry.BY_LETTER.get(tap.cb.arg)
    place = await _place(context, tap.user.id)

    def change(table: Table) -> Reply | None:
        if table.phase != "pick" or picked is None:
            refuse("tap.stale")
        _creator(table, tap)
        table.kind = picked.name
        table.phase = "lobby"
        _seat(table, tap.user, place)  # he sits down at once
        return None

    await commit(context, tap, change)


async def join(
    context: ContextTypes.DEFAULT_TYPE,
    key: str,
    game_id: str,
    user: User,
    tap: Tap | None = None,
) -> None:
    """Seat ``user`` in the lobby: his Join tap, or the deep link he followed (then a
    refusal is told in his private chat). Whether he is in the group is asked first, where
    it must be (:func:`_outsider`; a read, answered from a cache for a minute:
    bot.handlers.members)."""
    table = (await services(context).store.load(key)).table
    if table is not None and table.game_id == game_id and table.phase == "lobby":
        why = await _outsider(context, table, user, tap)
        if why is not None:
            await _tell(context, user, tap, Reply(why, True, {"chat": table.chat_title}))
            return
    place = await _place(context, user.id)

    def seat(table: Table) -> Reply | None:
        _seat(table, user, place)
        return None

    _, reply = await write(
        context,
        key,
        game_id,
        user.id,
        seat,
        origin=tap.origin if tap is not None else NOWHERE,  # his Join, on the group's lobby
    )
    await _tell(context, user, tap, reply)


async def _tell(
    context: ContextTypes.DEFAULT_TYPE, user: User, tap: Tap | None, reply: Reply
) -> None:
    """Answer a join: his tap, or (he came by the deep link) a message when refused."""
    if tap is not None:
        await tap.answer(reply.key, alert=reply.alert, **reply.params)
    elif reply.key is not None:
        text = t(lang_of(user.language_code), reply.key, **reply.params)
        with contextlib.suppress(TelegramError):
            await sender.send_text(context.bot, user.id, text, html=True)


async def _outsider(
    context: ContextTypes.DEFAULT_TYPE, table: Table, user: User, tap: Tap | None
) -> str | None:
    """Why ``user`` may not join a group's game as an outsider (None: he is in the group,
    or it is his private table): a forwarded link, a public group read from outside.
    Telegram is asked only where it must be: not about the creator (he opened the table
    with a command in the group), a seated player (a repeated tap), or a tap on a private
    group's message (only its members see it)."""
    if table.private or user.id == table.lobby.creator or table.seat_of(user.id) is not None:
        return None
    if table.inline is not None:  # only the people in its chat see an inline message
        return None
    if tap is not None and tap.query.message is not None and not tap.query.message.chat.username:
        return None
    try:
        inside = await members.is_member(context, table.chat_id, user.id)
    except members.CannotTell:
        return "common.try_again"
    return None if inside else "join.not_member"


async def on_join(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    await join(context, tap.key, tap.cb.game_id, tap.user, tap)


async def on_leave(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    def change(table: Table) -> Reply | None:
        _in_lobby(table)
        seat = table.seat_of(tap.user.id)
        if seat is None:
            refuse("tap.not_player")
        del table.seats[seat]
        table.lobby.notice = ""
        return None

    await commit(context, tap, change)


async def on_settings(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    def change(table: Table) -> Reply | None:
        _in_lobby(table)
        _creator(table, tap)
        table.lobby.show_settings = not table.lobby.show_settings
        return None

    await commit(context, tap, change)


def _next(values: tuple[object, ...], current: object) -> object:
    index = values.index(current) if current in values else -1
    return values[(index + 1) % len(values)]


def choose(table: Table, arg: str) -> None:
    """The lobby's setting ``arg`` changed as its button says: the deck ("d" the next,
    "d<size>" that one), the game's own settings, the turn time, the language. A button
    the settings do not offer now (an old one) changes nothing: the game's options are
    checked whole, so a combination the game refuses never enters."""
    s = table.lobby.settings
    game = registry.entry(table.kind)
    sizes = games.deck_sizes(table)
    if arg == "d":
        s.deck_size = cast(DeckSize, _next(sizes, s.deck_size))
    elif arg[:1] == "d" and arg[1:].isdigit() and int(arg[1:]) in sizes:
        s.deck_size = cast(DeckSize, int(arg[1:]))
    elif arg in game.lobby.options:  # the settings only this game has
        game.lobby.options[arg](s)
    elif arg == "t":
        s.turn_time = int(str(_next(TURN_TIMES, s.turn_time)))
    elif arg == "l":
        table.lobby.lang = str(_next(LANGS, table.lobby.lang))
    else:
        refuse("tap.bad")
    try:
        game.spec.make_options(s)
    except ValueError:
        refuse("tap.stale")
    table.lobby.notice = ""


async def on_option(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    def change(table: Table) -> Reply | None:
        _in_lobby(table)
        _creator(table, tap)
        choose(table, tap.cb.arg)
        return None

    await commit(context, tap, change)


def _player_problem(table: Table) -> tuple[str, dict[str, int]] | None:
    """Why the rules do not allow a start with these players (None: they do)."""
    low, high = games.player_limits(table)
    n = len(table.seats)
    if n < low:
        return "lobby.need_players", {"need": low, "n": n}
    if n > high:
        return "lobby.too_many", {"most": high, "n": n}
    if all(seat.computer is not None for seat in table.seats):
        return "lobby.need_person", {}
    return None


async def _may_manage(context: ContextTypes.DEFAULT_TYPE, tap: Tap, creator: int) -> bool:
    """The creator, or an administrator of the group (an inline table's chat has none the
    bot could ask about)."""
    if tap.user.id == creator:
        return True
    return tap.cb.chat_id != INLINE_CHAT and await is_admin(context, tap.cb.chat_id, tap.user.id)


async def on_start(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    table = await current_table(tap, context, "lobby")
    if table is None:
        return
    if not await _may_manage(context, tap, table.lobby.creator):
        await tap.answer("tap.creator_or_admin")
        return

    def change(table: Table) -> Reply | None:
        _in_lobby(table)
        if table.inline is not None and not table.inline.reported:
            refuse("inline.no_feedback")  # no move picked there could be played
        problem = _player_problem(table)
        if problem is not None:
            key, params = problem
            if key != "lobby.too_many":
                refuse(key, **params)
            table.lobby.notice = key  # the lobby says so and offers the 52-card deck
            return Reply(key, True, params)
        games.start(table)
        return None

    snap = await commit(context, tap, change)
    if snap is not None and snap.table is not None and tap.user.id == snap.table.lobby.creator:
        # what an inline query offers him as "as he last set it up" (bot.handlers.inline)
        kind, settings = snap.table.kind, snap.table.lobby.settings
        if kind is not None:
            await services(context).store.set_last_settings(tap.user.id, kind, settings)


async def on_again(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Play again: same players, series score kept, series rules for who starts/deals."""
    table = await current_table(tap, context, "finished")
    if table is None:
        return
    if table.seat_of(tap.user.id) is None and not await _may_manage(
        context, tap, table.lobby.creator
    ):
        await tap.answer("tap.not_player")
        return

    def change(table: Table) -> Reply | None:
        if table.phase != "finished":
            refuse("tap.stale")
        table.game_id = new_game_id()
        games.start(table)
        return None

    await commit(context, tap, change)  # the new game gets a new group message (delivery)


async def new_table(
    context: ContextTypes.DEFAULT_TYPE,
    chat_id: int,
    thread_id: int | None,
    title: str,
    user: User,
) -> tuple[Snapshot, bool]:
    """/newgame: a new table in the picker phase, unless one is open (then False, and
    the table as it is). In a group the bot asks whether it is an administrator there
    (hands follow the game on their own then: docs/ephemeral.md); my_chat_member keeps
    that up to date."""
    key = table_key(chat_id, thread_id)
    admin = chat_id < 0 and await is_admin(context, chat_id, context.bot.id)

    def make(old: Table | None) -> Table:
        if old is not None and old.phase in OPEN:
            refuse("cmd.already")
        return Table(
            game_id=new_game_id(),
            chat_id=chat_id,
            thread_id=thread_id,
            chat_title=title,
            lobby=Lobby(creator=user.id, lang=lang_of(user.language_code)),
            delivery=Delivery(bot_admin=admin),
        )

    snap, _ = await write(context, key, None, user.id, replace=make)
    if snap is not None:
        return snap, True
    return await services(context).store.load(key), False


async def stop(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, thread_id: int | None, user: User
) -> Table | None:
    """/endgame: the open table is abandoned (None when there was none)."""

    def abandon(table: Table) -> Reply | None:
        if table.phase not in OPEN:
            refuse("cmd.no_game")
        table.phase = "abandoned"
        return None

    snap, _ = await write(context, table_key(chat_id, thread_id), None, user.id, abandon)
    return snap.table if snap is not None else None
