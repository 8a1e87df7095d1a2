"""The standings' Redis keys, one place for their layout.

Keys (under :data:`bot.core.keys.KEY_PREFIX`, without the games' TTL; ``<kind>`` is
``football`` or ``durak``; a forum topic counts for its group, so ``<chat>`` is the group).
A group's figures are in a hash slot of their own (``{g<chat>}``), every person's in the
one slot ``{st}``: a game is counted in two scripts of one slot each (the group's, then
the people's: bot.tables.stats.count), and each group's and person's keys are found
without a SCAN (its index)::

    ct:{g<chat>}:st:<kind>:<uid>  hash: a person's figures in a group: n (games), fool,
                                  draw, first (went out first), won, lost, gf, ga (goals
                                  for, against), cur / best (streak now, longest), mu,
                                  sigma (his rating in the group), name
    ct:{g<chat>}:st:<kind>:board  sorted set: uid -> shown rating (mu - 3 sigma), for the
                                  people with at least MIN_GAMES games there
    ct:{g<chat>}:st:<kind>:h2h    hash: "<a>><b>": games a finished above b; "<a>&<b>"
                                  (a < b): games they played together
    ct:{g<chat>}:st:people        set: the people with figures in the group (its index:
                                  a supergroup's move and a rebuild find them by it)
    ct:{g<chat>}:st:counted:<game id>:<deal>   the game's group step was counted; its
                                  value says who moved up on the board
    ct:{st}:p:<uid>:<kind>        hash: his figures across all groups, his overall rating
                                  and ``tr``, his last shown ratings (the trend)
    ct:{st}:c:<uid>:<kind>:<level>  hash: his figures against the computer at that level
                                  (games with a computer seat count only here)
    ct:{st}:v:<uid>:<kind>        set: the variants of the game he has figures in across
                                  groups (each its options as canonical JSON,
                                  bot.tables.stats.finished.Finished.variant)
    ct:{st}:v:<uid>:<kind>:<hash>   hash: his figures in one of them (<hash>: of its JSON),
                                  counted as ct:{st}:p's and unrated (the rating is the
                                  game's, one for all its variants)
    ct:{st}:in:<uid>              set: the groups where he has figures (for /forgetme)
    ct:{st}:counted:<game id>:<deal>   the game was counted, both steps (<deal>: a hash of
                                  its deal, bot.tables.stats.finished.deal_digest); its
                                  value says who moved up on the board. Its TTL outlives
                                  the table's key (it is renewed each time the
                                  finished table is delivered).
    ct:{st}:posted:<chat>:<thread>:<game id>   the result's Standings button has posted
                                  the board (once per game; an hour)
"""

from __future__ import annotations

import hashlib
from typing import Any

from bot.core import replies
from bot.core.keys import KEY_PREFIX
from engine.registry import GAMES

# The games by name: the standings' order, whose first is also the board shown when a
# group has played each game equally often.
KINDS = tuple(sorted(GAMES))
ST = f"{KEY_PREFIX}:{{st}}"  # every person's figures: one slot


def group_prefix(chat: int) -> str:
    """The start of every key of a group's standings (their slot: the group's)."""
    return f"{KEY_PREFIX}:{{g{chat}}}:st"


def group_key(chat: int, kind: str, uid: int) -> str:
    return f"{group_prefix(chat)}:{kind}:{uid}"


def board_key(chat: int, kind: str) -> str:
    return f"{group_prefix(chat)}:{kind}:board"


def h2h_key(chat: int, kind: str) -> str:
    return f"{group_prefix(chat)}:{kind}:h2h"


def people_key(chat: int) -> str:
    return f"{group_prefix(chat)}:people"


def group_marker_key(chat: int, game_id: str, deal: str) -> str:
    return f"{group_prefix(chat)}:counted:{game_id}:{deal}"


def person_key(uid: int, kind: str) -> str:
    return f"{ST}:p:{uid}:{kind}"


def computer_key(uid: int, kind: str, level: str) -> str:
    return f"{ST}:c:{uid}:{kind}:{level}"


def variants_key(uid: int, kind: str) -> str:
    return f"{ST}:v:{uid}:{kind}"


def variant_key(uid: int, kind: str, variant: str) -> str:
    digest = hashlib.blake2b(variant.encode(), digest_size=6).hexdigest()
    return f"{ST}:v:{uid}:{kind}:{digest}"


def groups_key(uid: int) -> str:
    return f"{ST}:in:{uid}"


def marker_key(game_id: str, deal: str) -> str:
    return f"{ST}:counted:{game_id}:{deal}"


def posted_key(chat: int, thread: int, game_id: str) -> str:
    return f"{ST}:posted:{chat}:{thread}:{game_id}"


def decoded(raw: Any) -> str:
    return "" if raw is None else replies.text(raw)
