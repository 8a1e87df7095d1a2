"""Every key the bot keeps in Redis, and the fields of a table's hash.

Key layout (one Redis hash per table, i.e. per group chat or per forum topic); ``ct`` is
:data:`KEY_PREFIX`, which the environment variable ``CARDTABLE_KEY_PREFIX`` replaces::

    ct:table:<chat_id>:<thread_id or 0>
        v          version, a decimal integer; bumped by every committed change
        d          the Table as JSON (bot data + the engine state JSON)
        m:table    Slot JSON of the group message (lobby, then the table, then the result)
        m:u<uid>   Slot JSON of user <uid>'s private message: his lobby confirmation,
                   then his hand
        m:e<uid>   Slot JSON of user <uid>'s ephemeral message in the group (only he sees
                   it; docs/ephemeral.md): his lobby confirmation, then his hand, when
                   his hand lives in the group
        x:<chat>:<message>  a message to delete (superseded, or sent by a delivery that
                   lost its lease): the next delivery deletes it
        x:<chat>:<message>:<uid>  the same for a superseded ephemeral message to user
                   <uid> in the group <chat> (its ephemeral id): deleted, else stripped of
                   its buttons, and until then a tap on it is stale
        lease      "<process>|<expiry ms>": the process that is bringing the messages up
                   to date (the delivery lease), renewed while it works

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

    ct:due         sorted set of table keys, scored by when they are due (ms): messages
                   left for later (coalesced, held back by the rate limits, refused by
                   flood control), and, while a delivery runs, its lease's expiry (if the
                   holder dies, a live process delivers once the lease has run out).
                   Every process polls it.

    ct:turns       sorted set of table keys, scored by when their automatic move is due
                   (bot.service.turns)

    ct:changed     a pub/sub channel, not a key: every commit publishes
                   "<version> <table key>" on it (a process with Mini App pages open
                   follows its tables by it: bot.webapp.server). Channels are shared by
                   every database of the server: a notice is only a reason to read.

    ct:rl:all, ct:rl:c:<chat_id>  the shared rate-limit buckets (bot.core.limiter)
    ct:rl:learned  sorted set of group chat ids, scored by when (ms, the limiter's clock)
                   their hands stop counting against the group's own limit: an hour after
                   Telegram's 429s to two players' hands there taught it (bot.core.budget);
                   what ended is dropped when the next group learns, the set an hour after
                   the last did
    ct:rl:refused:<chat_id>  sorted set of the players whose hands in that group met a 429,
                   scored by when (ms, the limiter's clock); those older than
                   budget.LEARN_WINDOW are dropped at each new one
    ct:rl:cool:<user_id>  when (ms, the limiter's clock) his My cards / place switch
                   cooldown ends (bot.core.budget.RENEW_COOLDOWN)

    ct:upd:<update_id>  "busy" while a process handles that update, then "done" for an
                   hour: a redelivered update is dropped (bot.handlers.once)
    ct:inbox       a stream of the webhook's updates (field ``u``: the update's JSON),
                   each stored before its 200 and deleted once handled; its consumer group
                   ``workers`` holds each entry a worker has read until it is done, for
                   another worker to take over should that one die (bot.core.inbox)
    ct:member:<chat_id>:<uid>  "1" for a minute after Telegram said that <uid> is in the
                   group <chat_id> (joining needs it; bot.handlers.members)
    ct:init:<hash>  "1" once a Mini App page exchanged the initData of that signature
                   (its ``hash`` field) for a session, until that initData's own age limit:
                   a second exchange of it is a replay (bot.webapp.auth)
    ct:st:...      the standings: per group and per person, without a TTL (their layout
                   is documented in bot.tables.stats.keys)
"""

from __future__ import annotations

import os
from typing import NamedTuple

# The first part of every key. bench/bot.py sets a prefix of its own, so that it can share
# a Redis database with a running bot and afterwards remove its own keys and nothing else.
KEY_PREFIX = os.environ.get("CARDTABLE_KEY_PREFIX", "ct")
DUE_KEY = f"{KEY_PREFIX}:due"
CHANGED = f"{KEY_PREFIX}:changed"
TURNS_KEY = f"{KEY_PREFIX}:turns"
SLOT = "m:"  # the fields that remember a message shown (see the module docstring)
JUNK = "x:"


def table_key(chat_id: int, thread_id: int | None) -> str:
    return f"{KEY_PREFIX}:table:{chat_id}:{thread_id or 0}"


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
