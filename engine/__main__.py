"""``python -m engine replay FILE|-``: replay a game record (docs/records.md §6)."""

from __future__ import annotations

import json
import sys

from engine.base import MalformedRecord
from engine.records import parse, replay

USAGE = "usage: python -m engine replay FILE|-"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "replay":
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if argv[1] == "-":
            text = sys.stdin.buffer.read()
        else:
            with open(argv[1], "rb") as handle:
                text = handle.read()
    except OSError as exc:
        print(f"cannot read {argv[1]}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        output = replay(parse(text))
    except MalformedRecord as exc:
        print(f"malformed record: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    print(json.dumps(output, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
