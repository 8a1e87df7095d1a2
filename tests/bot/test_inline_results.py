"""An inline query's answers at an inline table (bot.screens.inline) never post a card the
public may not know once played; an inline table's taps and limits have their own address."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.core import budget, callbacks
from bot.core.budget import Budget
from bot.core.callbacks import INLINE_CHAT, Action, Callback
from bot.core.i18n import LANGS, faces
from bot.core.models import Inline, Table
from bot.screens import inline
from bot.service.taps import INLINE_ACTIONS, on_inline
from bot.tables import games
from engine import cards
from testing.hidden import random_games, table_of
from testing.tabletop import hidden_cards

INLINE_IDS = st.text(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=80
)


def _inline(game: Any, kind: str, message: str = "AgAAAexample") -> Table:
    table = table_of(game, kind, list(LANGS))
    table.chat_id, table.thread_id = INLINE_CHAT, callbacks.inline_number(message)
    table.inline = Inline(message=message)
    return table


def _shows(text: str, hidden: set[str], lang: str) -> set[str]:
    return {c for c in hidden if cards.display(cards.parse(c), faces(lang)) in text}


def _check_position(table: Table, kind: str) -> None:
    """Every seat's answer: ids Telegram takes, his hand first, one result per button
    that plays, and each posted line public once its move is played."""
    game = games.current(table)
    for seat in range(len(table.seats)):
        results = inline.hand(table, seat)
        ids = [r.id for r in results]
        assert len(set(ids)) == len(ids) and all(0 < len(i.encode()) <= 64 for i in ids)
        assert ids[0].startswith(inline.HAND)
        legal = games.legal_for(game, seat) or []
        actions = [callbacks.decode(r.id).action for r in results[1:]]
        if Action.SETUP in actions:  # a set-up, picked card by card (football's)
            assert set(actions) == {Action.SETUP}
        else:
            assert actions.count(Action.MOVE) == len(legal)
        for result in results:
            after = game
            cb = callbacks.decode(result.id) if result is not results[0] else None
            if cb is not None and cb.action is Action.MOVE:
                copy = table.model_copy(deep=True)
                after = games.load(copy)
                token = cb.arg[callbacks.STAMP_LEN :]
                games.apply_move(copy, after, seat, after.move_from_token(token, seat))
            public = hidden_cards(kind, after.to_json(), None)
            leaked = _shows(result.posts.text, public, table.lobby.lang)
            assert not leaked, (result.title, result.posts.text)
    for lang in LANGS:
        for result in inline.watching(table, lang):
            text = f"{result.title} {result.description} {result.posts.text}"
            assert not _shows(text, hidden_cards(kind, game.to_json(), None), lang)


def test_every_pick_posts_only_what_the_public_may_know() -> None:
    # durak's three games seat 2, 3 and 4 players, the dummy playing in one of them
    for kind, count in (("football", 2), ("durak", 3)):
        for game, rng in random_games(kind, count):
            table = _inline(game, kind)
            while not game.is_finished():
                _check_position(table, kind)
                actor = game.to_act()
                assert actor is not None
                games.apply_move(table, game, actor.player, rng.choice(list(game.legal_moves())))


def test_a_long_answer_comes_in_pages_of_fifty() -> None:
    game, _ = next(random_games("football", 1))
    results = inline.hand(_inline(game, "football"), 0) * 30
    first, rest = inline.page(results, "")
    assert len(first) == 50 and rest == "50"
    seen = list(first)
    while rest:
        more, rest = inline.page(results, rest)
        seen += more
    assert seen == results


@given(INLINE_IDS)
def test_an_inline_table_has_a_short_address_and_a_group_hand_s_budget(message: str) -> None:
    number = callbacks.inline_number(message)
    assert 0 < number < 2**52 and number == callbacks.inline_number(message)
    data = callbacks.encode(Callback(INLINE_CHAT, number, "ab12", Action.JOIN))
    assert len(data) <= 28 and callbacks.decode(data).thread_id == number
    payload = callbacks.payload(INLINE_CHAT, number, "ab12")
    assert callbacks.parse_payload(payload) == (INLINE_CHAT, number, "ab12")
    call = {"inline_message_id": message, "text": "x"}
    chat, receiver = budget.chat_of(call), budget.receiver_of(call)
    assert chat is not None and receiver is not None and chat == -receiver
    assert receiver > 2**52  # no Telegram chat's id
    assert budget.of_inline("auto", message) == Budget(receiver, group=chat)
    assert budget.of_inline("auto", message, group=True) == Budget(chat)
    assert budget.kind_of(call) == "inline"


@given(INLINE_IDS, st.sampled_from(list(Action)), st.integers(-(2**40), 2**40))
def test_a_tap_on_an_inline_message_reaches_only_that_message_s_table(
    message: str, action: Action, chat: int
) -> None:
    # a move is picked from his own query, never tapped on the table (nor his cards)
    assert not {Action.MOVE, Action.SETUP, Action.CARDS, Action.PICK} & INLINE_ACTIONS
    number = callbacks.inline_number(message)
    for thread in (None, number, number + 1):
        cb = Callback(chat, thread, "ab12", action)
        found = on_inline(cb, message)
        if chat == INLINE_CHAT and thread in (None, number) and action in INLINE_ACTIONS:
            assert found is not None and found.thread_id == number
        else:
            assert found is None
