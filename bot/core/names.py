"""A name from outside (a user's, a group's, a forum topic's) as text that reads as that name.

Telegram lets a name hold anything: a right-to-left override (U+202E) that makes the rest
of the line read backwards (``evil\u202eexe.txt`` shows as ``eviltxt.exe``), line breaks,
control characters, thousands of combining marks. Every chat text and the page show a
name through :func:`shown`, which

- removes the bidirectional controls (embeddings, overrides, isolates, marks) and every
  other control or line/paragraph separator, so a name cannot reorder or break the text
  around it;
- wraps a name that holds right-to-left letters (Arabic, Hebrew) in a first-strong
  isolate (U+2068 ... U+2069), so it reads right to left by itself while the line it
  stands in keeps its own order;
- cuts it to :data:`MAX_NAME` user-perceived characters (grapheme clusters: a flag, an
  emoji with its skin tone or a letter with its accents stays whole, and so does a
  surrogate pair when Telegram counts in UTF-16), and to eight code points a character on
  average, so that piled-up combining marks stay bounded too.
"""

from __future__ import annotations

import unicodedata

import regex
from telegram import User

MAX_NAME = 32  # grapheme clusters of a player's name
MAX_TITLE = 64  # of a group's title
_CODEPOINTS_PER_GRAPHEME = 8  # on average: a family emoji has 7; piled-up marks count more
FSI, PDI = "\u2068", "\u2069"
# Bidi formatting characters: ALM, LRM, RLM, LRE..RLO, LRI..PDI.
_BIDI = {
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
}
_GRAPHEME = regex.compile(r"\X")
_SPACES = regex.compile(r"\s+")


def _kept(char: str) -> str:
    """``char`` as it may stand in a name: a bidi control removed, any other control
    character or a line or paragraph separator made a space (a zero-width joiner, which
    emoji need, stays)."""
    if char in _BIDI:
        return ""
    return " " if unicodedata.category(char) in {"Cc", "Zl", "Zp"} else char


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` whole grapheme clusters of ``text`` (and at most
    ``limit * _CODEPOINTS_PER_GRAPHEME`` code points, counted cluster by cluster)."""
    budget = limit * _CODEPOINTS_PER_GRAPHEME
    kept: list[str] = []
    for cluster in _GRAPHEME.findall(text):
        budget -= len(cluster)
        if len(kept) == limit or budget < 0:
            break
        kept.append(cluster)
    return "".join(kept)


def shown(name: str, limit: int = MAX_NAME) -> str:
    """``name`` as every text shows it (see the module docstring); "" when nothing is left."""
    text = "".join(map(_kept, name))
    text = _cut(_SPACES.sub(" ", text).strip(), limit).rstrip()
    if any(unicodedata.bidirectional(char) in {"R", "AL"} for char in text):
        return f"{FSI}{text}{PDI}"
    return text


def of(user: User) -> str:
    """The name a user is shown by: his full name, else his username, else his id."""
    for candidate in (user.full_name, user.username or ""):
        if name := shown(candidate):
            return name
    return str(user.id)
