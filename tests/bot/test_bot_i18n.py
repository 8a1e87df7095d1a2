"""Translation at run time: the plural rule, a count in words, escaping for Telegram's
HTML, the language of a user. (The catalogues against the code: test_catalogues.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.pofile import read_po, write_po

from bot.core import i18n
from bot.core.i18n import LANGS, LANGUAGES, Markup, faces, lang_of, plain, plural, t

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", {"one": [1], "other": [0, 2, 5, 11, 21, 101]}),
        ("ru", {"one": [1, 21, 101], "few": [2, 4, 22, 104], "many": [0, 5, 11, 12, 14, 111]}),
        ("uk", {"one": [1, 31], "few": [3, 23], "many": [0, 9, 13, 25]}),
        ("be", {"one": [1, 21, 101], "few": [2, 4, 22, 104], "many": [0, 5, 11, 12, 14, 111]}),
        # Languages the bot has no catalogue of: the rule is Babel's, not Russian's.
        ("de", {"one": [1], "other": [0, 2, 5, 21]}),
        ("pl", {"one": [1], "few": [2, 22, 104], "many": [0, 5, 12, 21, 111]}),
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
        ("be", ["Калода: 1 карта", "Калода: 2 карты", "Калода: 5 карт", "Калода: 21 карта"]),
        ("be", ["Калода: 11 карт", "Калода: 22 карты", "Калода: 111 карт"]),
    ],
)
def test_a_count_reads_right_in_every_language(lang: str, texts: list[str]) -> None:
    numbers = [int(re.findall(r"\d+", text)[0]) for text in texts]
    assert [t(lang, "settings.deck", n=n) for n in numbers] == texts
    took = t(lang, "event.durak.took", seat="Ann", count=1)
    assert took != t(lang, "event.durak.took", seat="Ann", count=5).replace("5", "1")


def test_faces_and_languages() -> None:
    assert faces("ru") == {"J": "В", "Q": "Д", "K": "К", "A": "Т"}
    assert faces("uk") == faces("ru") == faces("be")
    assert faces("en") == {"J": "J", "Q": "Q", "K": "K", "A": "A"}
    found = [lang_of(c) for c in ("uk", "ru-RU", "be", "BE-by", "kk", "de", None, "")]
    assert found == ["uk", "ru", "be", "be", "ru", "en", "en", "en"]
    assert t("ru", "illegal.not_your_turn") == "Сейчас не ваш ход."
    assert t("be", "illegal.not_your_turn") == "Цяпер не ваш ход."


def test_the_languages_are_the_catalogues_each_named_in_its_own_words() -> None:
    """A language is a catalogue in bot/core/locales, named as CLDR names it in itself."""
    assert LANGS[0] == "en" and sorted(LANGS[1:]) == sorted(
        p.stem for p in i18n.LOCALES.glob("*.po")
    )
    assert {"be", "ru", "uk"} <= set(LANGS)
    for lang in LANGS:
        own = Locale.parse(lang).get_display_name(lang)
        assert t(lang, LANGUAGES[lang]) == own[0].upper() + own[1:], lang


def test_a_new_catalogue_started_by_pybabel_is_read_with_its_own_plural_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adding a language is data: ``pybabel init`` starts it with CLDR's plural rule, which
    the bot counts by (Polish 21 → "many"), English wherever it is not translated."""
    shutil.copy(i18n.TEMPLATE, tmp_path / i18n.TEMPLATE.name)
    command = "from babel.messages.frontend import main; main()"
    po = tmp_path / "pl.po"
    init = ["init", "-i", str(tmp_path / i18n.TEMPLATE.name), "-o", str(po), "-l", "pl"]
    done = subprocess.run([sys.executable, "-c", command, *init], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with po.open("rb") as file:
        catalog = read_po(file)
    forms = ("Talia: {n} karta", "Talia: {n} karty", "Talia: {n} kart")
    catalog.get("Deck: {n} card", context="settings.deck").string = forms
    with po.open("wb") as file:
        write_po(file, catalog)
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    monkeypatch.setattr(i18n, "TEMPLATE", tmp_path / i18n.TEMPLATE.name)
    for cached in (i18n.load, i18n._table):
        cached.cache_clear()
    monkeypatch.setattr(i18n, "LANGS", (*i18n.LANGS, "pl"))
    try:
        counted = [i18n.t("pl", "settings.deck", n=n) for n in (1, 2, 5, 21, 22)]
        assert counted == [
            f"Talia: {said}" for said in ("1 karta", "2 karty", "5 kart", "21 kart", "22 karty")
        ]
        assert len(i18n.load("pl").untranslated) == len(i18n.catalogue("en")) - 1
        assert i18n.t("pl", "illegal.not_your_turn") == "It is not your turn."
    finally:
        for cached in (i18n.load, i18n._table):
            cached.cache_clear()


def test_a_catalogue_with_a_key_given_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = 'msgctxt "{}"\nmsgid "{}"\nmsgstr "{}"\n\n'
    (tmp_path / "xx.po").write_text(
        entry.format("a.b", "One", "Ein")
        + entry.format("c", "X", "X")
        + entry.format("a.b", "One", "Zwei"),
        encoding="utf-8",
    )
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    with pytest.raises(ValueError, match=r"twice: a\.b$"):
        i18n.load.__wrapped__("xx")


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
