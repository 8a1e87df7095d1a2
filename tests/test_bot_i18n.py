"""Translation at run time: the plural rule, a count in words, escaping for Telegram's
HTML, the language of a user. (The catalogues against the code: test_catalogues.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.core import i18n
from bot.core.i18n import Markup, faces, lang_of, plain, plural, t

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", {"one": [1], "other": [0, 2, 5, 11, 21, 101]}),
        ("ru", {"one": [1, 21, 101], "few": [2, 4, 22, 104], "many": [0, 5, 11, 12, 14, 111]}),
        ("uk", {"one": [1, 31], "few": [3, 23], "many": [0, 9, 13, 25]}),
    ],
)
def test_the_plural_rule_is_cldr_s(lang: str, expected: dict[str, list[int]]) -> None:
    assert {c: [plural(lang, n) for n in ns] for c, ns in expected.items()} == {
        c: [c] * len(ns) for c, ns in expected.items()
    }


@pytest.mark.parametrize(
    ("lang", "texts"),
    [
        ("en", ["Deck: 1 card", "Deck: 36 cards"]),
        ("ru", ["Колода: 21 карта", "Колода: 52 карты", "Колода: 36 карт"]),
        ("uk", ["Колода: 21 карта", "Колода: 52 карти", "Колода: 36 карт"]),
    ],
)
def test_a_count_reads_right_in_every_language(lang: str, texts: list[str]) -> None:
    numbers = [int(re.findall(r"\d+", text)[0]) for text in texts]
    assert [t(lang, "settings.deck", n=n) for n in numbers] == texts
    took = t(lang, "event.durak.took", seat="Ann", count=1)
    assert took != t(lang, "event.durak.took", seat="Ann", count=5).replace("5", "1")


def test_faces_and_languages() -> None:
    assert faces("ru") == {"J": "В", "Q": "Д", "K": "К", "A": "Т"}
    assert faces("uk") == faces("ru")
    assert faces("en") == {"J": "J", "Q": "Q", "K": "K", "A": "A"}
    assert [lang_of(c) for c in ("uk", "ru-RU", "be", "de", None, "")] == [
        "uk",
        "ru",
        "ru",
        "en",
        "en",
        "en",
    ]
    assert t("ru", "illegal.not_your_turn") == "Сейчас не ваш ход."


def test_a_catalogue_with_a_key_given_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "xx.json").write_text('{"a.b": "one", "c": "x", "a.b": "two"}', encoding="utf-8")
    monkeypatch.setattr(i18n, "_DIR", tmp_path)
    with pytest.raises(ValueError, match=r"twice: a\.b$"):
        i18n.catalogue("xx")


def test_a_parameter_is_escaped_once_and_markup_goes_in_as_it_is() -> None:
    name = "<b>&Ann"
    turn = t("en", "common.turn", name=name)
    assert turn == "Turn: <b>&lt;b&gt;&amp;Ann</b>"
    # A translated fragment is markup already: nested, it is not escaped again.
    nested = t("en", "durak.turn.lead", name=t("en", "durak.for_dummy", name=name))
    assert nested == "&lt;b&gt;&amp;Ann for the dummy leads."
    # Joined, names are escaped and fragments kept.
    joined = Markup(", ").join([name, t("en", "common.turn", name="Bob")])
    assert joined == "&lt;b&gt;&amp;Ann, Turn: <b>Bob</b>"
    # Quotes stay as written (Telegram needs only &, < and > escaped); numbers as numbers.
    assert t("en", "lobby.players", n=2, need=2, names='O\'Neil "Ann"') == (
        'Players (2, needed 2): O\'Neil "Ann"'
    )
    # Where Telegram shows plain text (an alert), nothing is escaped.
    assert plain("en", "join.not_member", chat=name) == (
        "Only members of «<b>&Ann» can join its game."
    )
