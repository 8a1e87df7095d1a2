"""Playing: the taps on a running game, and handing out its record.

A move reaches the engine and the table only through :func:`bot.tables.games.apply_move`, the
path taps, computer players and turn timeouts share.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.core import sender
from bot.core.callbacks import SETUP_STAMP, STAMP_LEN, setup_stamp, stamp
from bot.core.models import Table
from bot.core.services import services
from bot.screens import registry, views
from bot.service.taps import Reply, Tap, commit, current_table, refuse
from bot.tables import games
from engine.base import IllegalMove, MalformedRecord, SetsUp


def _illegal(exc: IllegalMove, table: Table, lang: str) -> None:
    key = registry.entry(table.kind).illegal[exc.code]
    refuse(key, **registry.ctx(table, lang).params(exc.params))


def _seated(table: Table, tap: Tap) -> int:
    if table.phase != "playing":
        refuse("tap.over")
    seat = table.seat_of(tap.user.id)
    if seat is None:
        refuse("tap.not_player")
    return seat


async def on_move(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """An engine move token from a hand message."""

    position, token = tap.cb.arg[:STAMP_LEN], tap.cb.arg[STAMP_LEN:]

    def change(table: Table) -> Reply | None:
        seat = _seated(table, tap)
        game = games.current(table)  # read only: a refused tap copies nothing
        actor = game.to_act()
        if actor is None or actor.player != seat:
            refuse("illegal.not_your_turn")
        if position != stamp(len(table.played.moves)):
            refuse("tap.superseded")  # offered in an earlier position: a double tap
        try:
            move = game.move_from_token(token, seat)
        except MalformedRecord:
            refuse("tap.bad")
        try:
            games.apply_move(table, game.copy(), seat, move)
        except IllegalMove as exc:
            _illegal(exc, table, tap.lang)
        return None

    await commit(context, tap, change)


async def on_setup(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A set-up, step by step (football's): goalkeeper, then the row from the player's own
    left; the last card goes in by itself; Confirm submits the whole set-up as one move.
    The engine places the cards (:class:`engine.base.SetsUp`). A step picked from an
    inline list carries the position it was offered in, and is refused in any other."""

    def change(table: Table) -> Reply | None:
        seat = _seated(table, tap)
        game = games.load(table)
        hand: list[str] = getattr(game.view(seat), "hand", [])
        if not isinstance(game, SetsUp) or not hand:
            refuse("tap.setup_over")
        picks = list(table.seats[seat].setup)
        arg, stamped, position = tap.cb.arg.partition(SETUP_STAMP)
        if stamped and position != setup_stamp(hand, picks):
            refuse("tap.superseded")  # picked from an inline list of an earlier position
        if arg == "r":
            picks = []
        elif arg == "c":
            if len(picks) != len(hand):
                refuse("tap.bad")
            try:
                games.apply_move(table, game, seat, game.setup_move(seat, picks))
            except IllegalMove as exc:
                _illegal(exc, table, tap.lang)
            picks = []
        elif len(arg) == 1 and arg.isdigit() and int(arg) < len(hand):
            if int(arg) in picks or len(picks) >= len(hand):
                refuse("tap.already_chosen")
            picks = game.complete_setup([*picks, int(arg)])
        else:
            refuse("tap.bad")
        table.seats[seat].setup = picks
        return None

    await commit(context, tap, change)


def _back(tap: Tap) -> Callable[[Table], Reply | None]:
    """A change that only brings the tapping player back from away (commit's bookkeeping
    of any tap on the game does it: seeds/<game>.md §7.2); refused when he is not away."""

    def change(table: Table) -> Reply | None:
        if not table.seats[_seated(table, tap)].away:
            refuse("tap.stale")
        return None

    return change


async def on_back(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "I'm back" on an away player's hand message."""
    await commit(context, tap, _back(tap))


async def on_cards(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "My cards" in the group: the tapper's hand as a new ephemeral message that
    answers this tap (so it reaches him now, whatever became of the older one, which is no
    longer edited), for a player whose hand lives in the group; for one who keeps it in
    his private chat, in an alert only he sees. It is a tap on his game: it also brings
    him back if he was away."""
    table = await current_table(tap, context, "playing")
    if table is None:
        return
    seat = table.seat_of(tap.user.id)
    if seat is None:
        await tap.answer("tap.not_player")
        return
    if table.seats[seat].reach.place == "group":
        if await _may_renew(tap, context):
            await commit(context, tap, _renew(tap))
        return
    if table.seats[seat].away and await commit(context, tap, _back(tap), answer=False) is None:
        return  # the game moved on meanwhile: refused, and answered
    text = views.alert_text(table, seat, tap.lang)
    with contextlib.suppress(TelegramError):
        await sender.answer(tap.query, text, alert=True)


async def _may_renew(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Whether his hand may be sent anew now: one person's *My cards* and place switch
    wait out a cooldown (bot.core.budget.RENEW_COOLDOWN), answered at once with an alert
    instead of a message, so that a few members tapping together cannot draw a 429 that
    would teach their group the slow pace (docs/busy.md)."""
    limiter = services(context).limiter
    if limiter is None or await limiter.cool(tap.user.id):
        return True
    await tap.answer("tap.cooldown")
    return False


def _renew(tap: Tap, switch: bool = False) -> Callable[[Table], Reply | None]:
    """A change that brings his hand to the group anew (``switch``: first moves it from
    where it is now, in the group or his private chat, to the other place, decided on the
    table being changed): the delivery sends it as a new message answering this tap."""

    def change(table: Table) -> Reply | None:
        index = _seated(table, tap)
        seat = table.seats[index]
        if switch:
            seat.reach.place = "private" if views.in_group(table, index) else "group"
        seat.reach.group_ok, seat.reach.renew = True, seat.reach.renew + 1
        return None

    return change


async def on_place(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The switch on his hand: it moves between the group and his private chat, for this
    game and (remembered) his next ones. Into the group it comes as a new message that
    answers this tap; the place it left says where it went."""
    table = await current_table(tap, context, "playing")
    if table is None:
        return
    seat = table.seat_of(tap.user.id)
    if seat is None or table.private:
        await tap.answer("tap.not_player" if seat is None else "tap.bad")
        return
    if not await _may_renew(tap, context):
        return
    snap = await commit(context, tap, _renew(tap, switch=True))
    if snap is not None and snap.table is not None:
        moved = snap.table.seat_of(tap.user.id)
        if moved is not None:
            await services(context).store.set_place(
                tap.user.id, snap.table.seats[moved].reach.place
            )


def has_record(table: Table) -> bool:
    """A record can be handed out: the game is over (the record holds the whole deck, so
    handing it out mid-game would show every hand) and one was dealt at all."""
    return table.phase in ("finished", "abandoned") and table.state is not None


async def on_record(tap: Tap, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The Record button: the record in the group, once per game. A document counts
    against the group's 20 messages a minute, and the table's own edits would wait behind
    a crowd of them, while refusing a tap costs no message. (/record, in bot.handlers.commands,
    answers each time: any answer to a command is a message.) The tap claims the record
    and is answered; the delivery posts it (and gives the claim back if Telegram refuses
    it, so that the next tap tries again)."""

    def claim(table: Table) -> Reply | None:
        if not has_record(table):
            refuse("tap.stale")  # running, or stopped before a game was dealt
        if table.delivery.record_asked or table.delivery.record_sent:
            refuse("tap.record_sent")
        table.delivery.record_asked, table.lobby.notice = True, ""
        return None

    await commit(context, tap, claim)
