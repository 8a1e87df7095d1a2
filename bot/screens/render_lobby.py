"""The group message before a game: the game picker and the lobby (with its settings)."""

from __future__ import annotations

from bot.core import callbacks
from bot.core.callbacks import Action
from bot.core.i18n import LANGUAGES
from bot.core.models import GameSettings, Table
from bot.core.screen import Button, Screen
from bot.screens import registry
from bot.screens.game import BotGame
from bot.screens.render import Ctx
from bot.tables.games import deck_sizes, player_limits


def picker(ctx: Ctx) -> Screen:
    return Screen(
        ctx.t("lobby.pick"),
        tuple(
            (Button(ctx.t(game.names.title), ctx.cb(Action.PICK, game.letter)),)
            for game in registry.GAMES.values()
        ),
    )


def settings(ctx: Ctx) -> list[tuple[str, str]]:
    """Each setting of the table as (its line, its option code for bot.handlers.lobby): the lobby
    shows the lines, the settings keyboard the same texts as buttons that change them."""
    return _settings(ctx, registry.entry(ctx.table.kind))


def _settings(ctx: Ctx, game: BotGame) -> list[tuple[str, str]]:
    """:func:`settings`, of ``game``'s table."""
    table = ctx.table
    s = table.lobby.settings
    items: list[tuple[str, str]] = [(ctx.t("settings.deck", n=s.deck_size), "d")]
    items += game.lobby.settings(ctx)
    turn_time = ctx.t("settings.turn_time", n=s.turn_time) if s.turn_time else None
    items.append((turn_time or ctx.t("settings.no_limit"), "t"))
    items.append((ctx.t("settings.language", name=ctx.t(LANGUAGES[table.lobby.lang])), "l"))
    return items


def seatings(ctx: Ctx) -> list[Button]:
    """What would seat everyone in a lobby too full for its settings, one change each:
    another deck ("d<size>"), or a setting of the game's own (its ``seatings``)."""
    return _seatings(ctx, registry.entry(ctx.table.kind))


def _seatings(ctx: Ctx, game: BotGame) -> list[Button]:
    """:func:`seatings`, of ``game``'s table."""
    table = ctx.table
    n = len(table.seats)
    found: list[Button] = []
    for size in deck_sizes(table):
        other = table.lobby.settings.model_copy(update={"deck_size": size})
        if size != table.lobby.settings.deck_size and _seats(table, other, n):
            found.append(Button(ctx.t("btn.use_deck", n=size), ctx.cb(Action.OPTION, f"d{size}")))
    for code, key in game.lobby.seatings.items():
        other = table.lobby.settings.model_copy(deep=True)
        game.lobby.options[code](other)
        if other != table.lobby.settings and _seats(table, other, n):
            found.append(Button(ctx.t(key), ctx.cb(Action.OPTION, code)))
    return found


def _seats(table: Table, settings: GameSettings, n: int) -> bool:
    low, high = player_limits(table, settings)
    return low <= n <= high


def lobby(ctx: Ctx, game: BotGame, bot_username: str) -> Screen:
    """The lobby of a table of ``game``; with the settings open (the creator's Settings),
    their buttons come in between, and Join, Leave and Start stay for everyone else."""
    table = ctx.table
    chosen = _settings(ctx, game)
    low, high = player_limits(table)
    need = str(low) if low == high else f"{low}–{high}"
    names = ", ".join(ctx.name(i) for i in range(len(table.seats))) or "—"
    lines = [
        ctx.t("lobby.title", game=game.variant(ctx.lang, table.lobby.settings)),
        ctx.t("lobby.players", n=len(table.seats), need=need, names=names),
        " · ".join(line for line, _ in chosen),
    ]
    if table.inline is not None:  # posted via the bot: the cards are inline answers
        lines.append(ctx.t("lobby.inline_note"))
    elif not table.private:  # a group: the cards come here, to each player alone
        lines.append(ctx.t("lobby.group_note"))
        if not table.delivery.bot_admin:
            lines.append(ctx.t("lobby.admin_hint"))
    if table.lobby.notice:
        lines.append("⚠️ " + ctx.t(table.lobby.notice, most=high, n=len(table.seats)))
    rows: list[tuple[Button, ...]] = []
    if not table.private:  # Join and Leave are for groups
        rows.append(
            (
                Button(ctx.t("btn.join"), ctx.cb(Action.JOIN)),
                Button(ctx.t("btn.leave"), ctx.cb(Action.LEAVE)),
            )
        )
    level = ctx.t(registry.LEVELS[game.level(table)])
    rows.append(
        (
            Button(ctx.t("btn.add_computer"), ctx.cb(Action.COMPUTER, "+")),
            Button(ctx.t("btn.remove_computer"), ctx.cb(Action.COMPUTER, "-")),
        )
    )
    rows.append((Button(ctx.t("btn.computer_level", level=level), ctx.cb(Action.COMPUTER, "v")),))
    if table.lobby.show_settings:
        rows.extend((Button(label, ctx.cb(Action.OPTION, code)),) for label, code in chosen)
    toggle = "btn.done" if table.lobby.show_settings else "btn.settings"
    rows.append(
        (
            Button(ctx.t(toggle), ctx.cb(Action.SETTINGS)),
            Button(ctx.t("btn.start"), ctx.cb(Action.START)),
        )
    )
    if table.lobby.notice == "lobby.too_many":
        rows.extend((button,) for button in _seatings(ctx, game))
    if table.lobby.lobby_link and bot_username:
        url = callbacks.deep_link(bot_username, table.chat_id, table.thread_id, table.game_id)
        rows.append((Button(ctx.t("btn.open_private"), url=url),))
    return Screen("\n".join(lines), tuple(rows))
