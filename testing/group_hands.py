"""Players of hands shown in the group: people without a private chat, the durak lobby
they join, and what the group and their chats show them.
"""

from __future__ import annotations

from testing.chats import FakeGroup, FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, opened

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


async def durak_lobby(
    h: Harness, players: list[FakeUser], group: FakeGroup, options: str | list[str]
) -> Tabletop:
    """A durak lobby in ``group`` everyone joins at once, each seated with no private chat
    (the answer to his Join is his hand in the group), the settings ``options`` tapped."""
    top = await opened(h, players[0], "durak", group)
    for user in players[1:]:
        answer = await top.join(user)
        assert answer.text is None  # seated at once, no private chat needed
        (hand,) = h.hands(user, group)  # the answer to his Join, to him alone
        assert group.title in (hand.text or "")
    await top.configure(players[0], list(options))
    return top
