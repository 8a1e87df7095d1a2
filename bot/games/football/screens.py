"""Belarusian football on screen, rendered only from its view
(:class:`engine.games.football.view.FootballView`).

Each player sees the field from his own side: his row at the bottom, his left on the
left. Views use absolute coordinates (row 0 and column 0 are A's), so for seat 1 (B) both
rows and columns are mirrored here, and only here; moves keep absolute columns. The group
sees the field from A's side.
"""

from __future__ import annotations

from typing import Any

from bot.core.callbacks import Action
from bot.core.i18n import Markup, t
from bot.core.screen import Button, rows_of
from bot.screens.render import Ctx
from bot.tables.stats.standings import Line
from engine.games.football.rules import HOME, ahead
from engine.games.football.view import FootballView

_ARROWS = {-1: "↖", 0: "⬆", 1: "↗"}
_HIDDEN = "▒▒"


def _order(seat: int | None) -> tuple[list[int], list[int]]:
    """Rows top to bottom and columns left to right as ``seat`` sees them."""
    if seat == 1:
        return [0, 1, 2, 3], [3, 2, 1, 0]
    return [3, 2, 1, 0], [0, 1, 2, 3]


def _cell(view: FootballView, ctx: Ctx, row: int, col: int) -> str:
    card = view.field[row][col]
    inner = (ctx.card(card) if card else _HIDDEN).rjust(3)
    if view.ball_at == [row, col]:
        return f"[{inner}]"
    if card and not view.face_up[row][col]:
        return f"({inner})"  # known to this reader only: his own face-down row
    return f" {inner} "


def _keeper(view: FootballView, ctx: Ctx, seat: int) -> str:
    card = view.keepers[seat]
    shown = ctx.card(card) if card else _HIDDEN
    if card and not view.keepers_up[seat]:
        shown = f"({shown})"
    return ctx.t("football.keeper", name=ctx.name(seat), card=shown)


def field(view: FootballView, ctx: Ctx) -> str:
    """The field as a monospace block, from the reader's side (the group: A's side)."""
    rows, cols = _order(view.seat)
    me = 1 if view.seat == 1 else 0
    lines = [_keeper(view, ctx, 1 - me)]
    for row in rows:
        lines.append("".join(_cell(view, ctx, row, col) for col in cols))
    lines.append(_keeper(view, ctx, me))
    return "<pre>" + "\n".join(lines) + "</pre>"


def scores(view: FootballView, ctx: Ctx) -> str:
    goals = [len(g) for g in view.goals]
    lines = [
        ctx.t("football.goals", a=ctx.name(0), b=ctx.name(1), ga=goals[0], gb=goals[1]),
        ctx.t("football.piles", a=ctx.name(0), b=ctx.name(1), pa=view.piles[0], pb=view.piles[1]),
    ]
    if view.ball is not None and view.turn is not None:
        where = "football.ball_field" if view.ball_at else "football.ball_hand"
        lines.append(ctx.t(where, card=ctx.card(view.ball), name=ctx.name(view.turn)))
    return "\n".join(lines)


def public(view: FootballView, ctx: Ctx) -> str:
    return field(view, ctx) + "\n" + scores(view, ctx)


def group(view: FootballView, ctx: Ctx) -> str:
    """The group's board: the field and score, with the legend while the game runs."""
    board = public(view, ctx)
    if ctx.table.phase == "playing":
        board += "\n" + ctx.t("football.legend")
    return board


def figures(lang: str, line: Line) -> str:
    """One person's football counters."""
    return t(
        lang,
        "stats.football_figures",
        n=line.n,
        won=line.get("won"),
        draw=line.get("draw"),
        lost=line.get("lost"),
        gf=line.get("gf"),
        ga=line.get("ga"),
    )


def status(view: FootballView, ctx: Ctx) -> str:
    """Whose turn it is, or how the game ended, in the group's words."""
    if view.phase == "setup":
        marks = [
            ctx.t("football.setup_state", name=ctx.name(s), mark="✅" if done else "⏳")
            for s, done in enumerate(view.setup_done)
        ]
        return ctx.t("football.setting_up", players=Markup(", ").join(marks))
    if view.result is not None:
        goals = ":".join(str(g) for g in view.result.goals)
        if view.result.winner is None:
            return ctx.t("football.result_draw", goals=goals)
        return ctx.t("football.result_win", name=ctx.name(view.result.winner), goals=goals)
    return ctx.t("common.turn", name=ctx.name(view.turn))


def _setup_screen(
    view: FootballView, ctx: Ctx, picks: list[int]
) -> tuple[str, list[tuple[Button, ...]]]:
    hand = view.hand
    picked = [hand[i] for i in picks]
    lines = [ctx.t("football.setup_hand", cards=ctx.cards(hand))]
    if picked:
        lines.append(ctx.t("football.setup_keeper", card=ctx.card(picked[0])))
    if len(picked) > 1:
        lines.append(ctx.t("football.setup_row", cards=ctx.cards(picked[1:])))
    rows: list[tuple[Button, ...]] = []
    if len(picks) == len(hand):
        lines.append(ctx.t("football.setup_confirm"))
        rows.append(
            (
                Button(ctx.t("btn.confirm"), ctx.cb(Action.SETUP, "c")),
                Button(ctx.t("btn.reset"), ctx.cb(Action.SETUP, "r")),
            )
        )
        return "\n".join(lines), rows
    ask = "football.setup_ask_keeper" if not picks else "football.setup_ask_row"
    lines.append(ctx.t(ask, n=len(picks)))
    free = [
        Button(ctx.card(card), ctx.cb(Action.SETUP, str(i)))
        for i, card in enumerate(hand)
        if i not in picks
    ]
    rows.extend(rows_of(free, 5))
    if picks:
        rows.append((Button(ctx.t("btn.reset"), ctx.cb(Action.SETUP, "r")),))
    return "\n".join(lines), rows


def _target(view: FootballView, record: dict[str, Any]) -> tuple[int, int]:
    """The field cell (row, column) an enter or advance move steps the ball onto."""
    seat = view.seat or 0
    if "enter" in record:
        return HOME[seat], record["enter"]
    assert view.ball_at is not None
    return ahead(seat, view.ball_at[0]), record["advance"]


def _move_label(view: FootballView, ctx: Ctx, record: dict[str, Any]) -> tuple[int, str]:
    """(position left to right as the reader sees it, label) of an enter/advance move."""
    seat = view.seat or 0
    _, cols = _order(seat)
    row, col = _target(view, record)
    card = view.field[row][col]
    if "enter" in record:
        return cols.index(col), ctx.card(card)
    assert view.ball_at is not None
    delta = (col - view.ball_at[1]) * (-1 if seat == 1 else 1)
    return cols.index(col), f"{_ARROWS[delta]} {ctx.card(card) if card else '?'}"


def played(view: FootballView, record: dict[str, Any]) -> dict[str, Any]:
    """A play move steps the ball onto a field card: the Mini App plays it by a tap on
    that ``cell`` ([row, column], absolute as in the view)."""
    return {"cell": list(_target(view, record))}


def hand(
    view: FootballView,
    ctx: Ctx,
    picks: list[int],
    legal: list[tuple[str, dict[str, Any]]] | None,
    active: bool = True,
) -> tuple[str, list[tuple[Button, ...]]]:
    """A player's private screen, and his choices as buttons.

    While he waits it holds only his secrets (row and goalkeeper) and the score, so that it
    changes rarely: the play is in the group. When he is to act, and at the end, it shows
    the whole field from his side. ``picks``: his set-up in progress; ``legal``: (token,
    record) of his legal moves when he is to act, else None; ``active``: False once the
    game was stopped.
    """
    assert view.seat is not None
    rows: list[tuple[Button, ...]] = []
    if not active or view.phase == "finished":
        parts = [field(view, ctx), scores(view, ctx)]
        if active:
            parts.append(status(view, ctx))
    elif view.phase == "setup" and not view.setup_done[view.seat]:
        text, rows = _setup_screen(view, ctx, picks)
        parts = [text]
    elif view.phase == "setup":
        parts = [alert(view, ctx), ctx.t("football.setup_wait")]
    elif legal:
        labelled = sorted((*_move_label(view, ctx, rec), token) for token, rec in legal)
        rows = [tuple(Button(label, ctx.move(token)) for _, label, token in labelled)]
        ask = "football.ask_enter" if "enter" in legal[0][1] else "football.ask_advance"
        parts = [field(view, ctx), scores(view, ctx), ctx.t(ask, card=ctx.card(view.ball))]
    else:
        goals = [len(g) for g in view.goals]
        parts = [
            alert(view, ctx),
            ctx.t("football.goals", a=ctx.name(0), b=ctx.name(1), ga=goals[0], gb=goals[1]),
            ctx.t("common.waiting", name=ctx.name(view.turn)),
        ]
    return "\n".join(parts), rows


def alert(view: FootballView, ctx: Ctx) -> str:
    """The reader's secret cards in one short line (the group's "My cards" alert)."""
    assert view.seat is not None
    if view.hand:
        return ctx.t("football.alert_hand", cards=ctx.cards(view.hand))
    _, cols = _order(view.seat)
    row = [view.field[HOME[view.seat]][c] for c in cols]
    return ctx.t(
        "football.alert_row",
        cards=ctx.cards([c for c in row if c]),
        keeper=ctx.card(view.keepers[view.seat]),
    )
