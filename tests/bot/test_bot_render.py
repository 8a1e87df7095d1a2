"""Screens never show a hidden card (random games rendered at every step, for the group and
each seat, in every language: text, labels and callback data), and show what a player needs."""

from __future__ import annotations

import random

import pytest

from bot.core.callbacks import STAMP_LEN, Action, decode
from bot.core.i18n import LANGS, faces, t
from bot.core.models import Lobby, Seat, Table
from bot.core.screen import Screen
from bot.games.football import screens as football_screens
from bot.screens import registry, views
from bot.tables.games import apply_move
from engine import cards
from engine.games.durak.game import Durak
from engine.games.durak.options import DurakOptions
from engine.games.football.game import Football
from engine.games.football.rules import HOME
from testing.hidden import random_games, table_of
from testing.tabletop import hidden_cards


def _check(screen: Screen | None, hidden: set[str], lang: str) -> None:
    """No card of ``hidden`` in the screen's text, its buttons' labels or their data."""
    assert screen is not None
    text = screen.text + "\n" + " ".join(b.text for row in screen.rows for b in row)
    data = " ".join(decode(b.data).arg for row in screen.rows for b in row if b.data)
    for card in hidden:
        assert cards.display(cards.parse(card), faces(lang)) not in text, card
        assert card not in data, card


def _in_hand_order(screen: Screen, game: Durak, seat: int, lang: str) -> None:
    """The hand's text shows its cards, then the dummy's, in the view's order; the card
    buttons follow it (beats of one attack card at a time), Take / Pass last."""
    view = game.view(seat)
    hand = [*view.hand, *(view.dummy_hand or [])]
    where = [screen.text.index(cards.display(cards.parse(c), faces(lang))) for c in hand]
    assert where == sorted(where), screen.text
    rows = [[decode(b.data) for b in row if b.data] for row in screen.rows]
    tokens = [[cb.arg[STAMP_LEN:] for cb in row if cb.action is Action.MOVE] for row in rows]
    moves = [[game.move_to_record(game.move_from_token(t, seat)) for t in r] for r in tokens if r]
    played = [[m.get("with") or m.get("attack") or m.get("throw") for m in r] for r in moves]
    assert all(None not in row for row in played[:-1])  # Take / Pass in the last row
    if sum(d is None for _, d in view.table) < 2:  # else the beats go by the card they cover
        shown = [c for row in played for c in row if c]
        assert shown == sorted(shown, key=hand.index)


def _known_named(text: str, game: Durak, table: Table) -> None:
    """The cards everybody saw a player, or the dummy, take are named beside his count."""
    public, lang = game.view(None), table.lobby.lang
    parts = [part for line in text.splitlines() for part in line.split(" · ")]
    owners = [table.seats[seat].name for seat in range(len(public.known))] + [""]
    for owner, known in zip(owners, [*public.known, public.dummy_known], strict=True):
        named = [cards.display(cards.parse(c), faces(lang)) for c in known]
        assert any(owner in part and all(c in part for c in named) for part in parts), text


def _trump_line(game: Durak, seat: int, table: Table) -> str:
    """A waiting hand's trump line: who holds the trump card once everybody knows."""
    view, lang = game.view(seat), table.seats[seat].lang
    trump, holder = cards.display(cards.parse(view.trump), faces(lang)), view.trump_held_by
    if holder is None:
        return t(lang, "durak.trump", trump=trump)
    if holder == seat:
        return t(lang, "durak.trump_mine", trump=trump)
    name = registry.entry("durak").ctx(table, lang).name(holder)  # a player, or the dummy
    return t(lang, "durak.trump_held", trump=trump, name=name)


# durak's six games: 2, 3 and 4 players, each with the dummy playing and without
@pytest.mark.parametrize(("kind", "count"), [("football", 3), ("durak", 6)])
def test_no_screen_shows_a_hidden_card_and_only_the_actor_gets_his_moves(
    kind: str, count: int
) -> None:
    for number, (game, rng) in enumerate(random_games(kind, count)):
        langs = list(LANGS)
        rng.shuffle(langs)
        table = table_of(game, kind, langs)
        table.lobby.settings.turn_time = (60, 0)[number % 2]  # 0: no limit, none shown
        while True:
            group = views.group_screen(table, "bot")
            _check(group, hidden_cards(kind, game.to_json(), None), table.lobby.lang)
            if kind == "football":  # the field's symbols explained while it is played
                legend = t(table.lobby.lang, "football.legend")
                assert (legend in group.text.splitlines()) == (table.phase == "playing")
            if kind == "durak":
                _known_named(group.text, game, table)
                ctx = registry.entry("durak").ctx(table, table.lobby.lang)
                for _, bout in [e for e in table.played.events if e[0] == "bout"]:
                    names = {role: ctx.name(bout[role]) for role in ("attacker", "defender")}
                    assert t(table.lobby.lang, "event.durak.bout", **names) in group.text
            actor = game.to_act()
            legal = {game.move_token(m) for m in game.legal_moves()}
            for seat in range(len(table.seats)):
                screen = views.hand_screen(table, seat)
                _check(screen, hidden_cards(kind, game.to_json(), seat), table.seats[seat].lang)
                # the turn time, told to the player to act alone
                timed = [x for x in screen.text.splitlines() if x.startswith("⏱")]  # type: ignore[union-attr]
                shown = t(
                    table.seats[seat].lang, "hand.turn_time", n=table.lobby.settings.turn_time
                )
                asked = actor and seat == actor.player and table.lobby.settings.turn_time
                assert timed == ([shown] if asked else [])
                if kind == "durak" and screen is not None:  # (football: set-ups, the field)
                    moves = {  # the moves (below them, the switch of the hand's place)
                        decode(b.data).arg[STAMP_LEN:]
                        for row in screen.rows
                        for b in row
                        if b.data and decode(b.data).action is Action.MOVE
                    }
                    assert moves == (legal if actor and seat == actor.player else set())
                    _in_hand_order(screen, game, seat, table.seats[seat].lang)
                    if not screen.prompt and table.phase == "playing":
                        assert _trump_line(game, seat, table) in screen.text
            if game.is_finished():
                break
            assert actor is not None
            apply_move(table, game, actor.player, rng.choice(list(game.legal_moves())))
        assert table.phase == "finished"
        assert not any(views.hand_screen(table, s).prompt for s in range(len(table.seats)))  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("seed", "line"),
    [(2, "Trump: Q♣, in your hand"), (0, "Trump: Q♦, in Bob's hand")],
    ids=["hers", "his"],
)
def test_a_waiting_hand_says_who_holds_the_trump_in_the_catalogues_words(
    seed: int, line: str
) -> None:
    """The English wording, literally: the test above checks every language's trump line
    against the catalogue itself, and would pass it worded wrong."""
    game = Durak.new(DurakOptions(deck_size=24), ["Ann", "Bob"], dealer=0, seed=seed)
    table = table_of(game, "durak", ["en"] * 3)
    rng = random.Random(seed)
    while game.view(None).trump_held_by is None:  # until the trump is drawn, the stock's last
        actor = game.to_act()
        assert actor is not None
        apply_move(table, game, actor.player, rng.choice(list(game.legal_moves())))
    assert game.to_act() == (1, False)  # Bob's turn: Ann's hand waits, with the trump line
    assert line in views.hand_screen(table, 0).text


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
    # The group's legend: "( )", a face-down card its owner knows, is only ever in a hand.
    legend = t("en", "football.legend")
    assert "▒▒" in legend and "[ ]" in legend and "( )" not in legend


@pytest.mark.parametrize("lang", ["en", "ru", "uk"])
def test_the_seated_message_names_a_group_but_no_chat_against_the_computer(lang: str) -> None:
    """ "…against the computer", not "…in «against the computer»"."""
    for chat, key in ((10, "join.vs_computer"), (-100, "join.private")):
        table = Table(game_id="g1", chat_id=chat, lobby=Lobby(creator=10), kind="durak")
        table.phase, table.chat_title = "lobby", "Карты"
        table.seats.append(Seat(user_id=10, name="Ann", lang=lang))
        game = registry.entry("durak").variant(lang, table.lobby.settings)
        assert views.hand_screen(table, 0) == Screen(t(lang, key, game=game, chat="Карты"))
