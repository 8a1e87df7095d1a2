"""Durak's variants (seeds/durak.md §9) picked in the lobby, named and played with the hands
in the group; a computer seat in each."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from bot.core.callbacks import Action
from engine.games.durak.game import Durak
from testing.chats import Button, FakeGroup, FakeMessage, FakeUser
from testing.computers import lobby_with_computers, play_people
from testing.group_hands import durak_lobby, live_buttons, no_private_messages, strangers
from testing.harness import Harness
from testing.tabletop import PLAY_ACTIONS, LeakWatch, Tabletop, action_of, stored

TRANSFER = "↪️ "  # a transfer button's label starts so (durak.btn.transfer)


async def game_of(top: Tabletop) -> Durak:
    return Durak.from_json((await stored(top.h, top.group))["state"])


class Seen:
    """What the players were shown while a game was played."""

    def __init__(self) -> None:
        self.transfers_made = 0
        self.several_unbeaten = 0  # prompts offering beats on more than one attack card


async def narrated_transfer(
    top: Tabletop, players: list[FakeUser], user: FakeUser, message: FakeMessage, pick: Button
) -> None:
    """``user`` transfers: it is offered and narrated, and the attack passes on."""
    assert "transfer with ↪️" in (message.text or "")
    assert f"➡️ {user.first_name} beats, transfers or takes." in (top.table_message().text or "")
    old = (await game_of(top)).view(None)
    assert (await top.h.tap(user, message, pick.__eq__)).text is None
    new = (await game_of(top)).view(None)
    assert new.attacker == old.defender and new.defender != old.defender
    defender = players[new.defender]  # type: ignore[index]
    assert f"{user.first_name} transfers with" in (top.table_message().text or "")
    assert f"to {defender.first_name}." in (top.table_message().text or "")
    assert top.prompt(defender) is not None, "the new defender is asked at once"


async def play_watched(top: Tabletop, players: list[FakeUser], seed: int) -> Seen:
    """Plays to the end, a transfer mostly taken when offered (the first one's narration
    checked), checking for leaks."""
    seen = Seen()
    rng = random.Random(seed)
    watch = LeakWatch(top)
    await watch.check()
    for _ in range(3000):
        if top.finished():
            return seen
        asked = [(u, m) for u in players if (m := top.prompt(u)) is not None]
        assert asked, f"nobody is asked to act:\n{top.table_message().text}"
        user, message = rng.choice(asked)
        buttons = [b for b in message.buttons if action_of(b) in PLAY_ACTIONS]
        transfers = [b for b in buttons if b.text.startswith(TRANSFER)]
        covered = {b.text.split(" on ")[1] for b in buttons if " on " in b.text}
        seen.several_unbeaten += len(covered) > 1
        pick = rng.choice(transfers if transfers and rng.random() < 0.7 else buttons)
        if pick in transfers and not seen.transfers_made:
            await narrated_transfer(top, players, user, message, pick)
        else:
            answer = await top.h.tap(user, message, pick.__eq__)
            assert answer.text is None, f"{pick.text} refused: {answer.text}"
        seen.transfers_made += pick in transfers
        await watch.check()
    raise AssertionError("the game did not end")


@pytest.mark.parametrize(("n", "seed"), [(2, 1), (4, 2)])
async def test_perevodnoy_played_to_the_end_with_hands_in_the_group(
    group_harness: Harness, deals: Callable[[int], None], n: int, seed: int
) -> None:
    h = group_harness
    deals(seed)
    players = strangers(h, n, ("en",))
    top = await durak_lobby(h, players, h.group(creator=players[0]), "mx")  # no dummy, transfers
    assert (top.table_message().text or "").startswith("🃏 Perevodnoy durak · 36 cards")
    await top.start(players[0])
    game = await game_of(top)
    assert game.options.transfer and not game.options.dummy
    assert (top.table_message().text or "").startswith("🃏 Perevodnoy durak · 36 cards")
    seen = await play_watched(top, players, seed)
    moves = (await stored(h, top.group))["played"]["moves"]
    assert seen.transfers_made and sum("transfer" in m for m in moves) == seen.transfers_made
    assert seen.several_unbeaten, "after a transfer the defender beats in any order"
    for user in players:
        assert h.screen(user) == [], "his hand stayed in the group"
    # The record names the variant, as its file and its caption.
    await top.tap_group(players[0], Action.RECORD)
    (document,) = [m for m in h.screen(top.group) if m.document is not None]
    assert document.document is not None
    assert document.document["file_name"].startswith("perevodnoy-durak-36-cards-")
    assert document.caption == "🃏 Perevodnoy durak · 36 cards"


# Perevodnoy plain is left out: its transfers are the computer's in the variant below too.
VARIANTS = {
    "the seed's game": [],
    "podkidnoy": ["m"],
    "perevodnoy, neighbours, five": ["m", "x", "n", "5"],
    "podkidnoy on 24 cards": ["m", "d", "d"],
}


@pytest.mark.parametrize("variant", list(VARIANTS))
async def test_a_computer_seat_plays_every_variant(
    quick_group: Harness, deals: Callable[[int], None], variant: str
) -> None:
    h = quick_group
    deals(len(variant))
    ann, bob = strangers(h, 2, ("en",))
    group: FakeGroup = h.group(creator=ann)
    top = await lobby_with_computers(h, ann, group, "durak", 1)
    assert (await top.join(bob)).text is None
    await top.configure(ann, VARIANTS[variant])
    await top.start(ann)
    data = await stored(h, group)
    assert data["phase"] == "playing" and [s["computer"] for s in data["seats"]].count("normal")
    taps = await play_people(h, top, [ann, bob], random.Random(len(variant)))
    data = await stored(h, group)
    assert data["phase"] == "finished" and len(data["played"]["moves"]) > taps
    computer = next(s["user_id"] for s in data["seats"] if s["computer"])
    assert all(receiver > 0 for _, receiver in h.server.ephemeral), "nothing to a computer"
    assert h.hands(ann, group) and not h.server.ephemerals(group.id, computer)
    no_private_messages(h, [ann, bob])
    assert live_buttons(h, [ann, bob], group) == []
