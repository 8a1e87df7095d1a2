"""Screens never show a hidden card (random games rendered at every step, for the group and
each seat, in every language: text, labels and callback data), and show what a player needs."""

from __future__ import annotations

import pytest

from bot.core.callbacks import STAMP_LEN, Action, decode
from bot.core.i18n import LANGS, faces
from bot.core.screen import Screen
from bot.games.football import screens as football_screens
from bot.screens import registry, views
from bot.tables.games import apply_move
from engine import cards
from engine.games.football.game import Football
from engine.games.football.rules import HOME
from testing.hidden import durak_hidden, football_hidden, random_games, table_of


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


# durak's six games: 2, 3 and 4 players, each with the dummy playing and without
@pytest.mark.parametrize(("kind", "count"), [("football", 3), ("durak", 6)])
def test_no_screen_shows_a_hidden_card_and_only_the_actor_gets_his_moves(
    kind: str, count: int
) -> None:
    hidden_of = football_hidden if kind == "football" else durak_hidden
    for game, rng in random_games(kind, count):
        langs = list(LANGS)
        rng.shuffle(langs)
        table = table_of(game, kind, langs)
        while True:
            _check(views.group_screen(table, "bot"), hidden_of(game, None), table.lobby.lang)
            actor = game.to_act()
            legal = {game.move_token(m) for m in game.legal_moves()}
            for seat in range(len(table.seats)):
                screen = views.hand_screen(table, seat)
                _check(screen, hidden_of(game, seat), table.seats[seat].lang)
                if kind == "durak" and screen is not None:  # (football: set-ups, the field)
                    moves = {  # the moves (below them, the switch of the hand's place)
                        decode(b.data).arg[STAMP_LEN:]
                        for row in screen.rows
                        for b in row
                        if b.data and decode(b.data).action is Action.MOVE
                    }
                    assert moves == (legal if actor and seat == actor.player else set())
            if game.is_finished():
                break
            assert actor is not None
            apply_move(table, game, actor.player, rng.choice(list(game.legal_moves())))
        assert table.phase == "finished"
        assert not any(views.hand_screen(table, s).prompt for s in range(len(table.seats)))  # type: ignore[union-attr]


def test_football_is_seen_from_each_players_side() -> None:
    game = Football.new(None, ["Ann", "Bob"], seed=1)
    for seat in (0, 1):
        hand = game.view(seat).hand
        setup = {"goalkeeper": hand[0], "row": hand[1:]}
        game.apply(game.move_from_record({"player": seat, "setup": setup}))
    table = table_of(game, "football", ["en", "en", "en"])
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
