"""Translations: every user-facing string lives in bot/core/locales/<lang>.json.

Catalogues are flat ``key -> text`` maps with ``{placeholder}`` fields (str.format). A
text whose words depend on a number is an object instead: ``"plural"`` names the
parameter that counts, and each of the language's plural categories (CLDR's names:
``one``, ``few``, ``many``, ``other``) gives its form, e.g. in Russian
``{"plural": "n", "one": "{n} карта", "few": "{n} карты", "many": "{n} карт"}``.
:func:`plural` is CLDR's rule for whole numbers in our three languages.

Every key the code asks for is a literal string in ``bot/`` (a table such as
:data:`FACES` where the key depends on a value), never built at run time, so that
``tests/test_catalogues.py`` can check each against the three catalogues. A key missing
from a language falls back to English, and a key missing everywhere shows the key
itself, so a gap is visible but never crashes a game.

The catalogues hold Telegram HTML (``<b>``, ``<i>``). :func:`t` escapes every text put
into one, a player's name or a chat's title, so that no call site has to; a fragment that
is already HTML, another :func:`t`'s result, is a :class:`Markup` and goes in as it is.
:func:`plain` is for where Telegram shows plain text (a tap's alert).
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

# Our languages, each with the catalogue key of its name.
LANGUAGES = {"en": "language.en", "ru": "language.ru", "uk": "language.uk"}
LANGS = tuple(LANGUAGES)
DEFAULT = "en"
_DIR = Path(__file__).with_name("locales")
# Telegram language codes that read one of our languages best.
_ALIASES = {"be": "ru", "kk": "ru", "ky": "ru", "tg": "ru", "uz": "ru"}


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: a key written twice (a merge, a
    copy) would otherwise let its last text win without a word."""
    twice = sorted(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
    if twice:
        raise ValueError(f"keys given twice: {', '.join(twice)}")
    return dict(pairs)


# A catalogue entry: a text, or a plural text (see the module docstring).
Entry = str | dict[str, str]
# The plural categories a language's whole numbers fall into (CLDR).
CATEGORIES = {"en": ("one", "other"), "ru": ("one", "few", "many"), "uk": ("one", "few", "many")}


def plural(lang: str, n: int) -> str:
    """The CLDR plural category of the whole number ``n`` in ``lang``: English tells one
    from the rest; Russian and Ukrainian share a rule (1, 21, 31… one; 2–4, 22–24… few;
    the rest, 11–14 included, many)."""
    n = abs(n)
    if lang == "en":
        return "one" if n == 1 else "other"
    if n % 10 == 1 and n % 100 != 11:
        return "one"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "few"
    return "many"


def forms(entry: Entry) -> list[str]:
    """Every text an entry can show (one for a plain text)."""
    return [entry] if isinstance(entry, str) else [v for k, v in entry.items() if k != "plural"]


@cache
def catalogue(lang: str) -> dict[str, Entry]:
    path = _DIR / f"{lang}.json"
    data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique)
    if not isinstance(data, dict):
        raise ValueError(f"locales/{lang}.json is not an object")
    return {
        str(k): {str(c): str(f) for c, f in v.items()} if isinstance(v, dict) else str(v)
        for k, v in data.items()
    }


def lang_of(code: str | None) -> str:
    """Our language for a Telegram ``language_code`` (``uk``, ``ru-RU``, ``None``...)."""
    if not code:
        return DEFAULT
    base = code.split("-")[0].lower()
    base = _ALIASES.get(base, base)
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
    return value if isinstance(value, Markup) else Markup(html.escape(value, quote=False))


def _text(lang: str, key: str, params: dict[str, Any]) -> str:
    entry = catalogue(lang).get(key)
    if entry is None:
        lang, entry = DEFAULT, catalogue(DEFAULT).get(key, key)
    if isinstance(entry, dict):
        entry = entry[plural(lang, int(params[entry["plural"]]))]
    return entry.format(**params) if params else entry


def t(lang: str, key: str, **params: Any) -> Markup:
    """The text of ``key`` in ``lang`` as Telegram HTML, every str parameter escaped
    unless it is :class:`Markup`."""
    escaped = {k: escape(v) if isinstance(v, str) else v for k, v in params.items()}
    return Markup(_text(lang, key, escaped))


def plain(lang: str, key: str, **params: Any) -> str:
    """The text of ``key`` where Telegram shows text as it is (an alert): nothing escaped,
    so its catalogue text must hold no markup."""
    return _text(lang, key, params)


# The catalogue key of each face card's letter.
FACES = {"J": "face.J", "Q": "face.Q", "K": "face.K", "A": "face.A"}


@cache
def faces(lang: str) -> dict[str, str]:
    """J/Q/K/A in the language's letters (В/Д/К/Т in ru and uk), for cards.display."""
    return {face: plain(lang, key) for face, key in FACES.items()}
