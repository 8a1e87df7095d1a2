"""The course of a durak game between the players' choices: the deal and the first
attacker, and what the rules do by themselves in a bout (automatic passes, its end, the
draw, the next attacker, going out, the end of the game). Functions of the state
(:class:`.state.DurakState`); :mod:`.play` calls them, so that between two moves the game
is always at a real decision of exactly one participant, or finished."""

from __future__ import annotations

from engine.cards import Card
from engine.games.durak.moves import Seat, cards_of_ranks, event
from engine.games.durak.options import HAND
from engine.games.durak.state import BOUT_LIMIT, EARLY_LIMIT, LEAD, OVER, TAKE, DurakState


def deal(s: DurakState) -> None:
    """Deal from the dealer's neighbour round to the dealer (the dummy's hand last) and
    open the first bout."""
    n, deck = s.n, s.deck
    for k in range(n):
        s.hands[(s.dealer + 1 + k) % n] = list(deck[HAND * k : HAND * (k + 1)])
    if s.options.dummy:
        s.hands[n] = list(deck[HAND * n : HAND * (n + 1)])
    elif not s.stock:  # the dealer's face-up sixth card: everyone saw it go to him
        s.known[s.dealer].add(s.trump_card)
    first = first_attacker(s)
    s.controller = first if s.options.dummy else -1  # -1: no dummy to control
    start_bout(s, first)
    s.events = []


def first_attacker(s: DurakState) -> int:
    """seeds/durak.md §3.1 and §8.3; the dummy's cards count as the dealer's."""
    n, hands = s.n, s.hands
    if s.previous_fool is not None:
        step = -1 if s.options.first_move == "under" else 1
        return (s.previous_fool + step) % n
    seats = [(s.dealer + 1 + k) % n for k in range(n)]  # dealer last

    def held(seat: int) -> list[Card]:
        return hands[seat] + hands[n] if seat == s.dealer else hands[seat]

    trumps = [(c, seat) for seat in seats for c in held(seat) if c & 3 == s.trump]
    if trumps:
        return min(trumps)[1]
    lowest = [min(c >> 2 for c in held(seat)) for seat in seats]
    return seats[lowest.index(min(lowest))]  # ties: first clockwise


def cap(s: DurakState) -> int:
    """Attack cards a bout may hold before the defender's hand counts (§4.5, §14)."""
    return EARLY_LIMIT if s.five and not s.discard else BOUT_LIMIT


def next_holder(s: DurakState, seat: int) -> int:
    """The next player clockwise after ``seat`` who holds cards; -1 if nobody does."""
    nxt, hands = s.nxt, s.hands
    who = nxt[seat]
    while who != seat:
        if hands[who]:
            return who
        who = nxt[who]
    return -1


def transfer_target(s: DurakState, defender: int) -> int:
    """Who would defend after a transfer by ``defender`` now, or -1 if none may be made
    (§12): a card is beaten already, or the new defender holds fewer cards than the
    attack cards would then be (never more than four: the bout's cap of five or six
    cannot stop it)."""
    if max(s.dfn) >= 0:
        return -1
    new = next_holder(s, defender)
    if new < 0 or len(s.att) + 1 > len(s.hands[new]):
        return -1
    return new


def played(s: DurakState, who: int, hand: list[Card], c: Card) -> None:
    """After ``who`` played ``c``: it is no longer known to be his; out if he is done.

    Callers skip the call when his hand is neither known nor empty (the hot loop)."""
    s.known[who].discard(c)
    if not hand and who != s.n:
        if s.drawn == len(s.stock):
            go_out(s, who)
        else:
            s.pending.append(who)


def go_out(s: DurakState, seat: int) -> None:
    """``seat`` is out; control of the dummy passes on if he held it."""
    s.out.append(seat)
    s.events.append(event(("out", {"seat": seat})))
    if seat == s.controller:
        n, hands = s.n, s.hands
        for k in range(1, n):
            other = (seat + k) % n
            if hands[other]:
                s.controller = other
                s.events.append(event(("control", {"seat": other})))
                return
        # Nobody else holds cards: control stays where it is.


def can_throw(s: DurakState, who: int) -> bool:
    """Whether ``who`` may throw in now (he holds a card of a rank on the table)."""
    if who == s.n and s.controller == s.defender:
        return False  # the dummy is skipped while its controller defends
    return not cards_of_ranks(s.mask).isdisjoint(s.hands[who])


def advance(s: DurakState) -> None:
    """Pass automatically everyone who may not throw in; end the round when all have.

    (:func:`can_throw` inlined: this runs after almost every move.)"""
    if len(s.att) < s.limit:
        order, hands = s.order, s.hands
        disjoint = cards_of_ranks(s.mask).isdisjoint
        skip = s.n if s.controller == s.defender else -1
        pos = s.pos
        while pos < len(order):
            who = order[pos]
            if who != skip and not disjoint(hands[who]):
                s.pos = pos
                return
            pos += 1
    end_bout(s, s.phase == TAKE)


def end_bout(s: DurakState, taken: bool) -> None:
    """The table goes to the defender or the discard; the draw, who goes out, and the
    next bout or the end."""
    n, hands, events = s.n, s.hands, s.events
    defender = s.defender
    if taken:
        table = s.att + [d for d in s.dfn if d >= 0]
        hands[defender].extend(table)
        s.known[defender].update(table)
        seat: Seat = "dummy" if defender == n else defender
        events.append(event(("took", {"seat": seat, "count": len(table)})))
    else:
        table = s.att + s.dfn  # every card was beaten
        s.discard.extend(table)
        events.append(event(("discarded", {"count": len(table)})))
    s.att = []
    s.dfn = []
    s.mask = 0
    if s.drawn < len(s.stock):
        draw(s)
    if s.pending:
        for who in s.pending:
            if not hands[who]:
                go_out(s, who)
        s.pending = []
    if s.drawn == len(s.stock):  # with stock left, every hand holds six
        holders = [p for p in range(n) if hands[p]]
        if len(holders) <= 1:
            finish(s, holders)
            return
    start_bout(s, rotate(s, s.nxt[defender] if taken else defender))


def finish(s: DurakState, holders: list[int]) -> None:
    """The game is over: the one holder left is the fool, if there is one."""
    if holders:
        s.fool = holders[0]
    elif s.hands[s.n]:
        s.fool = s.out[-1]  # the player who got rid of his cards last
    else:
        s.fool = None  # nothing anywhere: a drawn game
    s.phase = OVER
    s.events.append(event(("finished", {"fool": s.fool})))


def draw(s: DurakState) -> None:
    """Lead attacker first, then clockwise; the dummy at its seat."""
    stock, drawn = s.stock, s.drawn
    total = len(stock)
    hands, nxt, n = s.hands, s.nxt, s.n
    who = s.attacker
    for _ in range(s.ring):
        hand = hands[who]
        want = HAND - len(hand)
        if want > 0:
            got = stock[drawn : drawn + want]
            hand.extend(got)
            drawn += len(got)
            seat: Seat = "dummy" if who == n else who
            s.events.append(event(("drew", {"seat": seat, "count": len(got)})))
            if drawn == total:  # the face-up trump card: everyone saw who got it
                s.known[who].add(s.trump_card)
                break
        who = nxt[who]
    s.drawn = drawn


def rotate(s: DurakState, who: int) -> int:
    """The first participant from ``who`` on, clockwise, who may attack or defend: one
    holding cards, and the dummy only with dummy_plays."""
    hands, nxt = s.hands, s.nxt
    skip = -1 if s.dummy_plays else s.n
    while who == skip or not hands[who]:
        who = nxt[who]
    return who


def start_bout(s: DurakState, attacker: int) -> None:
    """A bout begins: its defender, its throw-in order and its limit."""
    n = s.n
    defender = rotate(s, s.nxt[attacker])
    s.attacker = attacker
    s.defender = defender
    s.order = throw_order(s, attacker, defender)
    s.limit = min(cap(s), len(s.hands[defender]))
    s.phase = LEAD
    s.pos = 0
    seats = ("dummy" if attacker == n else attacker, "dummy" if defender == n else defender)
    s.events.append(event(("bout", {"attacker": seats[0], "defender": seats[1]})))


def throw_order(s: DurakState, attacker: int, defender: int) -> tuple[int, ...]:
    """Priority order of the right to throw in: the lead attacker, then clockwise; with
    throw-in by neighbours (§13), the lead attacker and the first player after the
    defender who holds cards, fixed now (at the start of a bout, or a transfer)."""
    if s.neighbours:
        after = next_holder(s, defender)
        return (attacker,) if after in (attacker, -1) else (attacker, after)
    key = attacker * 8 + defender
    order = s.orders.get(key)
    if order is None:
        found = []
        who = attacker
        for _ in range(s.ring):
            if who != defender:
                found.append(who)
            who = s.nxt[who]
        order = s.orders[key] = tuple(found)
    return order
