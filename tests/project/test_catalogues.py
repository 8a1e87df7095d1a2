"""The catalogues against the code: every key the code asks for is a literal in ``bot/``
and is in every catalogue, every catalogue key is asked for, and the catalogues agree on
each text's placeholders; each has the plural forms its language's CLDR rule needs (from
Babel), is up to date with the template, and leaves nothing untranslated or fuzzy.

The code is read, not run: its syntax tree gives every call of a translation function
(:data:`_KEY_ARGS`) with its key. A key there is a literal, a choice between literals
(``"a.b" if x else "a.c"``) or a value from a table of literal keys (``ILLEGAL[code]``,
``game.names.title``); a key put together at run time (an f-string, ``+``) is refused, since
nothing could check it. The tables' keys are found as the literals in ``bot/`` shaped like
a key of one of the catalogue's namespaces (``game.…``, ``event.…``).
"""

from __future__ import annotations

import ast
import functools
import random
import re
import shutil
import string
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from babel.messages.plurals import get_plural

from bot.core.i18n import DEFAULT, LANGS, LOCALES, TEMPLATE, Entry, Plural, catalogue, forms, load
from bot.core.i18n import plural as category
from bot.handlers.commands import MENU
from bot.screens import registry
from bot.screens.views import TABLE_EVENTS
from engine import cards
from engine.base import IllegalMove, MalformedRecord
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.games.football.game import Football

ROOT = Path(__file__).resolve().parents[2]

# Each function that takes a catalogue key, with the position of the key among its
# arguments: bot.core.i18n's t and plain, and the helpers that hand a key on to them (a
# refusal, a tap's answer, durak's hand sizes). Called as a method (``ctx.t``) the
# receiver is not an argument.
_KEY_ARGS = {"t": 1, "plain": 1, "refuse": 0, "Refusal": 0, "answer": 0, "_count": 1}
_METHOD_KEY_ARGS = {"t": 0, "answer": 0}
# Those whose text Telegram shows as plain text: a tap's alert, bot.core.i18n.plain.
_PLAIN = {"plain", "refuse", "Refusal", "answer"}
# Keyword arguments of those functions that are not a text's placeholders.
_NOT_PLACEHOLDERS = {"alert"}
_KEY_SHAPE = re.compile(r"[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+")
# A file's name (the Mini App's table.js) is shaped like a key but is none.
_FILE_NAME = re.compile(r".+\.(?:js|css|html|json|md|png|po|pot)")


@dataclass
class Scan:
    """What the code asks of the catalogues."""

    keys: set[str] = field(default_factory=set)  # every literal key
    plain: set[str] = field(default_factory=set)  # those shown as plain text
    built: list[str] = field(default_factory=list)  # keys put together at run time
    # (the keys it may ask for, the placeholders it gives, where) of each call that names
    # all of its parameters
    calls: list[tuple[set[str], set[str], str]] = field(default_factory=list)


def _key_position(call: ast.Call) -> int | None:
    func = call.func
    if isinstance(func, ast.Name):
        return _KEY_ARGS.get(func.id)
    if isinstance(func, ast.Attribute):
        return _METHOD_KEY_ARGS.get(func.attr)
    return None


def _literal_keys(node: ast.expr, where: str, scan: Scan) -> set[str]:
    """The keys a key argument can be, when the code spells them out."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _literal_keys(node.body, where, scan) | _literal_keys(node.orelse, where, scan)
    if isinstance(node, ast.Tuple):
        return set().union(*(_literal_keys(e, where, scan) for e in node.elts))
    formatted = isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "format"
    if isinstance(node, ast.JoinedStr | ast.BinOp) or formatted:
        scan.built.append(f"{where}: {ast.unparse(node)}")
    return set()  # a name, an attribute, a table: its literals are found in the tables


def scan_source(source: str, filename: str, namespaces: set[str], scan: Scan) -> None:
    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            shaped = _KEY_SHAPE.fullmatch(text) and not _FILE_NAME.fullmatch(text)
            if shaped and text.split(".")[0] in namespaces:
                scan.keys.add(text)
        if not isinstance(node, ast.Call) or (position := _key_position(node)) is None:
            continue
        if len(node.args) <= position:
            continue  # no key (an answer without a text)
        where = f"{filename}:{node.lineno}"
        keys = _literal_keys(node.args[position], where, scan)
        scan.keys |= keys
        func = node.func
        if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")) in _PLAIN:
            scan.plain |= keys
        if keys and all(k.arg is not None for k in node.keywords):  # no **params
            given = {k.arg for k in node.keywords if k.arg} - _NOT_PLACEHOLDERS
            scan.calls.append((keys, given, where))


@functools.cache
def bot_sources() -> tuple[tuple[str, str], ...]:
    """Every module of ``bot/`` as (its path from the root, its text), read once a run."""
    paths = sorted((ROOT / "bot").rglob("*.py"))
    return tuple((str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in paths)


@functools.cache
def scan_bot() -> Scan:
    """The scan of ``bot/``, made once a run: the tests below only read it."""
    namespaces = {key.split(".")[0] for key in catalogue("en")}
    scan = Scan()
    for filename, source in bot_sources():
        scan_source(source, filename, namespaces, scan)
    return scan


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _placeholders(entry: Entry) -> set[str]:
    return set().union(*(_fields(text) for text in forms(entry)))


def test_the_code_builds_no_key_at_run_time() -> None:
    assert scan_bot().built == []


def test_every_key_the_code_names_is_in_every_catalogue_and_every_key_there_is_used() -> None:
    scan = scan_bot()
    assert len(scan.keys) > 200
    for lang in LANGS:
        assert sorted(scan.keys - set(catalogue(lang))) == [], lang
    assert sorted(set(catalogue("en")) - scan.keys) == []


def test_a_call_gives_exactly_the_placeholders_of_its_text() -> None:
    """Where a call names its parameters one by one, they are its texts' (taken together,
    for a choice of texts): a missing one would fail at run time, an extra one is a text
    that lost a word."""
    english = catalogue("en")
    wrong = [
        (where, sorted(keys), sorted(given))
        for keys, given, where in scan_bot().calls
        if keys <= english.keys()
        and given != set().union(*(_placeholders(english[k]) for k in keys))
    ]
    assert wrong == []


def test_a_text_shown_as_plain_text_has_no_markup() -> None:
    """An alert or a plain() text would show a tag or an entity as it is written. (The
    engine's refusals are alerts; the command menu is plain text.)"""
    plain = scan_bot().plain | set(registry.ILLEGAL.values()) | set(MENU.values())
    assert len(plain) > 40
    markup = re.compile(r"</?[a-z]+>|&\w+;")
    wrong = [
        (lang, key)
        for lang in LANGS
        for key in sorted(plain & catalogue(lang).keys())
        if any(markup.search(text) for text in forms(catalogue(lang)[key]))
    ]
    assert wrong == []


def test_the_scan_finds_keys_in_calls_and_tables_and_refuses_built_ones() -> None:
    """The scan itself: it must fail on what it exists to catch."""
    source = """
LEVELS = {"easy": "computer.level.easy"}
t(lang, "game.durak")
ctx.t("tap.bad" if x else "tap.stale", n=1)
ctx.t(f"game.{kind}")
t(lang, "series." + kind)
refuse("tap.over", **params)
logging.getLogger("telegram.ext")
ASSETS = ("table.js", "table.css")
"""
    scan = Scan()
    scan_source(source, "x.py", {"game", "computer", "tap", "series"}, scan)
    assert scan.keys == {"computer.level.easy", "game.durak", "tap.bad", "tap.stale", "tap.over"}
    assert [b.split(": ")[1] for b in scan.built] == ["f'game.{kind}'", "'series.' + kind"]
    assert scan.calls == [
        ({"game.durak"}, set(), "x.py:3"),
        ({"tap.bad", "tap.stale"}, {"n"}, "x.py:4"),
    ]
    missing = scan.keys - set(catalogue("en"))
    assert missing == set() and "game.durak" in catalogue("en")
    scan_source('t(lang, "game.chess")', "y.py", {"game"}, scan)
    assert scan.keys - set(catalogue("en")) == {"game.chess"}


def test_the_catalogues_have_the_same_keys_and_placeholders() -> None:
    english = catalogue("en")
    for lang in LANGS:
        cat = catalogue(lang)
        assert set(cat) == set(english), lang
        for key, entry in cat.items():
            assert _placeholders(entry) == _placeholders(english[key]), (lang, key)
            for text in forms(entry):
                assert text.strip() and _fields(text) == _placeholders(entry), (lang, key)


@pytest.mark.parametrize("lang", LANGS)
def test_the_plural_forms_are_cldr_s_and_each_plural_text_has_them(lang: str) -> None:
    """The catalogue's Plural-Forms is Babel's for its language, and its forms sort whole
    numbers exactly as CLDR's rule does (one form per category the language's whole numbers
    fall into): "21 карта", never "21 карт". Each plural text gives that many forms, all
    counting by the parameter the template names."""
    cat = load(lang)
    assert (cat.forms, cat.plural_forms) == get_plural(lang)
    pairs = {(cat.form(n), category(lang, n)) for n in range(1000)}
    by_form = {form for form, _ in pairs}
    assert len(pairs) == len(by_form) == cat.forms, sorted(pairs)
    english = catalogue(DEFAULT)
    plural_keys = {k for k, e in english.items() if isinstance(e, Plural)}
    assert len(plural_keys) >= 9
    for key, entry in cat.entries.items():
        assert isinstance(entry, Plural) == (key in plural_keys), key
        if isinstance(entry, Plural):
            assert len(entry.texts) == cat.forms, key
            assert entry.count in _placeholders(entry), key
            assert entry.count == english[key].count  # type: ignore[union-attr]


def _pybabel(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from babel.messages.frontend import main; main()", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("lang", [lang for lang in LANGS if lang != DEFAULT])
def test_every_catalogue_is_translated_and_up_to_date_with_the_template(
    lang: str, tmp_path: Path
) -> None:
    """Nothing is left untranslated or fuzzy, and ``pybabel update`` (what scripts/catalogues
    update runs) would change nothing: the English texts, the comments and the keys are the
    template's. It runs on a copy: even with ``--check`` Babel writes a temporary catalogue
    beside its output, and in the bot's own folder a bot process another test starts
    meanwhile would take it for a language."""
    cat = load(lang)
    assert (cat.untranslated, cat.fuzzy) == ((), ())
    po = tmp_path / f"{lang}.po"
    shutil.copy(LOCALES / f"{lang}.po", po)
    done = _pybabel(
        "update",
        *("-i", str(TEMPLATE), "-o", str(po), "-l", lang),
        *("--previous", "--ignore-obsolete", "--ignore-pot-creation-date", "--check"),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_changed_english_text_makes_its_translations_fuzzy_and_english_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The translators' round: the template changes, ``pybabel update`` marks the
    translation fuzzy, the catalogue check names it, and the bot shows English until it
    is translated again."""
    from bot.core import i18n

    shutil.copy(TEMPLATE, tmp_path / TEMPLATE.name)
    shutil.copy(LOCALES / "ru.po", tmp_path / "ru.po")
    pot = tmp_path / TEMPLATE.name
    pot.write_text(
        pot.read_text(encoding="utf-8").replace(
            'msgid "It is not your turn."', 'msgid "Wait: it is not your turn."'
        ),
        encoding="utf-8",
    )
    done = _pybabel(
        "update",
        *("-i", str(pot), "-o", str(tmp_path / "ru.po"), "-l", "ru", "--previous"),
    )
    assert done.returncode == 0, done.stderr
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    monkeypatch.setattr(i18n, "TEMPLATE", pot)
    for cached in (i18n.load, i18n._table):
        cached.cache_clear()
    try:
        assert i18n.load("ru").fuzzy == ("illegal.not_your_turn",)
        assert i18n.t("ru", "illegal.not_your_turn") == "Wait: it is not your turn."
        assert i18n.t("ru", "illegal.game_over") == "Игра окончена."
    finally:
        for cached in (i18n.load, i18n._table):
            cached.cache_clear()


def test_no_text_works_around_a_missing_plural_form() -> None:
    """A count comes with a plural text, never as "card(s)" or "Колод: {n}"."""
    dodges = re.compile(r"\(s\)|\(и\)|\(ы\)|\(ов\)|\(аў\)|\w+: \{n\}$")
    wrong = [
        (lang, key, text)
        for lang in LANGS
        for key, entry in catalogue(lang).items()
        for text in forms(entry)
        if isinstance(entry, str) and dodges.search(text)
    ]
    assert wrong == []


# Placeholders that hold a player's name (or names), in ru, uk and be always nominative.
_NAME_FIELDS = ("name", "names", "seat", "attacker", "defender", "controller", "players")
# The only words a name may follow directly: verbs whose subject it is ("ходит Аня").
_SUBJECT_VERBS = {
    "ru": {"играет", "ходит", "отбивается", "побеждает", "Забивает"},
    "uk": {"грає", "ходить", "відбивається", "перемагає", "Забиває"},
    "be": {"гуляе", "ходзіць", "адбіваецца", "перамагае", "Забівае"},
}


@pytest.mark.parametrize("lang", ["ru", "uk", "be"])
def test_names_are_never_declined_in_ru_uk_and_be(lang: str) -> None:
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


# Durak's variants (seeds/durak.md §9): the dummy playing or not, podkidnoy, perevodnoy
# with neighbours and five before the first discard.
VARIANTS = (
    DurakOptions(),
    DurakOptions(dummy_plays=True),
    DurakOptions(dummy=False),
    DurakOptions(dummy=False, transfer=True, throw_in="neighbours", five_before_discard=True),
)


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
    for path in (ROOT / "engine").rglob("*.py"):
        codes.update(re.findall(r'IllegalMove\(\s*"(\w+)"', path.read_text(encoding="utf-8")))
    # Codes built at run time: forge taps at random positions of random games.
    rng = random.Random(5)
    names = [c for c in cards.to_strs(cards.deck(52))]
    durak_tokens = [p + k + c for p in ("", "d") for k in "awr" for c in names]
    durak_tokens += ["t", "p", "dt", "dp"]
    durak_tokens += [f"b{a}{c}" for a, c in zip(names, names[5:], strict=False)]
    football_tokens = [f"{k}{c}" for k in "ea" for c in range(4)]
    for n in range(6):
        games: list[tuple[Any, list[str]]] = [
            (Durak.new(VARIANTS[n % len(VARIANTS)], ["a", "b", "c"], 0, seed=n), durak_tokens),
            (Football.new(None, ["a", "b"], seed=n), football_tokens),
        ]
        for game, tokens in games:
            while not game.is_finished():
                if rng.random() < 0.2:
                    codes |= _probe_codes(game, rng, tokens * 2)
                game.apply(rng.choice(list(game.legal_moves())))
    assert {"not_your_turn", "cannot_throw_now"} <= codes
    assert sorted(codes - set(registry.ILLEGAL)) == []


def test_every_event_of_the_table_itself_has_a_text() -> None:
    """The events the bot adds to a table (a timeout, a player away or back)."""
    kinds = set()
    for _, source in bot_sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_events":
                for event in getattr(node.args[0], "elts", []):
                    kind = event.elts[0] if isinstance(event, ast.Tuple) else None
                    if isinstance(kind, ast.Constant):
                        kinds.add(kind.value)
    assert kinds == set(TABLE_EVENTS)
