"""The catalogues: complete in all three languages, placeholders consistent, and a text
for every key the bot and the engines can ask for."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path
from typing import Any

import pytest

from bot import i18n
from bot.i18n import CATEGORIES, LANGS, Entry, catalogue, faces, forms, lang_of, plural, t
from engine import cards
from engine.base import IllegalMove, MalformedRecord
from engine.durak import Durak, DurakOptions
from engine.football import Football

ROOT = Path(__file__).resolve().parent.parent


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _placeholders(entry: Entry) -> set[str]:
    return set().union(*(_fields(text) for text in forms(entry)))


def test_every_key_is_in_every_language_with_the_same_placeholders() -> None:
    english = catalogue("en")
    for lang in LANGS:
        cat = catalogue(lang)
        assert set(cat) == set(english), lang
        for key, entry in cat.items():
            assert _placeholders(entry) == _placeholders(english[key]), (lang, key)
            for text in forms(entry):
                assert text.strip() and _fields(text) == _placeholders(entry), (lang, key)


def test_a_plural_text_has_every_form_its_language_uses_and_counts_by_a_placeholder() -> None:
    plurals = 0
    for lang in LANGS:
        for key, entry in catalogue(lang).items():
            if isinstance(entry, dict):
                plurals += 1
                assert set(entry) == {"plural", *CATEGORIES[lang]}, (lang, key)
                assert entry["plural"] in _placeholders(entry), (lang, key)
    assert plurals >= 20


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


# Placeholders that hold a player's name (or names), in ru and uk always nominative.
_NAME_FIELDS = ("name", "names", "seat", "attacker", "defender", "controller", "players")
# The only words a name may follow directly: verbs whose subject it is ("ходит Аня").
_SUBJECT_VERBS = {
    "ru": {"играет", "ходит", "отбивается", "побеждает", "Забивает"},
    "uk": {"грає", "ходить", "відбивається", "перемагає", "Забиває"},
}


@pytest.mark.parametrize("lang", ["ru", "uk"])
def test_names_are_never_declined_in_ru_and_uk(lang: str) -> None:
    """A name is shown as the user wrote it, in the nominative: no string may put it where
    the grammar wants another case ("ходит под Аня", "ряда Аня", "У Аня")."""
    fields = "|".join(_NAME_FIELDS)
    before = re.compile(rf"(\w+)\s+(?:<b>)?\{{(?:{fields})\}}")
    wrong = [
        (key, word)
        for key, entry in catalogue(lang).items()
        if key != "settings.language"  # the language's name, not a player's
        for text in forms(entry)
        for word in before.findall(text)
        if word not in _SUBJECT_VERBS[lang]
    ]
    assert wrong == []


def test_every_literal_key_in_the_code_exists() -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "bot").glob("*.py"))
    keys = set(re.findall(r"""\bt\(\s*(?:\w+,\s*)?"([a-z_]+\.[a-z_.]+)"\s*[,)]""", source))
    assert len(keys) > 50
    missing = sorted(k for k in keys if k not in catalogue("en"))
    assert missing == []


def _probe_codes(game: Any, rng: random.Random, tokens: list[str]) -> set[str]:
    """The reasons the engine gives for a sample of taps the actor could forge now."""
    codes: set[str] = set()
    actor = game.to_act()
    for token in rng.sample(tokens, 12):
        probe = type(game).from_json(game.to_json())
        for player in {actor.player, 1 - actor.player if actor.player < 2 else 0}:
            try:
                probe.apply(probe.move_from_token(token, player))
            except IllegalMove as exc:
                codes.add(exc.code)
            except MalformedRecord:
                pass
    return codes


def test_every_illegal_move_code_has_a_text() -> None:
    codes: set[str] = set()
    for name in ("football", "durak"):
        text = (ROOT / "engine" / f"{name}.py").read_text()
        codes.update(re.findall(r'IllegalMove\(\s*"(\w+)"', text))
    # Codes built at run time: forge taps at random positions of random games.
    rng = random.Random(5)
    names = [c for c in cards.to_strs(cards.deck(52))]
    durak_tokens = [p + k + c for p in ("", "d") for k in "aw" for c in names]
    durak_tokens += [
        "t",
        "p",
        "dt",
        "dp",
        *(f"b{a}{c}" for a, c in zip(names, names[5:], strict=False)),
    ]
    football_tokens = [f"{k}{c}" for k in "ea" for c in range(4)]
    for n in range(6):
        games: list[tuple[Any, list[str]]] = [
            (
                Durak.new(DurakOptions(dummy_plays=n % 2 == 1), ["a", "b", "c"], 0, seed=n),
                durak_tokens,
            ),
            (Football.new(None, ["a", "b"], seed=n), football_tokens),
        ]
        for game, tokens in games:
            while not game.is_finished():
                if rng.random() < 0.2:
                    codes |= _probe_codes(game, rng, tokens * 2)
                game.apply(rng.choice(list(game.legal_moves())))
    assert {"not_your_turn", "cannot_throw_now"} <= codes
    missing = sorted(c for c in codes if f"illegal.{c}" not in catalogue("en"))
    assert missing == []


@pytest.mark.parametrize("game", ["football", "durak"])
def test_every_event_the_engine_emits_has_a_text(game: str) -> None:
    rng = random.Random(3)
    seen: set[str] = set()
    for n in range(30):
        g = (
            Football.new(None, ["a", "b"], seed=n)
            if game == "football"
            else Durak.new(
                DurakOptions(dummy_plays=n % 2 == 0), ["a", "b", "c"][: 2 + n % 2], 0, seed=n
            )
        )
        while not g.is_finished():
            for event in g.apply(rng.choice(list(g.legal_moves()))):
                key = f"event.{game}.{event.kind}"
                if isinstance(event.data.get("reason"), str):
                    key += "." + event.data["reason"]
                seen.add(key)
    assert len(seen) > 8
    missing = sorted(k for k in seen if k not in catalogue("en"))
    assert missing == []


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
