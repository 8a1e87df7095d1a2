"""Moves nobody taps: computer seats, turn timeouts (seeds/<game>.md §7.2), people away.

Every committed position of a running game has a *deadline* (``TurnClock.turn_due``: a
computer or an away person is to act: ``computer_delay``, so that people can follow;
a person: the table's turn time, or none), set in the same compare-and-set as the
position (:func:`note_active`, :func:`stamp`). Why sorted sets, ``ct:{b<n>}:turns`` (one per
bucket of tables; member: table key, score: when to look, ms), polled by every process: a
deadline must outlive the process that set it. Its score is never later than the table's
deadline; a commit whose deadline came closer lowers it in the commit's own script (``ZADD LT``:
:attr:`bot.core.store.Write.wake`), and a person's move, whose next deadline is later,
costs nothing there.

A poller *claims* a due table by pushing its score :data:`CLAIM_MS` ahead (one poller
wins), plays the due move through the store's compare-and-set and
:func:`bot.tables.games.apply_move` only if the position is the one it looked at (a
retried decision comes out the same: its seed hashes the game id and the move count),
and sets the score to the newest deadline. If it dies, the claim runs out and another
process plays the table. A person whose deadline passes has his move made by the computer;
after :data:`AWAY_AFTER` in a row he is away until he taps anything on the game. Computers
alone can go round forever in durak: after :data:`AUTO_MOVE_CAP` computer moves in a row
the game is stopped like /endgame.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from telegram.ext import ContextTypes

from bot.core import polls
from bot.core.models import Table
from bot.core.services import AnyApp, Services, every, guarded, services
from bot.core.store import Snapshot, Write
from bot.service import delivery
from bot.tables import games
from engine import records
from engine.base import Game, IllegalMove
from engine.computer import choose, public_events
from engine.registry import GAMES

log = logging.getLogger(__name__)

CLAIM_MS = 30_000  # a claimed deadline comes due again after this if its claimant died
AUTO_MOVE_CAP = 600  # computer moves in a row before a game nobody plays is stopped
TIMEOUT_LEVEL = "normal"  # seeds/<game>.md §7.2: the computer that stands in for a person
AWAY_AFTER = 2  # timeouts in a row


def due_in(table: Table, computer_delay: float) -> float | None:
    """Seconds from now until the current position's deadline (None: no deadline)."""
    return _wait(table, games.actor(table), computer_delay)


def _wait(table: Table, seat: int | None, computer_delay: float) -> float | None:
    """:func:`due_in` where ``seat`` is to act (None: nobody)."""
    if seat is None:
        return None
    if games.computer_plays(table, seat):
        return computer_delay
    return float(table.lobby.settings.turn_time) or None


def stamp(table: Table, computer_delay: float, now: float) -> float | None:
    """Set the deadline of the position about to be committed (in the transaction); the
    deadline to wake the table at, when it came closer than the previous one.

    A commit that leaves the position and who must act in it as they were (a football
    set-up step, a tap that only brings someone back from elsewhere) keeps the deadline:
    taps that are not moves must not lengthen anybody's turn."""
    old = table.clock.turn_due
    seat = games.actor(table)
    wait = _wait(table, seat, computer_delay)
    basis = f"{table.game_id}:{len(table.played.moves)}:{seat}:{wait}"
    if basis != table.clock.turn_for:  # a new position: its actor's wait begins
        table.clock.turn_since = now
    if old and basis == table.clock.turn_for:
        return None
    table.clock.turn_for = basis
    table.clock.turn_due = 0.0 if wait is None else now + wait
    if table.clock.turn_due and (not old or table.clock.turn_due < old):
        return table.clock.turn_due
    return None


def is_away(table: Table, user_id: int) -> bool:
    seat = table.seat_of(user_id)
    return table.phase == "playing" and seat is not None and table.seats[seat].away


def note_active(table: Table, user_id: int) -> None:
    """A person tapped on the game: his timeouts are forgiven and he is back if away."""
    seat = table.seat_of(user_id)
    if seat is None or table.phase != "playing":
        return
    person = table.seats[seat]
    if person.away:
        table.played.add_events([("seat_back", {"seat": seat})])
    person.away = False
    person.timeouts = 0
    table.clock.auto_moves = 0


def moved(table: Table) -> float | None:
    """What the timers make of a table moved to a new key (its supergroup's): its
    deadline, told again under that key, in the same commit."""
    return table.clock.turn_due or None


def seed_for(table: Table) -> int:
    """Stable per decision: the same position always gets the same computer move."""
    digest = hashlib.sha256(f"{table.game_id}:{len(table.played.moves)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def level_for(table: Table, seat: int) -> str:
    level = table.seats[seat].computer or TIMEOUT_LEVEL
    assert table.kind is not None
    return level if level in GAMES[table.kind].levels else TIMEOUT_LEVEL


def computer_move(table: Table, game: Game, seat: int) -> Any:
    """What the computer plays for ``seat``: from that seat's view, the legal moves and the
    public event history only (engine.computer), never the game itself."""
    assert table.kind is not None
    history = public_events(records.export(game, table.played.moves))
    return choose(
        table.kind,
        game.view(seat),
        list(game.legal_moves()),
        history,
        level_for(table, seat),
        seed_for(table),
    )


async def _decide_move(table: Table) -> tuple[int, Any] | None:
    """(seat, move) for the table's current position, computed off the event loop (a hard
    durak search must not hold up other chats)."""
    seat = games.actor(table)
    if seat is None:
        return None
    game = games.load(table)
    return seat, await asyncio.to_thread(computer_move, table, game, seat)


def _play(table: Table, seat: int, move: Any) -> None:
    """Apply the computer's move for ``seat`` and narrate what it stood in for."""
    person = table.seats[seat]
    if person.computer is None and not person.away:
        person.timeouts += 1
        table.played.add_events([("seat_timeout", {"seat": seat})])
        if person.timeouts >= AWAY_AFTER:
            person.away = True
            table.played.add_events([("seat_away", {"seat": seat})])
    person.setup = []
    table.clock.auto_moves += 1
    games.apply_move(table, games.load(table), seat, move)
    if table.phase == "playing" and table.clock.auto_moves >= AUTO_MOVE_CAP:
        table.phase = "abandoned"
        table.played.add_events([("computer_stalled", {})])


async def play_due(app: AnyApp | ContextTypes.DEFAULT_TYPE, key: str, claim: int) -> None:
    """Play the move a claimed table is due for, if any; put the table back in the set at
    its newest deadline, then show the move. On an error the claim stays: the table comes
    due again once it runs out, and another try is made."""
    svc = services(app)
    async with svc.lock(key):
        due, committed = await _play_due(svc, key)
        await svc.store.settle_turn(key, claim, due)
        if committed is not None:
            delivery.start(svc, key, committed)


async def _play_due(svc: Services, key: str) -> tuple[float, Snapshot | None]:
    """The move, if it is due: the deadline of the position the table is left in (0:
    none), and the snapshot to deliver when a move was committed."""
    delay = svc.settings.play.computer_delay
    for _ in range(5):  # the position may change under a long computation
        snap = await svc.store.load(key)
        table = snap.table
        if table is None or table.phase != "playing" or not table.clock.turn_due:
            return 0.0, None
        if svc.clock() < table.clock.turn_due:
            return table.clock.turn_due, None
        decided = await _decide_move(table)
        if decided is None:
            return 0.0, None
        seat, move = decided
        version = snap.version

        def decide(
            s: Snapshot, seat: int = seat, move: Any = move, version: int = version
        ) -> tuple[Write, bool]:
            if s.table is None or s.version != version:
                return Write(None), False
            try:
                _play(s.table, seat, move)
            except IllegalMove:  # cannot happen for a legal move of this very position
                log.exception("computer move refused in %s", key)
                return Write(None), True
            stamp(s.table, delay, svc.clock())
            return Write(s.table), True

        committed, done = await svc.store.transact(key, decide)
        if not done:
            continue
        if committed.version != version and committed.table is not None:
            return committed.table.clock.turn_due, committed
        return 0.0, None
    return (table.clock.turn_due if table is not None else 0.0), None


async def _claim(svc: Services, key: str, now_ms: int) -> int | None:
    """Take a due table (see the module docstring): the claim's score, or None when it was
    not due any more or another poller took it."""
    claim = now_ms + CLAIM_MS
    return claim if await svc.store.claim_turn(key, now_ms, claim) else None


async def turns_job(app: AnyApp) -> bool:
    """Polled by every process: each due table is handled in its own task, so that one
    table's computer never holds up another's."""
    svc = services(app)
    sweep = polls.turn_tables(svc.store)  # only the buckets worth a read
    async for key in sweep:
        claim = await _claim(svc, key, sweep.now_ms)
        # A process stopping meanwhile starts nothing: its claim runs out, and a live
        # process (or this one, restarted) plays the table then.
        if claim is not None and app.running:
            app.create_task(play_due(app, key, claim))
    return sweep.asked  # False: Redis was not asked (bot.core.services.guarded)


def poll(app: AnyApp) -> None:
    """Start polling the deadlines (often enough for the computer's pace)."""
    delay = services(app).settings.play.computer_delay
    seconds = min(max(delay / 3, 0.02), 0.5)
    every(app, seconds, guarded(turns_job), first=seconds)  # an outage: backs off
