"""callback_data: a compact, strictly decoded address of a tap.

Format (ASCII, at most 64 bytes)::

    <chat>:<thread>:<game><action><arg>

- ``chat``: the group's chat id in base 36, ``-`` for a negative id (``-1001234567890`` is
  ``-cryl7kya``; chat ids fit in 52 bits, so 12 characters at most);
- ``thread``: the forum topic id in base 36, empty when the table is not in a topic;
- ``game``: the table's game id, exactly :data:`GAME_ID_LEN` base-36 characters;
- ``action``: one letter (:class:`Action`);
- ``arg``: the rest, printable ASCII without spaces (an option, a card index...); for a
  move, a :data:`STAMP_LEN`-character stamp of the position it was offered in (the number
  of moves made so far) followed by the engine's move token.

The stamp makes a move button mean "this move, in that position": a double tap, or an
update Telegram delivers twice, reaches the bot after the first tap changed the position,
and must not make a second move even when the same move is legal again (football: the
ball advanced once is often asked to advance again). Exactly one participant acts at any
moment, so a button offered in the current position is never refused for being old.

Worst case: chat 12 + thread 6 + game 4 + separators 2 + action 1 + stamp 3 = 28 bytes,
leaving 36 for the token; the engines' longest token in a button is 8 bytes (a durak beat
for the dummy, ``db10H10S``; the football set-up is built by the bot step by step).

The group's chat and topic are in the data because hand messages live in private chats: a
tap there must still find its table. Nothing in it is trusted: the handler checks the game
id against the stored table, the tapping user against the seat to act, and the move
against the engine's legal moves.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from enum import StrEnum
from functools import lru_cache
from typing import NamedTuple

MAX_BYTES = 64
GAME_ID_LEN = 4
STAMP_LEN = 3
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_B36 = "(?:0|[1-9a-z][0-9a-z]{0,11})"
_PATTERN = re.compile(
    rf"(-?{_B36}):({_B36}?):([0-9a-z]{{{GAME_ID_LEN}}})([A-Z])([\x21-\x7e]*)", re.ASCII
)


class Action(StrEnum):
    PICK = "P"  # arg: the game (f or d)
    JOIN = "J"
    LEAVE = "L"
    SETTINGS = "S"  # open or close the settings keyboard
    OPTION = "O"  # arg: which option to change (see bot.handlers.lobby)
    START = "G"
    MOVE = "M"  # arg: an engine move token
    SETUP = "U"  # football set-up step; arg: a card index, "r" (reset) or "c" (confirm)
    AGAIN = "A"
    RECORD = "R"
    CARDS = "C"  # "My cards" in the group: the hand in an alert
    COMPUTER = "B"  # lobby: "+" adds a computer seat, "-" removes one, "v" changes the level
    BACK = "K"  # "I'm back" on the hand of a player who is away
    STANDINGS = "T"  # arg: "p" post the board, "s" switch it, "=" its game; then f or d
    FORGET = "F"  # /forgetme's confirmation in a private chat (chat: the user himself)
    PLACE = "W"  # on a hand: move it between the group and the private chat
    QUIET = "Q"  # on an inline table's "your turn" message: no more of them at that table


class BadCallback(ValueError):
    """callback_data that is not ours, or not well-formed."""


class Callback(NamedTuple):
    chat_id: int
    thread_id: int | None
    game_id: str
    action: Action
    arg: str = ""


def _b36(n: int) -> str:
    if n < 0:
        return "-" + _b36(-n)
    digits = ""
    while True:
        n, r = divmod(n, 36)
        digits = _ALPHABET[r] + digits
        if n == 0:
            return digits


# The "chat" of an inline table (issue 34), which no Telegram chat is: its message lives in
# a chat the bot need not be in, named by an inline_message_id far too long for a button.
INLINE_CHAT = 0


def inline_number(inline_message_id: str) -> int:
    """An inline table's "topic" number (its address is chat :data:`INLINE_CHAT`, topic
    this): 52 bits of a hash of its message's id, so that its buttons, deep links and
    Redis key stay short and a repeated pick of the same message finds the same table.
    A tap names its message itself, which the table checks (bot.service.taps)."""
    digest = hashlib.blake2b(inline_message_id.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 12) or 1


def instance_chat(chat_instance: str) -> int:
    """The chat an inline table's games count in (its standings, its board), named by the
    ``chat_instance`` Telegram gives the taps there: a group's number, beyond the 52 bits
    of every Telegram chat id, so that it is no group's."""
    return -((1 << 54) + inline_number(chat_instance))


def stamp(moves: int) -> str:
    """The position stamp of a move button: the move count, base 36, fixed width."""
    return _b36(moves % 36**STAMP_LEN).rjust(STAMP_LEN, "0")


SETUP_STAMP = "/"  # between a set-up step and its stamp, in a result id (setup_stamp)


def setup_stamp(hand: Sequence[str], picks: Sequence[int]) -> str:
    """The stamp of a set-up step picked from an inline query's list: his hand and his
    picks so far, the position that gives the step its meaning (a card's index in that
    hand, placed next). A list outlives its position as a hand message never does, so a
    step picked from an old one must be told from one picked now."""
    digest = hashlib.blake2b(",".join(hand).encode(), digest_size=4).digest()
    return stamp(int.from_bytes(digest, "big")) + "".join(_b36(p) for p in picks)


def new_game_id() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(GAME_ID_LEN))


@lru_cache(maxsize=1024)
def address(chat_id: int, thread_id: int | None, game_id: str) -> str:
    """The part of callback_data that names the table and game (shared by its buttons);
    spelled once per table: every screen of a round spells it, and so does the check of
    every tap's data (:func:`decode`)."""
    thread = _b36(thread_id) if thread_id else ""
    return f"{_b36(chat_id)}:{thread}:{game_id}"


_ARG = re.compile(r"[\x21-\x7e]*", re.ASCII)


def at(prefix: str, action: Action, arg: str = "") -> str:
    """callback_data for a button of the table named by ``prefix`` (see :func:`address`)."""
    data = f"{prefix}{action.value}{arg}"
    if len(data) > MAX_BYTES or not _ARG.fullmatch(arg):
        raise ValueError(f"callback_data cannot carry {data!r}")
    return data


# Between an invitation's button's own arg and what it carries to open its table: the
# button may be tapped before Telegram reports the pick that posted it (bot.handlers.inline).
INVITED = "~"


def invited(data: str, opening: str) -> str:
    """callback_data of an invitation's button ``data``, carrying ``opening``."""
    stamped = f"{data}{INVITED}{opening}"
    if len(stamped) > MAX_BYTES or not _ARG.fullmatch(opening) or INVITED in opening:
        raise ValueError(f"callback_data cannot carry {stamped!r}")
    return stamped


def invitation(cb: Callback) -> tuple[Callback, str]:
    """An invitation's tap (its table has no topic yet): its button's own arg, and what
    it carries to open the table ("" when it carries nothing)."""
    if cb.thread_id is not None or INVITED not in cb.arg:
        return cb, ""
    arg, _, opening = cb.arg.rpartition(INVITED)
    return cb._replace(arg=arg), opening


def encode(cb: Callback) -> str:
    data = at(address(cb.chat_id, cb.thread_id, cb.game_id), cb.action, cb.arg)
    if not _PATTERN.fullmatch(data):
        raise ValueError(f"callback_data cannot carry {cb!r}")
    return data


def decode(data: object) -> Callback:
    if not isinstance(data, str) or len(data) > MAX_BYTES:
        raise BadCallback("not our callback_data")
    match = _PATTERN.fullmatch(data)
    if match is None:
        raise BadCallback("not our callback_data")
    chat, thread, game_id, action, arg = match.groups()
    try:
        act = Action(action)
    except ValueError:
        raise BadCallback("unknown action") from None
    cb = Callback(int(chat, 36), int(thread, 36) if thread else None, game_id, act, arg)
    if encode(cb) != data:  # only the canonical spelling of an address is ours
        raise BadCallback("not our callback_data")
    return cb


# Deep links (t.me/<bot>?start=<payload>) name a table the same way: <chat>_<thread>_<game>,
# within Telegram's [A-Za-z0-9_-]{1,64}.
_PAYLOAD = re.compile(rf"(-?{_B36})_({_B36}?)_([0-9a-z]{{{GAME_ID_LEN}}})", re.ASCII)


@lru_cache(maxsize=1024)
def payload(chat_id: int, thread_id: int | None, game_id: str) -> str:
    """A table's deep-link payload; spelled once per table, as :func:`address` is (every
    round's hands and table carry the Mini App's link to it)."""
    thread = _b36(thread_id) if thread_id else ""
    return f"{_b36(chat_id)}_{thread}_{game_id}"


def parse_payload(text: object) -> tuple[int, int | None, str] | None:
    if not isinstance(text, str) or len(text) > MAX_BYTES:
        return None
    match = _PAYLOAD.fullmatch(text)
    if match is None:
        return None
    chat, thread, game_id = match.groups()
    result = (int(chat, 36), int(thread, 36) if thread else None, game_id)
    return result if payload(*result) == text else None


def deep_link(bot_username: str, chat_id: int, thread_id: int | None, game_id: str) -> str:
    return f"https://t.me/{bot_username}?start={payload(chat_id, thread_id, game_id)}"
