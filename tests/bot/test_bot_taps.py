"""What one write makes of a tap on the stored table (:func:`bot.service.taps.decide`),
alone, without Telegram or Redis: a redelivered tap, a tap on a superseded hand, an
applied tap, a refused tap of an away player."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from bot.core.keys import Junk
from bot.core.models import LastTap, Lobby, Seat, Table
from bot.core.store import Snapshot
from bot.service.taps import Asked, Origin, Reply, decide, refuse
from bot.tables import games

ANN, BOB = 1, 2
GROUP = -100
NOW = 1000.0
HAND = 77  # Ann's ephemeral hand in the group


def playing() -> Table:
    """Ann and Bob playing durak in the group."""
    seats = [Seat(user_id=ANN, name="Ann"), Seat(user_id=BOB, name="Bob")]
    table = Table(game_id="g1", chat_id=GROUP, kind="durak", lobby=Lobby(creator=ANN), seats=seats)
    games.start(table, random.Random(1))
    return table


def ann_tap(**where: Any) -> Asked:
    """Ann's tap on her hand in the group (``where`` changes where it came from), that
    the change marks as seen."""

    def change(table: Table) -> Reply | None:
        table.played.add_events([("seen", {})])
        return Reply("toast")

    return Asked("g1", ANN, change, replace(Origin("q1", GROUP, HAND, True), **where))


def test_an_applied_tap_is_remembered_answered_by_her_hand_in_the_group_and_applied_once() -> None:
    write, done = decide(Snapshot(playing()), ann_tap(), NOW, 1.0)
    assert done.applied and done.reply == Reply("toast")
    assert write.table is not None and write.table.played.events[-1] == ("seen", {})
    assert write.table.delivery.taps == ["q1"]
    assert write.table.delivery.last_taps == {str(ANN): LastTap("q1", NOW)}
    # From her private chat: remembered, but no hand in the group answers it.
    write, done = decide(Snapshot(playing()), ann_tap(chat_id=ANN, in_group=False), NOW, 1.0)
    assert done.applied and write.table is not None
    assert write.table.delivery.taps == ["q1"] and write.table.delivery.last_taps == {}
    # Delivered again after it was applied: it writes nothing and says nothing.
    write, done = decide(Snapshot(write.table), ann_tap(), NOW, 1.0)
    assert write.table is None and done == (False, Reply())


def test_a_tap_on_her_superseded_hand_or_another_game_is_stale_but_not_another_players() -> None:
    hers = Snapshot(playing(), junk=[Junk(GROUP, HAND, False, ANN)])
    write, done = decide(hers, ann_tap(), NOW, 1.0)
    assert write.table is None and done == (False, Reply("tap.stale", True, {}))
    his = Snapshot(playing(), junk=[Junk(GROUP, HAND, False, BOB)])
    assert decide(his, ann_tap(), NOW, 1.0)[1].applied
    asked = ann_tap()  # one on another game: stale
    other = Asked("g2", ANN, asked.change, asked.origin)
    write, done = decide(Snapshot(playing()), other, NOW, 1.0)
    assert write.table is None and done.reply.key == "tap.stale"


def test_a_refused_tap_of_an_away_player_brings_him_back_and_nothing_else() -> None:
    table = playing()
    table.seats[0].away = True

    def illegal(table: Table) -> Reply | None:
        table.played.add_events([("never", {})])
        refuse("tap.illegal")

    write, done = decide(Snapshot(table), Asked("g1", ANN, illegal, Origin("q1")), NOW, 1.0)
    assert done == (False, Reply("tap.illegal", True, {}))
    assert write.table is not None and not write.table.seats[0].away
    assert ("never", {}) not in write.table.played.events and write.table.delivery.taps == []
