"""Screens never show a hidden card, and show what a player needs.

Random games of both engines are rendered at every step, for the group and for each
seat, in all three languages; every card the reader may not know (computed from the full
state, which the renderers never see) must be absent from the text, the button labels
and the callback data.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from bot.core.callbacks import STAMP_LEN, Action, decode
from bot.core.i18n import LANGS, faces
from bot.core.models import Lobby, Seat, Table
from bot.core.screen import Screen
from bot.games.football import screens as football_screens
from bot.screens import registry, views
from bot.tables.games import apply_move
from engine import cards
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.games.football.game import Football
from engine.games.football.rules import HOME


def _table(game: Any, kind: str, langs: list[str]) -> Table:
    seats = [
        Seat(user_id=10 + i, name=name, lang=langs[i % 3]) for i, name in enumerate(game.players)
    ]
    return Table(
        game_id="g1g1",
        chat_id=-100777,
        kind=kind,
        phase="playing",
        seats=seats,
        state=game.to_json(),
        lobby=Lobby(creator=10, lang=langs[0]),
    )


def _football_hidden(game: Football, viewer: int | None) -> set[str]:
    places = game.places()
    public = game.view(None)
    face_up = {c for row in public.field for c in row if c}
    hidden = set(cards.to_strs(places["pile0"] + places["pile1"]))
    hidden |= set(cards.to_strs(places["field"])) - face_up
    for seat in (0, 1):
        if seat != viewer:
            hidden |= set(cards.to_strs(places[f"hand{seat}"]))
            keeper = game.view(seat).keepers[seat]
            if keeper and not public.keepers_up[seat]:
                hidden.add(keeper)
    if viewer is not None:
        hidden -= {c for c in game.view(viewer).field[HOME[viewer]] if c}
    return hidden


def _durak_hidden(game: Durak, viewer: int | None) -> set[str]:
    n = len(game.players)
    views_ = [game.view(s) for s in range(n)]
    public = game.view(None)
    hidden: set[str] = set()
    for seat in range(n):
        if seat != viewer:
            hidden |= set(views_[seat].hand) - set(public.known[seat])
    controller = public.controller
    if viewer != controller:
        hidden |= set(views_[controller].dummy_hand or []) - set(public.dummy_known)
    hidden |= set(cards.to_strs(game.stock[game.drawn :]))
    hidden.discard(public.trump)  # face up under the stock, public
    return hidden


def _shown(screen: Screen) -> tuple[str, str]:
    labels = " ".join(b.text for row in screen.rows for b in row)
    data = " ".join(decode(b.data).arg for row in screen.rows for b in row if b.data)
    return screen.text + "\n" + labels, data


def _check(screen: Screen | None, hidden: set[str], lang: str) -> None:
    assert screen is not None
    text, data = _shown(screen)
    for card in hidden:
        assert cards.display(cards.parse(card), faces(lang)) not in text, card
        assert card not in data, card


def _games(kind: str, count: int) -> Iterator[tuple[Any, random.Random]]:
    for n in range(count):
        rng = random.Random(n)
        if kind == "football":
            yield Football.new(None, ["Ann", "Bob"], seed=n), rng
        else:
            players = ["Ann", "Bob", "Cid", "Dan"][: 2 + n % 3]
            options = DurakOptions(dummy_plays=n % 2 == 1, deck_size=36)
            yield Durak.new(options, players, n % len(players), seed=n), rng


@pytest.mark.parametrize("kind", ["football", "durak"])
def test_no_screen_shows_a_hidden_card(kind: str) -> None:
    hidden_of = _football_hidden if kind == "football" else _durak_hidden
    for game, rng in _games(kind, 8):
        langs = list(LANGS)
        rng.shuffle(langs)
        table = _table(game, kind, langs)
        while True:
            _check(views.group_screen(table, "bot"), hidden_of(game, None), table.lobby.lang)
            for seat in range(len(table.seats)):
                lang = table.seats[seat].lang
                _check(views.hand_screen(table, seat), hidden_of(game, seat), lang)
            if game.is_finished():
                break
            actor = game.to_act()
            assert actor is not None
            apply_move(table, game, actor.player, rng.choice(list(game.legal_moves())))
        assert table.phase == "finished"


def test_only_the_actor_gets_buttons_and_they_are_his_legal_moves() -> None:
    for game, rng in _games("durak", 6):
        table = _table(game, "durak", ["en", "ru", "uk"])
        while not game.is_finished():
            actor = game.to_act()
            assert actor is not None
            legal = {game.move_token(m) for m in game.legal_moves()}
            for seat in range(len(table.seats)):
                screen = views.hand_screen(table, seat)
                assert screen is not None
                tokens = {  # the moves (below them, the switch of the hand's place)
                    decode(b.data).arg[STAMP_LEN:]
                    for row in screen.rows
                    for b in row
                    if b.data and decode(b.data).action is Action.MOVE
                }
                assert tokens == (legal if seat == actor.player else set())
            apply_move(table, game, actor.player, rng.choice(list(game.legal_moves())))
        assert all(not views.hand_screen(table, s).prompt for s in range(len(table.seats)))  # type: ignore[union-attr]


def test_football_is_seen_from_each_players_side() -> None:
    game = Football.new(None, ["Ann", "Bob"], seed=1)
    for seat in (0, 1):
        hand = game.view(seat).hand
        setup = {"goalkeeper": hand[0], "row": hand[1:]}
        game.apply(game.move_from_record({"player": seat, "setup": setup}))
    table = _table(game, "football", ["en", "en", "en"])
    for seat in (0, 1):
        view = game.view(seat)
        grid = football_screens.field(view, registry.ctx(table, "en"))
        lines = grid.removeprefix("<pre>").removesuffix("</pre>").splitlines()
        own = [c for c in view.field[HOME[seat]] if c]
        if seat == 1:
            own.reverse()  # B's left is absolute column 3
        positions = [lines[-2].index(cards.display(cards.parse(c))) for c in own]
        assert positions == sorted(positions)  # his row at the bottom, his left on the left
        assert table.seats[seat].name in lines[-1]  # his goalkeeper below it
        assert table.seats[1 - seat].name in lines[0]
    # Only the player to act gets the field; the other sees his secrets and waits.
    actor = game.to_act()
    assert actor is not None
    for seat in (0, 1):
        screen = views.hand_screen(table, seat)
        assert screen is not None
        assert ("<pre>" in screen.text) == (seat == actor.player) == screen.prompt
