"""The play of durak as functions of the state (:class:`.state.DurakState`): who acts, the
legal moves and how a move changes the game (the bout's own steps follow in :mod:`.bout`).

A bout moves through four phases: ``lead`` (the attacker plays a card), ``defend`` (the
defender beats an unbeaten card or declares take), ``throw`` (every card is beaten; the
right to throw in goes round the priority order) and ``take`` (the extra round after a
take, in which each holder of the right may add several cards before passing).

Events (``Event.kind`` → ``data``; seats are ints or ``"dummy"``, cards in record notation)
are public narration: they never name a drawn card.

========================  ==========================================================
``bout``                  ``{"attacker": seat, "defender": seat}``: a bout begins
``attack``                ``{"seat": seat, "card": C}``: lead card
``beat``                  ``{"seat": seat, "card": A, "with": C}``
``take_declared``         ``{"seat": seat}``: the defender will take
``transfer``              ``{"seat": seat, "card": C, "defender": seat}``: the defender
                          passed the attack on with C; the new defender
``throw``                 ``{"seat": seat, "card": C}``: a throw-in
``pass``                  ``{"seat": seat}``: gave up the right to throw in (chosen, not
                          automatic)
``took``                  ``{"seat": seat, "count": k}``: the defender took the table
``discarded``             ``{"count": k}``: the table went to the discard pile
``drew``                  ``{"seat": seat, "count": k}``: drew k cards from the stock
``out``                   ``{"seat": seat}``: a player got rid of his cards, he is safe
``control``               ``{"seat": seat}``: control of the dummy passed to this player
``finished``              ``{"fool": seat | null}``
========================  ==========================================================

When the controller acts for the dummy, ``seat`` is ``"dummy"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.base import Event, IllegalMove
from engine.cards import Card
from engine.games.durak.bout import advance, cap, next_holder, played, throw_order, transfer_target
from engine.games.durak.moves import (
    ARITY,
    ATTACK,
    BEAT,
    PASS,
    STR,
    TAKE_KIND,
    THROW_KIND,
    TRANSFER,
    DurakActor,
    DurakMove,
    MoveTable,
    Seat,
    cards_of_ranks,
    event,
    moves_for,
    name,
)
from engine.games.durak.state import DEFEND, LEAD, OVER, TAKE, THROW, DurakState


def to_act(s: DurakState) -> DurakActor | None:
    """Who acts next: the controller, for the dummy, where it is the dummy's turn."""
    if s.phase == OVER:
        return None
    who = s.who()
    return DurakActor(s.controller, True) if who == s.n else DurakActor(who, False)


def is_finished(s: DurakState) -> bool:
    """Whether the game is over (a fool found, or a drawn game)."""
    return s.phase == OVER


def result(s: DurakState) -> dict[str, Any] | None:
    """The record's result: the fool, or None for a drawn game; None while it runs."""
    return {"fool": s.fool} if s.phase == OVER else None


def legal_moves(s: DurakState) -> list[DurakMove]:
    """Every move of the participant to act, looked up in his move table (the hot loop)."""
    phase = s.phase
    if phase == OVER:
        return []
    who = s.who()
    table = moves_for(s.controller, True) if who == s.n else s.tables[who]
    hand = s.hands[who]
    if phase == LEAD:
        return list(map(table.attack.__getitem__, hand))
    if phase == DEFEND:
        if s.transfer:
            return _defences(s, table, hand)
        a = s.att[-1]  # without transfers exactly one card is unbeaten: the latest
        moves = list(map(table.beats(a).__getitem__, filter(s.beaters[a].__contains__, hand)))
        moves.append(table.take)
        return moves
    throwable = cards_of_ranks(s.mask).__contains__
    moves = list(map(table.throw.__getitem__, filter(throwable, hand)))
    moves.append(table.pass_)
    return moves


def _defences(s: DurakState, table: MoveTable, hand: list[Card]) -> list[DurakMove]:
    """The defender's moves where transfers are played (§12): beat any unbeaten card,
    transfer while nothing is beaten, or take."""
    moves: list[DurakMove] = []
    beaters = s.beaters
    for a, d in zip(s.att, s.dfn, strict=True):
        if d < 0:
            moves += map(table.beats(a).__getitem__, filter(beaters[a].__contains__, hand))
    if transfer_target(s, s.defender) >= 0:
        rank = s.att[0] >> 2
        moves += [table.transfer[c] for c in hand if c >> 2 == rank]
    moves.append(table.take)
    return moves


# ------------------------------------------------------------------ apply


def apply(s: DurakState, move: DurakMove) -> list[Event]:
    """Check the move's shape and who makes it, then play it by its kind (each kind's
    own function checks the phase and the cards); the forced steps follow in it."""
    phase = s.phase
    if phase == OVER:
        raise IllegalMove("game_over", "The game is over.")
    try:
        player, dummy, kind, cs = move
        arity_ok = ARITY[kind] == len(cs)
    except (TypeError, ValueError, KeyError):
        arity_ok = False
    if not arity_ok:
        raise IllegalMove("unknown_move", f"There is no such move: {move!r}.")
    who = s.who()
    if (
        (dummy is not True or player != s.controller)
        if who == s.n
        else (dummy is not False or player != who)
    ):
        raise _not_your_turn(s, player, dummy, who)
    events: list[Event] = []
    s.events = events
    _STEPS[kind](s, kind, phase, who, cs)
    return events


def _beat(s: DurakState, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
    if phase != DEFEND:
        raise IllegalMove("cannot_beat_now", "There is no card to beat now.")
    a, c = cs
    dfn = s.dfn
    i = -1  # the latest card: the only unbeaten one without transfers
    if a != s.att[-1] or dfn[-1] >= 0:
        i = _unbeaten_index(s, a)
    hand = s.hands[who]
    if c not in hand:
        raise _not_held(s, c, who)
    if c not in s.beaters[a]:
        raise IllegalMove(
            "cannot_beat",
            f"{STR[c]} does not beat {STR[a]}.",
            card=STR[a],
            with_card=STR[c],
        )
    hand.remove(c)
    dfn[i] = c
    s.mask |= 1 << (c >> 2)
    seat: Seat = "dummy" if who == s.n else who
    s.events.append(event(("beat", {"seat": seat, "card": STR[a], "with": STR[c]})))
    if s.known[who] or not hand:
        played(s, who, hand, c)
    if s.transfer and -1 in dfn:
        return  # more cards to beat, in any order (§12)
    s.phase = THROW
    s.pos = 0
    advance(s)


def _lay(s: DurakState, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
    """An attack (the bout's lead card) or a throw-in: a card added to the table."""
    if (phase != LEAD) if kind == ATTACK else (phase < THROW):
        raise IllegalMove(
            f"cannot_{kind}_now",
            "A bout is already under way."
            if kind == ATTACK
            else "Nobody may throw in now: the defender must act.",
        )
    c = cs[0]
    hand = s.hands[who]
    if c not in hand:
        raise _not_held(s, c, who)
    if kind == THROW_KIND and not s.mask >> (c >> 2) & 1:
        raise IllegalMove(
            "rank_not_on_table",
            f"No card of the rank of {STR[c]} is on the table.",
            card=STR[c],
        )
    hand.remove(c)
    s.att.append(c)
    s.dfn.append(-1)
    s.mask |= 1 << (c >> 2)
    seat: Seat = "dummy" if who == s.n else who
    s.events.append(event((kind, {"seat": seat, "card": STR[c]})))
    if s.known[who] or not hand:
        played(s, who, hand, c)
    if phase == TAKE:
        advance(s)
    else:
        s.phase = DEFEND


def _transfer_move(s: DurakState, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
    """The defender passes the attack on with a card of the rank on the table (§12)."""
    if phase != DEFEND or not s.transfer:
        raise IllegalMove(
            "cannot_transfer_now",
            "No transfer now: only the defender transfers, in a game with transfers.",
        )
    c = cs[0]
    hand = s.hands[who]
    if c not in hand:
        raise _not_held(s, c, who)
    att = s.att
    if max(s.dfn) >= 0:
        raise IllegalMove(
            "transfer_after_beat", "A card on the table is beaten already: no transfer now."
        )
    if c >> 2 != att[0] >> 2:
        raise IllegalMove(
            "transfer_rank",
            f"{STR[c]} is not of the rank of the cards on the table.",
            card=STR[c],
        )
    # The attack cards are one rank, four at most: the cap (five or six) never stops
    # a transfer, the new defender's hand may.
    count = len(att) + 1
    new = next_holder(s, who)
    if new < 0:
        raise IllegalMove("cannot_transfer_now", "Nobody else holds cards to defend.")
    if count > len(s.hands[new]):
        held = len(s.hands[new])
        raise IllegalMove(
            "transfer_too_few",
            f"{s.names[new]} holds {held} cards, too few to face {count}.",
            seat=new,
            held=held,
            count=count,
        )
    hand.remove(c)
    att.append(c)
    s.dfn.append(-1)
    s.events.append(event((TRANSFER, {"seat": who, "card": STR[c], "defender": new})))
    if s.known[who] or not hand:
        played(s, who, hand, c)
    # He is now the bout's lead attacker; the limit counts from the new defender's hand.
    s.attacker = who
    s.defender = new
    s.order = throw_order(s, who, new)
    s.limit = min(cap(s), len(s.hands[new]))
    s.pos = 0


def _take(s: DurakState, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
    if phase != DEFEND:
        raise IllegalMove("cannot_take_now", "Only the defender takes, facing a card.")
    s.events.append(event(("take_declared", {"seat": s.seat(who)})))
    s.phase = TAKE
    s.pos = 0
    advance(s)


def _pass(s: DurakState, kind: str, phase: int, who: int, cs: tuple[Card, ...]) -> None:
    if phase < THROW:
        raise IllegalMove("cannot_pass_now", "There is no right to throw in to pass.")
    s.events.append(event(("pass", {"seat": s.seat(who)})))
    s.pos += 1
    advance(s)


def _not_your_turn(s: DurakState, player: object, dummy: object, who: int) -> IllegalMove:
    if type(player) is not int or not 0 <= player < s.n:
        return IllegalMove("no_such_seat", f"There is no seat {player!r}.", seat=player)
    if who == s.n:
        name = s.names[s.controller]
        return IllegalMove(
            "not_your_turn",
            f"It is {name}'s turn, for the dummy.",
            seat=s.controller,
            dummy=True,
        )
    name = s.names[who]
    if dummy and player == who:
        return IllegalMove(
            "not_your_turn", f"It is {name}'s own turn, not the dummy's.", seat=who, dummy=False
        )
    return IllegalMove("not_your_turn", f"It is {name}'s turn.", seat=who, dummy=False)


def _not_held(s: DurakState, c: object, who: int) -> IllegalMove:
    if c not in s.deckset:
        return IllegalMove(
            "not_in_game",
            f"There is no {name(c)} in a {len(s.deck)}-card deck.",
            card=name(c),
        )
    whose = "The dummy does" if who == s.n else "You do"
    return IllegalMove("not_in_hand", f"{whose} not hold {name(c)}.", card=name(c))


def _unbeaten_index(s: DurakState, a: object) -> int:
    """Where unbeaten attack card ``a`` lies on the table; raises if it does not."""
    for i, (x, d) in enumerate(zip(s.att, s.dfn, strict=True)):
        if x == a and d < 0:
            return i
    raise _not_unbeaten(s, a)


def _not_unbeaten(s: DurakState, a: object) -> IllegalMove:
    if a not in s.deckset:
        return _not_held(s, a, s.defender)
    return IllegalMove(
        "not_on_table", f"{name(a)} is not an unbeaten card on the table.", card=name(a)
    )


# How each kind of move is played (apply).
_STEPS: dict[str, Callable[[DurakState, str, int, int, tuple[Card, ...]], None]] = {
    BEAT: _beat,
    ATTACK: _lay,
    THROW_KIND: _lay,
    TAKE_KIND: _take,
    PASS: _pass,
    TRANSFER: _transfer_move,
}
