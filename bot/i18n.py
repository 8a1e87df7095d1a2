"""Translations: every user-facing string lives in bot/locales/<lang>.json.

Catalogues are flat ``key -> text`` maps with ``{placeholder}`` fields (str.format). A key
missing from a language falls back to English, and a key missing everywhere shows the key
itself, so a gap is visible but never crashes a game; tests keep the three complete.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

LANGS = ("en", "ru", "uk")
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


@cache
def catalogue(lang: str) -> dict[str, str]:
    path = _DIR / f"{lang}.json"
    data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique)
    if not isinstance(data, dict):
        raise ValueError(f"locales/{lang}.json is not an object")
    return {str(k): str(v) for k, v in data.items()}


def lang_of(code: str | None) -> str:
    """Our language for a Telegram ``language_code`` (``uk``, ``ru-RU``, ``None``...)."""
    if not code:
        return DEFAULT
    base = code.split("-")[0].lower()
    base = _ALIASES.get(base, base)
    return base if base in LANGS else DEFAULT


def has(lang: str, key: str) -> bool:
    return key in catalogue(lang) or key in catalogue(DEFAULT)


def t(lang: str, key: str, **params: Any) -> str:
    text = catalogue(lang).get(key)
    if text is None:
        text = catalogue(DEFAULT).get(key, key)
    return text.format(**params) if params else text


@cache
def faces(lang: str) -> dict[str, str]:
    """J/Q/K/A in the language's letters (В/Д/К/Т in ru and uk), for cards.display."""
    return {name: t(lang, f"face.{name}") for name in ("J", "Q", "K", "A")}
