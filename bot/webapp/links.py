"""Where the messages open the Mini App: a button on each hand message (the player's own
view of that table), a link on the group's table (the public view, for spectators).
Both only when the operator configured the page (``WEBAPP_URL``, ``WEBAPP_NAME``)."""

from __future__ import annotations

from dataclasses import replace

from bot.core import callbacks
from bot.core.config import Settings
from bot.core.i18n import t
from bot.core.models import Table
from bot.core.screen import Button, Screen

_LIVE = ("playing", "finished")


def _param(table: Table) -> str:
    return callbacks.payload(table.chat_id, table.thread_id, table.game_id)


def hand(
    screen: Screen,
    settings: Settings,
    table: Table,
    seat: int,
    *,
    in_group: bool = False,
    bot_username: str = "",
) -> Screen:
    """His hand message, with a button that opens the page on his view of the table. In
    the group (an ephemeral hand) Telegram takes no Mini App button: the page's direct
    link opens it there, and the page shows the viewer his own seat's view."""
    if table.phase not in _LIVE:
        return screen
    lang = table.seats[seat].lang
    if not in_group and settings.webapp_url:
        button = Button(t(lang, "webapp.open"), web_app=f"{settings.webapp_url}?t={_param(table)}")
    elif in_group and settings.webapp_name and bot_username:
        url = f"https://t.me/{bot_username}/{settings.webapp_name}?startapp={_param(table)}"
        button = Button(t(lang, "webapp.open"), url=url)
    else:
        return screen
    return replace(screen, rows=(*screen.rows, (button,)))


def group(screen: Screen, settings: Settings, table: Table, bot_username: str) -> Screen:
    """The group's table, with a direct Mini App link to its public view."""
    if not settings.webapp_name or not bot_username or table.phase not in _LIVE:
        return screen
    url = f"https://t.me/{bot_username}/{settings.webapp_name}?startapp={_param(table)}"
    button = Button(t(table.lang, "webapp.watch"), url=url)
    return replace(screen, rows=(*screen.rows, (button,)))
