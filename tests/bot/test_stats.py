"""bot.tables.stats: each finished game counted once, per group and per person; the board;
/forgetme's erasure; a rebuild from records gives what live counting gave, and its command
reads its settings as the bot does."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.keys import KEY_PREFIX
from bot.core.store import Store
from bot.tables.stats import __main__ as command
from bot.tables.stats.count import Moved
from bot.tables.stats.finished import Finished, Player, from_record, from_table
from bot.tables.stats.keys import ST, computer_key, group_key, person_key
from bot.tables.stats.standings import MARKER_TTL_MARGIN, Standings, rebuild, settle
from engine import ratings, records
from engine.games.durak.outcome import DurakOutcome
from engine.games.durak.rules import DurakOptions
from engine.ratings import Rating
from engine.registry import GAMES
from testing.durak_positions import play, position
from testing.settings import REDIS_URL
from testing.stats import GROUP, played, table_of

ANN, BOB, CID, DAN = Player(1, "Ann"), Player(2, "Bob"), Player(3, "Cid"), Player(4, "Dan")
TTL = 3600
GROUPS = f"{KEY_PREFIX}:{{g*"  # the keys of every group's standings


@pytest.fixture
async def standings(fake_redis: aioredis.Redis) -> Standings:
    return Standings(fake_redis, TTL)


def text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


async def figures(redis: aioredis.Redis, key: str) -> dict[str, str]:
    return {text(k): text(v) for k, v in (await redis.hgetall(key)).items()}


def durak(game_id: str, players: list[Player], fool: int | None, chat: int = GROUP) -> Finished:
    ranks = tuple(2 if seat == fool else 1 for seat in range(len(players)))
    return Finished(chat, game_id, tuple(players), DurakOutcome("durak", ranks, fool=fool))


@pytest.mark.parametrize(
    ("hands", "dummy", "ann", "bob"),
    [
        (["7H 9C", "8H"], "AC", {"fool": "1"}, {"first": "1"}),  # Ann is left with a card
        (["7H", "8H"], "AC", {"first": "1"}, {"fool": "1"}),  # the dummy's is the last
        (["7H", "8H"], "", {"draw": "1"}, {"draw": "1"}),
    ],
)
async def test_each_durak_result_counts_in_the_group_and_overall(
    standings: Standings, hands: list[str], dummy: str, ann: dict[str, str], bob: dict[str, str]
) -> None:
    game = position(hands, dummy_cards=dummy, attacker=0, defender=1, controller=0)
    play(game, "a7H", "b7H8H")
    table = table_of(game, "durak", [ANN, BOB])
    game = from_table(table)
    assert game is not None
    await standings.count(game)
    redis = standings.redis
    for player, expected in ((ANN, ann), (BOB, bob)):
        for key in (group_key(GROUP, "durak", player.uid), person_key(player.uid, "durak")):
            found = await figures(redis, key)
            assert {k: found[k] for k in expected} == expected
            assert found["n"] == "1" and found["name"] == player.name
            assert found["cur"] == ("0" if "fool" in expected else "1")
    mine = await figures(redis, person_key(ANN.uid, "durak"))
    assert mine["tr"] == f"{Rating(float(mine['mu']), float(mine['sigma'])).shown:.2f}"
    fool_above = await standings.head_to_head(GROUP, "durak", BOB.uid, ANN.uid)
    assert fool_above[0] == 1 and fool_above[1:] == (
        (1, 0) if "fool" in ann else (0, 1) if "fool" in bob else (0, 0)
    )


@pytest.mark.parametrize(("goals", "winner"), [([3, 1], 0), ([0, 2], 1), ([1, 1], None)])
async def test_football_wins_draws_losses_and_goals(
    standings: Standings, goals: list[int], winner: int | None
) -> None:
    outcome = GAMES["football"].outcome("football", {"goals": goals, "winner": winner}, {})
    await standings.count(Finished(GROUP, "f001", (ANN, BOB), outcome))
    ann = await figures(standings.redis, group_key(GROUP, "football", ANN.uid))
    bob = await figures(standings.redis, person_key(BOB.uid, "football"))
    assert (ann["gf"], ann["ga"], bob["gf"], bob["ga"]) == tuple(
        str(g) for g in [*goals, *goals[::-1]]
    )
    key = {0: ("won", "lost"), 1: ("lost", "won"), None: ("draw", "draw")}[winner]
    assert ann[key[0]] == "1" and bob[key[1]] == "1"
    if winner is not None:
        assert (float(ann["mu"]) > float(bob["mu"])) == (winner == 0)
    assert (float(ann["mu"]) == pytest.approx(float(bob["mu"]))) == (winner is None)


async def test_games_with_computer_seats_count_apart_per_level_and_not_in_the_group(
    standings: Standings,
) -> None:
    players = [ANN, Player(-1, "🤖 1", "easy"), Player(-2, "🤖 2", "hard")]
    await standings.count(durak("c001", players, fool=0))
    await standings.count(durak("c002", players, fool=2))
    redis = standings.redis
    hard = await figures(redis, computer_key(ANN.uid, "durak", "hard"))
    assert (hard["n"], hard["fool"], hard["cur"], hard["best"]) == ("2", "1", "1", "1")
    assert await redis.keys(GROUPS) == []
    assert await redis.exists(person_key(ANN.uid, "durak")) == 0
    overall, vs = await standings.mine(ANN.uid)
    assert overall == {} and list(vs) == [("durak", "hard")] and vs["durak", "hard"].n == 2


async def test_a_game_delivered_twice_and_by_two_processes_is_counted_once(
    fake_redis: aioredis.Redis,
) -> None:
    first, second = Standings(fake_redis, TTL), Standings(fake_redis, TTL)
    game = durak("d001", [ANN, BOB, CID], fool=2)
    moved = await asyncio.gather(first.count(game), second.count(game), first.count(game))
    assert moved[0] == moved[1] == moved[2]
    marker = game.marker
    await fake_redis.expire(marker, 5)  # time has passed since the count
    third = Standings(fake_redis, TTL)  # a process that takes a redelivery over
    assert await third.count(game) == moved[0] and third.round_trips == 1  # the read alone
    assert await fake_redis.ttl(marker) == third.marker_ttl  # renewed by that delivery
    for player in (ANN, BOB, CID):
        assert (await figures(fake_redis, person_key(player.uid, "durak")))["n"] == "1"
    n, above, below = await first.head_to_head(GROUP, "durak", ANN.uid, CID.uid)
    assert (n, above, below) == (1, 1, 0)


async def test_two_games_of_the_same_people_at_once_are_both_counted_on_fresh_ratings(
    fake_redis: aioredis.Redis,
) -> None:
    """Counted side by side (two groups, two processes): the second count finds the
    ratings it read changed, reads again, and rates on top of the first."""
    one, two = Standings(fake_redis, TTL), Standings(fake_redis, TTL)
    await asyncio.gather(
        one.count(durak("x001", [ANN, BOB], fool=1, chat=-1)),
        two.count(durak("x002", [ANN, BOB], fool=1, chat=-2)),
    )
    ann = await figures(fake_redis, person_key(ANN.uid, "durak"))
    assert ann["n"] == "2" and ann["cur"] == "2"
    twice, other = Rating(), Rating()
    for _ in range(2):
        twice, other = ratings.rate([twice, other], [1, 2])
    assert float(ann["mu"]) == twice.mu and float(ann["sigma"]) == twice.sigma


async def test_the_board_shows_people_after_three_games_best_rating_first(
    standings: Standings,
) -> None:
    games = [[ANN, BOB, CID]] * 3
    fools = [2, 2, 1]
    for i, (players, fool) in enumerate(zip(games, fools, strict=True)):
        assert await standings.board(GROUP, "durak") == []  # nobody has three games yet
        moved = await standings.count(durak(f"b{i:03d}", players, fool))
    assert [uid for uid, _ in moved.up] == [ANN.uid, BOB.uid, CID.uid]  # all newly on it
    await standings.count(durak("b100", [ANN, DAN], fool=1))
    await standings.count(durak("b101", [ANN, DAN], fool=1))
    board = await standings.board(GROUP, "durak")
    assert [line.name for line in board] == ["Ann", "Bob", "Cid"]  # Dan: two games only
    shown = [line.rating.shown for line in board if line.rating]
    assert shown == sorted(shown, reverse=True)
    assert [line.n for line in board] == [5, 3, 3]
    moved = await standings.count(durak("b102", [CID, BOB], fool=1))
    assert moved.up == ((CID.uid, 2),)


async def test_forgetting_erases_him_everywhere_and_leaves_the_others(standings: Standings) -> None:
    podkidnoy = json.dumps(DurakOptions(dummy=False).model_dump(), sort_keys=True)
    for i in range(3):
        await standings.count(replace(durak(f"f{i:03d}", [ANN, BOB], fool=1), variant=podkidnoy))
    await standings.count(durak("f100", [ANN, Player(-1, "🤖", "easy")], fool=0))
    assert (await standings.variants(ANN.uid))["durak"][podkidnoy].n == 3
    await standings.forget(ANN.uid)
    assert await standings.variants(ANN.uid) == {}
    overall, vs = await standings.mine(ANN.uid)
    assert overall == {} and vs == {}
    assert await standings.in_group(GROUP, ANN.uid) == {}
    assert [line.name for line in await standings.board(GROUP, "durak")] == ["Bob"]
    assert (await standings.in_group(GROUP, BOB.uid))["durak"].n == 3
    assert await standings.head_to_head(GROUP, "durak", BOB.uid, ANN.uid) == (3, 0, 3)
    left = [text(k) for k in await standings.redis.keys("*")]
    assert [k for k in left if k.endswith(f":{ANN.uid}") or f":{ANN.uid}:" in k] == []


PEOPLE = [ANN, BOB, CID, DAN, Player(5, "Eve")]


async def group_figures(redis: aioredis.Redis) -> dict[str, Any]:
    """Everything a group's standings hold, key by key."""
    found: dict[str, Any] = {}
    for pattern in (GROUPS, f"{ST}:in:*"):
        for key in map(text, await redis.keys(pattern)):
            if ":counted:" in key:  # a group step's marker: not a figure
                continue
            kind = text(await redis.type(key))
            if kind == "hash":
                found[key] = await figures(redis, key)
            elif kind == "zset":
                found[key] = await redis.zrange(key, 0, -1, withscores=True)
            else:
                found[key] = sorted(map(text, await redis.smembers(key)))
    return found


games_strategy = st.lists(
    st.tuples(
        st.sampled_from(["durak", "football"]),
        st.integers(0, 10_000),
        st.permutations(range(len(PEOPLE))),
        st.integers(2, 4),
    ),
    min_size=1,
    max_size=5,
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(games=games_strategy)
def test_counting_live_equals_rebuilding_from_the_records(
    tmp_path: Path, games: list[tuple[str, int, list[int], int]]
) -> None:
    async def run() -> None:
        live, rebuilt = fakeredis.FakeAsyncRedis(), fakeredis.FakeAsyncRedis()
        standings = Standings(live, TTL)
        paths = []
        for index, (kind, seed, order, count) in enumerate(games):
            players = [PEOPLE[i] for i in order[: 2 if kind == "football" else count]]
            table, record = played(kind, seed, players, f"{index:04d}")
            game = from_table(table)
            assert game is not None
            await standings.count(game)
            path = tmp_path / f"{index:04d}-{seed}.json"
            path.write_text(json.dumps(record))
            paths.append(path)
        assert await rebuild(rebuilt, [*paths, paths[0]], TTL) == len(games)
        figures = await group_figures(live)
        assert await group_figures(rebuilt) == figures != {}  # the first game counted once
        await rebuild(live, paths, TTL)  # in place, over what was counted live
        assert await group_figures(live) == figures
        await live.aclose()
        await rebuilt.aclose()

    asyncio.run(run())


async def test_the_rebuild_command_reads_redis_and_the_games_ttl_from_a_dot_env(
    real_redis: aioredis.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m bot.tables.stats rebuild``, in a directory whose .env says where Redis is
    and how long a game is kept, as the bot would read them (it read GAME_TTL from the
    environment alone: its markers were kept two days past the table's key, not the
    .env's)."""
    for name in ("REDIS_URL", "GAME_TTL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text(f"REDIS_URL={REDIS_URL}\nGAME_TTL=600\n")
    monkeypatch.chdir(tmp_path)
    paths, games = [], []
    for index, (kind, seed) in enumerate([("durak", 3), ("football", 5)]):
        _, record = played(kind, seed, [ANN, BOB], f"cli{index}")
        games.append(from_record(records.parse(json.dumps(record))))
        paths.append(tmp_path / f"{index}.json")
        paths[-1].write_text(json.dumps(record))
    # In a thread: the command runs its own event loop, as it does from the shell.
    assert await asyncio.to_thread(command.main, ["rebuild", *map(str, paths)]) == 0
    assert capsys.readouterr().out == "2 games counted\n"
    found = await figures(real_redis, group_key(GROUP, "durak", ANN.uid))
    assert found["n"] == "1" and found["name"] == "Ann"
    for game in games:
        for marker in (game.marker, game.group_marker):
            assert MARKER_TTL_MARGIN < await real_redis.ttl(marker) <= MARKER_TTL_MARGIN + 600


def test_the_rebuild_command_names_a_wrong_setting_before_it_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong GAME_TTL stops the rebuild before Redis, in one line naming it, as it stops
    the bot (it was read unchecked: 0 would have counted games that expire at once)."""
    record = Path("docs/durak-record.json").resolve()
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    monkeypatch.setenv("REDIS_URL", REDIS_URL)
    monkeypatch.setenv("GAME_TTL", "0")
    assert command.main(["rebuild", str(record)]) == 2
    assert capsys.readouterr().err == "bad settings: GAME_TTL: Input should be greater than 0\n"


def test_a_record_without_its_table_cannot_be_counted() -> None:
    record = records.parse(Path("docs/durak-record.json").read_text())
    with pytest.raises(records.MalformedRecord):
        from_record(record)


async def test_a_stopped_game_counts_nothing(fake_redis: aioredis.Redis) -> None:
    """/endgame and the computer-only cap leave a table "abandoned": nothing is counted."""
    table, _ = played("durak", 7, [ANN, BOB], "stop")
    table.phase = "abandoned"
    store = Store(fake_redis, TTL)
    assert await settle(store, table) is None
    assert await fake_redis.keys(f"{ST}:*") == await fake_redis.keys(GROUPS) == []
    table.phase = "finished"
    assert await settle(store, table) == Moved()  # nobody has 3 games yet
    assert len(await fake_redis.keys(f"{ST}:*")) > 0


async def test_a_count_cut_short_between_its_steps_ends_once_in_the_supergroup(
    standings: Standings,
) -> None:
    """The process died between the group's step and the people's, then the group became a
    supergroup: its group marker moved with the figures, nothing is added there twice."""
    game = durak("m001", [ANN, BOB], fool=1)
    real = standings._count
    calls = 0

    async def dies_after_the_group_step(args: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ConnectionError("the process died")
        return await real(args)

    standings._count = dies_after_the_group_step
    with pytest.raises(ConnectionError):
        await standings.count(game)
    standings._count = real
    new = -1001000000555
    await standings.move_group(GROUP, new, game)
    await standings.count(replace(game, chat=new))  # the next delivery, in the supergroup
    assert (await standings.in_group(new, ANN.uid))["durak"].n == 1
    assert (await standings.mine(ANN.uid))[0]["durak"].n == 1
    assert await standings.in_group(GROUP, ANN.uid) == {}
