"""Languages at one table: each player reads his own, and the Russian and Ukrainian forms."""

from __future__ import annotations

import random
import re

from bot.core.callbacks import Action
from testing.harness import Harness
from testing.tabletop import Tabletop, action_of, opened, playing

CYRILLIC = re.compile(r"[А-Яа-яІіЇїЄєҐґ]")


async def test_each_player_reads_his_own_language(harness: Harness) -> None:
    h = harness
    ann = h.user("Ann", language_code="en")
    oles = h.user("Oles", language_code="uk")
    ivan = h.user("Ivan", language_code="ru-RU")
    top = await playing(h, "durak", [ann, oles, ivan], group=h.group("Cards"))
    texts = {
        u.first_name: [m.text or "" for m in h.screen(u) if m.from_bot] for u in (ann, oles, ivan)
    }
    assert not any(CYRILLIC.search(t) for t in texts["Ann"])
    assert all(CYRILLIC.search(t) for t in texts["Oles"] + texts["Ivan"])
    assert texts["Oles"] != texts["Ivan"]
    # The group reads the creator's language.
    assert not CYRILLIC.search(top.table_message().text or "")
    top_uk = Tabletop(h, h.group("Карти"))
    await top_uk.setup_game("durak", [oles, ann])
    assert CYRILLIC.search((top_uk.table_message().text or "").replace("Карти", ""))


async def test_the_deck_size_reads_right_in_russian_and_ukrainian(harness: Harness) -> None:
    h = harness
    for code, line in (("ru", "Колода: 52 карты"), ("uk", "Колода: 52 карти")):
        owner = h.user("Ann", language_code=code)
        top = await opened(h, owner, "durak")
        await top.tap_group(owner, Action.SETTINGS)
        await top.tap_group(owner, Action.OPTION, "d")
        shown = top.table_message()
        button = next(b.text for b in shown.buttons if action_of(b) is Action.OPTION)
        assert button == line
        await top.tap_group(owner, Action.SETTINGS)
        text = top.table_message().text or ""
        assert line in text and not re.search(r"52 карт\b", text)


async def test_a_new_bout_names_both_players_in_russian_and_ukrainian(harness: Harness) -> None:
    """The names stay as written (nominative): "ходит Аня", never "ходит под Аня"."""
    h = harness
    lines = {
        "ru": re.compile(r"Новый заход: ходит (\w+), отбивается (\w+)\."),
        "uk": re.compile(r"Новий захід: ходить (\w+), відбивається (\w+)\."),
    }
    for code, line in lines.items():
        players = [h.user("Аня", language_code=code), h.user("Сид", language_code=code)]
        top = await playing(h, "durak", players)
        rng = random.Random(4)
        while not line.search(top.table_message().text or ""):
            assert not top.finished(), "no second bout"
            await top.step(players, rng)
        attacker, defender = line.search(top.table_message().text or "").groups()
        assert attacker != defender
        assert {attacker, defender} <= {"Аня", "Сид", "Болван"}
