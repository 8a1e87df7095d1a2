"""The Record button's document: posted by the delivery after the result, at most once.

Asked for last in a pass (the result it belongs to goes first), at the priority of a
reply (docs/busy.md).
"""

from __future__ import annotations

import logging

from telegram import Bot, error

from bot.core import sender
from bot.core.limiter import retry_after_seconds
from bot.core.models import Table
from bot.core.services import Services
from bot.core.store import Snapshot, Write
from bot.screens import views
from bot.service.messages.outcome import Outcome
from bot.tables.stats.finished import record_document

log = logging.getLogger(__name__)


def record_due(snap: Snapshot) -> bool:
    """A Record tap asked for this game's record and no pass has begun to post it (an
    inline table's goes to each tapper's private chat at once: bot.handlers.inline)."""
    table = snap.table
    if table is None or table.inline is not None:
        return False
    return table.delivery.record_asked and not table.delivery.record_sent


async def send_record(bot: Bot, table: Table, reply_to: int | None, to: int | None = None) -> None:
    """Post the table's game record (docs/records.md) as a JSON document in its chat:
    /record's answer (``reply_to`` the command) and the Record button's; ``to``: in that
    private chat instead (an inline table's, whose chat the bot is not in). Telegram's
    errors are the caller's."""
    name, caption = views.record_names(table)
    await sender.send_document(
        bot,
        table.chat_id if to is None else to,
        record_document(table),
        name,
        thread_id=table.thread_id if to is None else None,
        reply_to=reply_to,
        caption=caption,
    )


async def post_record(svc: Services, bot: Bot, key: str, done: Outcome) -> None:
    """Post the record the Record button asked for, at most once.

    The table says it is sent (``record_sent``) in a commit before the document goes, so
    that a process that dies, or loses its lease, after sending cannot leave it to be
    sent again. The price: a document whose fate is unknown (that process died, or the
    call timed out) counts as posted and may never arrive; /record still hands it out.
    A doubled document would be worse. Flood control (nothing was sent) leaves it asked
    for; any other refusal gives the button back, and the table says so."""
    table = done.snap.table
    assert table is not None
    mine = await _mark_record(svc, key, table.game_id, sent=True)
    if mine is None:  # another pass began it
        return
    try:
        await send_record(bot, mine, None)
    except error.RetryAfter as exc:
        done.later(done.clock() + retry_after_seconds(exc))
        await _mark_record(svc, key, table.game_id, sent=False)
    # (BadRequest is a NetworkError: it goes first)
    except (error.BadRequest, error.Forbidden, error.ChatMigrated) as exc:
        log.info("record for %s refused: %s", table.chat_id, exc)
        await _mark_record(svc, key, table.game_id, sent=False, asked=False)
    except error.NetworkError as exc:  # a timeout: it may have arrived, so it counts as sent
        log.info("record for %s may not have arrived: %s", table.chat_id, exc)
    except error.TelegramError as exc:
        log.warning("record for %s not sent: %s", table.chat_id, exc)
        await _mark_record(svc, key, table.game_id, sent=False, asked=False)


async def _mark_record(
    svc: Services, key: str, game_id: str, *, sent: bool, asked: bool = True
) -> Table | None:
    """Commit the record's progress for ``game_id`` (still that game, still asked for):
    ``sent`` True begins the post (None when another pass began it first); False gives
    it back, and without ``asked`` the result says that the button may be tapped again."""

    def decide(snap: Snapshot) -> tuple[Write, Table | None]:
        table = snap.table
        if table is None or table.game_id != game_id or not table.delivery.record_asked:
            return Write(None), None
        if table.delivery.record_sent == sent:
            return Write(None), None
        table.delivery.record_sent, table.delivery.record_asked = sent, asked
        if not asked:
            table.lobby.notice = "record.refused"
        return Write(table), table

    return (await svc.store.transact(key, decide))[1]
