"""Every call the bot makes to Telegram, in one module: the rest of ``bot/`` says what to
show and handles what Telegram answered; only this module knows how it is asked.

The functions raise PTB's errors unchanged (``TelegramError`` and its subclasses): what a
refusal means is the caller's business (a closed private chat marks a seat, a gone message
is sent anew, a refused reply is logged).

:func:`_call` goes through PTB's public ``Bot.do_api_request``, which returns the raw
JSON: delivery needs only a message id, and building message objects from every answer
cost about 1 ms a call, the largest cost of a move. ``do_api_request`` warns when asked
for a method that PTB also wraps (``sendMessage``), so :func:`_call` asks for it in lower
case: the Bot API takes method names in any case, and PTB's own path (rate limiter and
error mapping included) is the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from telegram import Bot, BotCommand, CallbackQuery, ChatMember, InlineKeyboardMarkup, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest

from bot.core import metrics
from bot.core.screen import Article, Screen


def gone(exc: BadRequest) -> bool:
    """Telegram refused an edit because the message is gone or can no longer be edited."""
    text = exc.message.lower()
    return "not found" in text or "can't be edited" in text or "message_id_invalid" in text


def not_modified(exc: BadRequest) -> bool:
    """Telegram refused an edit that would change nothing (the message shows it already)."""
    return "not modified" in exc.message.lower()


def admin_required(exc: BadRequest) -> bool:
    """Telegram refused because the bot is not an administrator: its error text exactly
    (``Bad Request: CHAT_ADMIN_REQUIRED``, which PTB passes on without the prefix)."""
    return exc.message.lower().removeprefix("bad request: ") == "chat_admin_required"


async def _call(bot: Bot, method: str, params: dict[str, Any]) -> Any:
    """The Bot API method ``method`` (named as Telegram documents it), its raw JSON result
    (see the module docstring)."""
    return await bot.do_api_request(method.lower(), api_kwargs=params)


def _params(screen: Screen) -> dict[str, Any]:
    params: dict[str, Any] = {
        "text": screen.text,
        "parse_mode": ParseMode.HTML.value,
        "link_preview_options": {"is_disabled": True},
    }
    markup = screen.markup()
    if markup is not None:
        params["reply_markup"] = markup
    return params


async def send_screen(bot: Bot, chat_id: int, thread_id: int | None, screen: Screen) -> int:
    """Send ``screen`` as a new message; its id."""
    params = {"chat_id": chat_id, **_params(screen)}
    if thread_id is not None:
        params["message_thread_id"] = thread_id
    message = await _call(bot, "sendMessage", params)
    return int(message["message_id"])


async def edit_screen(bot: Bot, chat_id: int, message_id: int, screen: Screen) -> None:
    """Show ``screen`` in the message ``message_id`` instead of what it shows."""
    await _call(
        bot, "editMessageText", {"chat_id": chat_id, "message_id": message_id, **_params(screen)}
    )


async def edit_inline(bot: Bot, inline_message_id: str, screen: Screen) -> None:
    """Show ``screen`` in a message posted via the bot (an inline table, or a line a pick
    posted): named by its ``inline_message_id``, in a chat the bot need not be in."""
    await _call(bot, "editMessageText", {"inline_message_id": inline_message_id, **_params(screen)})


async def answer_inline(
    bot: Bot, query_id: str, results: Sequence[Article], next_offset: str = ""
) -> None:
    """Answer an inline query with ``results``. Always personal and never cached: a list
    that names a player's cards must never be shown to anyone else who types the same
    text (Telegram caches an answer by query text unless ``is_personal``, for
    ``cache_time`` seconds)."""
    params = {
        "inline_query_id": query_id,
        "results": [r.json() for r in results],
        "is_personal": True,
        "cache_time": 0,
        "next_offset": next_offset,
    }
    await _call(bot, "answerInlineQuery", params)


async def delete(bot: Bot, chat_id: int, message_id: int) -> None:
    await _call(bot, "deleteMessage", {"chat_id": chat_id, "message_id": message_id})


async def strip_buttons(bot: Bot, chat_id: int, message_id: int) -> None:
    """Take the buttons away from a message (one too old to delete, or no longer current)."""
    await _call(bot, "editMessageReplyMarkup", {"chat_id": chat_id, "message_id": message_id})


# Ephemeral messages (Bot API 10.2, reshaped by 10.3; docs/ephemeral.md): a message in a
# group that only ``receiver`` sees, named by (chat, receiver, its ephemeral id) from then
# on. PTB 22.8 speaks Bot API 10.0, so these go through _call like the calls above.


async def send_ephemeral(
    bot: Bot,
    chat_id: int,
    thread_id: int | None,
    receiver: int,
    screen: Screen,
    *,
    query_id: str | None = None,
) -> int:
    """Send ``screen`` to ``receiver`` alone in the group ``chat_id``; its ephemeral id.
    ``query_id``: the callback query of his tap it answers (any bot may within 15 seconds
    of it; without it the bot must be an administrator of the group)."""
    ephemeral: dict[str, Any] = {"receiver_user_id": receiver}
    if query_id is not None:
        ephemeral["callback_query_id"] = query_id
    params = {"chat_id": chat_id, "ephemeral_message_parameters": ephemeral, **_params(screen)}
    if thread_id is not None:
        params["message_thread_id"] = thread_id
    message = await _call(bot, "sendMessage", params)
    return int(message["ephemeral_message_id"])


def _named(chat_id: int, receiver: int, ephemeral_id: int) -> dict[str, Any]:
    return {"chat_id": chat_id, "receiver_user_id": receiver, "ephemeral_message_id": ephemeral_id}


async def edit_ephemeral(
    bot: Bot, chat_id: int, receiver: int, ephemeral_id: int, screen: Screen
) -> None:
    """Show ``screen`` in his ephemeral message instead of what it shows."""
    params = {**_named(chat_id, receiver, ephemeral_id), **_params(screen)}
    await _call(bot, "editEphemeralMessageText", params)


async def strip_ephemeral(bot: Bot, chat_id: int, receiver: int, ephemeral_id: int) -> None:
    """Take the buttons away from his ephemeral message."""
    await _call(bot, "editEphemeralMessageReplyMarkup", _named(chat_id, receiver, ephemeral_id))


async def delete_ephemeral(bot: Bot, chat_id: int, receiver: int, ephemeral_id: int) -> None:
    await _call(bot, "deleteEphemeralMessage", _named(chat_id, receiver, ephemeral_id))


async def send_text(
    bot: Bot,
    chat_id: int,
    text: str,
    *,
    html: bool = False,
    thread_id: int | None = None,
    reply_to: int | None = None,
) -> Message:
    """A text message (``reply_to``: in reply to that message, if it still exists)."""
    return await bot.send_message(
        chat_id,
        text,
        parse_mode=ParseMode.HTML if html else None,
        message_thread_id=thread_id,
        reply_to_message_id=reply_to,
        allow_sending_without_reply=True if reply_to is not None else None,
    )


async def reply(
    message: Message,
    text: str,
    *,
    quote: bool,
    html: bool = True,
    markup: InlineKeyboardMarkup | None = None,
) -> None:
    """An answer to a command in its chat (``quote``: as a reply to it)."""
    await message.reply_text(
        text, parse_mode=ParseMode.HTML if html else None, reply_markup=markup, do_quote=quote
    )


async def edit_text(message: Message, text: str, markup: InlineKeyboardMarkup | None) -> None:
    """Show HTML ``text`` (and ``markup``) in a message the bot sent, instead of its own."""
    await message.edit_text(text, parse_mode=ParseMode.HTML, reply_markup=markup)


async def edit_tapped(query: CallbackQuery, text: str) -> None:
    """Replace the text of the message whose button was tapped (its buttons go with it)."""
    await query.edit_message_text(text)


async def send_document(
    bot: Bot,
    chat_id: int,
    content: bytes,
    filename: str,
    *,
    thread_id: int | None,
    reply_to: int | None,
    caption: str | None = None,
) -> None:
    """A file, with an HTML ``caption`` under it if given."""
    await bot.send_document(
        chat_id,
        content,
        filename=filename,
        caption=caption,
        parse_mode=ParseMode.HTML if caption else None,
        message_thread_id=thread_id,
        reply_to_message_id=reply_to,
        allow_sending_without_reply=True,
    )


async def answer(
    query: CallbackQuery, text: str | None, alert: bool, url: str | None = None
) -> None:
    """Answer a tap: silently (``text`` None), or with a short text or an alert; ``url``
    (a ``t.me/<bot>?start=`` link) opens the bot's private chat for him."""
    await query.answer(text, show_alert=alert, url=url)
    metrics.answered(text, alert)


async def member(bot: Bot, chat_id: int, user_id: int) -> ChatMember:
    """``user_id``'s membership of the group ``chat_id``."""
    return await bot.get_chat_member(chat_id, user_id)


async def set_menu_button(bot: Bot, chat_id: int, text: str, url: str) -> None:
    """The menu button of the private chat ``chat_id``: ``text``, opening the Mini App at
    ``url``."""
    button = {"type": "web_app", "text": text, "web_app": {"url": url}}
    await _call(bot, "setChatMenuButton", {"chat_id": chat_id, "menu_button": button})


async def set_commands(bot: Bot, commands: Sequence[BotCommand], lang: str | None) -> None:
    """The command menu for users of language ``lang`` (None: every other language)."""
    await bot.set_my_commands(commands, language_code=lang)


async def set_webhook(bot: Bot, url: str, allowed_updates: Sequence[str], secret: str) -> None:
    """Ask Telegram to post our updates to ``url``, each with ``secret`` in its header."""
    await bot.set_webhook(url, allowed_updates=list(allowed_updates), secret_token=secret)
