"""Translations: every user-facing string lives in a gettext catalogue in bot/core/locales/.

``messages.pot`` is the English source and the template of the others; ``<lang>.po`` is
one language, its code Telegram's ``language_code`` (``ru``, ``uk``, ``be``). Adding a file
adds a language: :data:`LANGS` is the template's English and every catalogue found, and
the lobby's language setting goes through them. ``docs/translating.md`` is the
translators' guide, ``scripts/catalogues`` the pybabel commands.

An entry's key is its ``msgctxt`` (``lobby.title``), its English text the ``msgid`` and
the language's text the ``msgstr``, with ``{placeholder}`` fields (str.format). A text whose
words depend on a number has a ``msgid_plural`` and one ``msgstr[i]`` per form of the
language, in the order of its ``Plural-Forms`` header: Babel writes that header from
CLDR's rule when a catalogue is started, and :func:`_load` evaluates it as gettext does
(1 карта, 2 карты, 5 карт, 21 карта). The template says which parameter counts in an
extracted comment ``#. count: n``.

The PO files are read as they are when a language is first asked for (some tens of
milliseconds for all of them, bench/i18n.py), not compiled to ``.mo``: what a translator
saved is what the bot shows, the wheel ships the same files the repository holds, and
there is no build step to forget.

Every key the code asks for is a literal string in ``bot/`` (a table such as
:data:`FACES` where the key depends on a value), never built at run time, so that
``tests/project/test_catalogues.py`` can check each against every catalogue. A key missing from a
language, not translated yet or marked fuzzy (its English changed since) falls back to
English, and a key missing everywhere shows the key itself, so a gap is visible but never
crashes a game.

The catalogues hold Telegram HTML (``<b>``, ``<i>``). :func:`t` escapes every text put
into one, a player's name or a chat's title, so that no call site has to; a fragment that
is already HTML, another :func:`t`'s result, is a :class:`Markup` and goes in as it is.
:func:`plain` is for where Telegram shows plain text (a tap's alert).
"""

from __future__ import annotations

import gettext
import html
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po

DEFAULT = "en"
LOCALES = Path(__file__).with_name("locales")
TEMPLATE = LOCALES / "messages.pot"
# The template's English, then every catalogue in the folder.
LANGS = (DEFAULT, *sorted(p.stem for p in LOCALES.glob("*.po")))
# The catalogue key of each language's name: each catalogue names its own language.
LANGUAGES = {lang: "language.name" for lang in LANGS}
# Telegram language codes without a catalogue of their own that read one of ours best.
_ALIASES = {"kk": "ru", "ky": "ru", "tg": "ru", "uz": "ru"}
_COUNT = re.compile(r"count: (\w+)$")
_KEY_LINE = re.compile(r'^msgctxt "(.*)"$', re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Plural:
    """A text in the forms of its language: ``texts[form(n)]`` for the number ``n`` given
    as the parameter ``count``."""

    count: str
    texts: tuple[str, ...]


# A catalogue entry: a text, or a plural text.
Entry = str | Plural


@dataclass(frozen=True)
class Catalogue:
    """One language's catalogue as read: its texts, and what it does not translate yet."""

    lang: str
    entries: dict[str, Entry]  # the translated entries, by key
    forms: int  # how many plural forms its Plural-Forms header has
    form: Callable[[int], int]  # a number's form (its index in Plural.texts)
    plural_forms: str  # the header's expression
    untranslated: tuple[str, ...]  # keys with an empty text
    fuzzy: tuple[str, ...]  # keys marked fuzzy: their English changed since


def _path(lang: str) -> Path:
    return TEMPLATE if lang == DEFAULT else LOCALES / f"{lang}.po"


def _read(path: Path) -> Catalog:
    """The catalogue at ``path``, refused when it gives a key twice (a merge, a copy would
    otherwise let one of its texts win without a word)."""
    text = path.read_text(encoding="utf-8")
    twice = sorted(k for k, n in Counter(_KEY_LINE.findall(text)).items() if n > 1)
    if twice:
        raise ValueError(f"{path.name}: keys given twice: {', '.join(twice)}")
    with path.open("rb") as file:
        return read_po(file, ignore_obsolete=True)


def _counts(catalog: Catalog) -> dict[str, str]:
    """The parameter that counts, by key, for the template's plural entries."""
    counts = {}
    for message in catalog:
        found = [m[1] for c in message.auto_comments if (m := _COUNT.match(c))]
        if message.context and isinstance(message.id, tuple | list):
            if not found:
                raise ValueError(f"{message.context}: a plural text without '#. count: …'")
            counts[message.context] = found[0]
    return counts


def _texts(value: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """A message's id or string as its forms (one for a text that is not plural)."""
    if isinstance(value, tuple | list):
        return tuple(value)
    return (value or "",)


@cache
def load(lang: str) -> Catalogue:
    """The catalogue of ``lang`` (English: the template, whose texts are its msgids)."""
    catalog = _read(_path(lang))
    if lang == DEFAULT:
        counts = _counts(catalog)
        forms, expression = get_plural(DEFAULT)
    else:  # the counts are the template's, as English has read them
        counts = {k: e.count for k, e in load(DEFAULT).entries.items() if isinstance(e, Plural)}
        forms, expression = catalog.num_plurals, catalog.plural_expr
    entries: dict[str, Entry] = {}
    untranslated, fuzzy = [], []
    for message in catalog:
        key = message.context
        if not message.id:
            continue  # the header
        if not key:
            raise ValueError(f"{_path(lang).name}: an entry without a key (msgctxt)")
        texts = _texts(message.id if lang == DEFAULT else message.string)
        if not all(texts):
            untranslated.append(key)
        elif message.fuzzy:
            fuzzy.append(key)
        elif isinstance(message.id, tuple | list) and key in counts:
            entries[key] = Plural(counts[key], texts)
        else:
            entries[key] = texts[0]
    return Catalogue(
        lang,
        entries,
        int(forms),
        gettext.c2py(expression),
        expression,
        tuple(untranslated),
        tuple(fuzzy),
    )


def catalogue(lang: str) -> dict[str, Entry]:
    """The translated texts of ``lang``, by key."""
    return load(lang).entries


@cache
def _table(lang: str) -> dict[str, tuple[Entry, Callable[[int], int]]]:
    """Every key's entry in ``lang``, English where ``lang`` has none, each with the rule
    that picks its plural form: one look-up per text on the render path."""
    found = [load(lang)] if lang != DEFAULT else []
    return {
        key: (entry, cat.form)
        for cat in (load(DEFAULT), *found)
        for key, entry in cat.entries.items()
    }


@cache
def _locale(lang: str) -> Locale:
    return Locale.parse(lang)


def plural(lang: str, n: int) -> str:
    """The CLDR plural category (``one``, ``few``, ``many``, ``other``…) of the whole number
    ``n`` in ``lang``, from Babel: what a catalogue's forms are checked against."""
    return str(_locale(lang).plural_form(abs(n)))


def forms(entry: Entry) -> list[str]:
    """Every text an entry can show (one for a plain text)."""
    return [entry] if isinstance(entry, str) else list(entry.texts)


def lang_of(code: str | None) -> str:
    """Our language for a Telegram ``language_code`` (``uk``, ``ru-RU``, ``None``...)."""
    if not code:
        return DEFAULT
    base = code.split("-")[0].lower()
    base = base if base in LANGS else _ALIASES.get(base, base)
    return base if base in LANGS else DEFAULT


class Markup(str):
    """Text that is Telegram HTML already: :func:`t` puts it into a text unescaped."""

    __slots__ = ()

    def join(self, parts: Iterable[str]) -> Markup:
        """The parts with this between them, each escaped unless it is markup."""
        return Markup(super().join(escape(part) for part in parts))


def escape(value: str) -> Markup:
    """``value`` as Telegram HTML: a plain text's ``&``, ``<`` and ``>`` escaped
    (Telegram needs no more, and quotes stay as the user wrote them)."""
    return value if isinstance(value, Markup) else _escaped(value)


@lru_cache(maxsize=4096)
def _escaped(value: str) -> Markup:
    """A plain text escaped, once: the screens of a round put the same few names and
    titles into text after text."""
    return Markup(html.escape(value, quote=False))


def _text(lang: str, key: str, params: dict[str, Any]) -> str:
    found = _table(lang if lang in LANGS else DEFAULT).get(key)
    if found is None:
        return key
    entry, form = found
    if isinstance(entry, Plural):
        texts = entry.texts
        entry = texts[min(form(abs(int(params[entry.count]))), len(texts) - 1)]
    return entry.format(**params) if params else entry


def t(lang: str, key: str, **params: Any) -> Markup:
    """The text of ``key`` in ``lang`` as Telegram HTML, every str parameter escaped
    unless it is :class:`Markup`."""
    if params:
        params = {k: escape(v) if isinstance(v, str) else v for k, v in params.items()}
    return Markup(_text(lang, key, params))


def plain(lang: str, key: str, **params: Any) -> str:
    """The text of ``key`` where Telegram shows text as it is (an alert): nothing escaped,
    so its catalogue text must hold no markup."""
    return _text(lang, key, params)


def by_category(lang: str, key: str) -> dict[str, str]:
    """A plural text's forms by CLDR category (``one``, ``few``, ``many``, ``other``), its
    placeholders unfilled: for a page that picks the form itself (Intl.PluralRules)."""
    found = _table(lang if lang in LANGS else DEFAULT).get(key)
    assert found is not None, key
    entry, form = found
    assert isinstance(entry, Plural), key
    texts: dict[str, str] = {}
    for n in range(200):  # every category shows among the first hundred numbers or so
        texts.setdefault(plural(lang, n), entry.texts[min(form(n), len(entry.texts) - 1)])
    return texts


# The catalogue key of each face card's letter.
FACES = {"J": "face.J", "Q": "face.Q", "K": "face.K", "A": "face.A"}


@cache
def faces(lang: str) -> dict[str, str]:
    """J/Q/K/A in the language's letters (В/Д/К/Т in ru and uk), for cards.display."""
    return {face: plain(lang, key) for face, key in FACES.items()}
