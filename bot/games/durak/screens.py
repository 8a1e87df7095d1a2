"""Durak on screen, every variant of it, rendered only from its view
(:class:`engine.games.durak.view.DurakView`)."""

from __future__ import annotations

from typing import Any

from bot.core.i18n import t
from bot.core.screen import Button, rows_of
from bot.screens.render import Ctx, percent
from bot.tables.stats.standings import Line
from engine.games.durak.view import DurakView

# Who acts in each phase of a bout, in the group's words.
_TURN = {
    "lead": "durak.turn.lead",
    "defend": "durak.turn.defend",
    "throw": "durak.turn.throw",
    "take": "durak.turn.take",
}
# What the player to act may do in each phase, for his own hand and for the dummy's.
_ASK = {
    "lead": ("durak.ask.lead", "durak.ask.lead.dummy"),
    "defend": ("durak.ask.defend", "durak.ask.defend.dummy"),
    "throw": ("durak.ask.throw", "durak.ask.throw.dummy"),
    "take": ("durak.ask.take", "durak.ask.take.dummy"),
}
# A hand's size, without and with the cards everybody knows are in it.
_COUNT = ("durak.count", "durak.count_known")
_DUMMY_COUNT = ("durak.dummy_count", "durak.dummy_count_known")


def _pairs(view: DurakView, ctx: Ctx) -> str:
    if not view.table:
        return ctx.t("durak.table_empty")
    pairs = [f"{ctx.card(a)}/{ctx.card(d) if d else '—'}" for a, d in view.table]
    return ctx.t("durak.table", pairs="  ".join(pairs))


def _count(ctx: Ctx, keys: tuple[str, str], known: list[str], **params: Any) -> str:
    """A hand's size (``keys[0]``), and the cards everybody knows are in it, picked up in
    a take (``keys[1]``)."""
    if known:
        return ctx.t(keys[1], cards=ctx.cards(known), **params)
    return ctx.t(keys[0], **params)


def _counts(view: DurakView, ctx: Ctx) -> str:
    parts = []
    for seat, count in enumerate(view.hand_counts):
        mark = " ✅" if seat in view.out else ""
        known = view.known[seat]
        parts.append(_count(ctx, _COUNT, known, name=ctx.name(seat), n=count) + mark)
    if view.dummy:
        dummy = {"n": view.dummy_count, "controller": ctx.name(view.controller)}
        parts.append(_count(ctx, _DUMMY_COUNT, view.dummy_known, **dummy))
    return " · ".join(parts)


def public(view: DurakView, ctx: Ctx) -> str:
    lines = [
        ctx.t("durak.header", trump=ctx.card(view.trump), stock=view.stock, discard=view.discard),
        _pairs(view, ctx),
        _counts(view, ctx),
    ]
    if not view.finished:
        lines.append(
            ctx.t("durak.bout", attacker=ctx.name(view.attacker), defender=ctx.name(view.defender))
        )
    return "\n".join(lines)


def _actor(view: DurakView, ctx: Ctx) -> str:
    assert view.to_act is not None
    name = ctx.name(view.to_act.player)
    return ctx.t("durak.for_dummy", name=name) if view.to_act.dummy else name


def status(view: DurakView, ctx: Ctx) -> str:
    if view.finished:
        if view.fool is None:
            return ctx.t("durak.result_draw")
        return ctx.t("durak.result_fool", name=ctx.name(view.fool))
    key = _TURN[view.phase]
    if view.transfer_to is not None:  # the engine says the position allows a transfer
        key = "durak.turn.defend.transfer"
    return ctx.t(key, name=_actor(view, ctx))


def _card_of(record: dict[str, Any]) -> str | None:
    """The card a move puts down: an attack, a throw-in, a transfer or the beating card."""
    found: str | None = (
        record.get("with") or record.get("attack") or record.get("throw") or record.get("transfer")
    )
    return found


def _in_hand_order(
    view: DurakView, legal: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    """The moves with their cards in the order the hand shows them (the view's: by suit,
    trumps last; the dummy's cards as its hand shows them); Take / Pass after them."""
    place = {card: i for i, card in enumerate([*view.hand, *(view.dummy_hand or [])])}

    def key(move: tuple[str, dict[str, Any]]) -> int:
        card = _card_of(move[1]) or ""
        return place.get(card, len(place))

    return sorted(legal, key=key)


def _buttons(
    view: DurakView, ctx: Ctx, legal: list[tuple[str, dict[str, Any]]]
) -> list[tuple[Button, ...]]:
    """Cards to play four to a row, in the order of the hand; the transfers (↪️) in a row
    of their own; beats grouped by the attack card they cover when more than one card is
    unbeaten (they may be beaten in any order); Take / Pass last."""
    unbeaten = {a for a, d in view.table if d is None}
    cards: list[Button] = []
    transfers: list[Button] = []
    beats: dict[str, list[Button]] = {}
    last: list[Button] = []
    for token, rec in _in_hand_order(view, legal):
        data = ctx.move(token)
        if "beat" in rec:
            label = ctx.card(rec["with"])
            if len(unbeaten) > 1:
                label = ctx.t("durak.btn.beat", card=ctx.card(rec["beat"]), with_=label)
            beats.setdefault(rec["beat"], []).append(Button(label, data))
        elif "transfer" in rec:
            transfers.append(
                Button(ctx.t("durak.btn.transfer", card=ctx.card(rec["transfer"])), data)
            )
        elif "attack" in rec or "throw" in rec:
            label = ctx.card(rec.get("attack") or rec["throw"])
            if rec.get("dummy"):
                label = ctx.t("durak.btn.dummy", card=label)
            cards.append(Button(label, data))
        else:
            label = ctx.t("durak.btn.take" if "take" in rec else "durak.btn.pass")
            last.append(Button(label, data))
    rows = rows_of(cards, 4) + rows_of(transfers, 4)
    for group in beats.values():
        rows.extend(rows_of(group, 4))
    if last:
        rows.append(tuple(last))
    return rows


def hand(
    view: DurakView,
    ctx: Ctx,
    picks: list[int],
    legal: list[tuple[str, dict[str, Any]]] | None,
    active: bool = True,
) -> tuple[str, list[tuple[Button, ...]]]:
    """A player's private screen: his hand (trumps last), the dummy's for its controller.
    (``picks``, a set-up in progress, is football's: durak has no set-up.)

    While he waits that is all (plus the trump), so that it changes only when his cards
    do: the play is in the group. When he is to act it adds the table and his legal moves
    as buttons; at the end, the result.
    """
    lines = [alert(view, ctx)]
    if legal:
        lines.append(public(view, ctx))
        dummy = bool(view.to_act and view.to_act.dummy)
        transfer = any("transfer" in rec for _, rec in legal)
        lines.append(ctx.t("durak.ask.defend.transfer" if transfer else _ASK[view.phase][dummy]))
        return "\n".join(lines), _buttons(view, ctx, legal)
    if view.finished or not active:
        lines.append(public(view, ctx))
        if active:
            lines.append(status(view, ctx))
    else:
        lines.append(_trump(view, ctx))
    return "\n".join(lines), []


def _trump(view: DurakView, ctx: Ctx) -> str:
    """A waiting hand's trump line: the trump card, and who holds it when everybody knows
    (dealt face up into the dealer's hand when the whole deck is dealt, or drawn last)."""
    trump, holder = ctx.card(view.trump), view.trump_held_by
    if holder is None:
        return ctx.t("durak.trump", trump=trump)
    if holder == view.seat:
        return ctx.t("durak.trump_mine", trump=trump)
    return ctx.t("durak.trump_held", trump=trump, name=ctx.name(holder))


def alert(view: DurakView, ctx: Ctx) -> str:
    text: str = ctx.t("durak.your_hand", cards=ctx.cards(view.hand))
    if view.dummy_hand is not None:
        text += "\n" + ctx.t("durak.dummy_hand", cards=ctx.cards(view.dummy_hand))
    return text


def played(view: DurakView, record: dict[str, Any]) -> dict[str, Any]:
    """The card a legal move puts down (an attack, a throw-in, a transfer or the beating
    card), the attack card a beat covers, and whether the move is the dummy's: the Mini
    App draws the move on those cards."""
    return {
        "card": _card_of(record),
        "beat": record.get("beat"),
        "dummy": bool(record.get("dummy")),
    }


def figures(lang: str, line: Line) -> str:
    """One person's durak counters."""
    return t(
        lang,
        "stats.durak_figures",
        n=line.n,
        fool=line.get("fool"),
        pct=percent(line.get("fool"), line.n),
        draw=line.get("draw"),
        first=line.get("first"),
    )
