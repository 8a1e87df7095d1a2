"""Hands in the group (docs/ephemeral.md): whole games for people with no private chat."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.core.callbacks import Action, payload
from engine.games.durak.game import Durak
from testing.chats import BOT_USERNAME
from testing.group_hands import durak_lobby, live_buttons, no_private_messages, strangers
from testing.harness import Harness
from testing.tabletop import is_action, playing, stored


# Each game once, the bot an administrator in one of them: while the clock stands still a
# hand is edited in place either way (test_e2e_group_edges has the bot ring a player with a
# new one after a quiet while). Each deal fixed, and among the shorter of its kind.
@pytest.mark.parametrize(
    ("game", "n", "options", "settings", "admin", "seed"),
    [
        ("durak", 3, "pf", {"dummy_plays": True, "first_move": "from_under"}, False, 5),
        ("durak", 6, "d", {"deck_size": 52}, True, 10),  # six, the 52 cards
        ("football", 2, "", {}, False, 6),  # its set-up in the group
    ],
)
async def test_a_whole_game_for_people_who_never_opened_a_private_chat(
    group_harness: Harness,
    deals: Callable[[int], None],
    game: str,
    n: int,
    options: str,
    settings: dict[str, object],
    admin: bool,
    seed: int,
) -> None:
    h = group_harness
    deals(seed)
    players = strangers(h, n)
    group = h.group(creator=players[0])
    group.bot_is_admin = admin
    if game == "football":
        top = await playing(h, game, players, group=group)
        for user in players:  # the set-up picks are on his hand in the group
            assert any(is_action(Action.SETUP)(b) for m in h.hands(user, group) for b in m.buttons)
    else:
        top = await durak_lobby(h, players, group, options)
        await top.start(players[0])
        data = await stored(h, group)
        assert data["phase"] == "playing"
        assert {k: data["lobby"]["settings"][k] for k in settings} == settings
        assert Durak.from_json(data["state"]).header()["options"].items() >= settings.items()
    for user in players:
        assert h.hands(user, group), f"{user.first_name} has no hand in the group"
    moves = await top.play_watched(players, seed)
    assert moves > 10 and top.finished()
    if settings.get("dummy_plays"):  # the controller acted for the dummy
        assert any(m.get("dummy") for m in (await stored(h, group))["played"]["moves"])
    no_private_messages(h, players)
    assert live_buttons(h, players, group) == []


@pytest.mark.settings(
    hands="group", webapp_url="https://cards.example.org/app/", webapp_name="table"
)
async def test_the_mini_app_opens_from_a_hand_in_the_group(harness: Harness) -> None:
    """A hand in the group opens the Mini App by its direct link (a web_app button is refused)."""
    h = harness
    players = strangers(h, 2)
    group = h.group(creator=players[0])
    group.bot_is_admin = True
    await playing(h, "durak", players, group=group)
    data = await stored(h, group)
    param = payload(group.id, None, data["game_id"])
    for user in players:
        hand = h.hands(user, group)[-1]
        assert [b.url for b in hand.buttons if b.url] == [
            f"https://t.me/{BOT_USERNAME}/table?startapp={param}"
        ]
        assert not any(b.web_app for b in hand.buttons)
