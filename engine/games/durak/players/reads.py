"""Reading the hidden hands from how they were played: hard's model of the others.

A deal of the unseen cards is only as good as its fit with what the others did.
Sensible players, beginners and club players alike, beat with a cheap card rather than
a dear one, take only when beating is impossible or costs trumps, and throw in a plain
card whenever they may: a deal in which the opponent passed while holding a plain card
of a rank on the table is unlikely, though not impossible.  And the engine passes for a
hand that holds no card of a rank on the table, so a bout that ends without a hand being
asked says that it held none, and a hand asked held one: those are facts.  Each deal is
weighed by how likely the others' choices were, had they held its cards
(:meth:`Fit.weight`).

A choice was made from the hand of its moment.  Going back from the hand a deal gives
now, the cards played since are put back and the cards taken since are taken out; the
cards drawn since cannot be told apart, so a card that would have made the choice
unlikely may simply have come later, and old choices count for less as draws pile up.
The odds in :data:`ODDS` are those of a sensible player, no one player's: a slip is
unlikely, never ruled out, so a deal that fits badly keeps some weight.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from engine import cards
from engine.base import Event
from engine.cards import Card
from engine.games.durak.players.heuristics import beaters, value
from engine.games.durak.players.seen import Seen, participant
from engine.games.durak.rules import BOUT_LIMIT, HAND

# How likely a sensible player makes each choice that a plainer or cheaper one was open
# to.  The last two are the engine's own doing, facts; they still leave a deal a little
# weight, so that no misreading can ever leave every deal with none.
ODDS = {
    "lead_trump": 0.2,  # led a trump while holding a plain card
    "lead_high": 0.5,  # led a plain card while holding a lower plain one
    "beat_dear": 0.3,  # beat with a card while a cheaper one beat as well
    "take_plain": 0.1,  # took while a plain card beat
    "take_trump": 0.5,  # took while a trump beat
    "pass_plain": 0.1,  # passed while holding a plain card it could throw in
    "throw_trump": 0.3,  # threw in a trump while it could throw in a plain card
    "throw_high": 0.7,  # threw in a plain card while a lower one would do
    "skipped": 0.01,  # was passed over, so held no card of a rank on the table
    "asked": 0.01,  # was asked to throw in, so held a card of a rank on the table
}
# Choices this likely to be older than the cards that would speak against them are not
# worth reading.
FADED = 0.75


@dataclass(frozen=True)
class Step:
    """A choice: how likely it was had the hand held any card of ``against`` (or, for a
    ``positive`` step, had it held none)."""

    odds: float
    against: int  # a mask of cards
    held: int  # how many cards the hand held
    positive: bool = False


@dataclass(frozen=True)
class Change:
    """What happened to a hand after a choice: a card played, cards taken, cards drawn."""

    played: int = 0  # a mask
    taken: int = 0  # a mask
    drawn: int = 0  # a count


def mask(cs: Iterable[Card]) -> int:
    bits = 0
    for c in cs:
        bits |= 1 << c
    return bits


@dataclass
class Reads:
    """Every hand's choices and changes, kept up to date event by event.  Hands are
    named as the engine numbers them: ``0..n-1``, and ``n`` for the dummy."""

    n: int
    trump: int
    deck: list[Card]
    log: list[list[Step | Change]] = field(init=False)
    counts: list[int] = field(init=False)
    att: list[Card] = field(init=False, default_factory=list)
    dfn: list[Card | None] = field(init=False, default_factory=list)
    # The first bout has no "bout" event (the deal's events are not public): its
    # defender is the first to beat or take, the dummy's controller the first to lead,
    # and every hand holds HAND cards, so the limit is the usual one.
    defender: int | None = field(init=False, default=None)
    controller: int | None = field(init=False, default=None)
    limit: int = field(init=False, default=BOUT_LIMIT)
    passed: set[int] = field(init=False, default_factory=set)  # in the current round
    round_ranks: set[int] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.log = [[] for _ in range(self.n + 1)]
        self.counts = [HAND] * (self.n + 1)

    @classmethod
    def of(cls, events: Iterable[Event], n: int, trump: int, deck_size: int) -> Reads:
        reads = cls(n, trump, cards.deck(deck_size))
        reads.update(events)
        return reads

    def _who(self, seat: int | str) -> int:
        who = participant(seat, self.n)
        assert who is not None
        return who

    def _step(self, who: int, odds: float, against: int, positive: bool = False) -> None:
        if against:
            self.log[who].append(Step(odds, against, self.counts[who], positive))

    def _play(self, who: int, card: Card) -> None:
        self.log[who].append(Change(played=1 << card))
        self.counts[who] -= 1

    def _table(self) -> list[Card]:
        return [*self.att, *(d for d in self.dfn if d is not None)]

    def _ranks(self) -> set[int]:
        return {c >> 2 for c in self._table()}

    def _cards(self, plain: bool = False, ranks: set[int] | None = None) -> int:
        """The cards (plain ones only, or of ``ranks`` only) as a mask."""
        return mask(
            c
            for c in self.deck
            if (not plain or c & 3 != self.trump) and (ranks is None or c >> 2 in ranks)
        )

    def update(self, events: Iterable[Event]) -> None:
        for event in events:
            kind, data = event.kind, event.data
            if kind == "bout":
                self.defender = self._who(data["defender"])
                self.limit = min(BOUT_LIMIT, self.counts[self.defender])
                self.passed, self.round_ranks = set(), set()
            elif kind == "control":
                self.controller = int(data["seat"])
            elif kind == "drew":
                who = self._who(data["seat"])
                self.log[who].append(Change(drawn=data["count"]))
                self.counts[who] += data["count"]
            elif kind in ("took", "discarded"):
                self._bout_end()
                if kind == "took":
                    who = self._who(data["seat"])
                    table = self._table()
                    self.log[who].append(Change(taken=mask(table)))
                    self.counts[who] += len(table)
                self.att, self.dfn = [], []
            elif kind == "transfer":  # the card joins the attack; read nothing into it
                who = self._who(data["seat"])
                self._play(who, cards.parse(data["card"]))
                self.att.append(cards.parse(data["card"]))
                self.dfn.append(None)
                self.defender = self._who(data["defender"])
                self.limit = min(BOUT_LIMIT, self.counts[self.defender])
            elif kind in ("attack", "throw", "beat", "take_declared", "pass"):
                who = self._who(data["seat"])
                if kind == "attack" and self.controller is None:
                    self.controller = who  # the first to lead controls the dummy
                if kind in ("beat", "take_declared") and self.defender is None:
                    self.defender = who
                self._choice(who, kind, data)

    def _choice(self, who: int, kind: str, data: dict[str, Any]) -> None:
        """Read one choice of ``who``'s: what cards would have made it unlikely."""
        trump = self.trump
        ranks = self._ranks()
        if kind in ("attack", "throw"):
            card = cards.parse(data["card"])
            rank = card >> 2
            if kind == "attack":
                plain, slips = self._cards(plain=True), ("lead_trump", "lead_high")
            else:
                plain, slips = self._cards(True, ranks), ("throw_trump", "throw_high")
            if card & 3 == trump:
                self._step(who, ODDS[slips[0]], plain)
            else:
                self._step(who, ODDS[slips[1]], plain & self._cards(ranks=set(range(rank))))
            self._play(who, card)
            self.att.append(card)
            self.dfn.append(None)
        elif kind == "beat":
            attack, card = cards.parse(data["card"]), cards.parse(data["with"])
            cost = value(card, trump)
            cheaper = (c for c in beaters(attack, trump) if value(c, trump) < cost)
            self._step(who, ODDS["beat_dear"], mask(cheaper))
            self._play(who, card)
            self.dfn[self.att.index(attack)] = card
            self._restart()
        elif kind == "take_declared":
            beating = mask(beaters(self.att[-1], trump))
            plain = self._cards(plain=True)
            self._step(who, ODDS["take_plain"], beating & plain)
            self._step(who, ODDS["take_trump"], beating & ~plain)
            self._restart()
        else:  # a pass
            self.passed.add(who)
            self._step(who, ODDS["pass_plain"], self._cards(True, ranks))
            # The engine asks only a hand that holds a card of a rank on the table.
            self._step(who, ODDS["asked"], self._cards(ranks=ranks), positive=True)

    def _restart(self) -> None:
        """A beat or a take starts the round of throw-ins again, with this table."""
        self.passed = set()
        self.round_ranks = self._ranks()

    def _bout_end(self) -> None:
        """Whoever did not pass in the last round was passed over, by the engine: it held
        no card of the round's ranks (those of its start; a hand that threw in during a
        take round was passed over after its last throw).  Unless the bout was full,
        when everyone is passed over."""
        if self.defender is None or not self.round_ranks or len(self.att) >= self.limit:
            return
        against = self._cards(ranks=self.round_ranks)
        for who in range(self.n + 1):
            if who == self.defender or not self.counts[who] or who in self.passed:
                continue
            if who == self.n and self.controller == self.defender:
                continue  # the dummy may not throw in against its controller
            self._step(who, ODDS["skipped"], against)

    def fits(self, seen: Seen) -> list[tuple[int, Fit]]:
        """The choices of every hand holding cards ``seen``'s seat cannot name."""
        return [(who, self.fit(who)) for who in range(self.n + 1) if seen.unknown_slots(who)]

    def fit(self, who: int) -> Fit:
        """The choices of ``who``, ready to weigh deals with."""
        # A hand then is (the hand now & keep) | back: walking back from now, a take
        # removes its cards, a card played is put back.
        keep, back, drawn = -1, 0, 0
        terms: list[Term] = []
        for entry in reversed(self.log[who]):
            if isinstance(entry, Change):
                keep &= ~entry.taken
                back = (back & ~entry.taken) | entry.played
                drawn += entry.drawn
                continue
            fade = drawn / (entry.held + drawn) if drawn else 0.0
            if fade < FADED:
                against = entry.against
                terms.append(Term(entry.odds, against & keep, against & back, fade, entry.positive))
        return Fit(tuple(terms))


class Term(NamedTuple):
    """One choice as it weighs a hand: the cards of the hand now (``keep``) and those
    put back (``back``) that it was about, and how likely each came only later."""

    odds: float
    keep: int
    back: int
    fade: float
    positive: bool


@dataclass(frozen=True)
class Fit:
    """One hand's choices, as terms that weigh a deal's hand for it."""

    terms: tuple[Term, ...]

    def weight(self, hand: Sequence[Card]) -> float:
        """How likely the choices were, had the hand been ``hand`` now (relative: only
        the ratio between deals means anything)."""
        now = mask(hand)
        weight = 1.0
        for odds, keep, back, fade, positive in self.terms:
            # The chance that none of the cards concerned was held at the time.
            none = fade ** ((now & keep) | back).bit_count()
            weight *= 1 - (1 - odds) * none if positive else odds + (1 - odds) * none
        return weight
