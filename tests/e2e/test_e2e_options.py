"""The Russian and Ukrainian forms of a bout's line: the names as written."""

from __future__ import annotations

import random
import re

from testing.harness import Harness
from testing.tabletop import playing


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
