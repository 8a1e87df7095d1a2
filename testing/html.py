"""Telegram's HTML as the Bot API reads it: the text a message shows and its entities.

The fake refuses what Telegram refuses ("can't parse entities"), so that a bot's unbalanced
or unknown tag fails a test rather than a message in production.
"""

from __future__ import annotations

import re
from typing import Any

from testing.errors import bad

# Each tag that makes an entity of its own, and the entity's type.
_TAGS = (
    "b:bold strong:bold i:italic em:italic u:underline ins:underline s:strikethrough "
    "strike:strikethrough del:strikethrough tg-spoiler:spoiler code:code pre:pre "
    "blockquote:blockquote"
)
_SIMPLE_TAGS = {tag: kind for tag, kind in (pair.split(":") for pair in _TAGS.split())}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


def utf16_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


_HTML_PIECE = re.compile(r"<[^>]*>?|&[^;&<]*;?|[^<&]+")


def parse_html(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Telegram's HTML parse mode: the plain text and its entities (offsets in UTF-16
    code units, as Telegram's), or Telegram's error."""
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    stack: list[tuple[str, int, dict[str, Any]]] = []
    length = 0
    for match in _HTML_PIECE.finditer(source):
        piece = match.group(0)
        if piece[0] == "&":
            name = piece[1:-1] if piece.endswith(";") else ""
            if name in _NAMED_ENTITIES:
                piece = _NAMED_ENTITIES[name]
            elif re.fullmatch(r"#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}", name):
                piece = chr(int(name[2:], 16) if name[1] == "x" else int(name[1:]))
            # else: Telegram keeps an unknown '&...' as text
        elif piece[0] == "<":
            offset = len(source[: match.start()].encode())
            if not piece.endswith(">"):
                raise bad(f"can't parse entities: Unclosed start tag at byte offset {offset}")
            _close_or_open(piece[1:-1].strip(), offset, length, stack, entities)
            continue
        out.append(piece)
        length += utf16_len(piece)
    if stack:
        raise bad(
            f"can't parse entities: Can't find end tag corresponding to start tag "
            f'"{stack[-1][0]}"'
        )
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _close_or_open(
    tag: str,
    offset: int,
    length: int,
    stack: list[tuple[str, int, dict[str, Any]]],
    entities: list[dict[str, Any]],
) -> None:
    if tag.startswith("/"):
        name = tag[1:].strip().lower()
        if not stack or stack[-1][0] != name:
            raise bad(
                f"can't parse entities: Unmatched end tag at byte offset {offset}, "
                f'expected "</{stack[-1][0] if stack else ""}>", found "</{name}>"'
            )
        _, start, opened = stack.pop()
        if length > start:
            entities.append({**opened, "offset": start, "length": length - start})
        return
    name, _, attrs = tag.partition(" ")
    name = name.lower()
    if name in _SIMPLE_TAGS:
        entity: dict[str, Any] = {"type": _SIMPLE_TAGS[name]}
    elif name == "span" and 'class="tg-spoiler"' in attrs:
        entity = {"type": "spoiler"}
    elif name == "a":
        href = re.search(r'href="([^"]*)"', attrs)
        if href is None:
            raise bad(f"can't parse entities: Can't find href in <a> at byte {offset}")
        entity = {"type": "text_link", "url": href.group(1)}
    else:
        raise bad(f'can\'t parse entities: Unsupported start tag "{name}" at byte offset {offset}')
    stack.append((name, length, entity))


def strip_entities(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Telegram trims leading and trailing whitespace of a message text."""
    stripped = text.lstrip()
    cut = utf16_len(text) - utf16_len(stripped)
    stripped = stripped.rstrip()
    total = utf16_len(stripped)
    kept = []
    for e in entities:
        start = max(e["offset"] - cut, 0)
        end = min(e["offset"] + e["length"] - cut, total)
        if end > start:
            kept.append({**e, "offset": start, "length": end - start})
    return stripped, kept


def command_entities(text: str) -> list[dict[str, Any]]:
    match = re.match(r"/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?", text)
    if not match:
        return []
    return [{"type": "bot_command", "offset": 0, "length": utf16_len(match.group(0))}]
