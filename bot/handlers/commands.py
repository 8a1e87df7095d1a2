"""Slash commands: /newgame, /endgame, /start (with deep links), /help, /rules, /record."""

from __future__ import annotations

import asyncio
import logging

from telegram import Bot, BotCommand, Message, Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import Application, ContextTypes

from bot.core import callbacks, names, rules_text, sender
from bot.core.i18n import LANGS, lang_of, plain, t
from bot.core.keys import TABLE_SLOT, table_key
from bot.core.services import services
from bot.handlers import lobby, play
from bot.screens import registry
from bot.service import delivery
from bot.service.messages.record import send_record
from bot.service.taps import is_admin

log = logging.getLogger(__name__)

# The command menu: each command with its description.
MENU = {
    "newgame": "menu.newgame",
    "endgame": "menu.endgame",
    "rules": "menu.rules",
    "record": "menu.record",
    "stats": "menu.stats",
    "forgetme": "menu.forgetme",
    "help": "menu.help",
}


def _where(message: Message) -> tuple[int, int | None]:
    """The table a group message belongs to: its chat, and its forum topic if any."""
    thread = message.message_thread_id if message.is_topic_message else None
    return message.chat.id, thread


def _title(message: Message, lang: str) -> str:
    """The table's name in hand messages: the group's title, and its forum topic's name
    when Telegram gives it (a topic message that replies to nothing else replies to the
    topic's first message), so that two tables of one forum can be told apart."""
    title = message.chat.title or plain(lang, "table.vs_computer")
    start = message.reply_to_message
    if message.is_topic_message and start and start.forum_topic_created:
        title = f"{title} › {start.forum_topic_created.name}"
    return names.shown(title, names.MAX_TITLE)


async def _say(message: Message, text: str, reply: bool = True) -> None:
    try:
        await sender.reply(message, text, quote=reply)
    except TelegramError as exc:
        log.warning("reply not sent: %s", exc)


async def newgame(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    lang = lang_of(user.language_code)
    if message.sender_chat is not None:  # an anonymous admin (or a channel): nobody to seat
        await _say(message, t(lang, "cmd.anonymous"))
        return
    # In a private chat the table is played there, against computer seats.
    chat_id, thread_id = _where(message)
    snap, created = await lobby.new_table(context, chat_id, thread_id, _title(message, lang), user)
    if created or snap.table is None:
        return
    slot = snap.slots.get(TABLE_SLOT)
    text = t(snap.table.lobby.lang, "cmd.already")
    try:
        reply_to = slot.id if slot and slot.id else message.message_id
        await sender.send_text(context.bot, chat_id, text, thread_id=thread_id, reply_to=reply_to)
    except TelegramError as exc:
        log.warning("reply not sent: %s", exc)


async def endgame(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    lang = lang_of(user.language_code)
    chat_id, thread_id = _where(message)
    snap = await services(context).store.load(table_key(chat_id, thread_id))
    table = snap.table
    if table is None or table.phase not in lobby.OPEN:
        await _say(message, t(lang, "cmd.no_game"))
        return
    # An anonymous admin writes as the group itself.
    anonymous_admin = message.sender_chat is not None and message.sender_chat.id == chat_id
    if (
        user.id != table.lobby.creator
        and not anonymous_admin
        and not await is_admin(context, chat_id, user.id)
    ):
        await _say(message, t(lang, "cmd.endgame_denied"))
        return
    await lobby.stop(context, chat_id, thread_id, user)


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/start: welcome, or a deep link that joins a lobby / brings a player's hand."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    lang = lang_of(user.language_code)
    if message.chat.type != ChatType.PRIVATE:
        await _say(message, t(lang, "cmd.start_group"))
        return
    target = callbacks.parse_payload(context.args[0]) if context.args else None
    if target is None:  # also what unblocking the bot ("Restart") sends
        await _say(message, t(lang, "cmd.welcome"), reply=False)
        await delivery.reopen(context, user.id)
        return
    chat_id, thread_id, game_id = target
    key = table_key(chat_id, thread_id)
    svc = services(context)
    snap = await svc.store.load(key)
    table = snap.table
    if table is None or table.game_id != game_id:
        await _say(message, t(lang, "tap.stale"), reply=False)
        return
    if table.inline is not None and play.has_record(table):  # an inline table's Record
        try:
            await send_record(context.bot, table, None, to=user.id)
        except TelegramError:
            await _say(message, t(lang, "common.try_again"), reply=False)
        return
    if table.phase == "lobby":
        await lobby.join(context, key, game_id, user)
        return
    if table.phase == "playing" and table.seat_of(user.id) is not None:
        await delivery.bring_hand(context, key, user.id)
        return
    # A link to a running game he does not sit at; else the game is over.
    gone = t(lang, "cmd.link_running" if table.phase == "playing" else "tap.stale")
    await _say(message, gone, reply=False)


async def help_(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    lang = lang_of(user.language_code)
    await _say(message, t(lang, "cmd.help") + "\n\n" + t(lang, "cmd.help_stats"), reply=False)


async def rules(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/rules [football|durak]: the rules in the reader's language."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    lang = lang_of(user.language_code)
    wanted = [a.lower() for a in context.args or []]
    chosen = [g for g in registry.GAMES if not wanted or g in wanted] or list(registry.GAMES)
    for game in chosen:
        text = rules_text.source(game, lang)
        if text is None:
            title = t(lang, registry.GAMES[game].names.title)
            await _say(message, t(lang, "cmd.no_rules", game=title), reply=False)
            continue
        for piece in rules_text.messages(text):
            await _say(message, piece, reply=False)


async def record(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/record: the record of the game that ended last at this table (a group, a forum
    topic, or a private chat), as a document in reply; until the next game starts there,
    which replaces it. Unlike the Record button it answers every time it is asked: an
    answer to a command is one message whatever it says, so refusing a second /record
    would save nothing."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    lang = lang_of(user.language_code)
    table = (await services(context).store.load(table_key(*_where(message)))).table
    if table is None or not play.has_record(table):
        await _say(message, t(lang, "cmd.no_record"))
    else:
        try:
            await send_record(context.bot, table, message.message_id)
        except TelegramError:
            await _say(message, t(lang, "common.try_again"))


async def set_menu(app: Application) -> None:  # type: ignore[type-arg]
    """The command menu in every language of the catalogues (English also for every other
    language), all asked for at once. A menu Telegram refuses now (flood control after quick
    restarts) is no reason not to start: the commands work without it; the next start sets it."""
    await asyncio.gather(*(_set_menu_in(app.bot, lang) for lang in (None, *LANGS)))


async def _set_menu_in(bot: Bot, lang: str | None) -> None:
    commands = [BotCommand(c, plain(lang or "en", key)) for c, key in MENU.items()]
    try:
        await sender.set_commands(bot, commands, lang)
    except TelegramError as exc:
        log.warning("command menu (%s) not set: %s", lang or "default", exc)
