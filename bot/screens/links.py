"""Where the messages open the Mini App: a button on each hand message and one on the
group's table, each opening the same page, which shows whoever opens it his own seat if
he plays at that table and the public view otherwise (:func:`bot.webapp.api.picture`).
Only when the operator configured the page (``WEBAPP_URL``, ``WEBAPP_NAME``).

Telegram takes a Mini App button (``web_app``) in a private chat only; in a group the page
opens from its direct link, ``https://t.me/<bot>/<app>?startapp=<parameter>`` (the app
registered with @BotFather under ``WEBAPP_NAME``), whose parameter Telegram hands the page
as ``tgWebAppStartParam`` in its address and as ``start_param`` in its signed
``initData``. The parameter is the table's deep-link payload: letters, digits, ``_`` and
``-``, as Telegram allows there."""

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


def _direct(settings: Settings, table: Table, bot_username: str) -> str | None:
    """The page's direct link to ``table``, when the operator registered its name."""
    if not settings.http.webapp_name or not bot_username:
        return None
    return f"https://t.me/{bot_username}/{settings.http.webapp_name}?startapp={_param(table)}"


def hand(
    screen: Screen,
    settings: Settings,
    table: Table,
    seat: int,
    *,
    in_group: bool = False,
    bot_username: str = "",
) -> Screen:
    """His hand message, with a button that opens the page on his view of the table: a
    Mini App button in his private chat (``WEBAPP_URL``), else the direct link."""
    if table.phase not in _LIVE or not (settings.http.webapp_url or settings.http.webapp_name):
        return screen  # no page configured: no button, and no text to look up
    text = t(table.seats[seat].lang, "webapp.open")
    if not in_group and settings.http.webapp_url:
        button = Button(text, web_app=f"{settings.http.webapp_url}?t={_param(table)}")
    elif url := _direct(settings, table, bot_username):
        button = Button(text, url=url)
    else:
        return screen
    return replace(screen, rows=(*screen.rows, (button,)))


def group(screen: Screen, settings: Settings, table: Table, bot_username: str) -> Screen:
    """The group's table, with the direct link: one tap opens the table for anyone."""
    url = _direct(settings, table, bot_username)
    if url is None or table.phase not in _LIVE:
        return screen
    return replace(
        screen, rows=(*screen.rows, (Button(t(table.lobby.lang, "webapp.open"), url=url),))
    )
