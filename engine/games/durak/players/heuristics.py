"""The durak heuristics: easy (a beginner) and normal (a club player).

Easy plays the greedy yardstick's move (:mod:`engine.games.durak.players.greedy`) half the
time and a careless but never absurd one otherwise.  Normal plays the way a sound club
player does: lead low non-trumps, beat as cheaply as possible, keep trumps for the
endgame, take rather than burn a high trump early, throw in every plain card it may
(what the defender probably cannot beat first), and as the controller spend the
dummy's cards freely, since the dummy can never be the fool; where transfers are played
it passes the attack on with a plain card whenever it may (:func:`pass_on` says why);
and once it can tell where
every card is, it checks its move by playing the game out
(:mod:`engine.games.durak.computer`).  Hard is in :mod:`engine.games.durak.players.search`;
its playouts play its own seat with this player, and the others with it or with the
greedy one, sample by sample.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from functools import cache

from engine.cards import Card
from engine.games.durak.players.greedy import greedy
from engine.games.durak.players.seen import Seen, full_deck
from engine.games.durak.rules import DurakMove, beats

# A trump outranks every plain card: its value is its rank plus this.
TRUMP_BONUS = 13
# Before the stock runs low, a defence costing this much in trumps is not worth it.
EARLY_STOCK = 6
DEAR_TRUMP_RANK = 12  # beating with the queen of trumps or higher is dear early on
# How often easy plays an unweighed card instead of the greedy one.
SLIP = 0.5


def easy(legal: Sequence[DurakMove], trump: int, rng: random.Random) -> DurakMove:
    """A beginner: he knows the rules and what a sensible move looks like (the greedy
    one), but now and then plays a card without weighing it, beating with whatever
    beats (a trump as soon as a plain card) or throwing in a card he should keep."""
    if rng.random() >= SLIP:
        return greedy(legal, trump)
    cards_ = [m for m in legal if m.cards]
    plain = [m for m in cards_ if m.cards[-1] & 3 != trump]
    if legal[0].kind == "attack":
        return rng.choice(plain or cards_)
    if any(m.kind == "take" for m in legal):
        return rng.choice(cards_) if cards_ else legal[-1]
    return rng.choice([*plain, legal[-1]])


def progress(legal: Sequence[DurakMove], trump: int) -> DurakMove:
    """The move of a stalled game: beat whenever possible, throw nothing in.

    Then a bout is beaten off whenever its defender holds a card beating the one lead
    card, as the holder of the highest trump in play always does; defenders take turns,
    so the cards in play keep dwindling and the game ends."""
    passing = [m for m in legal if m.kind == "pass"]
    if passing:
        return passing[0]
    # A transfer only hands the cards on: the defender beats what he can instead.
    return greedy([m for m in legal if m.kind != "transfer"], trump)


def value(card: Card, trump: int) -> int:
    """How much a card is worth keeping: its rank, trumps above every plain card."""
    return (card >> 2) + (TRUMP_BONUS if card & 3 == trump else 0)


def normal(seen: Seen, legal: Sequence[DurakMove]) -> DurakMove:
    if seen.stalled:
        return progress(legal, seen.trump)
    kind = legal[0].kind
    if kind == "attack":
        return lead(seen, legal)
    if seen.phase == "defend":
        return defend(seen, legal)
    return throw_in(seen, legal)


# ---------------------------------------------------------------------- attack


def lead(seen: Seen, legal: Sequence[DurakMove]) -> DurakMove:
    """The lowest card, plain before trump; a rank held twice is worth leading, since
    its twin can follow as a throw-in.  With the stock gone, a card the defender
    probably cannot beat is worth more than a low one."""
    trump, defender = seen.trump, seen.defender
    assert defender is not None
    if seen.actor == seen.n and defender == seen.seat:
        # The dummy leads against its own controller: give him the easiest card.
        return min(legal, key=lambda m: (beat_cost(m.cards[0], seen.own, trump), m.cards[0]))
    ranks = Counter(c >> 2 for c in seen.hand)
    endgame = seen.stock == 0

    def score(move: DurakMove) -> tuple[float, Card]:
        c = move.cards[0]
        twin = 2 * (ranks[c >> 2] - 1) if c & 3 != trump else 0
        pressure = 10 * cannot_beat(seen, c, defender) if endgame else 0.0
        return value(c, trump) - twin - pressure, c

    return min(legal, key=score)


def beat_cost(card: Card, hand: Sequence[Card], trump: int) -> int:
    """The value of the cheapest card of ``hand`` that beats ``card`` (99: none does)."""
    return min((value(c, trump) for c in hand if beats(c, card, trump)), default=99)


# ---------------------------------------------------------------------- defence


def plan_defence(
    hand: Sequence[Card], unbeaten: Sequence[Card], trump: int
) -> list[tuple[Card, Card]] | None:
    """Cheapest cards beating every unbeaten card (the highest served first), or None."""
    spare = sorted(hand, key=lambda c: value(c, trump))
    plan = []
    for attack in sorted(unbeaten, key=lambda c: value(c, trump), reverse=True):
        for card in spare:
            if beats(card, attack, trump):
                plan.append((attack, card))
                spare.remove(card)
                break
        else:
            return None
    return plan


def defend(seen: Seen, legal: Sequence[DurakMove]) -> DurakMove:
    take = next(m for m in legal if m.kind == "take")
    unbeaten = [a for a, d in seen.table if d is None]
    plan = plan_defence(seen.hand, unbeaten, seen.trump)
    affordable = plan is not None and (seen.actor == seen.n or not too_dear(seen, plan))
    transfer = pass_on(seen, legal, plan if affordable else None)
    if transfer is not None:
        return transfer
    if plan is None or not affordable:
        return take
    attack, card = plan[0]
    return next(m for m in legal if m.kind == "beat" and m.cards == (attack, card))


def pass_on(
    seen: Seen, legal: Sequence[DurakMove], plan: list[tuple[Card, Card]] | None
) -> DurakMove | None:
    """The transfer to play instead of the affordable defence ``plan`` (None: a take),
    if any.

    A transfer spends one card of the attack's rank, never dearer than a plain card that
    beats the same attack, where beating every card on the table spends one card each,
    and the next defender must then beat one card more: with a plain card it always
    pays.  A trump passed on is another matter: where the next defender takes, it is
    his.  So it is passed on only to save a take, and only one not too dear to spend
    (as :func:`too_dear` judges).  Against the greedy player in two-player perevodnoy
    (1000 games), passing a trump on wherever the defence would spend one as dear
    left normal the fool 2.4 points more often (26.6 % against 24.2 %; 25.4 against
    22.6 % on seeds 1000-1999)."""
    transfers = [m for m in legal if m.kind == "transfer"]
    if not transfers:
        return None
    trump = seen.trump
    move = min(transfers, key=lambda m: value(m.cards[0], trump))
    card = move.cards[0]
    if card & 3 != trump:
        return move
    return move if plan is None and not too_dear(seen, [(card, card)]) else None


def too_dear(seen: Seen, plan: list[tuple[Card, Card]]) -> bool:
    """Early on, taking a few cards beats spending a high trump or several trumps."""
    if seen.stock < EARLY_STOCK:
        return False
    trumps = [c for _, c in plan if c & 3 == seen.trump]
    return bool(trumps) and (max(c >> 2 for c in trumps) >= DEAR_TRUMP_RANK or len(trumps) >= 2)


# ---------------------------------------------------------------------- throw-in


def throw_in(seen: Seen, legal: Sequence[DurakMove]) -> DurakMove:
    """Throw in any plain card, the likeliest unbeatable first, then the cheapest.

    Every plain card given away is one less to get rid of, and a defender loaded with
    cards is on his way to being the fool: keeping high plain cards back for later
    lost more games against the greedy yardstick than it won.  A trump is kept,
    except as a sure-looking blow late in the game or from the dummy's hand."""
    pass_ = next(m for m in legal if m.kind == "pass")
    defender, trump = seen.defender, seen.trump
    assert defender is not None
    taking = seen.phase == "take"
    endgame = seen.stock == 0
    for_dummy = seen.actor == seen.n
    best: tuple[float, int, DurakMove] | None = None
    for move in legal:
        if move.kind != "throw":
            continue
        c = move.cards[0]
        odds = 1.0 if taking else cannot_beat(seen, c, defender)
        # Never hand the taker a trump; otherwise only a sure-looking blow.
        worth = c & 3 != trump or (not taking and (endgame or for_dummy) and odds >= 0.5)
        if worth:
            key = (odds, -value(c, trump), move)
            if best is None or key[:2] > best[:2]:
                best = key
    return pass_ if best is None else best[2]


def cannot_beat(seen: Seen, card: Card, who: int) -> float:
    """The chance that ``who`` holds nothing that beats ``card``, given what is seen."""
    beaten_by = beaters(card, seen.trump)
    if who == seen.seat:
        return float(beaten_by.isdisjoint(seen.own))
    if who == seen.n and seen.dummy_hand is not None:
        return float(beaten_by.isdisjoint(seen.dummy_hand))
    if not beaten_by.isdisjoint(seen.known[who]):
        return 0.0
    unseen = len(seen.unseen)
    good = unseen - len(beaten_by & seen.unseen)
    chance = 1.0
    for i in range(min(seen.unknown_slots(who), unseen)):
        chance *= max(good - i, 0) / (unseen - i)
    return chance


@cache
def beaters(card: Card, trump: int) -> frozenset[Card]:
    """Every card of the 52 that beats ``card``: looked up, since playouts ask often."""
    return frozenset(c for c in full_deck(52) if beats(c, card, trump))
