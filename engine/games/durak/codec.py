"""A durak game written down and read back (:class:`DurakCodec`): the stored state, the
record's header and moves (docs/records.md) and the moves' button tokens.

Loading checks everything the rules keep true between two moves, so that play from a
loaded state can never reach a position the rules do not have.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import to_json

from engine import cards
from engine.base import CorruptState, MalformedRecord, first_error, read_header
from engine.games.durak.bout import can_throw, throw_order
from engine.games.durak.rules import (
    ATTACK,
    BEAT,
    BOUT_LIMIT,
    DEFEND,
    EARLY_LIMIT,
    LEAD,
    OVER,
    PASS,
    PHASES,
    TAKE,
    TAKE_KIND,
    THROW,
    THROW_KIND,
    TRANSFER,
    DurakMove,
    DurakOptions,
    DurakRules,
    Phase,
    beats,
    unwritten,
)
from engine.games.durak.state import STORED, DurakState, compiled, take_stored

_CARD = r"(?:10|[2-9JQKA])[SCDH]"
_TOKEN = re.compile(rf"(d?)(?:a({_CARD})|b({_CARD})({_CARD})|w({_CARD})|r({_CARD})|(t)|(p))")


class Stored(BaseModel):
    """The stored form of a game (``to_json``): ints and lists, validated on the way in.

    Cards are ints (engine.cards); participants are seats with the dummy as ``n``;
    ``hands``/``known`` have the dummy's last. The stock is not stored: it is the deck's
    cards after the deal, then the face-up trump card, of which ``drawn`` are gone.
    ``pos`` is the index of the holder of the right to throw in, in the priority order.
    ``pending``: players who emptied their hand while the stock had cards (out after the
    draw if it gives them none). ``controller`` is null without the dummy; ``order`` is
    the bout's throw-in order where it cannot be worked out again (by neighbours, §13: a
    neighbour who went out stays in it), and absent elsewhere. When the whole deck is
    dealt there is no stock at all."""

    model_config = ConfigDict(extra="forbid", strict=True)

    v: Literal[1]
    options: DurakOptions
    players: list[str]
    dealer: int
    previous_fool: int | None
    deck: list[int]
    drawn: int
    hands: list[list[int]]
    known: list[list[int]]
    discard: list[int]
    table: list[list[int]]
    phase: Phase
    attacker: int
    defender: int
    pos: int
    limit: int
    controller: int | None
    out: list[int]
    pending: list[int]
    fool: int | None
    order: list[int] | None = None


class DurakCodec(DurakRules):
    """The rules written down and read back (the module doc)."""

    name: ClassVar[str]
    __slots__ = ()

    # ------------------------------------------------------------------ records

    def header(self) -> dict[str, Any]:
        return {
            "game": self.name,
            "options": self.options.model_dump(exclude=set(unwritten(self.options))),
            "players": list(self.names),
            "deck": cards.to_strs(self.deck),
            "dealer": self.dealer,
            "previous_fool": self.previous_fool,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Self:
        options, players, deck = read_header(record, DurakOptions)
        if "dealer" not in record:
            raise MalformedRecord("dealer is required")
        try:
            return cls.new(
                options, players, record["dealer"], record.get("previous_fool"), deck=deck
            )
        except ValueError as exc:
            raise MalformedRecord(str(exc)) from None

    def move_to_record(self, move: DurakMove) -> dict[str, Any]:
        player, dummy, kind, cs = move
        data: dict[str, Any] = {"player": player}
        if kind in (ATTACK, THROW_KIND, TRANSFER):
            data[kind] = cards.to_str(cs[0])
        elif kind == BEAT:
            data[BEAT] = cards.to_str(cs[0])
            data["with"] = cards.to_str(cs[1])
        else:
            data[kind] = True
        if dummy:
            data["dummy"] = True
        return data

    def move_from_record(self, data: object) -> DurakMove:
        if not isinstance(data, dict):
            raise MalformedRecord(f"a move is a JSON object, not {json.dumps(data)}")
        player = data.get("player")
        dummy = data.get("dummy", False)
        if type(player) is not int or not isinstance(dummy, bool):
            raise MalformedRecord(f"bad move: {json.dumps(data)}")
        keys = set(data) - {"player", "dummy"}
        try:
            if keys == {ATTACK} or keys == {THROW_KIND} or keys == {TRANSFER}:
                (kind,) = keys
                return DurakMove(player, dummy, kind, (cards.parse(data[kind]),))
            if keys == {BEAT, "with"}:
                pair = (cards.parse(data[BEAT]), cards.parse(data["with"]))
                return DurakMove(player, dummy, BEAT, pair)
            if (keys == {TAKE_KIND} or keys == {PASS}) and all(data[k] is True for k in keys):
                (kind,) = keys
                return DurakMove(player, dummy, kind)
        except ValueError as exc:
            raise MalformedRecord(f"{exc} in move {json.dumps(data)}") from None
        raise MalformedRecord(f"unknown move shape: {json.dumps(data)}")

    # ------------------------------------------------------------------ button tokens

    def move_token(self, move: DurakMove) -> str:
        _, dummy, kind, cs = move
        prefix = "d" if dummy else ""
        if kind == ATTACK:
            return f"{prefix}a{cards.to_str(cs[0])}"
        if kind == BEAT:
            return f"{prefix}b{cards.to_str(cs[0])}{cards.to_str(cs[1])}"
        if kind == THROW_KIND:
            return f"{prefix}w{cards.to_str(cs[0])}"
        if kind == TRANSFER:
            return f"{prefix}r{cards.to_str(cs[0])}"
        return prefix + ("t" if kind == TAKE_KIND else "p")

    def move_from_token(self, token: str, player: int) -> DurakMove:
        match = _TOKEN.fullmatch(token) if isinstance(token, str) else None
        if match is None:
            raise MalformedRecord(f"bad durak move token: {token!r}")
        d, attack, beat_a, beat_c, throw, transfer, take, _ = match.groups()
        dummy = d == "d"
        if attack:
            return DurakMove(player, dummy, ATTACK, (cards.parse(attack),))
        if beat_a:
            return DurakMove(player, dummy, BEAT, (cards.parse(beat_a), cards.parse(beat_c)))
        if throw:
            return DurakMove(player, dummy, THROW_KIND, (cards.parse(throw),))
        if transfer:
            return DurakMove(player, dummy, TRANSFER, (cards.parse(transfer),))
        return DurakMove(player, dummy, TAKE_KIND if take else PASS)

    # ------------------------------------------------------------------ stored state

    def to_json(self) -> str:
        table = []
        for a, d in zip(self.att, self.dfn, strict=True):
            table.append([a] if d < 0 else [a, d])
        rest = {
            "v": 1,
            "players": self.names,
            "deck": list(self.deck),
            "known": list(map(sorted, self.known)),
            "table": table,
            "phase": PHASES[self.phase],
            "controller": self.controller if self.controller >= 0 else None,
            "order": list(self.order) if self.neighbours and self.phase != OVER else None,
        }
        # pydantic-core's serialiser straight from a dict: Stored.model_construct took as
        # long as the rest of the writing.
        exclude = _left_out(self.options, rest["order"] is None)
        return to_json(_STORED_FORM(self, rest), exclude=exclude).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        state = parse(text)
        game = cls.set_up(
            state.options, state.players, state.dealer, state.previous_fool, state.deck
        )
        load(game, state)
        return game


def _stored_form() -> Callable[[DurakState, dict[str, Any]], dict[str, Any]]:
    """The stored form as a dict in :class:`Stored`'s order: the state's ``stored`` fields
    by name, the others from what ``to_json`` worked out."""
    lines = ["def form(state, rest):", "    return {"]
    for name in Stored.model_fields:
        lines.append(
            f"        {name!r}: state.{name},"
            if name in STORED
            else f"        {name!r}: rest[{name!r}],"
        )
    return compiled("form", [*lines, "    }"], {})


_STORED_FORM = _stored_form()


@functools.cache
def _left_out(options: DurakOptions, no_order: bool) -> dict[str, Any]:
    """What the stored state leaves out: the variants' options at their defaults, and the
    throw-in order where none is kept (worked out once per kind of game: states are
    written after every move)."""
    left_out: dict[str, Any] = {"options": set(unwritten(options))}
    if no_order:
        left_out["order"] = True
    return left_out


def parse(text: str | bytes) -> Stored:
    """The stored state, validated for its shape and its set-up; raises CorruptState."""
    try:
        state = Stored.model_validate_json(text)
    except ValidationError as exc:
        raise CorruptState(f"durak state: {first_error(exc)}") from None
    try:
        DurakRules.check_setup(
            state.options, state.players, state.dealer, state.previous_fool, state.deck
        )
    except ValueError as exc:
        raise CorruptState(f"durak state: {exc}") from None
    return state


def _bad(why: str) -> CorruptState:
    return CorruptState(f"durak state: {why}")


def _seats(values: list[int], top: int) -> bool:
    """Distinct seats, each below ``top``."""
    return all(0 <= v < top for v in values) and len(set(values)) == len(values)


def load(game: DurakRules, s: Stored) -> None:
    """Fill a fresh game (made from ``s``'s set-up) from ``s``, or raise CorruptState."""
    n = game.n
    _check_cards(game, s)
    stock_empty = s.drawn == len(game.stock)
    empty = [p for p in range(n) if not s.hands[p]]
    if not _seats(s.out + s.pending, n) or not set(s.out + s.pending) <= set(empty):
        raise _bad("out and pending name distinct players without cards")
    if (stock_empty and (s.pending or set(s.out) != set(empty))) or (
        not stock_empty and (s.out or set(s.pending) != set(empty))
    ):
        raise _bad("out or pending does not fit the stock")
    no_dummy = not s.options.dummy
    controller_ok = s.controller is None if no_dummy else s.controller in range(n)
    if not controller_ok or not _seats([s.attacker, s.defender], n if no_dummy else n + 1):
        raise _bad("bad controller, attacker or defender")
    att = [p[0] for p in s.table]
    dfn = [p[1] if len(p) == 2 else -1 for p in s.table]
    if any(d >= 0 and not beats(d, a, game.trump) for a, d in zip(att, dfn, strict=True)):
        raise _bad("a defence card that does not beat its attack card")
    phase = PHASES.index(s.phase)
    holders = n - len(empty)
    if phase == OVER:
        _check_over(s, n, holders)
    else:
        _check_bout(game, s, phase, dfn, holders)
    _fill(game, s, att, dfn, phase)
    if not 0 <= s.pos <= n:
        raise _bad("throw-in position out of range")
    if phase == OVER and s.order is not None:
        raise _bad("a throw-in order in a finished game")
    if phase != OVER:
        game.order = _order(game, s)
        if phase >= THROW and not (
            s.pos < len(game.order) and len(att) < s.limit and can_throw(game, game.order[s.pos])
        ):
            raise _bad("nobody with the right to throw in")


def _order(game: DurakRules, s: Stored) -> tuple[int, ...]:
    """The bout's throw-in order: stored where it is fixed by neighbours, else worked out."""
    if not game.neighbours:
        if s.order is not None:
            raise _bad("a throw-in order where everyone throws in")
        return throw_order(game, s.attacker, s.defender)
    order = s.order or []
    if not order or order[0] != s.attacker or len(order) > 2 or not _seats(order, game.n):
        raise _bad("the neighbours' order does not start with the attacker")
    if s.defender in order:
        raise _bad("the defender among those who throw in")
    return tuple(order)


def _check_cards(game: DurakRules, s: Stored) -> None:
    """One hand a participant, and every card of the deck in exactly one place."""
    n = game.n
    if len(s.hands) != n + 1 or len(s.known) != n + 1:
        raise _bad("one hand per player and one for the dummy")
    if not 0 <= s.drawn <= len(game.stock):
        raise _bad("stock position out of range")
    if not s.options.dummy and (s.hands[n] or s.known[n]):
        raise _bad("a dummy's hand in a game without the dummy")
    if any(not set(k) <= set(h) for k, h in zip(s.known, s.hands, strict=True)):
        raise _bad("a known card that is not in its hand")
    if any(len(pair) not in (1, 2) for pair in s.table):
        raise _bad("a table entry is [attack] or [attack, defence]")
    everything = [c for h in s.hands for c in h] + [c for p in s.table for c in p]
    everything += list(game.stock[s.drawn :]) + s.discard
    if sorted(everything) != sorted(game.deck):
        raise _bad("the cards do not add up to the deck")


def _check_over(s: Stored, n: int, holders: int) -> None:
    """A finished game: no table, one holder at most, and its fool."""
    # The fool: the one holder; else, if the dummy has cards, the last one out.
    if holders:
        fool: int | None = next(p for p in range(n) if s.hands[p])
    else:
        fool = s.out[-1] if s.hands[n] and s.out else None
    if s.table or holders > 1 or s.fool != fool:
        raise _bad("a finished game has no table, one holder at most, and its fool")


def _check_bout(game: DurakRules, s: Stored, phase: int, dfn: list[int], holders: int) -> None:
    """A bout under way: the table fits its phase, and both sides may play."""
    n = game.n
    unbeaten = dfn.count(-1)
    shape_ok = {
        LEAD: not s.table,
        # One unbeaten: the latest; with transfers, any (§12).
        DEFEND: unbeaten >= 1 if game.transfer else unbeaten == 1 and dfn[-1] == -1,
        THROW: bool(s.table) and unbeaten == 0,
        TAKE: bool(s.table),
    }[phase]
    cap = EARLY_LIMIT if game.five and not s.discard else BOUT_LIMIT  # §14
    if not shape_ok or not 1 <= s.limit <= cap or len(s.table) > s.limit:
        raise _bad(f"the table does not fit phase {s.phase}")
    playing = game.dummy_plays or n not in (s.attacker, s.defender)
    # A bout begins only with two players holding cards; during it, all may go out.
    if s.fool is not None or (phase == LEAD and holders < 2) or not playing:
        raise _bad("no game to play")
    if not s.hands[s.defender] or (phase == LEAD and not s.hands[s.attacker]):
        raise _bad("an attacker or defender without cards")


def _fill(game: DurakRules, s: Stored, att: list[int], dfn: list[int], phase: int) -> None:
    """The state's fields from the stored ones: those stored as they are by name (the
    state's ``stored`` fields), the rest from their stored form."""
    take_stored(game, s)
    game.known = [set(k) for k in s.known]
    game.att, game.dfn = att, dfn
    for c in att + [d for d in dfn if d >= 0]:
        game.mask |= 1 << (c >> 2)
    game.phase = phase
    game.controller = -1 if s.controller is None else s.controller
