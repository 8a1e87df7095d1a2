"""Engine speed: random self-play per case (durak in the seed's game and each variant), and
durak side by side with `durakgame`.

One *decision* is listing the legal moves of the participant to act and applying one of
them chosen uniformly at random, exactly what a bot or a search does per step. Time is
this process's CPU time (``time.process_time``), so that a machine other work shares
still gives comparable figures.

    .venv/bin/python bench/engine.py [--seconds S] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.base import Game
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.games.football.game import Football
from engine.games.football.rules import FootballOptions

DeckSize = Literal[36, 52]
DurakDeck = Literal[24, 36, 52]
NAMES = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay"]


def football(deck_size: DeckSize, decks: int = 1) -> Callable[[int], Game]:
    options = FootballOptions(deck_size=deck_size, decks=decks)
    return lambda seed: Football.new(options, NAMES[:2], seed=seed)


def durak(players: int, deck_size: DurakDeck, **variant: Any) -> Callable[[int], Game]:
    options = DurakOptions.model_validate({"deck_size": deck_size, **variant})
    return lambda seed: Durak.new(options, NAMES[:players], dealer=seed % players, seed=seed)


PODKIDNOY = {"dummy": False}
PEREVODNOY = {"dummy": False, "transfer": True}


CASES: list[tuple[str, Callable[[int], Game]]] = [
    ("football 1x36", football(36)),
    ("football 1x52", football(52)),
    ("durak 2p/36", durak(2, 36)),
    ("durak 4p/36", durak(4, 36)),
    ("durak 6p/52", durak(6, 52)),
    ("durak 2p/36 dummy_plays", durak(2, 36, dummy_plays=True)),
    ("durak 4p/36 dummy_plays", durak(4, 36, dummy_plays=True)),
    ("durak 6p/52 dummy_plays", durak(6, 52, dummy_plays=True)),
    ("durak 2p/24 five", durak(2, 24, five_before_discard=True)),
    ("podkidnoy 2p/36", durak(2, 36, **PODKIDNOY)),
    ("podkidnoy 4p/24 whole deck", durak(4, 24, **PODKIDNOY)),
    ("podkidnoy 6p/36 whole deck", durak(6, 36, **PODKIDNOY)),
    ("podkidnoy 6p/52 neighbours", durak(6, 52, throw_in="neighbours", **PODKIDNOY)),
    ("perevodnoy 2p/36", durak(2, 36, **PEREVODNOY)),
    ("perevodnoy 4p/36", durak(4, 36, **PEREVODNOY)),
    ("perevodnoy 4p/36 neighbours", durak(4, 36, throw_in="neighbours", **PEREVODNOY)),
    ("perevodnoy 6p/36 whole deck", durak(6, 36, **PEREVODNOY)),
]


def play(game: Game, rng: random.Random) -> int:
    """Play one game to the end at random; returns the number of decisions."""
    decisions = 0
    while not game.is_finished():
        game.apply(rng.choice(game.legal_moves()))
        decisions += 1
    return decisions


def speed(make: Callable[[int], Game], seconds: float) -> tuple[float, float]:
    """Games/s and decisions/s over whole games for about ``seconds``."""
    games = decisions = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds or games == 0:
        decisions += play(make(games), random.Random(games))
        games += 1
    elapsed = time.process_time() - start
    return games / elapsed, decisions / elapsed


def serialisation(make: Callable[[int], Game], games: int) -> tuple[int, float]:
    """Largest state JSON seen in any position, and the mean JSON round trip (µs)."""
    largest = 0
    trips: list[float] = []
    for seed in range(games):
        game, rng = make(seed), random.Random(seed)
        while True:
            t0 = time.process_time()
            text = game.to_json()
            type(game).from_json(text)
            trips.append(time.process_time() - t0)
            largest = max(largest, len(text.encode()))
            if game.is_finished():
                break
            game.apply(rng.choice(game.legal_moves()))
    return largest, statistics.fmean(trips) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="timed play per case")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--peer-games", type=int, default=2000, help="durakgame games")
    args = parser.parse_args()

    rows = []
    for name, make in CASES:
        games_per_s, decisions_per_s = speed(make, args.seconds)
        state_bytes, roundtrip_us = serialisation(make, 20)
        rows.append(
            {
                "case": name,
                "games_per_s": round(games_per_s, 1),
                "decisions_per_s": round(decisions_per_s),
                "state_json_bytes": state_bytes,
                "json_roundtrip_us": round(roundtrip_us, 1),
            }
        )
        row = rows[-1]
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(
                f"{name:30} {row['games_per_s']:>9} games/s {row['decisions_per_s']:>9} "
                f"decisions/s  state ≤ {state_bytes} B  round trip {row['json_roundtrip_us']} µs",
                flush=True,
            )

    ours = next(r["decisions_per_s"] for r in rows if r["case"] == "durak 2p/36")
    try:
        from bench.peer_durakgame import measure

        peer = measure(args.peer_games, seed=1)
    except ImportError as exc:
        print(f"durakgame side by side skipped: {exc}", file=sys.stderr)
        return
    row = {
        "case": "durakgame 2p/36 (peer)",
        **peer,
        "ratio": round(ours / peer["decisions_per_s"], 2),
    }
    if args.json:
        print(json.dumps(row))
    else:
        print(
            f"{row['case']:26} {peer['decisions_per_s']:>9.0f} decisions/s over {peer['games']} "
            f"games ({peer['skipped']} skipped: option list > 20,000); ours/peer = {row['ratio']}x"
        )


if __name__ == "__main__":
    main()
