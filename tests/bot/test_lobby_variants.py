"""The lobby's durak settings (seeds/durak.md §9): what it offers keeps it at a game the
rules allow and reaches every variant they allow; a lobby too full for its settings is
offered what seats everyone."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from bot.core.callbacks import decode
from bot.core.models import GameSettings, Lobby, Seat, Table
from bot.handlers import lobby
from bot.screens import registry, render_lobby
from bot.service.taps import Refusal
from bot.tables import games
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from testing.harness import Harness
from testing.tabletop import opened, stored

# The settings that make a variant (the rematch lead, turn time and language do not).
VARIANT = ("deck_size", "dummy", "dummy_plays", "transfer", "throw_in", "five_before_discard")
CHOICES = {
    "deck_size": (24, 36, 52),
    "dummy": (True, False),
    "dummy_plays": (True, False),
    "transfer": (True, False),
    "throw_in": ("all", "neighbours"),
    "five_before_discard": (True, False),
}


def lobby_table(players: int = 1) -> Table:
    table = Table(game_id="abcd", chat_id=-100, kind="durak", phase="lobby", lobby=Lobby(creator=1))
    table.seats = [Seat(user_id=i + 1, name=f"P{i}") for i in range(players)]
    return table


def variant_of(settings: GameSettings) -> tuple[object, ...]:
    return tuple(getattr(settings, name) for name in VARIANT)


def allowed() -> set[tuple[object, ...]]:
    """Every combination the rules allow (the engine's options model says which)."""
    found = set()
    for values in itertools.product(*(CHOICES[name] for name in VARIANT)):
        try:
            DurakOptions(**dict(zip(VARIANT, values, strict=True)))
        except ValueError:
            continue
        found.add(values)
    return found


def offered(table: Table) -> list[str]:
    """The option codes of the settings buttons the lobby shows now."""
    return [code for _, code in render_lobby.settings(registry.ctx(table, "en"))]


def test_the_settings_offered_reach_every_allowed_variant_and_nothing_else() -> None:
    start = lobby_table()
    seen = {variant_of(start.lobby.settings)}
    queue = [start]
    while queue:
        table = queue.pop()
        for code in offered(table):
            if code in ("t", "l", "f"):
                continue
            tapped = table.model_copy(deep=True)
            lobby.choose(tapped, code)  # every button offered is taken
            durak = registry.entry("durak").spec.make_options(tapped.lobby.settings)
            assert isinstance(durak, DurakOptions)  # an allowed game
            if variant_of(tapped.lobby.settings) not in seen:
                seen.add(variant_of(tapped.lobby.settings))
                queue.append(tapped)
    assert seen == allowed()
    assert len(seen) == 3 * 2 * (2 + 4)  # decks x five x (dummy plays | transfers x throw-in)


@pytest.mark.parametrize(
    ("taps", "stale"),
    [([], "x"), ([], "n"), (["m"], "p")],  # transfers or neighbours with the dummy; ...
)
def test_a_button_the_lobby_no_longer_offers_changes_nothing(taps: list[str], stale: str) -> None:
    table = lobby_table()
    for code in taps:
        lobby.choose(table, code)
    assert stale not in offered(table)
    before = table.model_copy(deep=True)
    with pytest.raises(Refusal):
        lobby.choose(table.model_copy(deep=True), stale)
    assert table == before


def test_the_turn_time_goes_round_through_no_limit() -> None:
    table = lobby_table()
    for seconds in (120, 300, 0, 30, 60):
        lobby.choose(table, "t")
        assert table.lobby.settings.turn_time == seconds


def test_turning_the_dummy_on_again_drops_what_it_rules_out() -> None:
    table = lobby_table()
    for code in ("m", "x", "n", "m"):
        lobby.choose(table, code)
    options = registry.entry("durak").spec.make_options(table.lobby.settings)
    assert options == DurakOptions()
    for code in ("p", "m"):
        lobby.choose(table, code)
    assert registry.entry("durak").spec.make_options(table.lobby.settings) == DurakOptions(
        dummy=False
    )


@pytest.mark.parametrize(
    ("taps", "players", "fixes"),
    [
        ([], 5, {"d52", "m0"}),  # the seed's 36 seats 4: the larger deck, or no dummy
        (["d", "d"], 3, {"d36", "d52", "m0"}),  # 24 cards with the dummy seat two
        (["m", "d", "d"], 6, {"d36", "d52"}),  # 24 without it seat four
    ],
)
def test_a_too_full_lobby_is_offered_each_change_that_seats_everyone(
    taps: list[str], players: int, fixes: set[str]
) -> None:
    table = lobby_table(players=players)
    for code in taps:
        lobby.choose(table, code)
    table.lobby.notice = "lobby.too_many"
    buttons = render_lobby.seatings(registry.ctx(table, "en"))
    assert {decode(b.data).arg for b in buttons} == fixes
    for button in buttons:
        fixed = table.model_copy(deep=True)
        lobby.choose(fixed, decode(button.data).arg)
        low, high = games.player_limits(fixed)
        assert low <= players <= high


@pytest.mark.parametrize(
    ("offer", "heading", "chosen"),
    [
        ("🃏 Play without the dummy", "🃏 Podkidnoy durak · 36 cards", {"dummy": False}),
        ("🂠 Use the 52-card deck", "🃏 Durak with a dummy · 52 cards", {"deck_size": 52}),
    ],
)
async def test_a_full_lobby_starts_with_either_change_it_is_offered(
    harness: Harness, offer: str, heading: str, chosen: dict[str, Any]
) -> None:
    h = harness
    players = [h.user(f"P{i}") for i in range(5)]
    top = await opened(h, players[0], "durak", h.group(creator=players[0]))
    for user in players[1:]:
        await top.join(user)
    before = await stored(h, top.group)
    refused = await top.start(players[0])
    assert refused.show_alert and "at most 4" in (refused.text or "")
    data = await stored(h, top.group)
    assert data["phase"] == "lobby" and data["seats"] == before["seats"]  # all still seated
    labels = [b.text for b in top.table_message().buttons]
    assert "🂠 Use the 52-card deck" in labels and "🃏 Play without the dummy" in labels
    assert not any("24" in label for label in labels)
    await h.tap(players[0], top.table_message(), offer)
    assert (top.table_message().text or "").startswith(heading)
    assert offer not in [b.text for b in top.table_message().buttons]
    await top.start(players[0])
    data = await stored(h, top.group)
    options = Durak.from_json(data["state"]).options.model_dump()
    assert data["phase"] == "playing" and len(data["seats"]) == 5
    assert {k: options[k] for k in chosen} == chosen  # the game dealt is the one chosen
