"""Players of hands shown in the group: people without a private chat, and what the
group and their chats show them.
"""

from __future__ import annotations

from testing.chats import FakeGroup, FakeUser
from testing.harness import Harness

NAMES = ("Ann", "Bob", "Cid", "Dee", "Eve", "Fay")


def strangers(h: Harness, n: int, langs: tuple[str, ...] = ("en", "ru", "uk")) -> list[FakeUser]:
    """People who never opened a private chat with the bot."""
    return [h.user(NAMES[i], language_code=langs[i % len(langs)], started=False) for i in range(n)]


def no_private_messages(h: Harness, players: list[FakeUser]) -> None:
    for user in players:
        assert h.screen(user) == [], f"{user.first_name} was written to privately"


def live_buttons(h: Harness, players: list[FakeUser], group: FakeGroup) -> list[str]:
    """The buttons left on anyone's hand in the group (moves, the switch, any)."""
    return [b.text for u in players for m in h.hands(u, group) for b in m.buttons]
