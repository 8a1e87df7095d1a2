"""Which of Telegram's limits a call counts against: for a hand in the group (an ephemeral
message), learned per group from Telegram's own answers.

Telegram publishes its limits for messages (about 30 a second for the whole bot, about one
a second in one chat, 20 a minute in one group) but none of their own for ephemeral
messages (docs/ephemeral.md), and a bot that assumes the group's 20 a minute for them
plays a quick game at a fifth of its pace (issue 29). So, by default
(``EPHEMERAL_GROUP_BUDGET=auto``), an ephemeral call counts against its receiver, about
one a second as his private chat (less a margin on bursts: bot.core.limiter.PRIVATE),
and the bot's 30 a second, until Telegram answers ephemeral calls to :data:`LEARN_FROM`
different players in that group with 429s within :data:`LEARN_WINDOW`: from then on, for
:data:`LEARNED_FOR`, that group's ephemeral calls also count against its 20 a minute, in
every process (the limiter keeps what was learned in Redis beside its buckets), and then
it is tried again. Why two players: where Telegram counts per receiver, one player's 429
comes of his own calls reaching it together (a busy machine that held them back, or his
quick taps), and it says nothing of the group; where it counts against the group, every
player's calls are refused once it is spent, so a second player's 429 follows within
seconds. Only refused ephemeral calls teach it: a 429 to the group's table message comes
as well where nothing is counted wrongly. And a person's *My cards* and place switch send
his hand anew at most once every :data:`RENEW_COOLDOWN` seconds (a quicker tap gets a short
alert and sends nothing), so a few members tapping together cannot draw those 429s.
``true`` and ``false`` are an operator's fixed choice: always against the group as well,
or never.

The cost, where Telegram does count them against the group: two 429s per group and hour
(more only when calls that went out together are refused together), and their wait
(``retry_after``), after which the refused calls go again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bot.core.callbacks import inline_number

# EPHEMERAL_GROUP_BUDGET: learn it per group, or always (True) or never (False) count an
# ephemeral call against the group's limit.
Mode = bool | Literal["auto"]
LEARNED_FOR = 3600.0  # seconds a group keeps what its 429s taught; then it is tried again
LEARN_WINDOW = 10.0  # seconds within which 429s to LEARN_FROM players' hands teach a group
LEARN_FROM = 2  # different players whose hands must meet a 429 within LEARN_WINDOW
RENEW_COOLDOWN = 3.0  # seconds between two hands a person has sent anew (My cards, the switch)


@dataclass(frozen=True)
class Budget:
    """The chat buckets one call counts against, besides the whole bot's: ``chat``'s,
    and ``group``'s too once that group has learned that Telegram counts its ephemeral
    calls (0: no such group)."""

    chat: int
    group: int = 0


def of_ephemeral(mode: Mode, chat_id: int, receiver: int) -> Budget:
    """A call for ``receiver``'s ephemeral message in the group ``chat_id``: the one place
    that decides what it counts against (see the module docstring)."""
    if mode == "auto":
        return Budget(receiver, group=chat_id)
    return Budget(chat_id) if mode else Budget(receiver)


def learns(mode: Mode, chat_id: int, receiver: int | None) -> bool:
    """Whether a 429 to a call into ``chat_id`` (for ``receiver``'s ephemeral message, if
    not None) counts towards teaching that group's ephemeral calls to count against its
    limit (with another player's within LEARN_WINDOW): only a refused ephemeral call, and
    only in ``auto``."""
    return mode == "auto" and chat_id < 0 and receiver is not None


def _inline(inline_message_id: str) -> int:
    """The bucket number of a message posted via the bot: beyond the 52 bits of every
    Telegram chat id, so that it is no chat's."""
    return (1 << 53) + inline_number(inline_message_id)


def of_inline(mode: Mode, inline_message_id: str, group: bool = False) -> Budget:
    """An edit of a message posted via the bot (an inline table, issue 34), named by its
    ``inline_message_id``, in a chat the bot does not know. Telegram publishes no limit
    for these either: each message counts against one a second of its own (a 429 holds it
    for the wait Telegram asks), and against the 20 a minute of a group when it was
    posted in a group (``group``: the inline query said so), from the start."""
    number = _inline(inline_message_id)
    return Budget(-number) if group else of_ephemeral(mode, -number, number)


def chat_of(data: dict[str, Any]) -> int | None:
    """The chat a Bot API call's parameters name (None: none, or a @username); a message
    posted via the bot counts as a group of its own (:func:`of_inline`)."""
    if isinstance(inline := data.get("inline_message_id"), str):
        return -_inline(inline)
    chat = data.get("chat_id")
    if isinstance(chat, int):
        return chat
    if isinstance(chat, str) and chat.lstrip("-").isdigit():
        return int(chat)
    return None


def receiver_of(data: dict[str, Any]) -> int | None:
    """The receiver of the ephemeral message a call sends or names (None: not one); a
    message posted via the bot counts as one (:func:`of_inline`)."""
    if isinstance(inline := data.get("inline_message_id"), str):
        return _inline(inline)
    raw = data.get("ephemeral_message_parameters", data)
    receiver = raw.get("receiver_user_id") if isinstance(raw, dict) else None
    return receiver if isinstance(receiver, int) else None


def kind_of(data: dict[str, Any]) -> str:
    """The kind of chat a call goes to: ``private``, ``group``, ``ephemeral`` (a message
    in a group that one member sees), ``inline`` (a message posted via the bot) or
    ``none``."""
    if "inline_message_id" in data:
        return "inline"
    chat = chat_of(data)
    if chat is None:
        return "none"
    if receiver_of(data) is not None:
        return "ephemeral"
    return "private" if chat > 0 else "group"
