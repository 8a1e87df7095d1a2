"""callback_data and deep-link payloads: compact, within Telegram's limits, strict."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.callbacks import (
    MAX_BYTES,
    Action,
    BadCallback,
    Callback,
    decode,
    deep_link,
    encode,
    new_game_id,
    parse_payload,
    payload,
    stamp,
)
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.games.football.game import Football

# The largest ids Telegram hands out: supergroup ids are -100 followed by up to 13 digits;
# topic ids are message ids (32-bit).
WORST_CHAT = -(2**52)  # Telegram: chat ids fit in 52 bits
WORST_THREAD = 2**31 - 1


def _longest_tokens() -> list[str]:
    """Every move token the engines produce in a few random games, longest first."""
    rng = random.Random(7)
    tokens: set[str] = set()
    for _ in range(20):
        games = [
            Durak.new(DurakOptions(deck_size=52), ["a", "b", "c"], 0, seed=rng.random()),
            Football.new(None, ["a", "b"], seed=rng.random()),
        ]
        for game in games:
            while not game.is_finished():
                moves = list(game.legal_moves())
                tokens.update(game.move_token(m) for m in moves[:50])
                game.apply(rng.choice(moves))
    return sorted(tokens, key=len, reverse=True)


def test_the_worst_case_fits_in_64_bytes_and_what_would_not_is_refused() -> None:
    tokens = [t for t in _longest_tokens() if not t.startswith("s")]  # set-ups: not buttons
    assert len(tokens[0]) <= 8, tokens[:3]  # db10H10S at most
    for token in [*tokens[:20], "x" * (MAX_BYTES - 28)]:
        arg = stamp(46655) + token
        data = encode(Callback(WORST_CHAT, WORST_THREAD, "zzzz", Action.MOVE, arg))
        assert len(data.encode()) <= MAX_BYTES
        assert decode(data) == Callback(WORST_CHAT, WORST_THREAD, "zzzz", Action.MOVE, arg)
    with pytest.raises(ValueError):  # what would not fit is refused
        encode(Callback(WORST_CHAT, WORST_THREAD, "zzzz", Action.MOVE, "x" * 41))
    with pytest.raises(ValueError):
        encode(Callback(1, None, "zzzz", Action.MOVE, "has space"))


def test_stamps_are_fixed_width() -> None:
    assert [stamp(n) for n in (0, 35, 36, 46655, 46656)] == ["000", "00z", "010", "zzz", "000"]


@given(
    chat=st.integers(-(10**15), 10**12),
    thread=st.one_of(st.none(), st.integers(1, 2**31 - 1)),
    action=st.sampled_from(list(Action)),
    arg=st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30),
)
def test_round_trip(chat: int, thread: int | None, action: Action, arg: str) -> None:
    cb = Callback(chat, thread, new_game_id(), action, arg)
    assert decode(encode(cb)) == cb


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "garbage",
        "-1:1:abcd",  # no action
        "-1:1:abcdZ",  # unknown action
        "-1:1:abcJ",  # short game id
        "-1:1:ABCDJ",  # game ids are lower case
        "-01:1:abcdJ",  # not canonical: leading zero
        "-0::abcdJ",
        "1:0:abcdJ",  # thread 0 is written as nothing
        "-1:1:abcdM a",  # spaces are not ours
        "-1:1:abcdMé",  # nor non-ASCII
        "-1:1:abcdM" + "x" * 60,  # over 64 bytes
        "-1:1:abcdJ\n",
    ],
)
def test_garbage_and_forgeries_are_refused(data: object) -> None:
    with pytest.raises(BadCallback):
        decode(data)


def test_deep_link_payloads() -> None:
    for chat, thread in [(-1001234567890, None), (-5, 77), (WORST_CHAT, WORST_THREAD)]:
        text = payload(chat, thread, "a1b2")
        assert len(text) <= 64
        assert all(c.isalnum() or c in "_-" for c in text)
        assert parse_payload(text) == (chat, thread, "a1b2")
    assert deep_link("bot", -5, None, "a1b2") == "https://t.me/bot?start=-5__a1b2"
    for bad in ["", "x", "-5__a1b", "-5_0_a1b2", "-05__a1b2", "-5__a1b2_", 5, "-5__A1B2"]:
        assert parse_payload(bad) is None
