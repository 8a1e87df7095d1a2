"""Computer players in the bot: what they are given, their seeds, deadlines and timeouts."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot.core.models import Lobby, Seat, Table
from bot.service import turns
from bot.tables import games
from bot.tables.games import apply_move
from engine import registry
from engine.base import Game
from engine.games.durak.game import Durak
from engine.games.durak.view import DurakView
from engine.games.football.view import FootballView
from testing.computers import lobby_with_computers, play_people
from testing.harness import Harness
from testing.tabletop import stored


def _table(kind: str, people: int, computers: int) -> Table:
    table = Table(game_id="abcd", chat_id=-100, lobby=Lobby(creator=1), kind=kind, phase="lobby")
    table.lobby.settings.turn_time = 60
    for i in range(people):
        table.seats.append(Seat(user_id=i + 1, name=f"P{i}"))
    for i in range(computers):
        table.seats.append(Seat(user_id=-(i + 1), name=f"C{i}", computer="normal"))
    games.start(table, random.Random(4))
    return table


def _foreign_cards(game: Game, seat: int) -> set[str]:
    """Cards in other seats' hidden hands (durak): what ``seat`` must never be given."""
    assert isinstance(game, Durak)
    mine = game.view(seat)
    others: set[str] = set()
    for other in range(len(mine.players)):
        if other != seat:
            others |= set(game.view(other).hand)
            others |= set(game.view(other).dummy_hand or [])
    known = {c for pile in mine.known for c in pile} | set(mine.dummy_known)
    return others - set(mine.hand) - set(mine.dummy_hand or []) - known


@pytest.mark.parametrize(("game", "computers"), [("durak", 3), ("football", 1)])
async def test_a_computer_player_is_given_only_its_seats_view(
    quick: Harness, monkeypatch: pytest.MonkeyPatch, game: str, computers: int
) -> None:
    calls: list[dict[str, Any]] = []
    real_move, real_choose = turns.computer_move, turns.choose

    def computer_move(table: Table, g: Game, seat: int) -> Any:
        calls.append({"state": g.to_json(), "seat": seat, "kind": table.kind})
        return real_move(table, g, seat)

    def choose(kind: str, view: Any, legal: Any, events: Any, level: str, seed: int) -> Any:
        calls[-1].update(view=view, legal=list(legal), level=level, seed=seed, events=events)
        return real_choose(kind, view, legal, events, level, seed)

    monkeypatch.setattr(turns, "computer_move", computer_move)
    monkeypatch.setattr(turns, "choose", choose)
    h = quick
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, game, computers)
    await top.start(ann)
    await play_people(h, top, [ann], random.Random(11))
    assert calls, "the computer never moved"
    data = await stored(h, top.group)
    people = {i for i, s in enumerate(data["seats"]) if s["computer"] is None}
    for call in calls:
        full = registry.spec(call["kind"]).game.from_json(call["state"])
        seat, view = call["seat"], call["view"]
        assert seat not in people, "the computer played for a person who was not away"
        assert view == full.view(seat), "not exactly the acting seat's view"
        assert call["legal"] == list(full.legal_moves())
        assert call["level"] == "normal"
        if isinstance(view, DurakView):
            seen = set(view.hand) | set(view.dummy_hand or [])
            assert not seen & _foreign_cards(full, seat)
            assert view.dummy_hand is None or view.controller == seat
        else:
            assert isinstance(view, FootballView)
            hidden = full.view(None)
            # Nothing of the field or the keepers beyond the public view and its own row.
            own_row = 0 if seat == 0 else 3
            for r, row in enumerate(view.field):
                for c, card in enumerate(row):
                    if r != own_row:
                        assert card == hidden.field[r][c]
            assert view.keepers[1 - seat] == hidden.keepers[1 - seat]
    # The same decision always gets the same seed (a retried move comes out the same).
    assert len({(c["state"], c["seed"]) for c in calls}) == len({c["state"] for c in calls})


def test_the_seed_is_stable_per_decision_and_differs_between_decisions() -> None:
    table = _table("durak", 1, 2)
    first = turns.seed_for(table)
    assert turns.seed_for(table) == first
    table.played.moves.append({"player": 0})
    assert turns.seed_for(table) != first


def test_the_deadline_follows_who_is_to_act() -> None:
    table = _table("durak", 2, 0)
    assert turns.due_in(table, 1.0) == 60.0
    table.lobby.settings.turn_time = 0
    assert turns.due_in(table, 1.0) is None  # no limit, nobody to wait for
    actor = games.load(table).to_act()
    assert actor is not None
    table.seats[actor.player].away = True
    assert turns.due_in(table, 1.0) == 1.0  # away: the computer plays, paced
    table.phase = "finished"
    assert turns.due_in(table, 1.0) is None


def test_a_later_deadline_needs_no_wake_up_and_a_tap_that_is_no_move_keeps_it() -> None:
    table = _table("durak", 2, 0)
    assert turns.stamp(table, 1.0, 1000.0) is not None  # the first deadline of a game
    assert table.clock.turn_due == 1060.0
    assert turns.stamp(table, 1.0, 1030.0) is None  # a commit in the same position: a set-up
    assert table.clock.turn_due == 1060.0  # step... does not lengthen the turn
    game = games.load(table)
    actor = game.to_act()
    assert actor is not None
    apply_move(table, game, actor.player, game.legal_moves()[0])
    assert turns.stamp(table, 1.0, 1030.0) is None  # a move: the next turn has its whole time
    assert table.clock.turn_due == 1090.0
    actor = games.load(table).to_act()
    assert actor is not None
    table.seats[actor.player].away = True
    wake = turns.stamp(table, 1.0, 1031.0)
    assert wake is not None and wake < 1090.0  # the computer plays sooner
    table.phase = "finished"
    assert turns.stamp(table, 1.0, 1032.0) is None and table.clock.turn_due == 0.0


def test_a_tap_forgives_timeouts_and_brings_him_back() -> None:
    table = _table("durak", 2, 0)
    seat = table.seats[1]
    seat.timeouts, seat.away = 2, True
    turns.note_active(table, seat.user_id)
    assert (seat.timeouts, seat.away) == (0, False)
    assert table.played.events[-1] == ("seat_back", {"seat": 1})
    turns.note_active(table, seat.user_id)  # not away: nothing to say
    assert table.played.events[-1] == ("seat_back", {"seat": 1}) and len(table.played.events) == 1


def test_a_person_who_times_out_twice_is_away() -> None:
    table = _table("durak", 2, 0)
    timed_out: list[int] = []
    while not any(s.away for s in table.seats):
        actor = games.load(table).to_act()
        assert actor is not None
        timed_out.append(actor.player)
        game = games.load(table)
        turns._play(table, actor.player, turns.computer_move(table, game, actor.player))
    away = next(i for i, s in enumerate(table.seats) if s.away)
    assert timed_out.count(away) == 2 and table.seats[away].timeouts == 2
    assert table.clock.auto_moves == len(timed_out)


def test_computers_going_round_are_stopped_after_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turns, "AUTO_MOVE_CAP", 5)
    table = _table("durak", 0, 3)
    for _ in range(5):
        actor = games.load(table).to_act()
        assert actor is not None and table.phase == "playing"
        game = games.load(table)
        turns._play(table, actor.player, turns.computer_move(table, game, actor.player))
    assert table.phase == "abandoned"
    assert table.played.events[-1] == ("computer_stalled", {})
