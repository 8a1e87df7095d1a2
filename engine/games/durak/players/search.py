"""Hard durak: determinised Monte Carlo over the cards this seat cannot see.

Each sample deals the unseen cards into the hidden places
(:mod:`engine.games.durak.players.sampling`); every candidate move is tried in the same samples and
the game played out to the end, this seat by normal's heuristics and the others in one
style of play per sample, the club player's or the beginner's by turns (the last
paragraph but one says why).  The move that leaves this seat the fool least often wins,
but the normal player's own choice stands unless another move does clearly better (in at
least ``MARGIN`` more samples): with a handful of samples, a smaller lead is mostly
noise.  For the same reason the search starts only once the stock is small: before that
the hidden cards are many, the playouts long and the samples few.  In the same 100
two-player games against normal, hard was the fool 25 times searching every move with no
margin, 13 times as it is now.

Against the greedy yardstick (``bench/players.py``, 300 games a cell) hard was the fool
in 23.0 % of two-player games (15.3 % with ``dummy_plays``), and nothing tried moved that
beyond the noise: playouts by the greedy player (half the cost, but the fool 26 % of
the time against normal rather than 17 %), three times the budget, searching from the
first move, a margin of one sample, dealing a seat that took no cards that would have
beaten what it took, and, once the world is known, looking one move ahead at its own
turns inside the playouts.  Searching only once the stock is empty, on the other hand,
costs a lot (the fool 32 % of the time): the search from a stock of 12 is what counts.

Solving the endgame (:mod:`engine.games.durak.players.endgame`) came next: with the stock gone
(or down to the face-up trump card), each sampled world is solved before it is played
out, and a move that escapes against every reply is preferred to one that escapes only
in the playout.  Most two-player endgames are small enough: of 268 positions with the
stock gone in games against greedy, 209 were solved whole within 6,000 positions.  But
on its own it did not move the figure either (23.0 % with it, on the same seeds).  What
moved it is asking for a larger lead before leaving normal's choice at two players
(``lead`` in :func:`search`): the fool 18.3 % [14.4, 23.1] of two-player games against
greedy, 14.0 % [10.5, 18.4] with ``dummy_plays``; against normal 25.7 % (from 27.0 %)
and 27.0 % with ``dummy_plays`` (from 31.0 %).  At three and four players the same
larger lead made hard weaker (four players: 15.0 % against 10.7 %), so it stays as it
was there.  The target against greedy (under 15 %, interval included) is still missed
at two players; what is left is the middle game, where the stock hides cards.

Later tries on the same 300 two-player games against greedy moved nothing beyond the
noise, and the 18.3 % may itself flatter, since the lead was picked on these seeds:
solving each sampled world from a stock of three rather than one, 21.0 %; a lead of
3 × MARGIN, 21.0 %; searching from a stock of 18, 18.7 %; twice the budget, 17.3 %,
and three times, 20.0 % (no trend, only noise).  Dealing the opponent's true hand into
every sample (cheating, as a bound on what reading his play could ever tell) left hard
the fool 13.0 % of the time: better inference alone cannot take the figure clearly
under 15 %; the playouts by normal, which judge every move, are the limit.

On fresh seeds (``bench/players.py --first-seed 1000``, 600 two-player games against
greedy) hard as it is was the fool 19.7 % [16.7, 23.0] of the time: the 18.3 % did
flatter a little, but the larger lead holds up (the smaller one on those games, 23.2 %
[20.0, 26.7]). On the same 600 games nothing else did better. Reading the opponent's
choices since his last draw (he beat with the cheapest card that beats, took only what
he could not beat short of a dear trump, passed only when what he could throw in was
trumps) and dealing him elsewhere the cards they rule out: 19.3 % [16.4, 22.7], and in
normal's odds 28.6 % rather than 28.7 % over 4,000 games. An opponent in the playouts
who spends a dear trump rather than take (the habit in which beginners, and greedy,
differ most from normal): 20.5 % [17.5, 23.9]. His next choice in each world made by a
search (his best reply, each played out by normal), at twice the budget: 20.8 % [17.8,
24.3]. Overruling normal only when the lead is also clear of the spread of the
per-sample differences (one-sided 95 %): 22.7 % [19.5, 26.2]. Twice the budget: 21.2 %
[18.1, 24.6]. Normal's own thresholds (the dear trump rank from 10 to 13, the early
stock at 4) stayed within a point of 28.8 % over 3,000 games.

Where hard lost was looked at next, in 200 of those games (seeds 1000–1199). The seat
that controls the dummy sees its cards and throws in from them: hard lost 7 of 123
games as the controller and 41 of 77 otherwise. And in 24 of its 48 losses, a search
with every card shown found that greedy's own replies would still have let it escape
once the stock was gone: hard gave those up, since with no move escaping best play it
chose by one normal playout. So in a duel's endgame each world is now also searched
against two styles of play, the club player's (normal) and the beginner's (greedy),
and a move that escapes against more of them is preferred (:class:`Versus` in
:mod:`engine.games.durak.players.endgame`); where few deals of the unseen cards are left
(at most ``MAX_SAMPLES``), each is tried once instead of sampled.  On the same seeds the
losses fell to 34, 11 of them still escapable with every card shown (all by the seat
that does not see the dummy), about 20 lost against greedy whatever hard did once the
stock was gone: what is left is mostly the middle game.  Against greedy in 300
two-player games hard is now the fool 15.7 % [12.0, 20.2] of the time on seeds 0–299
(from 18.3 %) and 14.7 % [11.1, 19.1] on seeds 1000–1299 (over 1000–1599 it was
19.7 %); every other cell of hard in ``bench/players.py`` improved too (the README has
the table).  Normal, which plays known endgames out through this search, does not try
the styles: with them it was the fool 23.7 % rather than 28.1 % of two-player games
against greedy, but a choice could take a tenth of a second, and the levels should stay
apart.  Each part alone did less, on seeds 1000–1299: every deal tried once, 19.7 %;
the club style alone, 17.3 %; greedy itself as the opponent in every playout (no search
against it), 20.0 %.
Nor did these do better there: 3,000 positions per style search rather than 500
(14.7 % either way, before ``STYLE_BUDGET``); the styles only in exact or enumerated
worlds, not sampled ones, 15.0 %; the styles from a stock of four, 15.0 %; up to 256
deals enumerated, 16.0 %; twice the ``STYLE_LOSS``, 15.0 %; with no limit on the
positions of one choice (``STYLE_BUDGET``, which keeps the slowest choices under a
second), 13.7 %, within the noise of the 14.7 %.

What the seat without the dummy lacks most is where the last unseen cards lie, between
the opponent and the dummy.  Dealing every hidden hand as it truly is once the stock is
gone (the order of the stock still unknown: cheating, as a bound) left hard the fool
9.3 % of the time on seeds 1000-1299 rather than 14.7 %, nearly all of the 9.0 % that
the true hands throughout give.  So hard now reads the others' choices
(:mod:`engine.games.durak.players.reads`): a deal in which the opponent took while a plain
card beat, or in which the dummy was passed over while holding a card of a rank on the
table, counts for less, or next to nothing.  Where every deal is tried, each counts as
much as it fits: the fool 13.7 % of the time on seeds 1000-1299 (from 14.7 %), 14.7 %
on 0-299 (from 15.7 %) and 15.0 % on 2000-2299 (from 16.0 %).  The true deal then holds
about 30 % of the weight where it held 8 %.  Knowing the true hands only where at most
64 deals are left gave 12.0 %, only where more are left 11.7 %: the sampled endgames
count as much.  So where more than 64 but at most ``MAX_DEALS`` deals are left, hard
now tries the 64 that fit best, each weighed: 11.7 % on seeds 0-299, 13.3 % on
1000-1299, 13.0 % on 2000-2299 (12.7 % over the 900 games, from 15.4 % before the
reads).  Weighing sampled worlds instead did worse, 16.7 % on 1000-1299 (a few heavy
samples make a noisy lead), and so did drawing the 64 deals by weight (14.3 %); odds
closer to the greedy player's changed nothing (13.7 %).

Where hard still lost was asked next of a search that sees every card and the order of
the stock, against greedy's own replies (the bench's opponent): in 24 of 25 losses on
seeds 6000-6199 (with the deals sorted, as below) some line of hard's escaped until one
move gave it up, with at most the trump card left in the stock in 8 of them and with 2
to 9 cards in it in 16, nearly always normal's choice kept (a throw-in or a beat where
passing or taking would have escaped).  In the endgame the deals tried now come
likeliest first, so that the searches against the styles, which stop at
``STYLE_BUDGET``, spend it on them: of 22 endgame choices in lost games it set 5 right
and made none wrong, and over seeds 0-999 hard was the fool 13.0 % of the time rather
than 13.4 %.  Nothing else did better beyond the noise, on the same seeds: three times
the ``STYLE_BUDGET``, 12.9 %, and a margin of two half-samples where deals are tried,
13.0 %; racing in the middle game (every four samples, dropping the moves that trail
normal's choice, so that the rest get more samples), 13.8 % before the sorting.  What
moved the middle game is the playouts.  The others had played normal's heuristics in all
of them, so a move was judged by how it fares against club players alone; now they play
as the beginner in every other sample: over seeds 0-999 11.1 % [9.3, 13.2] (from 13.0
%), over 1000-1999 12.8 % [10.9, 15.0] (from 14.0 %), over 2000-2999 13.7 % [11.7, 16.0]
(12.5 % [11.4, 13.8] over the 3000 games), and against normal 18.3 % on seeds 0-299
(20.7 % before both changes).

The variants (no dummy, transfers, neighbours, five before the first discard, 24
cards) need nothing of their own here: every world is loaded into the engine with the
options the view carries (:class:`engine.games.durak.players.sampling.Position`), so the
playouts and the solver transfer, stop at the cap and let only the neighbours throw in
exactly as the real game does, and normal's heuristics, which play the seat's own moves,
know when a transfer pays.  In two-player perevodnoy on 36 cards against greedy, hard
as it is was the fool 7.0 % [4.9, 9.9] of 400 games (normal 24.2 %).

The work is bounded by fixed counts rather than by the clock, so that equal inputs give
equal moves on any machine: simulated decisions while sampling (the solver's positions
count two to a decision), the style searches' positions (``STYLE_BUDGET``), and where
every deal is tried, the number of deals (at most ``MAX_SAMPLES``, each played out
whatever the budget).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine.games.durak.game import Durak
from engine.games.durak.players.endgame import (
    NODES,
    STYLE_NODES,
    STYLES,
    OutOfNodes,
    Solver,
    Style,
    Versus,
    club,
)
from engine.games.durak.players.heuristics import normal
from engine.games.durak.players.reads import Fit, Reads
from engine.games.durak.players.sampling import (
    Mirror,
    Position,
    World,
    determined,
    every_world,
    sample_world,
)
from engine.games.durak.players.seen import Seen
from engine.games.durak.rules import DurakMove
from engine.games.durak.view import DurakView

# The search starts when the stock holds this many cards or fewer.
SEARCH_STOCK = 12
# How many more samples another move must survive to overrule the normal player.
MARGIN = 2
# Simulated decisions per choice: sized so that a choice takes well under 300 ms.
BUDGET = 2000
MIN_SAMPLES = 4
# What a move loses, in half-samples, for each style it finds no escape against: more
# than the playout's verdict, which is only one line of play.
STYLE_LOSS = 4
# Positions the searches against the styles may visit in one choice, about 100 ms: past
# it, the worlds still to come are only played out (one world may overrun it as much).
STYLE_BUDGET = 5000
# Positions the endgame solver visits in the time of one simulated decision: solving
# draws on the same budget, so that a choice stays as quick as before.
NODES_PER_STEP = 2
MAX_SAMPLES = 64
# The most deals weighed to pick the likeliest MAX_SAMPLES of: six unseen cards in each
# of two hands make 924.
MAX_DEALS = 1000
# Durak can cycle for ever (cards passing round in takes); a playout this long is one
# and counts as a game nobody lost.
PLAYOUT_CAP = 600


def hard(
    view: DurakView,
    seen: Seen,
    legal: Sequence[DurakMove],
    seed: int,
    budget: int = BUDGET,
    *,
    reads: Reads | None = None,
) -> DurakMove:
    """The move to play within ``budget`` simulated decisions (see the module's last
    paragraph for the other bounds)."""
    return search(view, seen, legal, seed, budget, NODES, styles=True, reads=reads)


def search(
    view: DurakView,
    seen: Seen,
    legal: Sequence[DurakMove],
    seed: int,
    budget: int = BUDGET,
    nodes: int = 0,
    styles: bool = False,
    reads: Reads | None = None,
) -> DurakMove:
    """The move that leaves this seat the fool least often in sampled worlds (or in
    every deal, each weighed by how well it fits ``reads``).

    In the endgame each world is first solved (up to ``nodes`` positions in all, see
    :mod:`engine.games.durak.players.endgame`): a move that escapes against every reply
    scores best; in a duel and with ``styles``, next one that escapes against more
    styles of play, then one that escapes in the playout, so a sure escape is never
    traded for a hopeful one."""
    preferred = normal(seen, legal)
    if seen.stock > SEARCH_STOCK or seen.stalled:
        return preferred
    candidates = [preferred, *(m for m in legal if m != preferred)]
    rng = random.Random(seed)
    position = Position(view, seen)
    plan = Plan.of(seen, nodes, styles, reads)
    tally = Tally(seen, candidates, plan)
    nodes, samples = plan.nodes, 0
    while samples < plan.most and (samples < MIN_SAMPLES or tally.spent < budget or plan.tried):
        world, weight = (
            (sample_world(seen, rng), 1.0) if plan.tried is None else plan.tried[samples]
        )
        root = position.game(world)
        # The others play each world's playouts in one style, the styles taking turns:
        # nobody knows whether the table plays like a club or like beginners.
        style = STYLES[samples % len(STYLES)]
        solver = Solver(seen.seat, seen.trump, nodes) if nodes > 0 else None
        sure, solver = tally.world(root, world, weight, style, solver)
        if sure is not None:
            return sure  # the world is the true one: nothing does better
        left = 0 if solver is None else solver.left
        tally.spent += (nodes - left) // NODES_PER_STEP
        nodes = left
        samples += 1
    best = tally.best(samples)
    return preferred if best is None else best


@dataclass(frozen=True, slots=True)
class Plan:
    """How one choice's search samples: how many worlds at most, the lead a move needs
    over normal's choice, the solver's positions, the deals tried (None: sampled) and
    whether moves are judged by the styles they escape against."""

    exact: bool
    most: int
    margin: float
    nodes: int
    tried: list[tuple[World, float]] | None
    styled: bool

    @classmethod
    def of(cls, seen: Seen, nodes: int, styles: bool, reads: Reads | None) -> Plan:
        """The plan for this seat's choice (the reasons are the comments)."""
        # When every hidden card has only one place to be (the opponent's hand, late in a
        # two-player game), every sample is the truth: one is enough, and a lead is sure.
        exact = determined(seen)
        # The lead in ``lost`` that a move needs over normal's choice: 2 × MARGIN at two
        # players, MARGIN at more (measured on the same seeds against greedy: MARGIN at two
        # players left hard the fool in 23.0 % of games rather than 18.3 %; 2 × MARGIN at
        # four players, 15.0 % rather than 10.7 %).
        lead = 2 * MARGIN if seen.n == 2 else MARGIN
        most, margin = (1, 1) if exact else (MAX_SAMPLES, lead)
        # With more than one opponent holding cards, the solver's side of "everyone else"
        # is too gloomy to pay for its cost in samples (three players: the fool 15.3 % of
        # the time against greedy with it, 12.7 % without).
        duel = seen.n - len(seen.out) == 2
        nodes = nodes if seen.stock <= 1 and duel else 0
        # Late in a duel the few unseen cards make few deals: each is tried once, and then
        # the figures are exact, so a lead of one half-sample is a real one (of one in a
        # deal of average weight, once the deals are weighed).
        worlds = None if exact or not duel else every_world(seen, MAX_SAMPLES)
        # The others' choices so far (:mod:`engine.games.durak.players.reads`): where there
        # are more deals, but not many more, the likeliest of them are tried instead.
        fits = [] if reads is None or exact or not duel else reads.fits(seen)
        if worlds is None and fits and seen.stock <= 1:
            worlds = every_world(seen, MAX_DEALS)
        # Where deals are tried, each counts as much as it fits those choices; sampled
        # worlds are not weighed, since a few heavy samples make a noisy lead.
        tried = None if worlds is None else likeliest(worlds, fits)
        if tried is not None:
            most, margin = len(tried), 1
        # In a duel's endgame a move is also judged by the styles of play it escapes
        # against (:mod:`engine.games.durak.players.endgame`): best play may win for the
        # opponent, but people do not play endgames perfectly.
        return cls(exact, most, margin, nodes, tried, duel and styles and seen.stock <= 1)


class Tally:
    """What the worlds tried so far say of each candidate move.

    ``lost`` counts half-samples lost: 0 a sure escape, 1 an escape in the playout, 2 the
    fool, and STYLE_LOSS more for each style of play a move finds no escape against; each
    world's count times its weight (1 unless every deal is tried and weighed)."""

    def __init__(self, seen: Seen, candidates: list[DurakMove], plan: Plan) -> None:
        self.seen = seen
        self.candidates = candidates
        self.plan = plan
        self.lost = [0.0] * len(candidates)
        self.weights = 0.0
        self.spent = 0  # simulated decisions
        self.style_left = STYLE_BUDGET
        self.style_nodes = min(STYLE_NODES, STYLE_BUDGET // (len(candidates) * len(STYLES)))

    def world(
        self, root: Durak, world: World, weight: float, style: Style, solver: Solver | None
    ) -> tuple[DurakMove | None, Solver | None]:
        """Try every candidate in one world: a move sure to escape in the true world, or
        None; and the solver, None once it ran out of positions."""
        seen = self.seen
        self.weights += weight
        # Every move is tried against the styles in the same worlds, or in none.
        styling = self.plan.styled and self.style_left > 0
        for i, move in enumerate(self.candidates):
            game = root.copy()
            mirror = Mirror(seen, world)
            mirror.update(game.apply(move))
            if solver is not None:
                try:
                    if solver.escapes(game):
                        if self.plan.exact:
                            return move, solver
                        continue
                except OutOfNodes:
                    solver = None
            if styling:
                failed, used = unescaped(seen, game, mirror, self.style_nodes)
                self.lost[i] += weight * STYLE_LOSS * failed
                self.style_left -= used
            fool, steps = playout(game, mirror, seen.seat, style)
            self.lost[i] += weight * (2 if fool == seen.seat else 1)
            self.spent += steps
        return None, solver

    def best(self, samples: int) -> DurakMove | None:
        """The move that lost least, if it leads normal's choice (the first) by the plan's
        margin; else None."""
        lost = self.lost
        best = min(range(len(self.candidates)), key=lambda i: (lost[i], i))
        if lost[best] <= lost[0] - self.plan.margin * self.weights / samples:
            return self.candidates[best]
        return None


def fitness(fits: list[tuple[int, Fit]], world: World) -> float:
    """How likely the others' choices were in ``world`` (1 with nothing to read)."""
    weight = 1.0
    for who, fit in fits:
        weight *= fit.weight(world.hands[who])
    return weight


def likeliest(worlds: list[World], fits: list[tuple[int, Fit]]) -> list[tuple[World, float]]:
    """The ``MAX_SAMPLES`` of ``worlds`` that fit ``fits`` best, each with its
    :func:`fitness`, the best first (ties in their order): the searches against the
    styles may run out of positions before the last worlds, which should then be the
    least likely."""
    weighed = [(world, fitness(fits, world)) for world in worlds]
    return sorted(weighed, key=lambda pair: -pair[1])[:MAX_SAMPLES]


def unescaped(seen: Seen, game: Durak, mirror: Mirror, nodes: int) -> tuple[int, int]:
    """How many of the styles of play the seat finds no escape against (or none within
    ``nodes`` positions each) in this world, and the positions visited."""
    count = used = 0
    for style in STYLES:
        versus = Versus(seen.seat, seen.trump, style, nodes)
        try:
            count += not versus.escapes(game.copy(), mirror.copy())
        except OutOfNodes:
            count += 1
        used += nodes - max(versus.left, 0)
    return count, used


def playout(game: Durak, mirror: Mirror, seat: int, style: Style) -> tuple[int | None, int]:
    """Play on, ``seat`` as normal plays and everyone else in ``style``; the fool and
    the steps."""
    steps = 1
    while True:
        actor = game.to_act()
        if actor is None:
            result = game.result()
            return (None if result is None else result["fool"]), steps
        if steps >= PLAYOUT_CAP:
            return None, steps
        legal = game.legal_moves()
        if len(legal) == 1:
            move = legal[0]
        else:
            move = (club if actor.player == seat else style)(mirror, actor, legal)
        mirror.update(game.apply(move))
        steps += 1
