"""Every key the bot keeps in Redis, and the fields of a table's hash.

The layout lets the bot run on one Redis server or on a Redis Cluster alike (docs/redis.md):
keys that one script or transaction touches together carry the same *hash tag*, the part
in braces, which alone decides a key's slot in a cluster. ``ct`` is :data:`KEY_PREFIX`,
which the environment variable ``CARDTABLE_KEY_PREFIX`` replaces; ``<n>`` is a bucket,
0 to :data:`BUCKETS` - 1: ``crc32(str(chat_id)) % 16`` (:func:`bucket`), an inline
table's by its topic number instead (their "chat" is one for all of them).

A table (one Redis hash per group chat or per forum topic) and what indexes it, in the
slot of its bucket ``{b<n>}`` (all of them worked out by :func:`family`)::

    ct:{b<n>}:table:<chat_id>:<thread_id or 0>
        v          version, a decimal integer; bumped by every committed change
        d          the Table as JSON (bot data + the engine state JSON)
        m:table    Slot JSON of the group message (lobby, then the table, then the result)
        m:u<uid>   Slot JSON of user <uid>'s private message: his lobby confirmation,
                   then his hand
        m:e<uid>   Slot JSON of user <uid>'s ephemeral message in the group (only he sees
                   it; docs/ephemeral.md): his lobby confirmation, then his hand, when
                   his hand lives in the group
        x:<chat>:<message>  a message to delete (superseded): the next delivery deletes
                   it (a delivery whose release is lost removes what it sent itself:
                   bot.service.messages.unsaved)
        x:<chat>:<message>:<uid>  the same for a superseded ephemeral message to user
                   <uid> in the group <chat> (its ephemeral id): deleted, else stripped of
                   its buttons, and until then a tap on it is stale
        lease      "<process>|<expiry ms>": the process that is bringing the messages up
                   to date (the delivery lease), renewed while it works
        born       the version that began the game (a new game's first commit): a
                   delivery of an older version saves no messages into it
        moved      the key the table is moving to (its group became a supergroup, whose
                   chat id is in another bucket): the table is frozen here, and taken
                   for none, until the move drops it (bot.core.store.Store.move)
        from       on the new key: the key it was moved from (a move run again finds
                   its own work done)

    ct:{b<n>}:due  sorted set of the bucket's table keys, scored by when they are due
                   (ms): messages left for later (coalesced, held back by the rate limits,
                   refused by flood control), and, while a delivery runs, its lease's
                   expiry (if the holder dies, a live process delivers once the lease has
                   run out). Every process polls the 16 buckets (bot.core.polls).
    ct:{b<n>}:turns  sorted set of the bucket's table keys, scored by when their automatic
                   move is due (bot.service.turns), polled the same way
    ct:{b<n>}:chat:<chat_id>  set of the keys of that chat's tables (its topics): what is
                   dropped when the bot leaves the chat, or told when it becomes an
                   administrator there, is found without a SCAN. Kept by the commit
                   (not for inline tables), as long as the chat's longest-lived table.
    ct:{b<n>}:barrier  "1" for a second after a Mini App page read a table of the bucket,
                   where replicas are awaited: the read's barrier, which its WAIT waits
                   for (bot.core.replicas.Replicas.read)

Each of its scripts (bot.core.scripts) touches one table and the indexes of its bucket:
one slot. The buckets spread the sets that every process polls and every commit writes
over 16 slots (so over the cluster's nodes), no one key taking every move.

    ct:closed:<uid>  set of the table keys where user <uid>'s private chat refused us
                   (his seat's ``dm_ok`` is false): when he opens the chat again (/start),
                   his hands there are shown (bot.service.delivery.reopen)

    ct:place:<uid>  "group" or "private": where user <uid> chose to keep his hands (none:
                   the HANDS setting's); his seats take it when he sits down. No expiry:
                   it is his standing choice (a few bytes a player), as the standings
                   are; /forgetme erases it with them

    ct:set:<uid>:<game>  the settings (GameSettings JSON) of the last game of that kind
                   user <uid> started: an inline query offers it "as he last set it up"
                   (bot.handlers.inline). No expiry, as ct:place; /forgetme erases it

    ct:changed     a pub/sub channel, not a key: every commit is announced there as
                   "<version> <table key>" once a replica has it (bot.core.store; a
                   process with Mini App pages open follows its tables by it:
                   bot.webapp.server). Channels are shared by every database of the
                   server: a notice is only a reason to read.

The shared rate limits (bot.core.limiter), all in the one slot ``{rl}``: a grant checks
and pushes the whole bot's bucket and its chats' in one script::

    ct:{rl}:all, ct:{rl}:c:<chat_id>  the buckets
    ct:{rl}:learned  sorted set of group chat ids, scored by when (ms, the limiter's clock)
                   their hands stop counting against the group's own limit: an hour after
                   Telegram's 429s to two players' hands there taught it (bot.core.budget);
                   what ended is dropped when the next group learns, the set an hour after
                   the last did
    ct:{rl}:refused:<chat_id>  sorted set of the players whose hands in that group met a
                   429, scored by when (ms, the limiter's clock); those older than
                   budget.LEARN_WINDOW are dropped at each new one
    ct:{rl}:cool:<user_id>  when (ms, the limiter's clock) his My cards / place switch
                   cooldown ends (bot.core.budget.RENEW_COOLDOWN)

    ct:upd:<update_id>  "busy" while a process handles that update, then "done" for an
                   hour: a redelivered update is dropped (bot.handlers.once)
    ct:{i<n>}:inbox  16 streams of the webhook's updates (field ``u``: the update's JSON),
                   an update in the stream of its chat's bucket (else of its update_id
                   % 16), each stored before its 200 and deleted once handled; each
                   stream's consumer group ``workers`` holds each entry a worker has read
                   until it is done, for another worker to take over should that one die
                   (bot.core.inbox)
    ct:member:<chat_id>:<uid>  "1" for a minute after Telegram said that <uid> is in the
                   group <chat_id> (joining needs it; bot.handlers.members)
    ct:init:<hash>  "1" once a Mini App page exchanged the initData of that signature
                   (its ``hash`` field) for a session, until that initData's own age limit:
                   a second exchange of it is a replay (bot.webapp.auth)
    ct:{g<chat>}:st:..., ct:{st}:...  the standings: a group's in its own slot, every
                   person's in one (their layout is documented in bot.tables.stats.keys)
    ct:layout      the key layout this data is in ("2": the hash-tagged one above); a
                   start finding the older one renames its keys once (bot.tables.layout)
"""

from __future__ import annotations

import os
import zlib
from functools import lru_cache
from typing import NamedTuple

# The first part of every key. bench/bot.py sets a prefix of its own, so that it can share
# a Redis database with a running bot and afterwards remove its own keys and nothing else.
KEY_PREFIX = os.environ.get("CARDTABLE_KEY_PREFIX", "ct")
CHANGED = f"{KEY_PREFIX}:changed"
LAYOUT_KEY = f"{KEY_PREFIX}:layout"
LAYOUT = "2"  # the hash-tagged layout of this module's docstring
SLOT = "m:"  # the fields that remember a message shown (see the module docstring)
JUNK = "x:"
MOVED_FIELD = "moved"
BORN_FIELD = "born"
FROM_FIELD = "from"
BUCKETS = 16  # of tables (with their due and turn sets) and of the inbox's streams


def bucket(chat_id: int, thread_id: int | None = None) -> int:
    """The bucket of a chat's tables: of its id, an inline table's of its topic number
    (every inline table has the one "chat" INLINE_CHAT, 0)."""
    named = thread_id if chat_id == 0 and thread_id else chat_id
    return zlib.crc32(str(named).encode()) % BUCKETS


_TAGS = tuple(f"{KEY_PREFIX}:{{b{n}}}" for n in range(BUCKETS))  # each bucket's hash tag
DUE_KEYS = tuple(f"{tag}:due" for tag in _TAGS)
TURN_KEYS = tuple(f"{tag}:turns" for tag in _TAGS)


class Family(NamedTuple):
    """A table's key with the keys of its bucket that its scripts touch with it, all in
    one slot (the module docstring): worked out in one place, :func:`family`."""

    table: str
    bucket: int
    due: str  # the bucket's due set
    turns: str  # the bucket's turn set
    chat_index: tuple[str, ...]  # its chat's set of table keys; none for an inline table
    barrier: str  # the bucket's barrier of a read that waits for a replica


@lru_cache(maxsize=4096)
def family(chat_id: int, thread_id: int | None = None) -> Family:
    """The keys of the table of a chat (or of its topic ``thread_id``); spelled once per
    table (a tap names its table's keys some five times, and a delivery as often)."""
    n = bucket(chat_id, thread_id)
    tag = _TAGS[n]
    index = (f"{tag}:chat:{chat_id}",) if chat_id else ()
    table = f"{tag}:table:{chat_id}:{thread_id or 0}"
    return Family(table, n, DUE_KEYS[n], TURN_KEYS[n], index, f"{tag}:barrier")


@lru_cache(maxsize=4096)
def family_of(key: str) -> Family:
    """The keys that go with a table key (its chat and topic are its last two parts)."""
    try:
        chat, thread = key.rsplit(":", 2)[1:]
        found = family(int(chat), int(thread))
    except ValueError:
        found = None
    if found is None or found.table != key:  # an old layout's key, or none of a table
        raise ValueError(f"not a table key: {key}")
    return found


def table_key(chat_id: int, thread_id: int | None) -> str:
    return family(chat_id, thread_id).table


def init_key(signature: str) -> str:
    return f"{KEY_PREFIX}:init:{signature}"


def closed_key(user_id: int) -> str:
    return f"{KEY_PREFIX}:closed:{user_id}"


def user_slot(user_id: int) -> str:
    return f"{SLOT}u{user_id}"


def group_slot(user_id: int) -> str:
    """The slot of ``user_id``'s ephemeral hand in the group."""
    return f"{SLOT}e{user_id}"


def place_key(user_id: int) -> str:
    return f"{KEY_PREFIX}:place:{user_id}"


def inviter_key(user_id: int) -> str:
    """His seat as his last inline query offered it (name, language): an invitation
    tapped before its pick is reported seats him from it (bot.handlers.inline)."""
    return f"{KEY_PREFIX}:inviter:{user_id}"


def settings_key(user_id: int, kind: str) -> str:
    return f"{KEY_PREFIX}:set:{user_id}:{kind}"


def junk_field(chat_id: int, message_id: int, receiver: int = 0) -> str:
    """The junk field of a message (``receiver``: an ephemeral message to him)."""
    tail = f":{receiver}" if receiver else ""
    return f"{JUNK}{chat_id}:{message_id}{tail}"


class Junk(NamedTuple):
    """A message to remove (a table's ``x:`` field)."""

    chat_id: int
    message_id: int
    strip: bool  # only its buttons are taken away
    receiver: int  # the receiver of an ephemeral message, or 0


TABLE_SLOT = f"{SLOT}table"
