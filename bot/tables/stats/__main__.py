"""``python -m bot.tables.stats rebuild FILES…``: groups' standings counted from records.

For after a bug, or a new Redis: the records count as live counting would have counted
them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from bot.core import connect
from bot.core.config import PlaySettings, RedisSettings, wrong
from bot.tables.stats.standings import rebuild
from engine.base import MalformedRecord


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bot.tables.stats rebuild FILES…``: rebuild groups' standings from records
    (REDIS_URL, and REDIS_CLUSTER or REDIS_SENTINELS as for the bot, say where; GAME_TTL
    as for the bot: read, and checked, as the bot reads them, from the environment and a
    ``.env`` file)."""
    parser = argparse.ArgumentParser(prog="python -m bot.tables.stats")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("rebuild", help="count game records into their groups' standings")
    cmd.add_argument("files", nargs="+", type=Path, help="records, in the order played")
    args = parser.parse_args(argv)
    try:
        where, play = RedisSettings(), PlaySettings()
    except ValidationError as exc:
        print(f"bad settings: {wrong(exc)}", file=sys.stderr)
        return 2
    if not where.uses_redis:
        print("REDIS_URL is not set", file=sys.stderr)
        return 2

    async def run() -> int:
        client = connect.client(where, connect.START_TIMEOUT)
        try:
            return await rebuild(client, args.files, play.game_ttl)
        finally:
            await connect.close(client)

    try:
        counted = asyncio.run(run())
    except (MalformedRecord, OSError, json.JSONDecodeError) as exc:
        print(f"not rebuilt: {exc}", file=sys.stderr)
        return 1
    print(f"{counted} games counted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
