"""``python -m bot.tables.stats rebuild FILES…``: groups' standings counted from records.

For after a bug, or a new Redis: the records count as live counting would have counted
them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import redis.asyncio as aioredis

from bot.tables.stats.standings import rebuild
from engine.base import MalformedRecord


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bot.tables.stats rebuild FILES…``: rebuild groups' standings from records
    (REDIS_URL says where; GAME_TTL as for the bot)."""
    parser = argparse.ArgumentParser(prog="python -m bot.tables.stats")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("rebuild", help="count game records into their groups' standings")
    cmd.add_argument("files", nargs="+", type=Path, help="records, in the order played")
    args = parser.parse_args(argv)
    url = os.environ.get("REDIS_URL")
    if not url:
        print("REDIS_URL is not set", file=sys.stderr)
        return 2
    ttl = int(os.environ.get("GAME_TTL", 2 * 24 * 3600))

    async def run() -> int:
        client = aioredis.Redis.from_url(url)
        try:
            return await rebuild(client, args.files, ttl)
        finally:
            await client.aclose()

    try:
        counted = asyncio.run(run())
    except (MalformedRecord, OSError, json.JSONDecodeError) as exc:
        print(f"not rebuilt: {exc}", file=sys.stderr)
        return 1
    print(f"{counted} games counted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
