"""The PyPI package `durakgame` (2-player, 36 cards) played at random, for bench/engine.py.

One decision is what ours counts: list the options of the player to move and apply one
chosen uniformly. durakgame lists every subset of cards to add after a take as one option
(``FinishingMove``), so some positions have hundreds of thousands of options; games in
which a list would exceed ``MAX_OPTIONS`` are skipped and counted, their time and
decisions left out. The size of that list is computed first (:func:`_finishing_options`,
following ``Game.generateAttackOptions``), so that a skipped game costs nothing to find.

The package is a benchmark peer only, not a project dependency:
``.venv/bin/pip install durakgame``.
"""

from __future__ import annotations

import random
import time
from math import comb
from typing import Any

MAX_OPTIONS = 20_000
MAX_DECISIONS = 10_000  # durakgame has no bound of its own; none of ours comes close


def _finishing_options(game: Any) -> int:
    """How many options ``game.generateOptions()`` is about to list after a take (else 0)."""
    table = game.table
    if table.isEmpty or game.turn != game.move or not table.isForfeited:
        return 0
    most = game.config.MaxTossAD if game.discardPile else game.config.MaxTossBD
    if len(table.defense) == most or not game.currentOpponent.hand:
        return 0
    ranks = table.getTossableValues()
    candidates = sum(1 for card in game.currentPlayer.hand if card.value in ranks)
    opponent = len(table.defense) + len(game.currentOpponent.hand)
    room = min(opponent, game.config.HandCC) - len(table.attack)
    return sum(comb(candidates, k) for k in range(min(candidates, room) + 1))


def measure(games: int, seed: int) -> dict[str, Any]:
    """Decisions per second over ``games`` random games seeded from ``seed``."""
    try:
        from durakgame import Player, standardDeck
        from durakgame.game import Game
    except ImportError as exc:
        raise ImportError(f"durakgame is not installed ({exc}); pip install durakgame") from None

    decisions = skipped = played = 0
    elapsed = 0.0
    for index in range(games):
        rng = random.Random(seed * 1_000_003 + index)
        deck = standardDeck()
        rng.shuffle(deck)
        start = time.perf_counter()
        game = Game(deck, Player(), Player())
        count = 0
        while not game.isFinished and count < MAX_DECISIONS:
            if _finishing_options(game) > MAX_OPTIONS:
                break
            options = game.generateOptions()
            if len(options) > MAX_OPTIONS:
                break
            game.process(rng.choice(options))
            count += 1
        spent = time.perf_counter() - start
        if not game.isFinished:
            skipped += 1
            continue
        played += 1
        decisions += count
        elapsed += spent
    return {
        "decisions_per_s": decisions / elapsed if elapsed else 0.0,
        "games": played,
        "skipped": skipped,
    }


if __name__ == "__main__":
    print(measure(500, seed=1))
