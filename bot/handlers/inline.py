"""Inline mode (issue 34): a game posted with ``@bot`` in any chat, the bot a member or
not, and played there.

The pick of a game posts its invitation, which is its table from then on: a table like a
group's, keyed by that message (:func:`bot.core.callbacks.inline_number`), whose taps
take the same handlers. A player's hand and moves are the answer to his own inline query
(:mod:`bot.screens.inline`), and the pick of a move is the tap of its button: the result's
id is that button's callback data, handed to the same handler as a :class:`Pick`, so the
same checks, the same compare-and-set and the same position stamp apply to it. A pick
the table refuses (the position changed, a forged or another's move) changes nothing,
and the line it posted is edited to say that it was not played; the same pick delivered
again is remembered by the table and ignored.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import CallbackQuery, ChosenInlineResult, Update, User
from telegram.constants import ChatType
from telegram.error import Forbidden, TelegramError
from telegram.ext import ContextTypes

from bot.core import callbacks, names, sender
from bot.core.callbacks import GAME_ID_LEN, INLINE_CHAT, Action, BadCallback, new_game_id
from bot.core.i18n import lang_of, plain
from bot.core.keys import table_key
from bot.core.models import GameSettings, Inline, Lobby, Seat, Table
from bot.core.screen import Screen
from bot.core.services import services
from bot.handlers import play, stats_commands
from bot.screens import inline, registry
from bot.service.messages.record import send_record
from bot.service.taps import (
    Origin,
    Reply,
    Tap,
    TapHandler,
    commit,
    current_table,
    refuse,
    write,
)

log = logging.getLogger(__name__)

# The handler of each button a pick plays (bot.screens.inline.PICKED).
_PICKS: dict[Action, TapHandler] = {
    Action.MOVE: play.on_move,
    Action.SETUP: play.on_setup,
    Action.BACK: play.on_back,
}


async def _offered(
    context: ContextTypes.DEFAULT_TYPE, user: User, group: bool
) -> list[tuple[Table, str]]:
    """The new tables an inline query offers, each with its variant's path: every game
    as its creator last set it up (if he did), then as usual, then its named variants."""
    offered: list[tuple[Table, str]] = []
    await services(context).store.set_inviter(seated(user))  # seats him at a tap first
    for kind in registry.GAMES:
        last = await services(context).store.last_settings(user.id, kind)
        paths = ([inline.LAST] if last is not None else []) + inline.variants(kind)
        for path in paths:
            table = fresh(kind, seated(user), new_game_id(), group)
            _set_up(table, path, last)
            offered.append((table, path))
    return offered


def _set_up(table: Table, path: str, last: GameSettings | None) -> bool:
    """The lobby's settings of the variant ``path`` names (:func:`bot.screens.inline.variants`;
    :data:`~bot.screens.inline.LAST`: ``last``); False when it names none."""
    if path == inline.LAST:
        table.lobby.settings = last.model_copy() if last is not None else table.lobby.settings
        return True
    game = registry.entry(table.kind)
    codes = path.split(".") if path else []
    if any(code not in game.lobby.options for code in codes):
        return False
    for code in codes:
        game.lobby.options[code](table.lobby.settings)
    return True


def seated(user: User) -> Seat:
    """His seat, as a table he creates gives it him."""
    return Seat(user_id=user.id, name=names.of(user), lang=lang_of(user.language_code))


def fresh(
    kind: str, seat: Seat, game_id: str, group: bool, message: str = "", reported: bool = False
) -> Table:
    """A new inline table's lobby, its creator (``seat``) seated: the invitation an inline
    query offers (no ``message`` yet), and the table its pick or first tap opens."""
    lang = seat.lang
    return Table(
        game_id=game_id,
        chat_id=INLINE_CHAT,
        thread_id=callbacks.inline_number(message) if message else None,
        inline=Inline(message=message, group=group, reported=reported),
        kind=kind,
        phase="lobby",
        lobby=Lobby(creator=seat.user_id, lang=lang),
        seats=[seat],
    )


async def _inline_table(context: ContextTypes.DEFAULT_TYPE, text: str) -> Table | None:
    """The inline table a query's text names (its payload), if there is one."""
    target = callbacks.parse_payload(text.strip())
    if target is None or target[0] != INLINE_CHAT:
        return None
    table = (await services(context).store.load(table_key(target[0], target[1]))).table
    return table if table is not None and table.inline is not None else None


async def on_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """An inline query: the asker's hand and moves at the table it names, or the public
    view there for one who is not seated; any other text lists the games to post."""
    query = update.inline_query
    if query is None:
        return
    user = query.from_user
    table = await _inline_table(context, query.query)
    if table is None:
        group = query.chat_type in (ChatType.GROUP, ChatType.SUPERGROUP)
        results = inline.invitations(await _offered(context, user, group))
    else:
        seat = table.seat_of(user.id)
        if seat is not None and table.state is not None and table.phase == "playing":
            results = inline.hand(table, seat)
        else:
            results = inline.watching(table, lang_of(user.language_code))
    chunk, rest = inline.page(results, query.offset)
    try:
        await sender.answer_inline(context.bot, query.id, chunk, rest)
    except TelegramError as exc:  # too late to answer: he typed on
        log.info("inline query not answered: %s", exc)


class Pick(Tap):
    """A picked inline result, taken as the tap of the button whose callback data is its
    id; a refusal is kept for the line it posted rather than answered (there is no
    callback query to answer)."""

    refusal: tuple[str, dict[str, Any]] | None = None

    async def answer(self, key: str | None = None, *, alert: bool = True, **params: Any) -> None:
        if key is not None and alert:
            self.refusal = (key, params)


async def on_chosen(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A result was picked (inline feedback): a new table is opened, a move played. A
    result id that is none of ours changes nothing."""
    chosen = update.chosen_inline_result
    if chosen is None:
        return
    if chosen.result_id.startswith(inline.NEW):
        await _open(context, chosen)
        return
    try:
        cb = callbacks.decode(chosen.result_id)
    except BadCallback:
        return  # the hand, a watcher's view, the rules: they post, and play nothing
    handler = _PICKS.get(cb.action)
    if cb.chat_id != INLINE_CHAT or cb.thread_id is None or handler is None:
        return
    user = chosen.from_user
    # The same pick delivered twice posted one line: its id is the table's memory of it.
    posted = chosen.inline_message_id
    mark = f"p{callbacks.inline_number(posted):x}" if posted else f"p{cb.arg}:{user.id}"
    query = CallbackQuery(mark, user, "inline", data=chosen.result_id)
    pick = Pick(query, cb, user, lang_of(user.language_code), Origin(mark))
    await handler(pick, context)
    if pick.refusal is not None and posted is not None:
        await _not_played(context, pick, posted, *pick.refusal)


async def _not_played(
    context: ContextTypes.DEFAULT_TYPE, pick: Pick, posted: str, key: str, params: dict[str, Any]
) -> None:
    """The line a refused pick posted says so, in the table's language, and why."""
    table = (await services(context).store.load(pick.key)).table
    lang = table.lobby.lang if table is not None else pick.lang
    why = plain(lang, key, **params)
    text = plain(lang, "inline.not_played", name=names.of(pick.user), why=why)
    rows = ((inline.hand_button(table, lang),),) if table is not None else ()
    try:
        await sender.edit_inline(context.bot, posted, Screen(f"<s>{text}</s>", rows))
    except TelegramError as exc:
        log.info("a refused pick's line not edited: %s", exc)


async def _open(context: ContextTypes.DEFAULT_TYPE, chosen: ChosenInlineResult) -> None:
    """An invitation was posted: its table opens, keyed by its message, unless its first
    tap opened it already."""
    rest = chosen.result_id[len(inline.NEW) :]
    game_id = rest[2 : 2 + GAME_ID_LEN]
    posted = chosen.inline_message_id
    if posted is None or len(game_id) != GAME_ID_LEN:
        log.info("an invitation's pick not understood: %r", chosen.result_id)
        return
    creator = seated(chosen.from_user)
    path = rest[2 + GAME_ID_LEN :]
    await _open_table(context, rest[:2], game_id, path, creator, posted, reported=True)


async def on_invited(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A tap on an invitation's button, which may come before Telegram reports its pick:
    the table opens from what the button carries, unless it is open already; the tap
    then goes to its handler as any other."""
    head, _, path = tap.invited.partition(inline.OPENS)
    posted = tap.query.inline_message_id
    if not head[2:].isdigit() or posted is None:
        return
    creator = await services(context).store.inviter(int(head[2:]))
    if creator is not None and creator.user_id == int(head[2:]):
        await _open_table(context, head[:2], tap.cb.game_id, path, creator, posted)


async def _open_table(
    context: ContextTypes.DEFAULT_TYPE,
    kind: str,
    game_id: str,
    path: str,
    creator: Seat,
    posted: str,
    *,
    reported: bool = False,
) -> None:
    """The table of the invitation ``posted`` opens, once, by compare-and-set: whichever
    of its pick and its first tap comes first opens it; the other changes nothing but
    the note that its pick was ``reported`` (Start waits for it: bot.handlers.lobby).
    ``kind``: the game's letter, then "g" when posted in a group or "p"."""
    game = registry.BY_LETTER.get(kind[:1])
    if game is None or kind[1:2] not in ("g", "p"):
        log.info("an invitation not understood: %r", kind)
        return
    table = fresh(game.name, creator, game_id, kind[1] == "g", posted, reported)
    last = await services(context).store.last_settings(creator.user_id, game.name)
    try:
        known = _set_up(table, path, last) and bool(game.spec.make_options(table.lobby.settings))
    except ValueError:
        known = False
    if not known:
        log.info("an invitation's variant not understood: %r", path)
        return

    def make(old: Table | None) -> Table:
        if old is not None:
            refuse("tap.stale")
        return table

    def note(old: Table) -> Reply | None:
        if old.inline is None or old.inline.reported:
            refuse("tap.stale")
        old.inline.reported = True
        return None

    key = table_key(INLINE_CHAT, table.thread_id)
    snap, _ = await write(context, key, None, creator.user_id, replace=make)
    if snap is None and reported:  # its first tap opened it: the pick is reported now
        await write(context, key, None, creator.user_id, note)


async def on_record(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Record: at an inline table, the record goes to the private chat of whoever taps
    (the bot is not in the table's chat); one who never started the bot is told so and
    handed the link that delivers it once he does (/start with the table's payload:
    bot.handlers.commands). Elsewhere the group's Record."""
    if tap.cb.chat_id != INLINE_CHAT:
        await play.on_record(tap, context)
        return
    table = await current_table(tap, context, "finished", "abandoned")
    if table is None:
        return
    if not play.has_record(table):
        await tap.answer("tap.stale")
        return
    try:
        await send_record(context.bot, table, None, to=tap.user.id)
    except Forbidden:  # he never started the bot (or blocked it): the link to do so
        link = callbacks.deep_link(
            services(context).bot_username, table.chat_id, table.thread_id, table.game_id
        )
        try:
            await sender.answer(tap.query, plain(tap.lang, "inline.record_start"), False, link)
        except TelegramError as exc:
            log.info("callback query not answered: %s", exc)
        return
    except TelegramError as exc:
        log.info("record to %s not sent: %s", tap.user.id, exc)
        await tap.answer("common.try_again")
        return
    await tap.answer("inline.record_sent", alert=False)


async def on_standings(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The finished table's Standings: at an inline table, the board of its chat (kept by
    the chat's ``chat_instance``) in an alert, since the bot cannot post there; elsewhere
    the group's."""
    if tap.cb.chat_id != INLINE_CHAT:
        await stats_commands.on_standings(tap, context)
        return
    game = registry.BY_LETTER.get(tap.cb.arg[1:])
    table = await current_table(tap, context, "finished")
    if table is None:
        return
    if game is None or not table.counted_in:
        await tap.answer("tap.bad")
        return
    board = await stats_commands.board_screen(context, tap.lang, table.counted_in, game.name)
    text = inline.as_text(board.text)
    try:
        await sender.answer(tap.query, text if len(text) <= 200 else text[:199] + "…", True)
    except TelegramError as exc:
        log.info("callback query not answered: %s", exc)


async def on_quiet(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The switch on his "your turn" message: no more of them at this table."""

    def change(table: Table) -> Reply | None:
        seat = table.seat_of(tap.user.id)
        if seat is None:
            refuse("tap.not_player")
        table.seats[seat].reach.nudge = False
        return Reply("inline.quiet_done")

    await commit(context, tap, change)
