"""The /rules texts: seeds/<game>.md (or <game>.<lang>.md) as Telegram HTML messages.

seeds/ is read as a package (:data:`SEEDS`), so that an installed wheel, which carries it
as package data, has its rules as the source tree does.

The seeds are Markdown for people reading the repository; Telegram shows a small subset of
HTML. Headings become bold lines, **bold**, *italic* and `code` their tags, fenced blocks
<pre>, bulleted items bullets, and a paragraph's soft-wrapped lines are joined again.
Numbered items keep their numbers: the code and the docs cite them (``seeds/durak.md §4.3``
is point 3 of section 4), and a reader of /rules can find the point cited.
"""

from __future__ import annotations

import html
import re
from importlib import resources

SEEDS = resources.files("seeds")
MAX_TEXT = 4096

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")
_CODE = re.compile(r"`([^`]+)`")
_ITEM = re.compile(r"^(\s*)(?:[-*]|(\d+)\.)\s+")


def source(game: str, lang: str) -> str | None:
    """The rules in ``lang`` when translated, else the original; None when missing."""
    for name in (f"{game}.{lang}.md", f"{game}.md"):
        path = SEEDS / name
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    text = _CODE.sub(r"<code>\1</code>", text)
    text = _BOLD.sub(r"<b>\1</b>", text)
    return _ITALIC.sub(r"<i>\1</i>", text)


def _blocks(markdown: str) -> list[str]:
    """HTML blocks: paragraphs, headings, lists, code."""
    blocks: list[str] = []
    lines = markdown.splitlines()
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append(_paragraph(paragraph))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            blocks.append("<pre>" + html.escape("\n".join(lines[i + 1 : end])) + "</pre>")
            i = end + 1
            continue
        if line.startswith("#"):
            flush()
            blocks.append("<b>" + _inline(line.lstrip("#").strip()) + "</b>")
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
        i += 1
    flush()
    return blocks


def _paragraph(lines: list[str]) -> str:
    """Soft-wrapped lines joined; list items each on a line of their own."""
    items: list[str] = []
    for line in lines:
        match = _ITEM.match(line)
        if match:
            marker = f"{match.group(2)}." if match.group(2) else "•"
            items.append(f"{match.group(1)}{marker} {line[match.end() :].strip()}")
        elif items:
            items[-1] += " " + line.strip()
        else:
            items.append(line.strip())
    return "\n".join(_inline(item) for item in items)


def messages(markdown: str) -> list[str]:
    """HTML messages under Telegram's length limit, cut between blocks."""
    out: list[str] = []
    current = ""
    for block in _blocks(markdown):
        if current and len(current) + 2 + len(block) > MAX_TEXT:
            out.append(current)
            current = ""
        current = f"{current}\n\n{block}" if current else block
    if current:
        out.append(current)
    return out
