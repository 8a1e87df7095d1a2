"""Drives the card-table bot the way its users do: open a table, join, start, play.

Buttons are found by what their callback_data means (``bot.core.callbacks``), not by their
labels, so the same driver plays in every language. The end-to-end tests and the bot
benchmark (bench/bot.py) both play through it.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable, Mapping
from functools import cache, lru_cache
from typing import Any

from bot.core.callbacks import STAMP_LEN, Action, BadCallback, Callback, decode, stamp
from bot.core.i18n import LANGS, faces, t
from bot.core.keys import table_key as store_key
from bot.core.keys import user_slot
from bot.core.models import Table
from bot.core.services import services
from bot.tables import games
from engine import cards
from engine.games.durak.game import Durak
from engine.games.football.game import Football
from testing.chats import Answer, Button, FakeGroup, FakeMessage, FakeUser
from testing.clock import Clock
from testing.fakegram import TAG
from testing.harness import Harness

PLAY_ACTIONS = (Action.MOVE, Action.SETUP)
# Shunned and preferred (Tabletop.step), they end a durak game soonest: the defender takes
# whenever he may, an attacker passes only when he must (in English).
TAKE, PASS = t("en", "durak.btn.take"), t("en", "durak.btn.pass")


@lru_cache(maxsize=4096)
def callback_of(data: str | None) -> Callback | None:
    """callback_data as the bot reads it (None: not ours), once: each step reads them all."""
    try:
        return decode(data)
    except BadCallback:
        return None


def action_of(button: Button) -> Action | None:
    cb = callback_of(button.callback_data)
    return None if cb is None else cb.action


def is_action(action: Action, arg: str | None = None) -> Callable[[Button], bool]:
    def test(button: Button) -> bool:
        cb = callback_of(button.callback_data)
        return cb is not None and cb.action is action and arg in (None, cb.arg)

    return test


def playable(message: FakeMessage) -> list[Button]:
    """A prompt's buttons that play: its moves, and its set-up's picks but the reset."""
    return [
        b
        for b in message.buttons
        if action_of(b) in PLAY_ACTIONS and not is_action(Action.SETUP, "r")(b)
    ]


def table_key(group: FakeGroup, thread: int | None = None) -> str:
    """The Redis key of a table (bot/core/keys.py's documented layout)."""
    return store_key(group.id, thread)


async def stored(h: Harness, group: FakeGroup, thread: int | None = None) -> dict[str, Any]:
    """The table as stored in Redis: its JSON plus ``version``; {} when there is none."""
    raw = await h.redis.hgetall(table_key(group, thread))
    fields = {k.decode() if isinstance(k, bytes) else k: v for k, v in raw.items()}
    if "d" not in fields:
        return {}
    return {**json.loads(fields["d"]), "version": int(fields["v"])}


NAMES = ("Ann", "Bob", "Cid", "Dan", "Eve", "Fay")


async def game_for(h: Harness, game: str, n: int = 2) -> tuple[Tabletop, list[FakeUser]]:
    """``n`` players (Ann, Bob, …) who started ``game`` at a new group's table."""
    players = [h.user(name) for name in NAMES[:n]]
    return await playing(h, game, players), players


async def opened(
    h: Harness, creator: FakeUser, game: str, group: FakeGroup | None = None
) -> Tabletop:
    """A table of ``group`` (a new one by default) where ``creator`` opened ``game``."""
    top = Tabletop(h, group or h.group())
    await top.open(creator, game)
    return top


def dealing(seed: int | None) -> Callable[..., Any]:
    """``games.start`` dealing each game from ``random.Random(seed)`` (the bot deals from
    ``secrets``): the same deal at every run (None: a new one). For a test to put in its
    place (monkeypatch, unittest.mock)."""
    start = games.start
    return lambda table, rng=None: start(table, rng or random.Random(seed))


async def set_lobby(redis: Any, key: str, settings: Mapping[str, Any]) -> None:
    """``settings`` written into the stored lobby of the table ``key`` before it starts,
    as if chosen there: any value (the lobby's buttons offer a few), and no taps."""
    raw = json.loads(await redis.hget(key, "d"))
    raw["lobby"]["settings"].update(settings)
    await redis.hset(key, "d", json.dumps(raw))


def clock_of(h: Harness) -> Clock:
    """The clock an in-process bot runs on (testing/clock.py), which the test moves."""
    clock = services(h.app).clock
    assert isinstance(clock, Clock)
    return clock


async def later(h: Harness, seconds: float = 0.25) -> None:
    """``seconds`` pass on the bot's clock (testing/clock.py), its pollers looking at what
    came due; bot processes (testing/botproc.py) run on real time: a quarter second is waited."""
    if not h.apps:
        await asyncio.sleep(0.25)
        return
    await clock_of(h).advance(seconds)


async def playing(
    h: Harness,
    game: str,
    players: list[FakeUser],
    options: tuple[str, ...] = (),
    group: FakeGroup | None = None,
) -> Tabletop:
    """A table of ``group`` (a new one by default) where ``players`` started ``game``."""
    top = Tabletop(h, group or h.group())
    await top.setup_game(game, players, options)
    return top


class Tabletop:
    """One group's table, seen from the users' side."""

    def __init__(self, h: Harness, group: FakeGroup, thread: int | None = None) -> None:
        self.h = h
        self.group = group
        self.thread = thread

    def table_message(self) -> FakeMessage:
        """The group message that carries the table: the bot's newest with buttons (else
        its newest)."""
        mine = [m for m in self.h.screen(self.group, self.thread) if m.from_bot and m.text]
        assert mine, "the bot has posted nothing in the group"
        with_buttons = [m for m in mine if m.buttons]
        return (with_buttons or mine)[-1]

    async def shown(self, action: Action, arg: str | None = None) -> FakeMessage:
        """The group's message with that button; if the bot's rate limits have put it off,
        its clock is moved on until it is there."""
        for _ in range(100):
            try:
                return self.h.with_button(self.group, is_action(action, arg), self.thread)
            except AssertionError:
                await self.later()
        return self.h.with_button(self.group, is_action(action, arg), self.thread)

    async def tap_group(self, user: FakeUser, action: Action, arg: str | None = None) -> Answer:
        message = await self.shown(action, arg)
        return await self.h.tap(user, message, is_action(action, arg))

    async def later(self, times: int = 1) -> None:
        """A quarter of a second passes (:func:`later`), ``times`` over."""
        for _ in range(times):
            await later(self.h)

    async def open(self, creator: FakeUser, game: str) -> None:
        """/newgame and the game picked: the creator sits in the lobby."""
        await self.h.command(creator, self.group, "/newgame", thread=self.thread)
        await self.tap_group(creator, Action.PICK, game[0])

    async def join(self, user: FakeUser) -> Answer:
        return await self.tap_group(user, Action.JOIN)

    async def start(self, user: FakeUser) -> Answer:
        return await self.tap_group(user, Action.START)

    async def setup_game(
        self,
        game: str,
        players: list[FakeUser],
        options: tuple[str, ...] = (),
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        """The game opened, everyone joined, each of ``options`` (their codes) tapped in
        the settings, ``settings`` written into the stored lobby (it takes any turn time,
        the buttons only a few; and a write costs no taps), started by the first player."""
        await self.open(players[0], game)
        for user in players[1:]:
            await self.join(user)
        if options:
            await self.configure(players[0], options)
        if settings:
            await set_lobby(self.h.redis, table_key(self.group, self.thread), settings)
        await self.start(players[0])

    async def configure(self, user: FakeUser, options: tuple[str, ...] | list[str]) -> None:
        """The lobby's settings opened, each option (its code) tapped, the settings closed."""
        await self.tap_group(user, Action.SETTINGS)
        for code in options:
            answer = await self.tap_group(user, Action.OPTION, code)
            assert answer.text is None, answer.text
        await self.tap_group(user, Action.SETTINGS)

    def hand_messages(self, user: FakeUser) -> list[FakeMessage]:
        """Where ``user`` may find his hand: his private chat, then his ephemeral
        messages in this table's group (docs/ephemeral.md), oldest first in each."""
        group = [
            m
            for m in self.h.hands(user, self.group)
            if self.thread is None or m.thread_id == self.thread
        ]
        return self.h.screen(user) + group

    def prompts(self, user: FakeUser) -> list[FakeMessage]:
        """The messages that still offer ``user`` a move at this table (he may sit at
        several tables at once), in his private chat, then in the group."""
        return [
            m
            for m in self.hand_messages(user)
            if m.from_bot
            and any(action_of(b) in PLAY_ACTIONS and self.addressed(b) for b in m.buttons)
        ]

    def prompt(self, user: FakeUser) -> FakeMessage | None:
        """The message asking ``user`` to act now at this table, if any."""
        prompts = self.prompts(user)
        return prompts[-1] if prompts else None

    def addressed(self, button: Button) -> bool:
        """Whether a (well-formed) button belongs to this table."""
        cb = callback_of(button.callback_data)
        return cb is not None and (cb.chat_id, cb.thread_id) == (self.group.id, self.thread)

    def finished(self) -> bool:
        return any(action_of(b) is Action.AGAIN for b in self.table_message().buttons)

    async def actor_alone_asked(self, players: list[FakeUser]) -> bool:
        """Only the player to act (by the stored state) is asked, by a prompt of the
        current position (its buttons' stamp): every hand has caught up."""
        asked = {u.id for u in players if self.prompt(u) is not None}
        actor = await self.actor(players)
        return actor is not None and asked == {actor.id} and await self.actor_asked(players, actor)

    async def actor_asked(self, players: list[FakeUser], actor: FakeUser | None = None) -> bool:
        """The player to act (by the stored state, or ``actor`` if the caller just read it)
        has a prompt of the current position (its buttons' stamp), whatever the others show."""
        actor = actor or await self.actor(players)
        prompt = self.prompt(actor) if actor is not None else None
        if prompt is None:
            return False
        # Read as the bot reads it, in whatever form it was stored.
        table = Table.from_stored(await self.h.redis.hget(table_key(self.group, self.thread), "d"))
        moves = [decode(b.callback_data) for b in prompt.buttons]
        now = stamp(len(table.played.moves))
        return all(cb.arg[:STAMP_LEN] == now for cb in moves if cb.action is Action.MOVE)

    def asked(self, players: list[FakeUser]) -> FakeUser:
        """The one player with a prompt of this table (fails unless there is just one)."""
        (user,) = [u for u in players if self.prompt(u) is not None]
        return user

    async def actor(self, players: list[FakeUser]) -> FakeUser | None:
        data = await stored(self.h, self.group, self.thread)
        game = (Durak if data["kind"] == "durak" else Football).from_json(data["state"])
        actor = game.to_act()
        return None if actor is None else players[actor.player]

    async def caught_up(self, players: list[FakeUser], what: str = "the hands") -> None:
        """Lets the bot deliver what its rate limits put off: the bot's clock moves on
        (no sleeping) and its pollers look at the due work."""
        for _ in range(300):
            if await self.actor_alone_asked(players):
                return
            await self.later()
        raise AssertionError(f"{what} did not catch up")

    async def step(
        self,
        players: list[FakeUser],
        rng: random.Random,
        shun: str | None = None,
        prefer: str | None = None,
    ) -> tuple[FakeUser, Answer]:
        """One move: a seeded-random button of a player who is asked to act; the one
        labelled ``prefer`` when there is one, else not one labelled ``shun`` while there
        is another."""
        asked = [(u, m) for u in players if (m := self.prompt(u)) is not None]
        assert asked, (
            f"nobody is asked to act and the game is not over:\n{self.table_message().text}"
        )
        user, message = rng.choice(asked)
        choices = playable(message)
        preferred = [b for b in choices if b.text == prefer]
        button = rng.choice(preferred or [b for b in choices if b.text != shun] or choices)
        token = TAG.set("move")
        try:
            answer = await self.h.tap(user, message, lambda b: b == button)
        finally:
            TAG.reset(token)
        return user, answer

    async def play_paced(self, players: list[FakeUser], rng: random.Random) -> None:
        """Plays to the end while the bot's rate limits hold messages back: a move whenever
        someone is asked, the bot's clock moved on after each."""
        for _ in range(3000):
            if self.finished():
                return
            if any(self.prompt(u) for u in players):
                await self.step(players, rng)
            await self.later()
        raise AssertionError("the game did not end")

    async def play(
        self,
        players: list[FakeUser],
        rng: random.Random,
        *,
        after_each: Callable[[], Any] | None = None,
        shun: str | None = None,
        prefer: str | None = None,
    ) -> int:
        """Plays to the end by tapping (``shun`` and ``prefer`` as :meth:`step` takes
        them); the number of taps. ``after_each`` is awaited."""
        for moves in range(3000):
            if self.finished():
                return moves
            _, answer = await self.step(players, rng, shun, prefer)
            assert answer.text is None, f"a legal button was refused: {answer.data}: {answer.text}"
            if after_each is not None:
                await after_each()
        raise AssertionError("the game did not end")

    async def play_watched(
        self,
        players: list[FakeUser],
        rng: random.Random | int,
        watch: LeakWatch | None = None,
        *,
        shun: str | None = None,
        prefer: str | None = None,
    ) -> int:
        """:meth:`play` (``shun`` and ``prefer`` as it takes them) with a :class:`LeakWatch`
        judging what is shown now and after each tap (a series shares one ``watch``: what
        an earlier game showed was judged against that game's state); the number of taps."""
        watch = watch or LeakWatch(self)
        checks = watch.checks
        await watch.check()
        rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        moves = await self.play(players, rng, after_each=watch.check, shun=shun, prefer=prefer)
        assert watch.checks == checks + moves + 1
        return moves


# ----------------------------------------------------------------------- hidden cards


def _spellings(notation: str) -> set[str]:
    """How a message could show the card: its display in each language (``10♥``, ``Т♠``)."""
    card = cards.parse(notation)
    shown = {cards.display(card)} | {cards.display(card, faces(lang)) for lang in LANGS}
    return shown | {cards.display(card, dict(zip("JQKA", "ВДКТ", strict=True)))}


def _alternatives(spellings: set[str]) -> str:
    return "|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True))


@cache
def card_pattern(notation: str) -> re.Pattern[str]:
    """Every way a message could spell the card: record notation, and its display in each
    language; a rank must not be the tail of a longer word or number."""
    spelled = _alternatives(_spellings(notation))
    return re.compile(rf"(?<![\w])(?:{spelled})|(?<![\w]){re.escape(notation)}(?![\w])", re.UNICODE)


@cache
def _any_card() -> tuple[re.Pattern[str], dict[str, str]]:
    """:func:`card_pattern` for every card at once, and the card each spelling names: a
    text is read once, not once per card it must not show."""
    notations = cards.to_strs(cards.deck(52))
    card_of = {spelling: n for n in notations for spelling in _spellings(n)}
    shown, noted = _alternatives(set(card_of)), _alternatives(set(notations))
    card_of.update((n, n) for n in notations)
    pattern = re.compile(rf"(?<![\w])(?:{shown}|(?:{noted})(?![\w]))", re.UNICODE)
    return pattern, card_of


def cards_named(text: str) -> set[str]:
    """The cards ``text`` names, in any of the ways :func:`card_pattern` knows."""
    pattern, card_of = _any_card()
    return {card_of[found.group()] for found in pattern.finditer(text)}


def _parsed(kind: str, state: str) -> tuple[Any, dict[str, Any]]:
    """The engine's game of a stored state, and the state's JSON."""
    return (Football if kind == "football" else Durak).from_json(state), json.loads(state)


def _seen(game: Any, raw: dict[str, Any], seat: int | None) -> set[str]:
    """The cards ``seat`` (None: the group) may know, through the engine's own view."""
    if isinstance(game, Football):
        fv = game.view(seat)
        seen = set(fv.hand) | {c for row in fv.field for c in row if c}
        seen |= {c for c in fv.keepers if c} | set(fv.discarded)
        return seen | {c for pile in fv.goals for c in pile} | ({fv.ball} if fv.ball else set())
    dv = game.view(seat)
    seen = set(dv.hand) | set(dv.dummy_hand or []) | set(dv.dummy_known) | {dv.trump}
    seen |= {c for known in dv.known for c in known}
    seen |= {c for pair in dv.table for c in pair if c}
    return seen | set(cards.to_strs(raw["discard"]))  # every discarded card was on the table


def hidden_cards(kind: str, state: str, seat: int | None) -> set[str]:
    """The cards of the stored game ``seat`` may not know (None: the group)."""
    game, raw = _parsed(kind, state)
    return set(cards.to_strs(raw["deck"])) - _seen(game, raw, seat)


def leaks(text: str, hidden: set[str]) -> list[str]:
    return sorted(hidden & cards_named(text))


class LeakWatch:
    """Checks, after each update, everything shown since the last check against what its
    reader may know at that moment: the group message (text, buttons, their data), each
    player's private messages, his ephemeral messages in the group (those that never
    reached him too: the bot sent them) and the alerts he got. An ephemeral message to
    someone who is not seated may show no card at all. Visibility is not monotone
    (durak's dummy changes controller), so each thing shown is judged against the state
    it was shown in."""

    def __init__(self, top: Tabletop) -> None:
        self.top = top
        # (chat, receiver of an ephemeral message or 0, message, piece) checked
        self.seen: set[tuple[int, int, int, str]] = set()
        self.answers: set[str] = set()  # callback queries whose answer was checked
        self.checks = 0

    def _unchecked(self, messages: list[FakeMessage]) -> list[tuple[int, int, int, str]]:
        """Texts and buttons (label and data) of the bot's messages not checked yet, each
        as (chat, receiver or 0, message, piece); a message that only lost its buttons
        shows nothing new."""
        out = []
        for message in messages:
            if not message.from_bot:
                continue
            pieces = [message.text or message.caption or ""]
            pieces += [f"{b.text} {b.callback_data or ''}" for b in message.buttons]
            for piece in pieces:
                mark = (message.chat_id, message.receiver_id or 0, message.message_id, piece)
                if mark not in self.seen:
                    out.append(mark)
        return out

    def _fresh(self, messages: list[FakeMessage]) -> list[str]:
        marks = self._unchecked(messages)
        self.seen.update(marks)
        return [piece for *_, piece in marks]

    def _ephemeral(self, user_id: int) -> list[FakeMessage]:
        """Every ephemeral message the bot sent ``user_id`` in this table's group (or
        topic), whether it reached him or not; one per id, apart from the group's own."""
        top = self.top
        sent = top.h.server.ephemerals(top.group.id, user_id, dropped=True)
        return [m for m in sent if top.thread is None or m.thread_id == top.thread]

    def _ours(self, data: str | None) -> bool:
        """Whether a callback was addressed to this table (garbage counts as ours)."""
        cb = callback_of(data)
        return cb is None or (cb.chat_id, cb.thread_id) == (self.top.group.id, self.top.thread)

    async def _elsewhere(self, user_id: int) -> set[int]:
        """Ids of his private messages that other tables' hands own (he may sit at
        several tables; bot/core/keys.py's documented ``m:u<id>`` slots say which)."""
        h = self.top.h
        here = (self.top.group.id, self.top.thread)
        others = [
            table_key(group, thread)
            for group in h.server.groups.values()
            for thread in [None, *group.topics]
            if (group.id, thread) != here
        ]
        async with h.redis.pipeline(transaction=False) as pipe:  # one round trip for all
            for key in others:
                pipe.hget(key, user_slot(user_id))
            slots = await pipe.execute()
        return {json.loads(raw).get("id") for raw in slots if raw}

    async def check(self) -> None:
        h = self.top.h
        top = self.top
        data = await stored(h, top.group, top.thread)
        if not data.get("state") or data.get("phase") == "lobby":
            return
        # The state read once for every reader judged below (the group, each seat).
        game, raw = _parsed(data["kind"], data["state"])
        everything = set(cards.to_strs(raw["deck"]))
        seat_of = {s["user_id"]: i for i, s in enumerate(data["seats"])}
        public = everything - _seen(game, raw, None)
        in_group = [
            m
            for m in h.server.screen(top.group.id)
            if top.thread is None or m.thread_id == top.thread
        ]
        for shown in self._fresh(in_group):
            assert not leaks(shown, public), f"group shows {leaks(shown, public)}: {shown}"
        for (chat, receiver), _messages in h.server.ephemeral.items():
            if chat == top.group.id and receiver not in seat_of:
                for shown in self._fresh(self._ephemeral(receiver)):
                    found = leaks(shown, everything)
                    assert not found, f"{receiver}, not seated, is shown {found}: {shown}"
        answers = [(q, a) for q, a in h.server.queries.items() if a.text and q not in self.answers]
        for user_id, seat in seat_of.items():
            secret = everything - _seen(game, raw, seat)
            mine = h.server.screen(user_id)
            if self._unchecked(mine):  # other tables' hands are his too: not judged here
                elsewhere = await self._elsewhere(user_id)
                mine = [m for m in mine if m.message_id not in elsewhere]
            fresh = self._fresh(mine) + self._fresh(self._ephemeral(user_id))
            for query_id, answer in answers:
                if answer.user_id == user_id and self._ours(answer.data):
                    self.answers.add(query_id)
                    fresh.append(answer.text or "")
            for shown in fresh:
                found = leaks(shown, secret)
                assert not found, f"seat {seat} is shown {found}: {shown}"
        self.checks += 1
