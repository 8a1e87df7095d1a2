"""What a reader may not know of a game (for the tests that look for leaked cards), and
random games of both engines to look at, at a table of the bot's."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from bot.core.models import Lobby, Seat, Table
from engine import cards
from engine.games.durak.game import Durak
from engine.games.durak.rules import DurakOptions
from engine.games.football.game import Football
from engine.games.football.rules import HOME


def table_of(game: Any, kind: str, langs: list[str]) -> Table:
    """A group's table playing ``game``, its seats in ``langs`` in turn."""
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


def football_hidden(game: Football, viewer: int | None) -> set[str]:
    """The cards seat ``viewer`` (None: the public) may not know, from the whole state."""
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


def durak_hidden(game: Durak, viewer: int | None) -> set[str]:
    """The cards seat ``viewer`` (None: the public) may not know, from the whole state."""
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


def random_games(kind: str, count: int) -> Iterator[tuple[Any, random.Random]]:
    """``count`` new games of ``kind`` (durak for 2 to 4, the dummy playing or not), each
    with the random source to play it on with."""
    for n in range(count):
        rng = random.Random(n)
        if kind == "football":
            yield Football.new(None, ["Ann", "Bob"], seed=n), rng
        else:
            players = ["Ann", "Bob", "Cid", "Dan"][: 2 + n % 3]
            options = DurakOptions(dummy_plays=n % 2 == 1, deck_size=36)
            yield Durak.new(options, players, n % len(players), seed=n), rng
