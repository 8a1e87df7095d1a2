"""/stats, /forgetme and the standings buttons.

The figures are bot.tables.stats's, the text bot.screens.render_stats's: here only who
asked where, and what he may see.
"""

from __future__ import annotations

import logging

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update, User
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.core import callbacks, names, sender
from bot.core.callbacks import Action
from bot.core.i18n import lang_of, t
from bot.core.screen import Button, Screen
from bot.core.services import services
from bot.screens import registry, render_stats
from bot.service.taps import Tap
from bot.tables.stats.keys import KINDS, board_key, h2h_key
from bot.tables.stats.standings import Standings, of

log = logging.getLogger(__name__)


def _standings(context: ContextTypes.DEFAULT_TYPE) -> Standings:
    return of(services(context).store)


def _markup(screen: Screen) -> InlineKeyboardMarkup | None:
    rows = [
        [InlineKeyboardButton(b.text, callback_data=b.data) for b in row]
        for row in screen.rows
        if row
    ]
    return InlineKeyboardMarkup(rows) if rows else None


async def _show(message: Message, screen: Screen, *, reply: bool = True) -> None:
    try:
        await sender.reply(message, screen.text, quote=reply, markup=_markup(screen))
    except TelegramError as exc:
        log.warning("standings not sent: %s", exc)


async def board_screen(
    context: ContextTypes.DEFAULT_TYPE, lang: str, chat: int, kind: str | None
) -> Screen:
    """A group's board for ``kind``; None: the game with the most people on its board
    (or, while nobody is on a board yet, the one played there most)."""
    standings = _standings(context)
    if kind is None:
        async with standings.redis.pipeline(transaction=False) as pipe:
            for k in KINDS:
                pipe.zcard(board_key(chat, k))
                pipe.hlen(h2h_key(chat, k))
            found = await pipe.execute()
        sizes = list(zip(found[::2], found[1::2], strict=True))
        kind = KINDS[sizes.index(max(sizes))]
    return render_stats.board(lang, chat, kind, await standings.board(chat, kind))


def _sender(update: Update) -> tuple[Message, User, str] | None:
    """A command's message, its sender and his language (None: not a user's message)."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return None
    return message, user, lang_of(user.language_code)


async def stats_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/stats: in a group its board (or, in reply to someone, his figures there); in a
    private chat the sender's own figures."""
    sender = _sender(update)
    if sender is None:
        return
    message, user, lang = sender
    standings = _standings(context)
    if message.chat.type == ChatType.PRIVATE:
        overall, vs = await standings.mine(user.id)
        variants = await standings.variants(user.id)
        await _show(message, render_stats.mine(lang, overall, vs, variants), reply=False)
        return
    chat = message.chat.id
    replied = message.reply_to_message
    # In a forum topic, a message that replies to nothing replies to the topic's start.
    starts_topic = (
        bool(message.is_topic_message)
        and replied is not None
        and replied.message_id == message.message_thread_id
    )
    target = replied.from_user if replied is not None and not starts_topic else None
    if target is None or target.is_bot:
        await _show(message, await board_screen(context, lang, chat, None))
        return
    lines = await standings.in_group(chat, target.id)
    h2h = {}
    if target.id != user.id:
        h2h = {k: await standings.head_to_head(chat, k, target.id, user.id) for k in lines}
    await _show(message, render_stats.his(lang, names.of(target), lines, h2h))


async def forgetme(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/forgetme: in a private chat, a confirmation button; elsewhere, where to send it."""
    sender = _sender(update)
    if sender is None:
        return
    message, user, lang = sender
    if message.chat.type != ChatType.PRIVATE:
        await _show(message, Screen(t(lang, "forget.private")))
        return
    data = callbacks.at(
        callbacks.address(user.id, None, render_stats.BOARD_GAME_ID), Action.FORGET, "y"
    )
    button = Button(t(lang, "btn.forget"), data)
    await _show(message, Screen(t(lang, "forget.ask"), ((button,),)), reply=False)


async def on_forget(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The confirmation: his figures (and his choice of place for his hands) are erased,
    and the question says so."""
    if tap.cb.chat_id != tap.user.id or tap.cb.arg != "y":
        await tap.answer("tap.bad")
        return
    await _standings(context).forget(tap.user.id)
    await services(context).store.forget_place(tap.user.id)
    await tap.answer()
    try:
        await sender.edit_tapped(tap.query, t(tap.lang, "forget.done"))
    except TelegramError as exc:
        log.info("forget confirmation not edited: %s", exc)


async def on_standings(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "p<game>": the result's Standings button posts the board, once per game (a crowd
    tapping it makes one message); "s<game>": a board's game button switches it; "=<game>":
    the button of the game it shows already."""
    what, letter = tap.cb.arg[:1], tap.cb.arg[1:]
    game = registry.BY_LETTER.get(letter)
    kind = game.name if game is not None else None
    message = tap.query.message
    if kind is None or what not in ("p", "s", "=") or not isinstance(message, Message):
        await tap.answer("tap.bad")
        return
    if what == "=":
        await tap.answer()
        return
    screen = await board_screen(context, tap.lang, tap.cb.chat_id, kind)
    if what == "s":
        await tap.answer()
        try:
            await sender.edit_text(message, screen.text, _markup(screen))
        except TelegramError as exc:
            log.info("board not switched: %s", exc)
        return
    thread = tap.cb.thread_id or 0
    if not await _standings(context).claim_post(tap.cb.chat_id, thread, tap.cb.game_id):
        await tap.answer("stats.posted")
        return
    await tap.answer()
    await _show(message, screen)
