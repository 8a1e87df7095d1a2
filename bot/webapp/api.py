"""What the page shows and what it may do, built exactly as the messages are.

A reader's picture comes from the engine's views only: ``game.view(seat)`` for a player
(his hand, the dummy's for its controller), ``game.view(None)`` for anyone else. The moves
it offers are the buttons of his hand message (:func:`bot.screens.views.hand_screen`), with their
callback data; a move from the page is that callback data, run through the handler a tap
on the button runs (:mod:`bot.handlers.play`), with the user id of the page's session, so it
meets the same checks (game id, position stamp, player to act, engine) and, when refused,
the same short reason.
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any

from pydantic import BaseModel
from telegram import CallbackQuery, User
from telegram.ext import CallbackContext, ContextTypes

from bot.core import callbacks
from bot.core.callbacks import STAMP_LEN, Action, BadCallback
from bot.core.i18n import by_category, faces, lang_of, plain
from bot.core.keys import table_key
from bot.core.models import Table
from bot.core.services import services
from bot.core.store import Snapshot
from bot.handlers import play
from bot.screens import registry, views
from bot.service.taps import Origin, Tap
from bot.tables import games
from bot.webapp.auth import Viewer

# The hand message's actions a page may send: a move, a set-up step, "I'm back".
_HANDLERS: dict[Action, Callable[[Tap, ContextTypes.DEFAULT_TYPE], Awaitable[None]]] = {
    Action.MOVE: play.on_move,
    Action.SETUP: play.on_setup,
    Action.BACK: play.on_back,
}
# The page's own words (everything else it shows comes rendered from the catalogues; a
# game's drawing adds its own, Page.words).
_WORDS = {
    "hand": "webapp.hand",
    "spectator": "webapp.spectator",
    "turn_left": "webapp.turn_left",
    "offline": "webapp.offline",
    "gone": "webapp.gone",
    "expired": "webapp.expired",
    "card_back": "webapp.card_back",
    "cancel": "webapp.cancel",
}
# Words with a number, sent in every plural form of the language (the page picks one).
_COUNTED = {"cards": "webapp.cards"}
# A card's spoken name (its accessible name on the page): the pattern, each rank's name,
# each suit's.
_RANKS = {
    "2": "card.rank.2",
    "3": "card.rank.3",
    "4": "card.rank.4",
    "5": "card.rank.5",
    "6": "card.rank.6",
    "7": "card.rank.7",
    "8": "card.rank.8",
    "9": "card.rank.9",
    "10": "card.rank.10",
    "J": "card.rank.J",
    "Q": "card.rank.Q",
    "K": "card.rank.K",
    "A": "card.rank.A",
}
_SUITS = {"S": "card.suit.S", "H": "card.suit.H", "D": "card.suit.D", "C": "card.suit.C"}
_TAG = re.compile(r"<[^>]+>")


@cache
def _words(lang: str, kind: str) -> dict[str, str | dict[str, str]]:
    keys = {**_WORDS, **registry.entry(kind).page.words}
    words: dict[str, str | dict[str, str]] = {word: plain(lang, key) for word, key in keys.items()}
    return words | {word: by_category(lang, key) for word, key in _COUNTED.items()}


@cache
def _names(lang: str) -> dict[str, Any]:
    """What the page names a card by, for a screen reader: "seven of hearts"."""
    return {
        "card": plain(lang, "card.name", rank="{rank}", suit="{suit}"),  # the page fills them
        "ranks": {rank: plain(lang, key) for rank, key in _RANKS.items()},
        "suits": {suit: plain(lang, key) for suit, key in _SUITS.items()},
    }


def unmark(text: str) -> str:
    """A rendered catalogue line without its HTML: the page sets it as text."""
    return html.unescape(_TAG.sub("", text))


def table_of(payload: str | None) -> tuple[str, str] | None:
    """(table key, game id) named by a page's table parameter (a deep-link payload)."""
    parsed = callbacks.parse_payload(payload)
    if parsed is None:
        return None
    chat, thread, game_id = parsed
    return table_key(chat, thread), game_id


# The data-move token of an action that is not a game move (docs/webapp.md): set-up
# steps by what they do, "I'm back" by its name.
_SETUP_TOKENS = {"c": "setup:confirm", "r": "setup:reset"}


def token(cb: callbacks.Callback, card: str | None) -> str:
    """What the page marks the element of an action with (``data-move``): a move's token
    as the engine writes it (``a7H``, ``t``), ``setup:<card>`` for a set-up pick,
    ``setup:confirm``, ``setup:reset``, ``back``."""
    if cb.action is Action.MOVE:
        return cb.arg[STAMP_LEN:]
    if cb.action is Action.SETUP:
        return _SETUP_TOKENS.get(cb.arg) or f"setup:{card}"
    return "back"


def _moves(table: Table, seat: int, view: BaseModel) -> list[dict[str, Any]]:
    """The buttons of his hand message that act, each with what the page plays it by (the
    game's screen module says which: :attr:`bot.screens.game.Page.played`; a set-up
    button: the card picked). ``view``: his seat's view, which the caller has made."""
    screen = views.hand_screen(table, seat)
    if screen is None:
        return []
    played = registry.entry(table.kind).page.played
    legal = dict(games.legal_for(games.current(table), seat) or [])
    hand: list[str] = getattr(view, "hand", [])
    moves = []
    for row in screen.rows:
        for button in row:
            if button.data is None or not button.asks:  # a setting of his hand, not a move
                continue
            cb = callbacks.decode(button.data)
            move: dict[str, Any] = {"label": button.text, "data": button.data}
            if cb.action is Action.MOVE and (rec := legal.get(cb.arg[STAMP_LEN:])) is not None:
                move |= played(view, rec)
            elif cb.action is Action.SETUP and cb.arg.isdigit():
                move["card"] = hand[int(cb.arg)]
            move["token"] = token(cb, move.get("card"))
            moves.append(move)
    return moves


def picture(snap: Snapshot, viewer: Viewer, now: float) -> dict[str, Any]:
    """Everything the page draws for ``viewer``: his seat's view if he plays at this
    table, else the public view; never the full state."""
    table = snap.table
    assert table is not None and table.state is not None
    seat = table.seat_of(viewer.user_id)
    lang = table.seats[seat].lang if seat is not None else lang_of(viewer.language_code)
    entry = registry.entry(table.kind)
    ctx = entry.ctx(table, lang)
    view = games.current(table).view(seat)
    status = entry.screens.status(view, ctx)
    if table.phase == "abandoned":
        status = ctx.t("table.stopped")
    actor = games.actor(table)
    left = (
        max(0, round(table.clock.turn_due - now))
        if table.clock.turn_due and actor is not None
        else None
    )
    return {
        "version": snap.version,
        "kind": table.kind,
        "phase": table.phase,
        "lang": lang,
        "seat": seat,
        "names": [s.name for s in table.seats],
        "actor": actor,
        "turn_left": left,
        "view": view.model_dump(mode="json"),
        "status": unmark(status),
        "events": [
            unmark(views.narrate(ctx, entry, kind, data)) for kind, data in table.played.events
        ],
        "moves": _moves(table, seat, view) if seat is not None and table.phase == "playing" else [],
        # his set-up in progress (football's): indexes into his hand, as the chat keeps it
        "picks": list(table.seats[seat].setup) if seat is not None else [],
        "scene": entry.page.scene(view, ctx),
        "faces": faces(lang),
        "words": _words(lang, entry.name),
        "cardnames": _names(lang),
    }


class WebTap(Tap):
    """A tap that came from the page: answered in the HTTP reply rather than by
    ``answerCallbackQuery`` (there is no callback query to answer)."""

    refusal: str | None = None

    async def answer(self, key: str | None = None, *, alert: bool = True, **params: Any) -> None:
        if key is not None and alert:
            self.refusal = plain(self.lang, key, **params)


async def move(application: Any, viewer: Viewer, data: object) -> tuple[int, str | None]:
    """Run the page's move (a button's callback data) as ``viewer``'s tap, at the table
    his session is for: (HTTP status, the refusal's text or None when it was applied)."""
    lang = lang_of(viewer.language_code)
    try:
        cb = callbacks.decode(data)
    except BadCallback:
        return 400, plain(lang, "tap.bad")
    handler = _HANDLERS.get(cb.action)
    if handler is None:
        return 400, plain(lang, "tap.bad")
    bound = table_of(viewer.table)
    if bound is None or bound[0] != table_key(cb.chat_id, cb.thread_id):
        return 403, plain(lang, "tap.bad")  # his session is for another table
    if not viewer.seated:  # a spectator: refused as the table would, without touching it
        return 409, plain(lang, "tap.not_player")
    user = User(viewer.user_id, viewer.first_name, False, language_code=viewer.language_code)
    # A fresh id: the table remembers applied taps by it (a page request is not retried
    # by Telegram; the position stamp refuses the same move sent twice).
    query = CallbackQuery(f"w{secrets.token_hex(8)}", user, "webapp", data=str(data))
    tap = WebTap(query, cb, user, lang, Origin.of(query, cb.chat_id))
    await handler(tap, CallbackContext(application))
    return (409, tap.refusal) if tap.refusal else (200, None)


async def load(application: Any, key: str) -> Snapshot:
    """The table a page is shown: only as a replica holds it (a version a failover could
    take back would go back on the page, its buttons for a position gone); raises
    :class:`bot.core.replicas.Unconfirmed` when no replica confirmed it in time (the
    page is answered 503 and asks again: :mod:`bot.webapp.page`, :mod:`bot.webapp.streams`)."""
    return await services(application).store.confirmed(key)


async def admission(application: Any, key: str) -> Snapshot:
    """The table a session is admitted to, read as the primary has it (not waiting for a
    replica, unlike :func:`load`): admission only decides who may look, and shows
    nothing; a move is checked by the table itself (a seat a failover took back refuses
    it), and what the page shows is read by :func:`load`. So a session opens or renews
    while no replica confirms reads, and its page is told so by its picture's 503."""
    return await services(application).store.load(key)
