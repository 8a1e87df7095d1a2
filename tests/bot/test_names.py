"""Names from outside read as those names: no bidi control reorders the text around them,
no cut splits a character, in the chat's texts and on the page, in all three languages."""

from __future__ import annotations

import unicodedata

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from telegram import User

from bot.core.names import FSI, MAX_NAME, PDI, of, shown
from testing.harness import Harness
from testing.tabletop import opened
from testing.webapp import bearer, client, table_param, token

RLO, PDF, LRI = "\u202e", "\u202c", "\u2066"
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
FAMILY = "👨\u200d👩\u200d👧"  # one character to a reader, five code points, eight UTF-16 units


def _graphemes(text: str) -> list[str]:
    found: list[str] = regex.findall(r"\X", text)
    return found


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (f"evil{RLO}exe.txt", "evilexe.txt"),  # an override is removed: it reads as typed
        (f"{LRI}Ann{PDF}\n\tBob\u2028", "Ann Bob"),
        ("דוד", f"{FSI}דוד{PDI}"),  # right to left: isolated from the line around it
        ("Ann", "Ann"),
    ],
)
def test_a_name_reads_as_typed_a_right_to_left_one_isolated(name: str, expected: str) -> None:
    assert shown(name) == expected


@pytest.mark.parametrize("unit", [FAMILY, "🇺🇦", "e\u0301", "👍🏽", "😀"])
def test_the_cut_keeps_whole_characters(unit: str) -> None:
    name = "ab" + unit * 40
    cut = shown(name)
    assert _graphemes(cut) == _graphemes(name)[:MAX_NAME]
    assert cut.encode("utf-16-le").decode("utf-16-le") == cut  # no lone surrogate


@given(st.text(max_size=120))
def test_any_name_comes_out_without_controls_and_within_the_cut(name: str) -> None:
    out = shown(name)
    inner = out.removeprefix(FSI).removesuffix(PDI)
    assert not BIDI & set(inner)
    assert not any(unicodedata.category(c) in {"Cc", "Zl", "Zp"} for c in out)
    assert len(_graphemes(inner)) <= MAX_NAME
    assert shown(inner) == out  # shown once is shown for good


async def test_a_hostile_name_and_group_title_in_the_lobby_the_game_and_the_page(
    harness: Harness,
) -> None:
    """In each language, the group's title too, without its override."""
    h = harness
    mallory = h.user(f"evil{RLO}exe.txt", language_code="ru")
    long = h.user("Bo" + FAMILY * 40, language_code="uk")
    group = h.group(f"Cards{RLO}gnp.exe", creator=mallory)
    top = await opened(h, mallory, "durak", group)
    await top.join(long)
    ann = h.user("Ann", language_code="en")
    await top.join(ann)
    lobby = top.table_message().text or ""
    assert "evilexe.txt" in lobby and RLO not in lobby
    cut = "Bo" + FAMILY * (MAX_NAME - 2)
    assert cut in lobby and cut + "\u200d" not in lobby
    await top.start(mallory)
    texts = [top.table_message().text or ""]
    hands = {u.id: [m.text or "" for m in h.screen(u) if m.from_bot] for u in (mallory, long, ann)}
    texts += [text for shown in hands.values() for text in shown]
    assert all(RLO not in text for text in texts)
    assert any("evilexe.txt" in text for text in texts[1:])
    assert all(any("Cardsgnp.exe" in text for text in shown) for shown in hands.values())
    async with client(h) as c:
        ticket = await token(c, long, await table_param(h, group))
        picture = (await c.get("/app/api/state", headers=bearer(ticket))).json()
    assert sorted(picture["names"]) == sorted(["evilexe.txt", cut, "Ann"])
    assert sorted(picture["view"]["players"]) == sorted(picture["names"])


def test_a_user_with_nothing_readable_is_shown_by_his_username_or_id() -> None:
    assert of(User(5, RLO, False, username="ann")) == "ann"
    assert of(User(5, "\u0301" * 500, False)) == "5"
