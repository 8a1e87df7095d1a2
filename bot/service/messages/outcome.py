"""What one pass over a table did and left: the slots to save, what is due when, the
messages removed or left to remove, and what Telegram's refusals said."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.core.keys import Junk
from bot.core.models import Slot
from bot.core.store import Snapshot


@dataclass
class Outcome:
    """What one pass over a table did and left."""

    snap: Snapshot
    clock: Callable[[], float]
    changed: dict[str, Slot] = field(default_factory=dict)
    # The messages sent anew, by slot name: known to none but this pass until its slots
    # are saved (bot.service.messages.unsaved removes them when they are not).
    sent: dict[str, Junk] = field(default_factory=dict)
    due: float | None = None
    removed: list[tuple[int, int, int]] = field(default_factory=list)  # junk deleted
    junk: list[Junk] = field(default_factory=list)  # to remove later
    reach: dict[int, bool] = field(default_factory=dict)
    # Seats whose hand the group refused (user id: whether the refusal said the bot is
    # not an administrator): their hands go to the private chat or wait for "My cards".
    refused: dict[int, bool] = field(default_factory=dict)
    migrated: int | None = None  # the group became this supergroup

    def later(self, when: float) -> None:
        """Something is left for ``when``: the table comes due again then at the latest
        (one wake per table, the earliest of what is left)."""
        self.due = when if self.due is None else min(self.due, when)

    def discard(
        self, chat_id: int, message_id: int, *, strip: bool = False, receiver: int = 0
    ) -> None:
        """Leave a superseded message to a later pass (it is saved with the slots), and
        make that pass come at once."""
        self.junk.append(Junk(chat_id, message_id, strip, receiver))
        self.later(self.clock())
