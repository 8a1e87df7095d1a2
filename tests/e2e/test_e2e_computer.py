"""Playing against the computer: in a private chat, and with computer seats in a group."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from bot.core.callbacks import Action, deep_link
from bot.core.keys import TURN_KEYS
from bot.core.services import services
from engine.games.durak.players import search
from engine.games.football.game import Football
from testing.chats import BOT_USERNAME, FakeUser
from testing.computers import DELAY, finished, lobby_with_computers, play_people, until
from testing.harness import Harness, stop_app
from testing.tabletop import (
    Tabletop,
    action_of,
    clock_of,
    hidden_cards,
    leaks,
    opened,
    set_lobby,
    stored,
    table_key,
)

# The restart test's pace: far longer than stopping a process takes, even on a loaded machine.
RESTART_PACE = 5.0
SLOW = pytest.mark.settings(computer_delay=0.4)  # a person can tap between computer moves


async def moves_made(h: Harness, top: Tabletop) -> int:
    return len((await stored(h, top.group))["played"]["moves"])


async def moved_past(h: Harness, top: Tabletop, moves: int) -> bool:
    return await moves_made(h, top) > moves


def computer_seats(data: dict[str, object]) -> list[int]:
    seats = data["seats"]
    assert isinstance(seats, list)
    return [i for i, s in enumerate(seats) if s.get("computer")]


async def test_durak_in_a_private_chat_against_three_computers(
    quick: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = quick
    # Hard searches on a token budget, as in tests/engine: on its own, its endgames took
    # up to 30 s of a game that mostly takes one (its play's strength is no part of this).
    budget = {"BUDGET": 0, "MIN_SAMPLES": 1, "MAX_SAMPLES": 4, "NODES": 100, "STYLE_BUDGET": 100}
    for name, value in budget.items():
        monkeypatch.setattr(search, name, value)
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "durak", 1)  # normal
    await top.tap_group(ann, Action.COMPUTER, "v")
    await top.tap_group(ann, Action.COMPUTER, "+")  # hard
    await top.tap_group(ann, Action.COMPUTER, "v")
    await top.tap_group(ann, Action.COMPUTER, "+")  # easy
    data = await stored(h, top.group)
    assert [s["computer"] for s in data["seats"]] == [None, "normal", "hard", "easy"]
    assert "🤖" in top.table_message().text and "hard" in top.table_message().text
    assert all(s["user_id"] < 0 for s in data["seats"][1:])
    assert await top.start(ann) is not None
    taps = await play_people(h, top, [ann], random.Random(3))
    data = await stored(h, top.group)
    assert data["phase"] == "finished"
    assert len(data["played"]["moves"]) > taps, "the computers moved too"
    # The computers' seats have no chat; nothing was sent anywhere but Ann's chat.
    chats = {c.chat_id for c in h.server.calls if c.chat_id is not None}
    assert chats <= {ann.id}
    # The table and the hand both live in her chat; the end shows Play again there.
    await until(h, lambda: finished(h, top), timeout=5, what="the result with Play again")


async def test_football_in_a_private_chat_against_the_computer(quick: Harness) -> None:
    h = quick
    ann = h.user("Ann", language_code="uk")
    top = await lobby_with_computers(h, ann, ann, "football", 1)
    answer = await top.tap_group(ann, Action.COMPUTER, "+")  # football seats two
    assert answer.show_alert and answer.text
    await top.start(ann)
    await play_people(h, top, [ann], random.Random(5))
    data = await stored(h, top.group)
    assert data["phase"] == "finished"
    game = Football.from_json(data["state"])
    assert game.result() is not None
    bot_seat = computer_seats(data)[0]
    assert any(m["player"] == bot_seat and "setup" in m for m in data["played"]["moves"])


async def test_a_group_game_with_a_computer_seat(quick: Harness) -> None:
    h = quick
    ann, bob = h.user("Ann"), h.user("Bob")
    top = await lobby_with_computers(h, ann, h.group(), "durak", 1)
    answer = await top.tap_group(bob, Action.COMPUTER, "+")
    assert answer.show_alert, "only the creator seats computers"
    await top.join(bob)
    await top.start(ann)
    computer = computer_seats(await stored(h, top.group))[0]
    await play_people(h, top, [ann, bob], random.Random(7))
    data = await stored(h, top.group)
    assert not leaks(top.table_message().text or "", hidden_cards("durak", data["state"], None))
    assert data["phase"] == "finished"
    assert any(m["player"] == computer for m in data["played"]["moves"])
    # The computer's moves were narrated in the group like anyone's.
    name = data["seats"][computer]["name"]
    edits = [
        c.params.get("text", "")
        for c in h.server.calls
        if c.method in ("editMessageText", "sendMessage") and c.chat_id == top.group.id
    ]
    assert any(name in text and "•" in text for text in edits)


async def test_start_is_refused_with_a_reason_when_computers_make_too_many(quick: Harness) -> None:
    h = quick
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "durak", 4)  # 5 players: too many for 36
    answer = await top.start(ann)
    assert answer.show_alert and answer.text and "5" in answer.text
    assert (await stored(h, top.group))["phase"] == "lobby"
    assert (await top.tap_group(ann, Action.OPTION, "d52")).text is None  # the 52-card deck
    await top.start(ann)
    assert (await stored(h, top.group))["phase"] == "playing"


async def test_computer_moves_are_paced(quick: Harness) -> None:
    """Computer moves come one by one, at least the pace apart, not all at once (timed when
    each committed change was decided, as the bot's pace counts from then)."""
    h = quick
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "durak", 3, start=True)
    store = services(h.app).store
    clock = clock_of(h)
    committed: list[tuple[float, int]] = []  # (when, moves) of each commit of the game
    transact = store.transact

    async def recording(key: str, decide: Any) -> Any:
        decided = 0.0  # when the change that was committed was decided (the last try)

        def timed(snap: Any) -> Any:
            nonlocal decided
            decided = clock()
            return decide(snap)

        snap, result = await transact(key, timed)
        table = snap.table
        mine = key == table_key(top.group) and table is not None
        if mine and (not committed or committed[-1][1] != len(table.played.moves)):
            committed.append((decided, len(table.played.moves)))
        return snap, result

    store.transact = recording  # type: ignore[method-assign]

    async def watch() -> bool:
        data = await stored(h, top.group)
        if (message := top.prompt(ann)) is not None:
            await h.tap(ann, message, lambda b: b.callback_data is not None)
        return data["phase"] != "playing" or len(data["played"]["moves"]) >= 25

    await until(h, watch, timeout=30, what="25 moves")
    steps = [(b[1] - a[1]) for a, b in itertools.pairwise(committed)]
    assert max(steps) == 1, f"moves came in bursts: {committed}"
    # Computer moves (those Ann did not make) are at least the pace apart.
    moves = (await stored(h, top.group))["played"]["moves"]
    gaps = [
        b[0] - a[0]
        for a, b in itertools.pairwise(committed)
        if moves[b[1] - 1]["player"] != 0 and moves[a[1] - 1]["player"] != 0
    ]
    assert gaps and min(gaps) >= DELAY - 0.001, gaps  # a deadline is kept to the ms


@pytest.mark.settings(computer_delay=RESTART_PACE)
async def test_a_due_computer_move_survives_a_restart(harness: Harness, make_app: object) -> None:
    """A computer move still due when its process dies is played by the next process."""
    h = harness
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "durak", 2)
    old = h.app
    await top.start(ann)
    data = await stored(h, top.group)
    # Stop the process right away, whoever is to act (Ann acts first: she taps, then the
    # computer's move is due and the process dies before its pace is over).
    await stop_app(old)
    if top.prompt(ann) is not None:
        h.apps = [await make_app(h.redis, computer_delay=RESTART_PACE)]  # type: ignore[operator]
        message = top.prompt(ann)
        assert message is not None
        await h.tap(ann, message, lambda b: b.callback_data is not None)
        await stop_app(h.app)
        data = await stored(h, top.group)
    before = len(data["played"]["moves"])
    assert [k for k in TURN_KEYS if await h.redis.zcard(k)], "a computer move is due"
    h.apps = [await make_app(h.redis, computer_delay=RESTART_PACE)]  # type: ignore[operator]

    assert not await moved_past(h, top, before)  # its time has not come
    await clock_of(h).advance(RESTART_PACE)
    await until(h, lambda: moved_past(h, top, before), timeout=1, what="the due computer move")
    assert (await stored(h, top.group))["played"]["moves"][before]["player"] != 0


def said_in_group(h: Harness, top: Tabletop) -> str:
    return "\n".join(
        str(c.params.get("text", "")) for c in h.server.calls if c.chat_id == top.group.id
    )


async def someone_away(h: Harness, *, bob_blocks: bool = False) -> tuple[Tabletop, FakeUser, int]:
    """A durak table with a turn time of 1 s whose players do not tap until one of them
    (Bob, if he blocked the bot) is away: (the table, him, his seat)."""
    ann, bob = h.user("Ann"), h.user("Bob")
    top = await opened(h, ann, "durak")
    await top.join(bob)
    await set_lobby(h.redis, table_key(top.group), {"turn_time": 1})  # any, not just the buttons'
    bob.blocked = bob_blocks  # after joining: the deal finds his private chat closed
    await top.start(ann)

    def candidates(data: dict[str, Any]) -> list[int]:
        seats = enumerate(data["seats"])
        return [i for i, s in seats if s["away"] and (not bob_blocks or s["user_id"] == bob.id)]

    async def anyone_away() -> bool:
        return bool(candidates(await stored(h, top.group)))

    await until(h, anyone_away, timeout=8, what="a player marked away")
    data = await stored(h, top.group)
    away = candidates(data)[0]
    assert data["seats"][away]["timeouts"] >= 2

    def told() -> bool:
        said = said_in_group(h, top)
        return "ran out of time" in said and "is away" in said

    await until(h, told, timeout=3, what="the group told of the timeout and the away player")
    return top, (ann, bob)[away], away


async def is_back(h: Harness, top: Tabletop, seat: int) -> None:
    data = (await stored(h, top.group))["seats"][seat]
    assert not data["away"] and data["timeouts"] == 0

    await until(h, lambda: "is back" in said_in_group(h, top), 3, "the group told he is back")


@SLOW
async def test_two_timeouts_make_him_away_and_a_tap_brings_him_back(harness: Harness) -> None:
    h = harness
    top, user, away = await someone_away(h)
    # While he is away the computer plays for him; he taps his prompt and is back.
    # His prompts are edited in place: his phone does not ring for every turn.

    def sent_to_him() -> int:
        return sum(1 for c in h.server.calls_to("sendMessage") if c.chat_id == user.id)

    sent = sent_to_him()

    def asked() -> bool:
        return top.prompt(user) is not None and sent_to_him() == sent

    await until(h, asked, timeout=8, what="his turn, shown in place")
    message = top.prompt(user)
    assert message is not None
    answer = await h.tap(user, message, lambda b: action_of(b) is Action.MOVE)
    assert answer.text is None, answer.text
    await is_back(h, top, away)


@SLOW
async def test_an_away_player_is_told_and_taps_im_back(harness: Harness) -> None:
    h = harness
    top, user, away = await someone_away(h)
    hand = next(m for m in reversed(h.screen(user)) if m.from_bot and m.buttons)
    assert "computer plays for you" in (hand.text or "")
    assert f"until they tap: {user.first_name}" in (top.table_message().text or "")
    answer = await h.tap(user, hand, lambda b: action_of(b) is Action.BACK)
    assert answer.text is None, answer.text
    await is_back(h, top, away)
    hand = next(m for m in reversed(h.screen(user)) if m.from_bot)
    assert "computer plays for you" not in (hand.text or "")
    assert all(action_of(b) is not Action.BACK for b in hand.buttons)

    await until(h, lambda: "until they tap" not in str(top.table_message().text), 3, "away line")


@SLOW
async def test_my_cards_in_the_group_brings_an_away_player_back(harness: Harness) -> None:
    """Bob has blocked the bot: "My cards", his only tap on the game, counts as coming back."""
    h = harness
    top, user, away = await someone_away(h, bob_blocks=True)
    assert "Bob" in top.table_message().text
    answer = await top.tap_group(user, Action.CARDS)
    assert answer.show_alert and answer.text, "his hand, in an alert only he sees"
    await is_back(h, top, away)


async def test_computers_alone_cannot_start(quick: Harness) -> None:
    h = quick
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, h.group(), "durak", 2)
    await top.tap_group(ann, Action.LEAVE)
    answer = await top.start(ann)
    assert answer.show_alert and answer.text and "person" in answer.text
    assert (await stored(h, top.group))["phase"] == "lobby"
    assert (await top.tap_group(ann, Action.COMPUTER, "-")).text is None
    assert (await top.tap_group(ann, Action.COMPUTER, "-")).text is None
    answer = await top.tap_group(ann, Action.COMPUTER, "-")
    assert answer.show_alert and answer.text  # nobody left to remove
    assert (await stored(h, top.group))["seats"] == []


async def test_a_claimed_move_whose_claimant_died_is_played_later(
    quick: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A due move claimed by a poller that died is played once the claim runs out."""
    from bot.service import turns

    monkeypatch.setattr(turns, "CLAIM_MS", 300)
    real = turns.play_due
    claimed: list[str] = []

    async def dies(app: Any, key: str, claim: int) -> None:
        claimed.append(key)  # claimed, then nothing: the process is gone

    h = quick
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "football", 1)
    monkeypatch.setattr(turns, "play_due", dies)
    await top.start(ann)
    data = await stored(h, top.group)
    computer = computer_seats(data)[0]
    if computer == 1:  # set-up goes A first: Ann sets up, then the computer is due
        rng = random.Random(2)
        while top.prompt(ann) is not None:
            await top.step([ann], rng)

    await until(h, lambda: bool(claimed), timeout=5, what="a claim")
    before = await moves_made(h, top)
    monkeypatch.setattr(turns, "play_due", real)

    await until(h, lambda: moved_past(h, top, before), 5, "the move after the claim ran out")


@pytest.mark.redis
async def test_football_against_the_computer_on_the_real_redis(quick_real: Harness) -> None:
    """The Lua compare-and-set and ZADD LT of a real Redis, a whole game."""
    h = quick_real
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "football", 1, start=True)
    await play_people(h, top, [ann], random.Random(8))
    data = await stored(h, top.group)
    assert data["phase"] == "finished" and data["clock"]["turn_due"] == 0  # no deadline any more


async def test_endgame_in_a_private_chat_stops_the_computers(quick: Harness) -> None:
    h = quick
    ann = h.user("Ann")
    top = await lobby_with_computers(h, ann, ann, "durak", 2, start=True)
    await h.private(ann, "/endgame")
    data = await stored(h, top.group)
    assert data["phase"] == "abandoned"
    moves = len(data["played"]["moves"])
    await clock_of(h).advance(DELAY * 10)
    assert await moves_made(h, top) == moves, "a computer moved after /endgame"


async def test_nobody_else_sits_down_at_a_private_game_by_its_link(quick: Harness) -> None:
    h = quick
    ann, eve = h.user("Ann"), h.user("Eve")
    top = await lobby_with_computers(h, ann, ann, "durak", 1)
    game_id = (await stored(h, top.group))["game_id"]
    await h.follow(eve, deep_link(BOT_USERNAME, ann.id, None, game_id))
    assert eve.id not in [s["user_id"] for s in (await stored(h, top.group))["seats"]]
    assert "someone else's game" in (h.last(eve).text or "")
