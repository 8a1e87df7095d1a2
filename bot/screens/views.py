"""Which screen each reader gets for a table: the group message and every hand message.

Game screens come from the engine's views only: ``game.view(None)`` for the group,
``game.view(seat)`` for a seat's hand, plus that seat's own legal moves when he is to act.
"""

from __future__ import annotations

import re
from typing import Any

from bot.core import callbacks
from bot.core.callbacks import Action
from bot.core.i18n import Markup
from bot.core.models import Table
from bot.core.screen import Button, Screen
from bot.screens import registry, render_lobby, render_stats
from bot.screens.game import BotGame
from bot.screens.render import Ctx
from bot.tables import games
from bot.tables.stats.standings import moved_of

# The table's own events (bot.service.turns), whatever its game.
TABLE_EVENTS = {
    "seat_timeout": "event.seat_timeout",
    "seat_away": "event.seat_away",
    "seat_back": "event.seat_back",
    "computer_stalled": "event.computer_stalled",
    "hand_private": "event.hand_private",
    "hand_wait": "event.hand_wait",
}


def narrate(ctx: Ctx, game: BotGame, kind: str, data: dict[str, Any]) -> Markup:
    """One event in words: ``game``'s (by its kind, and reason if it has one) or the
    table's own."""
    reason = data.get("reason")
    name = f"{kind}.{reason}" if isinstance(reason, str) else kind
    key = game.texts.events.get(name) or TABLE_EVENTS[name]
    return ctx.t(key, **ctx.params(data))


def series_line(ctx: Ctx, game: BotGame) -> str:
    table = ctx.table
    if not table.series.games:
        return ""
    score = table.series.score
    scores = ", ".join(
        f"{ctx.name(i)} {score.get(str(s.user_id), 0)}" for i, s in enumerate(table.seats)
    )
    return ctx.t(game.names.series, games=table.series.games, scores=scores)


def group_screen(table: Table, bot_username: str) -> Screen:
    """The group's message; a finished game counted in the group's standings says who
    moved up on its board with it (bot.tables.stats)."""
    if table.phase == "pick":
        return render_lobby.picker(registry.ctx(table, table.lobby.lang))
    game = registry.entry(table.kind)
    ctx = game.ctx(table, table.lobby.lang)
    if table.phase == "lobby":
        return render_lobby.lobby(ctx, game, bot_username)
    if table.state is None:  # stopped before a game was dealt
        return Screen(ctx.t("lobby.closed"))
    view = games.current(table).view(None)
    lines = [
        f"<b>{game.variant(ctx.lang, table.lobby.settings)}</b>",
        game.screens.group(view, ctx),
    ]
    if table.played.events:
        lines.append("\n".join("• " + narrate(ctx, game, k, d) for k, d in table.played.events))
    if table.phase == "abandoned":
        lines.append(ctx.t("table.stopped"))
    else:
        lines.append("➡️ " + game.screens.status(view, ctx))
    series = series_line(ctx, game) if table.phase != "playing" else ""
    if series:
        lines.append(series)
    moved = moved_of(table)
    if moved is not None and table.phase == "finished":
        lines += render_stats.moved_lines(ctx, moved)
    if table.lobby.notice and table.phase != "playing":  # e.g. the record could not be posted
        lines.append("⚠️ " + ctx.t(table.lobby.notice))
    rows: list[tuple[Button, ...]] = []
    if table.phase == "playing":
        _who_is_missing(ctx, bot_username, lines, rows)
    elif table.phase == "finished":
        rows.append(
            (
                Button(ctx.t("btn.again"), ctx.cb(Action.AGAIN)),
                Button(ctx.t("btn.record"), ctx.cb(Action.RECORD)),
            )
        )
        if moved is not None:
            rows.append((render_stats.standings_button(ctx),))
    else:
        rows.append((Button(ctx.t("btn.record"), ctx.cb(Action.RECORD)),))
    return Screen("\n\n".join(lines), tuple(rows))


def people(table: Table) -> list[int]:
    """The seats of people (not computers), in seat order."""
    return [i for i, seat in enumerate(table.seats) if seat.computer is None]


def hand_query(table: Table) -> str:
    """The inline query that names an inline table (its deep-link payload): its answer is
    the asker's hand and moves there (bot.screens.inline)."""
    return callbacks.payload(table.chat_id, table.thread_id, table.game_id)


def _who_is_missing(
    ctx: Ctx, bot_username: str, lines: list[str], rows: list[tuple[Button, ...]]
) -> None:
    """A game under way: the group's lines on who is away and whose hand has nowhere to
    go, with the buttons that bring it (My cards, the private chat's link)."""
    table = ctx.table
    gone = [i for i, s in enumerate(table.seats) if s.away]
    if gone:
        lines.append("💤 " + ctx.t("table.away", names=", ".join(ctx.name(i) for i in gone)))
    # whose hand has nowhere to go until he taps "My cards" (or opens the private chat)
    closed = [i for i, s in enumerate(table.seats) if not s.reach.dm_ok and not in_group(table, i)]
    unseen = [i for i in closed if table.seats[i].reach.place == "group"]
    if unseen:
        names = ", ".join(ctx.name(i) for i in unseen)
        lines.append("🃏 " + ctx.t("table.tap_cards", names=names))
    away = [i for i in closed if i not in unseen]
    if away:
        names = ", ".join(ctx.name(i) for i in away)
        lines.append("⚠️ " + ctx.t("table.open_private", names=names))
    if table.inline is not None:  # his cards and moves: his own inline query's answer
        rows.append((Button(ctx.t("btn.inline_hand"), inline_query=hand_query(table)),))
    elif not table.private:  # his cards, sent anew to him alone, whatever became of them
        rows.append((Button(ctx.t("btn.my_cards"), ctx.cb(Action.CARDS)),))
    if away and bot_username:
        url = callbacks.deep_link(bot_username, table.chat_id, table.thread_id, table.game_id)
        rows.append((Button(ctx.t("btn.open_private"), url=url),))


def in_group(table: Table, seat: int) -> bool:
    """Whether the seat's hand is an ephemeral message in the group now: his choice, and
    the group has not refused it (a private chat's table keeps hands there)."""
    s = table.seats[seat]
    return (
        not table.private and s.computer is None and s.reach.place == "group" and s.reach.group_ok
    )


def parked_screen(table: Table, seat: int) -> Screen:
    """What his hand's other place shows once it lives in one: where his cards are now
    (no buttons: nothing there is live any more)."""
    ctx = Ctx(table, table.seats[seat].lang)
    key = "hand.moved_group" if in_group(table, seat) else "hand.moved_private"
    name = registry.entry(table.kind).variant(ctx.lang, table.lobby.settings)
    return Screen(ctx.t(key, game=name, chat=table.chat_title))


def hand_screen(table: Table, seat: int) -> Screen | None:
    """Seat ``seat``'s private message, in his language: in the lobby the confirmation
    that he is seated (which also finds out whether his private chat takes our messages),
    then his hand."""
    if table.phase not in ("lobby", "playing", "finished", "abandoned"):
        return None
    entry = registry.entry(table.kind)
    ctx = entry.ctx(table, table.seats[seat].lang)
    name = entry.variant(ctx.lang, table.lobby.settings)
    if table.phase == "lobby":
        # a private chat's table (its title is "against the computer") has no group to name
        key = "join.vs_computer" if table.private else "join.private"
        return Screen(ctx.t(key, game=name, chat=table.chat_title))
    if table.state is None:
        return None
    game = games.current(table)
    view = game.view(seat)
    active = table.phase != "abandoned"
    header = ctx.t("hand.header", game=name, chat=table.chat_title)
    legal = games.legal_for(game, seat) if active else None
    text, rows = entry.screens.hand(view, ctx, table.seats[seat].setup, legal, active)
    if not active:
        text += "\n" + ctx.t("table.stopped")
    elif seconds := games.turn_time(table, seat):
        text += "\n" + ctx.t("hand.turn_time", n=seconds)
    if table.phase == "playing" and table.seats[seat].away:
        text += "\n💤 " + ctx.t("hand.away", button=ctx.t("btn.back"))
        rows = [*rows, (Button(ctx.t("btn.back"), ctx.cb(Action.BACK)),)]
    if table.phase == "playing" and not table.private:  # his hand's place, switched
        label = "btn.to_private" if in_group(table, seat) else "btn.to_group"
        rows = [*rows, (Button(ctx.t(label), ctx.cb(Action.PLACE), asks=False),)]
    return Screen(f"{header}\n{text}", tuple(rows))


def alert_text(table: Table, seat: int, lang: str) -> str:
    """A seat's secret cards for the group's "My cards" alert (at most 200 characters)."""
    game = registry.entry(table.kind)
    text = game.screens.alert(games.current(table).view(seat), game.ctx(table, lang))
    return text if len(text) <= 200 else text[:199] + "…"


def record_names(table: Table) -> tuple[str, str]:
    """The finished game's record as a file: its name (the variant in English, as a
    name a file may have, and the game's id: ``perevodnoy-durak-36-cards-<id>.json``)
    and its caption (the variant in the table's language)."""
    game = registry.entry(table.kind)
    words = re.findall(r"[a-z0-9]+", game.variant("en", table.lobby.settings).lower())
    return "-".join([*words, table.game_id]) + ".json", game.variant(
        table.lobby.lang, table.lobby.settings
    )
