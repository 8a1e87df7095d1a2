"""The standings as text: a group's board, a person's figures, who moved up.

Numbers stand after a colon ("games: 5") so that every phrase reads right for any number
in every language without a plural form per figure.
"""

from __future__ import annotations

import json

from bot.core import callbacks
from bot.core.callbacks import Action
from bot.core.i18n import Markup, t
from bot.core.screen import Button, Screen
from bot.screens import registry
from bot.screens.render import Ctx, percent
from bot.tables.stats.count import MIN_GAMES, Moved
from bot.tables.stats.keys import KINDS
from bot.tables.stats.standings import Line
from engine.ratings import trend

BOARD_GAME_ID = "0000"  # a board's buttons name no game; the address needs one


def _name(line: Line) -> str:
    return line.name or "—"


def _rating(line: Line) -> str:
    return f"{line.rating.shown:.1f}" if line.rating is not None else "—"


def moved_lines(ctx: Ctx, moved: Moved) -> list[str]:
    """The result message's line on who moved up on the group's board (none: nothing)."""
    names = []
    for uid, place in moved.up:
        seat = ctx.table.seat_of(uid)
        names.append(ctx.t("stats.place", name=ctx.name(seat), place=place))
    return [ctx.t("stats.moved_up", names=Markup(", ").join(names))] if names else []


def standings_button(ctx: Ctx) -> Button:
    kind = ctx.table.kind or KINDS[0]
    return Button(
        ctx.t("btn.standings"), ctx.cb(Action.STANDINGS, "p" + registry.GAMES[kind].letter)
    )


def board(lang: str, chat: int, kind: str, lines: list[Line]) -> Screen:
    """A group's top players at one game, with a button per game to switch."""
    game = registry.GAMES[kind]
    text = [t(lang, "stats.board_title", game=t(lang, game.names.title))]
    if not lines:
        text.append(t(lang, "stats.board_empty", min=MIN_GAMES))
    for place, line in enumerate(lines, 1):
        text.append(
            t(
                lang,
                game.standings.row,
                place=place,
                name=_name(line),
                rating=_rating(line),
                n=line.n,
                pct=percent(line.get(game.standings.share), line.n),
            )
        )
    text.append(t(lang, "stats.board_note", min=MIN_GAMES))
    address = callbacks.address(chat, None, BOARD_GAME_ID)
    # The game shown is marked, and tapping it changes nothing (an edit to the same text
    # is refused by Telegram).
    buttons = tuple(
        Button(
            ("• " if other == kind else "") + t(lang, registry.GAMES[other].names.title),
            callbacks.at(
                address,
                Action.STANDINGS,
                ("=" if other == kind else "s") + registry.GAMES[other].letter,
            ),
        )
        for other in KINDS
    )
    return Screen("\n".join(text), (buttons,))


def _game_block(lang: str, kind: str, line: Line) -> list[str]:
    rating = t(lang, "stats.rating", rating=_rating(line), trend=trend(line.trend)).rstrip()
    game = registry.GAMES[kind]
    streak = t(lang, game.standings.streak, cur=line.get("cur"), best=line.get("best"))
    return [
        f"<b>{t(lang, game.names.title)}</b>",
        game.standings.figures(lang, line),
        rating,
        streak,
    ]


def _variant_name(lang: str, kind: str, variant: str) -> str | None:
    """The name of the variant a person's figures were counted in (its options' JSON;
    None: options the game no longer has)."""
    spec = registry.GAMES[kind].spec
    try:
        stored = json.loads(variant)
        options = {k: v for k, v in stored.items() if k in spec.options.model_fields}
        return registry.GAMES[kind].names.naming(lang, spec.options.model_validate(options))
    except (ValueError, AttributeError):
        return None


def _variant_lines(lang: str, kind: str, found: dict[str, Line]) -> list[str]:
    """His figures in each variant of the game he played, most played first; variants
    named alike (apart only in a setting the name leaves out) count together. None when
    every game he played bears the game's own name (a game without variants)."""
    game = registry.GAMES[kind]
    merged: dict[str, Line] = {}
    for variant, line in found.items():
        name = _variant_name(lang, kind, variant)
        if name is not None:
            merged[name] = merged[name].plus(line) if name in merged else line
    if set(merged) <= {t(lang, game.names.title)}:
        return []
    ordered = sorted(merged.items(), key=lambda item: (-item[1].n, item[0]))
    return [f"· {name}: {game.standings.figures(lang, line)}" for name, line in ordered]


def mine(
    lang: str,
    overall: dict[str, Line],
    vs: dict[tuple[str, str], Line],
    variants: dict[str, dict[str, Line]],
) -> Screen:
    """A person's own figures across all groups (split by variant), and against the
    computer per level."""
    text: list[str] = [t(lang, "stats.mine_title")]
    if not overall and not vs:
        text.append(t(lang, "stats.nothing"))
    for kind, line in overall.items():
        split = _variant_lines(lang, kind, variants.get(kind, {}))
        text.append("\n".join(_game_block(lang, kind, line) + split))
    if vs:
        rows: list[str] = [t(lang, "stats.vs_computer")]
        for (kind, level), line in vs.items():
            game = registry.GAMES[kind]
            where = t(
                lang,
                "stats.vs_level",
                game=t(lang, game.names.title),
                level=t(lang, registry.LEVELS[level]),
            )
            rows.append(f"{where}: {game.standings.figures(lang, line)}")
        text.append("\n".join(rows))
    return Screen("\n\n".join(text))


def his(
    lang: str, name: str, lines: dict[str, Line], h2h: dict[str, tuple[int, int, int]]
) -> Screen:
    """Someone's figures in this group, with his record against the asker."""
    text: list[str] = [t(lang, "stats.his_title", name=name)]
    if not lines:
        text.append(t(lang, "stats.nothing"))
    for kind, line in lines.items():
        block = _game_block(lang, kind, line)
        n, won, lost = h2h.get(kind, (0, 0, 0))
        if n:
            block.append(t(lang, "stats.h2h", n=n, name=name, his=won, yours=lost))
        text.append("\n".join(block))
    return Screen("\n\n".join(text))
