"""Load: many groups playing at once against real ``python -m bot`` processes over HTTP.

With Telegram's limits enforced, as a deployment meets them (issue 9). This module is the
command line and the report; a run is bench/load_run.py, what it sees of each table
bench/load_meter.py, and the bot processes bench/load_bots.py.

bench/bot.py measures the handler stack in-process against a Bot API that answers at
once; it cannot show what players wait for when the bot is popular: the network, the rate
limiter, Telegram refusing calls, several processes. Here everything is real but
Telegram, and only on 127.0.0.1:

- a fake Bot API: testing/fakeserver.py serving testing/fakegram.py's ``FakeTelegram``. Each
  call is applied after a uniform ``--delay`` (30–80 ms), and refused with a 429 and
  ``retry_after`` where Telegram's flood control would refuse it (``FloodLimits``: token
  buckets of 30/s burst 30 for the whole bot, 1/s burst 3 per chat, 20/min burst 3 per
  group, on chat-directed calls only: send*, edit*, delete*... naming a ``chat_id``;
  answerCallbackQuery, getMe, getChatMember, setWebhook are never limited). Telegram
  publishes no limit for ephemeral messages: ``--world receiver`` (the default) counts
  one against its receiver's private chat, ``--world group`` against the group;
- one or two bot processes, ``python -m bot`` with the production defaults (rate
  limiter on, TABLE_EDIT_INTERVAL 3 s, ...; nothing of the environment that names a bot
  setting is passed on but what ``--bot-env`` adds) in webhook mode, Redis ``--redis-url``
  (database 10: FLUSHED before and after every run). The bot's webhook server is made to
  listen on 127.0.0.1 instead of every interface (the only change to its start-up);
- updates POSTed to the webhooks round-robin, with the secret header, as Telegram does.

A run: N groups (football 2 players; durak 2–6, in a fixed mix) open their tables
through the real lobby (/newgame, pick, join, start; the 52-card deck for 5–6). Where the
hands are goes round the groups too (``HANDS``): ``private``, every player's hand in his
private chat (he chose it: ``ct:place`` is set before the run); ``group``, hands in the
group as ephemeral messages (docs/ephemeral.md), the bot an administrator there;
``group-tap``, hands in the group, the bot not an administrator (a hand is sent only in
answer to its player's tap, and edited afterwards). Players of the two group kinds never
opened a private chat. Then for ``--duration`` seconds, in each group, whoever is asked
to act looks at his newest prompt (the message with move buttons of the table's current
game and latest position, in his private chat or his ephemeral messages in the group)
and, an exponential think time later (mean ``--think``), taps one of its buttons at
random; a finished game gets *Play again*, and a player whom the table asks to tap *My
cards* (his hand could not be shown in the group) taps it. Then tapping stops, and the
run waits until every message is final.

Figures per run (times are the fake server's clock; "posted" is when the bench sent the
update to the webhook):

- ``answer``: p50/p99 of tap posted → answerCallbackQuery for it applied by the fake;
  every tap of the tapping window (moves, set-up steps, Play again). ``unanswered``:
  taps never answered.
- ``prompt``: p50/p99 of a move tap posted → the first send or edit applied in a
  player's private chat, or to one player in the group (an ephemeral message), that shows
  move buttons of a later position of the same game (buttons carry the position's move
  count): the next player's prompt. Taps the bot
  refused and moves that ended the game are left out; ``missing`` counts accepted moves
  that got neither a next prompt nor the end of the game.
- ``calls/move``: chat-directed calls the fake received from the start of tapping until
  the run was final, by method, per move (an accepted tap on a move or a football set-up
  button in the window); calls refused with 429 are not in it (they are the next
  figure), calls refused otherwise are. Play again's new messages count too, as they are
  part of playing on.
- ``429``: flood-control refusals in that time, by method and chat kind (``429 lobby``:
  during the set-up). ``lobby refused``: answers to lobby taps that refused them, which
  the bench taps again a few times, as people do; a group whose lobby never starts is
  left out of the run (``not started``).
- ``final``: seconds from the end of tapping to the last chat-directed call, once there
  has been none for 2 s and every table is final. Either its game is over (the group
  shows Play again for it) and no private message still carries its move buttons; or
  some player holds move buttons, every move button left in the players' chats is of
  the current game and of the latest position offered (none of an earlier position or
  game), that position is later than the last accepted move's, and a message in the
  group was sent or edited after the last accepted move or Play again (each move
  changes the table's text, its narration at least). ``None`` when that is not so
  within ``--settle`` seconds (the tables that are not, and why, are printed).
- ``by hands``: answer p99, prompt p99 and calls/move of each kind of group (``HANDS``);
  an ephemeral call counts as a call to the group. ``My cards``: taps on it.
- ``bot CPU``: user+system CPU of the bot processes during the tapping window, percent of
  one core (summed); ``bench CPU``: this process (fake Telegram and players) likewise;
  ``load``: the machine's 1-minute load average when tapping started.

Usage (the Redis at 127.0.0.1:6379 must answer)::

    .venv/bin/python bench/load.py          # groups 10 25 50 100 x think 3 0.5 x processes 1 2
    .venv/bin/python bench/load.py --quick  # 10 groups, think 3 s, one process, 10 s
    .venv/bin/python bench/load.py --groups 10 50 --think 3 --processes 1 2 --duration 30
    .venv/bin/python bench/load.py --bot-env RATE_LIMIT=false --json
    .venv/bin/python bench/load.py --quick --bot-root /path/to/an/older/checkout

Each run starts fresh bot processes, a fresh fake and an empty database. Ctrl-C stops the
run and its processes. ``--logs DIR`` keeps the bots' logs (their warnings, errors and
tracebacks are counted in the figures either way).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load_run import Level, Run, add_run_options  # noqa: E402

TARGETS = {
    "answer_p99_ms": "< 250 at every level",
    "429": "== 0",
    "prompt_p99_ms": "< 2000 at 50 groups x 3 s",
    "calls_per_move": "<= 2.5 at 50 groups",
    "final_s": "<= 10",
}


def verdicts(result: dict[str, Any]) -> list[str]:
    """The issue's targets that apply to this level, each met or MISSED."""
    out = []

    def check(name: str, ok: bool) -> None:
        out.append(f"{name} {'ok' if ok else 'MISSED'}")

    p99 = result["answer_p99_ms"]
    check("answer p99<250ms", p99 is not None and p99 < 250)
    check("no 429", result["429"] == 0)
    if result["groups"] == 50 and result["think_s"] == 3.0:
        prompt = result["prompt_p99_ms"]
        check("prompt p99<2s", prompt is not None and prompt < 2000)
    if result["groups"] == 50:
        calls = result["calls_per_move"]
        check("calls/move<=2.5", calls is not None and calls <= 2.5)
    check("final<=10s", result["final_s"] is not None and result["final_s"] <= 10)
    return out


COLUMNS = [
    ("groups", "groups"),
    ("think_s", "think"),
    ("processes", "procs"),
    ("moves", "moves"),
    ("answer_p50_ms", "ans p50"),
    ("answer_p99_ms", "ans p99"),
    ("prompt_p50_ms", "prm p50"),
    ("prompt_p99_ms", "prm p99"),
    ("prompt_missing", "prm miss"),
    ("calls_per_move", "calls/mv"),
    ("429", "429"),
    ("final_s", "final s"),
    ("bot_cpu_pct", "bot CPU%"),
    ("load_average", "load"),
]


HAND_COLUMNS = [
    ("groups", "groups"),
    ("think_s", "think"),
    ("processes", "procs"),
    ("hands", "hands"),
    ("moves", "moves"),
    ("answer_p99_ms", "ans p99"),
    ("prompt_p99_ms", "prm p99"),
    ("calls_per_move", "calls/mv"),
]


def table_text(results: list[dict[str, Any]]) -> str:
    """The runs' figures, then each run's by kind of hands."""
    kinds = [{**r, **f, "hands": hands} for r in results for hands, f in r["by_hands"].items()]
    return aligned(COLUMNS, results) + "\n\n" + aligned(HAND_COLUMNS, kinds)


def aligned(columns: list[tuple[str, str]], results: list[dict[str, Any]]) -> str:
    """``results`` as a text table: a row each, the ``columns`` (key, heading) aligned."""
    rows = [[label for _, label in columns]]
    rows += [["-" if r[k] is None else str(r[k]) for k, _ in columns] for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines = [" | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def report(result: dict[str, Any]) -> str:
    methods = ", ".join(f"{m} {n}" for m, n in result["calls_per_move_by_method"].items())
    lines = [
        f"== {result['groups']} groups, think {result['think_s']} s, "
        f"{result['processes']} process(es): {result['groups_started']} started, "
        f"{result['taps']} taps, {result['moves']} moves in {result['seconds']} s, "
        f"{result['games_again']} games again, {result['my_cards']} taps on My cards",
        f"   answer p50/p99 {result['answer_p50_ms']}/{result['answer_p99_ms']} ms "
        f"({result['unanswered']} unanswered; refused: {result['refused_taps']})",
        f"   next prompt p50/p99 {result['prompt_p50_ms']}/{result['prompt_p99_ms']} ms "
        f"({result['prompt_missing']} missing)",
        f"   calls/move {result['calls_per_move']}: {methods}",
        f"   429s {result['429']} {result['429_by']} (lobby {result['429_lobby']}); final after "
        f"{result['final_s']} s; bot CPU {result['bot_cpu_pct']} %, bench CPU "
        f"{result['bench_cpu_pct']} %, load {result['load_average']}; bot log {result['bot_log']}",
        "   targets: " + "; ".join(verdicts(result)),
    ]
    for hands, figures in result["by_hands"].items():
        lines.append(
            f"   hands {hands}: {figures['moves']} moves, answer p99 "
            f"{figures['answer_p99_ms']} ms, prompt p99 {figures['prompt_p99_ms']} ms, "
            f"calls/move {figures['calls_per_move']}"
        )
    if result["groups_not_started"] or result["lobby_refusals"]:
        lines.append(f"   lobby refused {result['lobby_refusals']}")
    lines += [f"   not started: {p}" for p in result["groups_not_started"][:10]]
    lines += [f"   not final: {p}" for p in result["not_final"][:10]]
    return "\n".join(lines)


async def run_all(levels: list[Level], args: argparse.Namespace) -> list[dict[str, Any]]:
    task = asyncio.current_task()
    assert task is not None
    # SIGTERM stops the bots too, as Ctrl-C does (the finally clauses run).
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    results = []
    with tempfile.TemporaryDirectory(prefix="load-bench-") as scratch:
        logs_root = Path(args.logs) if args.logs else Path(scratch)
        for n, level in enumerate(levels):
            logs = logs_root / f"run{n}-{level.groups}g-{level.think}s-{level.processes}p"
            logs.mkdir(parents=True, exist_ok=True)
            result = await Run(level, args, logs).execute()
            results.append(result)
            print(json.dumps(result) if args.json else report(result), flush=True)
    return results


def parse(argv: list[str] | None = None) -> tuple[list[Level], argparse.Namespace]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 25, 50, 100])
    parser.add_argument("--think", type=float, nargs="+", default=[3.0, 0.5], help="mean s")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    parser.add_argument(
        "--quick", action="store_true", help="10 groups, think 3 s, one process, 10 s"
    )
    add_run_options(parser, duration=30.0)
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args(argv)
    if args.quick:
        args.groups, args.think, args.processes, args.duration = [10], [3.0], [1], 10.0
    levels = [
        Level(g, t, p) for p, t, g in itertools.product(args.processes, args.think, args.groups)
    ]
    return levels, args


def main() -> None:
    levels, args = parse()
    try:
        results = asyncio.run(run_all(levels, args))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted; the bot processes were stopped", file=sys.stderr)
        sys.exit(130)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    if not args.json:
        print("\n" + table_text(results))
        print("targets: " + "; ".join(f"{k} {v}" for k, v in TARGETS.items()))


if __name__ == "__main__":
    main()
