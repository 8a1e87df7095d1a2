"""Translation speed: what one :func:`bot.core.i18n.t` call costs (every render makes
dozens), and what reading the catalogues costs a process when it first needs them.

It uses only ``t`` and ``LANGS``, so the same script times any version of the module
(run it with the older tree first on PYTHONPATH to compare):

    .venv/bin/python bench/i18n.py [--repeat R] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.i18n import LANGS, t

ROOT = Path(__file__).resolve().parent.parent

# Calls the renderers make: a bare text, one with a name to escape, a count in words.
CASES: dict[str, Callable[[str], Any]] = {
    "bare text": lambda lang: t(lang, "durak.btn.take"),
    "text with a name": lambda lang: t(lang, "common.turn", name="Ann & <Bob>"),
    "three parameters": lambda lang: t(lang, "durak.header", trump="♠", stock=12, discard=8),
    "plural": lambda lang: t(lang, "settings.deck", n=21),
    "plural with a name": lambda lang: t(lang, "event.durak.took", seat="Ann", count=3),
}
# The first use in a fresh process: import the module and read every language's texts.
_COLD = """
import time
started = time.perf_counter()
from bot.core.i18n import LANGS, t
for lang in LANGS:
    t(lang, "lobby.pick")
print(time.perf_counter() - started)
"""


def per_call(case: Callable[[str], Any], repeat: int, number: int) -> float:
    """Nanoseconds per call, the best of ``repeat`` runs over every language (the other
    runs are the same work slowed by whatever else the machine does)."""
    for lang in LANGS:
        case(lang)  # the catalogues are read before the clock starts
    runs = [
        timeit.timeit(lambda: [case(lang) for lang in LANGS], number=number) / (number * len(LANGS))
        for _ in range(repeat)
    ]
    return min(runs) * 1e9


def cold(repeat: int) -> float:
    """Milliseconds from import to every language's first text, the best of ``repeat``
    fresh processes."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    runs = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", _COLD],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        runs.append(float(done.stdout))
    return min(runs) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (the best)")
    parser.add_argument("--number", type=int, default=20_000, help="calls per run and language")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    started = time.perf_counter()
    figures: dict[str, Any] = {
        "languages": list(LANGS),
        "t_ns": {name: round(per_call(c, args.repeat, args.number)) for name, c in CASES.items()},
        "cold_ms": round(cold(args.repeat), 1),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"t() per call, best of {args.repeat} runs over {', '.join(LANGS)}:")
    for name, ns in figures["t_ns"].items():
        print(f"  {name:<20} {ns:>6} ns")
    print(f"import and first text in every language (fresh process): {figures['cold_ms']} ms")
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
