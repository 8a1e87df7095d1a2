"""The two service messages of a group's upgrade to a supergroup (bot.service.migration)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.service.migration import follow


async def on_migrate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Either of the two service messages of an upgrade."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id:
        await follow(context, message.chat.id, message.migrate_to_chat_id)
    elif message.migrate_from_chat_id:
        await follow(context, message.migrate_from_chat_id, message.chat.id)
