"""The group message before a game: the game picker and the lobby (with its settings)."""

from __future__ import annotations

from bot import callbacks
from bot.callbacks import Action
from bot.games import lobby_level, player_limits
from bot.render import Ctx
from bot.screen import Button, Screen


def picker(ctx: Ctx) -> Screen:
    return Screen(
        ctx.t("lobby.pick"),
        (
            (Button(ctx.t("game.football"), ctx.cb(Action.PICK, "f")),),
            (Button(ctx.t("game.durak"), ctx.cb(Action.PICK, "d")),),
        ),
    )


def settings_lines(ctx: Ctx) -> list[str]:
    table = ctx.table
    s = table.settings
    lines = [ctx.t("settings.deck", n=s.deck_size)]
    if table.kind == "football":
        lines.append(ctx.t("settings.decks", n=s.decks))
    else:
        lines.append(ctx.t("settings.dummy_plays." + ("on" if s.dummy_plays else "off")))
        lines.append(ctx.t("settings.first_move." + s.first_move))
    lines.append(
        ctx.t("settings.turn_time", n=s.turn_time) if s.turn_time else ctx.t("settings.no_limit")
    )
    lines.append(ctx.t("settings.language", name=ctx.t("language." + table.lang)))
    return lines


def lobby(ctx: Ctx, bot_username: str) -> Screen:
    table = ctx.table
    low, high = player_limits(table)
    need = str(low) if low == high else f"{low}–{high}"
    names = ", ".join(ctx.name(i) for i in range(len(table.seats))) or "—"
    lines = [
        ctx.t("lobby.title", game=ctx.t(f"game.{table.kind}")),
        ctx.t("lobby.players", n=len(table.seats), need=need, names=names),
        " · ".join(settings_lines(ctx)),
    ]
    if table.chat_id < 0:  # a group: the cards come by private message
        lines.append(ctx.t("lobby.private_note"))
    if table.notice:
        lines.append("⚠️ " + ctx.t(table.notice, most=high, n=len(table.seats)))
    rows: list[tuple[Button, ...]] = []
    if table.show_settings:
        s = table.settings
        options = [Button(ctx.t("settings.deck", n=s.deck_size), ctx.cb(Action.OPTION, "d"))]
        if table.kind == "football":
            options.append(Button(ctx.t("settings.decks", n=s.decks), ctx.cb(Action.OPTION, "n")))
        else:
            flag = "on" if s.dummy_plays else "off"
            options.append(
                Button(ctx.t("settings.dummy_plays." + flag), ctx.cb(Action.OPTION, "p"))
            )
            options.append(
                Button(ctx.t("settings.first_move." + s.first_move), ctx.cb(Action.OPTION, "f"))
            )
        time_label = (
            ctx.t("settings.turn_time", n=s.turn_time)
            if s.turn_time
            else ctx.t("settings.no_limit")
        )
        options.append(Button(time_label, ctx.cb(Action.OPTION, "t")))
        options.append(
            Button(
                ctx.t("settings.language", name=ctx.t("language." + table.lang)),
                ctx.cb(Action.OPTION, "l"),
            )
        )
        rows.extend((b,) for b in options)
        rows.append((Button(ctx.t("btn.done"), ctx.cb(Action.SETTINGS)),))
        return Screen("\n".join(lines), tuple(rows))
    if table.chat_id < 0:  # in a private chat only its owner plays, with computers
        rows.append(
            (
                Button(ctx.t("btn.join"), ctx.cb(Action.JOIN)),
                Button(ctx.t("btn.leave"), ctx.cb(Action.LEAVE)),
            )
        )
    level = ctx.t("computer.level." + lobby_level(table))
    rows.append(
        (
            Button(ctx.t("btn.add_computer"), ctx.cb(Action.COMPUTER, "+")),
            Button(ctx.t("btn.remove_computer"), ctx.cb(Action.COMPUTER, "-")),
        )
    )
    rows.append((Button(ctx.t("btn.computer_level", level=level), ctx.cb(Action.COMPUTER, "v")),))
    rows.append(
        (
            Button(ctx.t("btn.settings"), ctx.cb(Action.SETTINGS)),
            Button(ctx.t("btn.start"), ctx.cb(Action.START)),
        )
    )
    if table.notice == "lobby.too_many" and table.settings.deck_size == 36:
        rows.append((Button(ctx.t("btn.use_52"), ctx.cb(Action.OPTION, "d")),))
    if table.lobby_link and bot_username:
        url = callbacks.deep_link(bot_username, table.chat_id, table.thread_id, table.game_id)
        rows.append((Button(ctx.t("btn.open_private"), url=url),))
    return Screen("\n".join(lines), tuple(rows))
