"""What one message is to become in a pass: the words every rule of the delivery uses.

Each kind of message has its rule, one small module that looks at what the message shows
now (its :class:`~bot.core.models.Slot`) and at the newest table, and says one of three
things: it shows that already (None), it is coalesced until a time (:class:`Later`), or
it is to be brought up to date now, at a priority and in a way (:class:`Message`). The
pass (:mod:`bot.service.messages.rounds`) asks the limiter for the messages' calls and
makes the granted ones (:mod:`bot.service.messages.calls`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from bot.core.budget import Budget
from bot.core.limiter import Priority
from bot.core.models import Slot
from bot.core.screen import Screen


class How(Enum):
    """How a message is made to show its screen."""

    # Edited in place; a message that is gone (or was never sent) is sent anew, where a
    # new one may be sent.
    EDIT = "edit"
    # Sent anew, so that his phone rings (a new prompt after a while) or so that it comes
    # below the newest messages (his "My cards"): the old one is removed.
    ANEW = "anew"
    # The group's message of a new game (Play again): a new message, the old one keeps the
    # last game's result and loses its buttons.
    NEW_GAME = "new game"
    # The place his hand has left: only edited (where his cards are now); a message that
    # is gone there stays gone.
    PARKED = "parked"


@dataclass(frozen=True)
class InGroup:
    """An ephemeral hand (docs/ephemeral.md): a message in the group only ``receiver`` sees."""

    receiver: int
    # His tap that a new message may answer (Telegram takes it for 15 seconds), if any.
    query: str | None = None
    # Whether a new message may be sent at all: in answer to that tap, or at any time when
    # the bot is an administrator. Else his hand can only be edited.
    may_send: bool = True
    renew: int = 0  # the seat's ``renew`` it shows (a new "My cards" sends it anew)


@dataclass(eq=False)  # each is one message of one pass: the same only as itself
class Message:
    """One message to bring up to date in this pass, as its kind's rule decided."""

    slot_name: str  # where the table remembers what it shows (bot.core.store)
    chat_id: int
    thread_id: int | None
    screen: Screen  # what it is to show
    slot: Slot | None  # what it shows now (None: never sent)
    priority: Priority
    how: How = How.EDIT
    hand: InGroup | None = None  # an ephemeral hand in the group ``chat_id``
    # What the call counts against, when not ``chat_id``'s rate limits (bot.core.budget).
    counts_against: Budget | None = None
    # An inline table's message (its inline_message_id): only ever edited, by that id.
    inline: str | None = None

    @property
    def budget(self) -> int | Budget:
        """The chat (or budget) the limiter is asked about for this message's call."""
        return self.chat_id if self.counts_against is None else self.counts_against

    @property
    def replaces(self) -> int | None:
        """The old message that a new one sent in this pass supersedes (None: it is
        edited, or there is none)."""
        if self.how in (How.ANEW, How.NEW_GAME) and self.slot is not None:
            return self.slot.id
        return None


@dataclass(frozen=True)
class Later:
    """Coalesced: the message is brought up to date at ``when``, not in this pass."""

    when: float


Decision = Message | Later | None


def shown(slot: Slot | None, screen: Screen, version: int) -> bool:
    """The message shows this screen already, or a newer version than this one."""
    return slot is not None and (slot.version > version or slot.hash == screen.digest)
