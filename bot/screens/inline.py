"""What an inline query answers (issue 34): the games to post in any chat, or, for the
query an inline table puts into a player's input field, his hand and his moves there.

An inline table's hands are never messages: each is the answer to its player's own query
(``@bot <table>``), his hand first, then each of his moves as a result of its own, whose
id is the move button's callback data (so that its pick is the same tap as the button
would be: :mod:`bot.handlers.inline`). :func:`bot.core.sender.answer_inline` answers
every query personal and uncached, so that Telegram never shows one player's cards to
another who types the same text.

What a pick posts in the chat is public by construction: a move's line is what the table
itself will say of it (the engine's events of that move, narrated as the table narrates
them), a set-up step says only how far his set-up is, his hand says only that he looked,
and a person who is not seated gets the table's public status.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import replace

from bot.core import callbacks, rules_text
from bot.core.callbacks import Action, BadCallback
from bot.core.i18n import Markup, plain
from bot.core.models import GameSettings, Table
from bot.core.screen import Article, Button, Screen
from bot.screens import registry, render_lobby, views
from bot.tables import games
from engine.base import IllegalMove, MalformedRecord

PAGE = 50  # results a query may answer at once (Telegram's limit); the rest: next_offset
# The first letter of a result id that is no button's callback data (those begin with a
# digit or "-"): a new table (then the game's letter, "g" when posted in a group or "p",
# and the new game's id), the rules
# (then the game's letter), a hand or a watcher's view (then the table's payload).
NEW, RULES, HAND, VIEW = "N", "R", "H", "V"
# What an invitation's buttons carry to open its table: the game's letter, "g" or "p",
# its creator's id, then this and the variant's path.
OPENS = "_"
# The buttons of a hand that a pick plays (a switch of where the hand lives has no
# meaning at an inline table).
PICKED = frozenset({Action.MOVE, Action.SETUP, Action.BACK})
_TAG = re.compile(r"<[^>]+>")


def as_text(markup: str) -> str:
    """Rendered HTML as the plain text a result's title and description show."""
    return html.unescape(_TAG.sub("", markup))


def hand_button(table: Table, lang: str) -> Button:
    """The button under a table's message and every line a pick posts: it puts the query
    that answers with the tapper's hand into his input field."""
    return Button(plain(lang, "btn.inline_hand"), inline_query=views.hand_query(table))


LAST = "*"  # the path of "as he last set it up" (the settings of his last game started)
VARIANTS = 6  # variants of one game offered at most, besides its usual one


def variants(kind: str) -> list[str]:
    """The named variants of a game the list offers, each as the option codes that make
    it from the usual settings ("m.x": no dummy, then transfers), the usual first: every
    set of options one or two of its settings' changes make that the game takes and that
    has a name of its own (bot.screens.game.BotGame.variant)."""
    game = registry.GAMES[kind]
    found: dict[str, str] = {game.variant("en", GameSettings()): ""}
    for first in ("", *game.lobby.options):  # one change, then two
        for code in game.lobby.options:
            made = _made(kind, f"{first}.{code}" if first else code)
            if made is not None and made[0] not in found and len(found) <= VARIANTS:
                found[made[0]] = made[1]
    return list(found.values())


def _made(kind: str, path: str) -> tuple[str, str] | None:
    """(the variant's name, ``path``) of the settings ``path`` makes (None: refused)."""
    game = registry.GAMES[kind]
    settings = GameSettings()
    try:
        for code in path.split("."):
            game.lobby.options[code](settings)
        game.spec.make_options(settings)
    except ValueError:
        return None
    return game.variant("en", settings), path


def invitations(offered: Sequence[tuple[Table, str]]) -> list[Article]:
    """The games to post (one new table each, its creator seated; ``offered``: each with
    its variant's path, :data:`LAST` for his own last settings), then their rules."""
    found: list[Article] = []
    for table, path in offered:
        ctx = registry.ctx(table, table.lobby.lang)
        game = registry.entry(table.kind)
        named = game.variant(table.lobby.lang, table.lobby.settings)
        title = plain(table.lobby.lang, game.names.title) if not path else named
        if path == LAST:
            title = plain(table.lobby.lang, "inline.as_last", game=named)
        where = "g" if table.inline and table.inline.group else "p"
        opening = f"{game.letter}{where}{table.lobby.creator}{OPENS}{path}"
        found.append(
            Article(
                f"{NEW}{game.letter}{where}{table.game_id}{path}",
                title,
                plain(table.lobby.lang, "inline.invite_hint"),
                _carrying(render_lobby.lobby(ctx, game, ""), opening),
            )
        )
    for kind in dict.fromkeys(table.kind for table, _ in offered):
        game = registry.entry(kind)
        table = next(t for t, _ in offered if t.kind == kind)
        text = rules_text.source(game.name, table.lobby.lang)
        if text is not None:
            first = rules_text.messages(text)[0]
            title = plain(
                table.lobby.lang,
                "inline.rules_title",
                game=plain(table.lobby.lang, game.names.title),
            )
            found.append(Article(f"{RULES}{game.letter}", title, "", Screen(first)))
    return found


def _carrying(screen: Screen, opening: str) -> Screen:
    """An invitation, each of its buttons carrying ``opening`` (bot.core.callbacks.invited):
    the first tap on it may come before Telegram reports its pick, and opens its table."""
    rows = tuple(
        tuple(replace(b, data=callbacks.invited(b.data, opening)) if b.data else b for b in row)
        for row in screen.rows
    )
    return Screen(screen.text, rows)


def hand(table: Table, seat: int) -> list[Article]:
    """Seat ``seat``'s answer: his hand (picking it posts only that he looked), then each
    move he may make now, the title in his language and the posted line in the table's."""
    lang = table.seats[seat].lang
    rows = ((hand_button(table, table.lobby.lang),),)
    name = table.seats[seat].name
    looked = Screen(plain(table.lobby.lang, "inline.looked", name=name), rows)
    own = as_text(views.alert_text(table, seat, lang)) if table.state is not None else ""
    first = Article(
        f"{HAND}{views.hand_query(table)}", plain(lang, "inline.hand_title"), own, looked
    )
    screen = views.hand_screen(table, seat)
    asked = _asked(table, seat, lang)
    found = [first]
    for button in (b for row in (screen.rows if screen else ()) for b in row):
        line = _posted(table, seat, button.data) if button.data else None
        if line is not None and button.data is not None:
            result_id = _stamped(table, seat, button.data)
            found.append(Article(result_id, button.text, asked, Screen(line, rows)))
    return found


def _stamped(table: Table, seat: int, data: str) -> str:
    """The result id of the hand button ``data``: a set-up step with the stamp of his
    set-up's position (bot.core.callbacks.setup_stamp), a move as it is (its button
    carries its stamp already)."""
    if callbacks.decode(data).action is not Action.SETUP:
        return data
    hand: list[str] = getattr(games.current(table).view(seat), "hand", [])
    return data + callbacks.SETUP_STAMP + callbacks.setup_stamp(hand, table.seats[seat].setup)


def _asked(table: Table, seat: int, lang: str) -> str:
    """What his hand asks of him now (its last line: "Where does the ball enter?", "Pick
    your goalkeeper"), under each of his moves; the table's status when it asks nothing."""
    game = games.current(table)
    legal = games.legal_for(game, seat)
    ctx = registry.ctx(table, lang)
    text, rows = registry.entry(table.kind).screens.hand(
        game.view(seat), ctx, table.seats[seat].setup, legal, True
    )
    lines = as_text(text).splitlines()
    return lines[-1] if rows and lines else _status(table, lang)


def watching(table: Table, lang: str) -> list[Article]:
    """A person who is not seated: the table's public status, and no cards."""
    status = _status(table, lang) or plain(lang, "inline.no_game")
    posted = Screen(
        _status(table, table.lobby.lang) or status, ((hand_button(table, table.lobby.lang),),)
    )
    about = plain(lang, "inline.watch")
    return [Article(f"{VIEW}{views.hand_query(table)}", status, about, posted)]


def _status(table: Table, lang: str) -> str:
    """The table's public status line in ``lang`` (empty before a game is dealt)."""
    if table.state is None or table.kind is None:
        return ""
    ctx = registry.ctx(table, lang)
    return as_text(registry.entry(table.kind).screens.status(games.current(table).view(None), ctx))


def _posted(table: Table, seat: int, data: str) -> str | None:
    """The line a pick of the hand button ``data`` posts (None: not a button a pick plays)."""
    try:
        cb = callbacks.decode(data)
    except BadCallback:
        return None
    if cb.action not in PICKED:
        return None
    name = table.seats[seat].name
    if cb.action is Action.MOVE:
        return narrated(table, seat, cb.arg[callbacks.STAMP_LEN :])
    if cb.action is Action.BACK:
        return plain(table.lobby.lang, "inline.back", name=name)
    key = {"c": "inline.setup_done", "r": "inline.setup_reset"}.get(cb.arg, "inline.setup_step")
    return plain(table.lobby.lang, key, name=name)


def narrated(table: Table, seat: int, token: str) -> str | None:
    """What the table will say of ``seat``'s move ``token``: the events it makes, played on
    a copy of the table (None: no legal move)."""
    copy = table.model_copy(deep=True)
    game = games.load(copy)
    try:
        events = games.apply_move(copy, game, seat, game.move_from_token(token, seat))
    except (IllegalMove, MalformedRecord):
        return None
    screens = registry.entry(copy.kind)
    ctx = screens.ctx(copy, copy.lobby.lang)
    lines = [views.narrate(ctx, screens, e.kind, e.data) for e in events]
    return str(Markup("\n").join(lines)) if lines else None


def page(results: list[Article], offset: str) -> tuple[list[Article], str]:
    """The results from ``offset`` on, :data:`PAGE` at most, and the offset of the rest
    ("" when there is none)."""
    start = int(offset) if offset.isdigit() else 0
    rest = start + PAGE
    return results[start:rest], str(rest) if rest < len(results) else ""


def your_turn(table: Table, seat: int) -> Screen:
    """His private "your turn" message (bot.service.messages.your_turn): the game and the
    move that waits for him (so that each turn's message is its own), and the switch that
    stops them at this table."""
    ctx = registry.ctx(table, table.seats[seat].lang)
    game = registry.entry(table.kind).variant(ctx.lang, table.lobby.settings)
    text = ctx.t(
        "inline.your_turn",
        game=game,
        n=len(table.played.moves) + 1,
        button=ctx.t("btn.inline_hand"),
    )
    return Screen(text, ((Button(ctx.t("btn.quiet"), ctx.cb(Action.QUIET), asks=False),),))
