"""The lobby and the commands, through the fake Bot API: who may do what, and what the
group is told."""

from __future__ import annotations

import http.server
import json
import logging
import re
import socket
import threading
from collections.abc import Iterator

import pytest

from bot import __main__ as bot_main
from bot.core import rules_text
from bot.core.callbacks import Action, decode
from testing.harness import Harness
from testing.tabletop import Tabletop, is_action, opened, stored


def _options(top: Tabletop) -> dict[str, str]:
    """The settings keyboard: option code -> label."""
    message = top.table_message()
    return {
        decode(b.callback_data).arg: b.text for b in message.buttons if is_action(Action.OPTION)(b)
    }


async def test_settings_are_the_creators_and_change_the_game(harness: Harness) -> None:
    """Only the creator sets the game; while the settings are open the others still join
    (the Join button is still there), and the game starts as set."""
    ann, bob = harness.user("Ann"), harness.user("Bob", language_code="uk")
    top = await opened(harness, ann, "durak", harness.group(creator=ann))
    await top.tap_group(ann, Action.SETTINGS)
    assert _options(top)
    await top.join(bob)
    assert [s["user_id"] for s in (await stored(harness, top.group))["seats"]] == [ann.id, bob.id]
    before = await stored(harness, top.group)
    answer = await top.tap_group(bob, Action.SETTINGS)
    assert answer.show_alert and answer.text  # not the creator
    answer = await top.tap_group(bob, Action.OPTION, "d")  # open: its options are still hers
    assert answer.show_alert and await stored(harness, top.group) == before
    assert set(_options(top)) == {"d", "m", "p", "5", "f", "t", "l"}
    for arg in ("d", "p", "f", "t", "l"):
        await top.tap_group(ann, Action.OPTION, arg)
    assert _options(top)["d"] == "Калода: 52 карты"  # the count's form, on its button too
    data = await stored(harness, top.group)
    assert data["lobby"]["settings"] == {
        "deck_size": 52,
        "decks": 1,
        "dummy": True,
        "dummy_plays": True,
        "first_move": "from_under",
        "five_before_discard": False,
        "throw_in": "all",
        "transfer": False,
        "turn_time": 120,
    }
    assert data["lobby"]["lang"] == "be"  # the next catalogue after English
    assert "Калода: 52 карты" in top.table_message().text  # the group's language now
    await top.start(ann)  # the settings still open (Done: tests/e2e/test_e2e_languages.py)
    data = await stored(harness, top.group)
    assert data["phase"] == "playing"
    assert '"deck_size":52' in data["state"].replace(" ", "")
    # Each player reads his hand in his own language; the group in the lobby's.
    assert "Ваші карти" in harness.last(bob).text and "Your hand" in harness.last(ann).text
    assert "Козыр " in top.table_message().text


async def test_football_starts_with_two_and_seats_no_third(harness: Harness) -> None:
    users = [harness.user(n) for n in ("Ann", "Bob", "Cid", "Dan", "Eve")]
    top = await opened(harness, users[0], "football", harness.group(creator=users[0]))
    before = await stored(harness, top.group)
    answer = await top.start(users[0])
    assert answer.show_alert and "2" in (answer.text or "")  # football needs two
    assert await stored(harness, top.group) == before  # refused, nothing changed
    await top.join(users[1])
    answer = await top.join(users[2])
    assert answer.show_alert and answer.text  # full
    assert len((await stored(harness, top.group))["seats"]) == 2


async def test_leave_start_and_stop_permissions(harness: Harness) -> None:
    ann, bob, boss = harness.user("Ann"), harness.user("Bob"), harness.user("Boss")
    admin = harness.user("Adam")
    group = harness.group(creator=boss, admins=[admin])
    top = await opened(harness, ann, "durak", group)
    await top.join(bob)
    await top.tap_group(bob, Action.LEAVE)
    assert [s["name"] for s in (await stored(harness, group))["seats"]] == ["Ann"]
    before = await stored(harness, group)
    answer = await top.tap_group(bob, Action.LEAVE)  # he is not seated any more
    assert answer.show_alert and answer.text and await stored(harness, group) == before
    await top.join(bob)
    before = await stored(harness, group)
    for answer in (await top.join(bob), await top.start(bob)):  # seated; not creator nor admin
        assert answer.show_alert and answer.text
    assert await stored(harness, group) == before
    await harness.command(bob, group, "/endgame")
    assert (await stored(harness, group))["phase"] == "lobby"
    await top.start(boss)  # the chat's owner may
    before = await stored(harness, group)
    assert before["phase"] == "playing"
    await harness.command(ann, group, "/newgame")  # points at the game, changes nothing
    assert "already" in harness.last(group).text and await stored(harness, group) == before
    await harness.command(harness.user("Cid"), group, "/endgame")  # not his game, nor an admin
    assert await stored(harness, group) == before
    await harness.command(admin, group, "/endgame", mention=True)  # an administrator may
    assert (await stored(harness, group))["phase"] == "abandoned"
    assert "stopped" in top.table_message().text
    assert top.prompt(ann) is None and top.prompt(bob) is None
    await top.tap_group(ann, Action.RECORD)  # the stopped game still hands out its record
    assert harness.last_document(group)[0].endswith(".json")
    await harness.command(ann, group, "/newgame")  # the chat is free again
    assert (await stored(harness, group))["phase"] == "pick"


async def test_private_commands_and_the_menu(harness: Harness) -> None:
    ann = harness.user("Ann", language_code="ru")
    await harness.private(ann, "/start")
    assert "/newgame" in harness.last(ann).text
    await harness.private(ann, "/help")
    assert all(f"/{c}" in (harness.last(ann).text or "") for c in ("endgame", "rules", "record"))
    await harness.private(ann, "/newgame")  # a game against the computer
    assert len(harness.last(ann).buttons) == 2  # the game picker
    for game in ("football", "durak"):
        before = len(harness.screen(ann))
        await harness.private(ann, f"/rules {game}")
        sent = [m for m in harness.screen(ann)[before:] if m.from_bot]
        source = rules_text.source(game, "ru")
        assert source is not None and sent
        assert all(len(m.text or "") <= 4096 for m in sent)
        # Markdown became formatting (the fake parses the HTML as Telegram would).
        shown = "\n".join(m.text or "" for m in sent)
        assert "**" not in shown and "#" not in shown
        headings = [line.lstrip("#").strip() for line in source.splitlines() if line[:1] == "#"]
        assert headings and all(h.replace("**", "").replace("`", "") in shown for h in headings)
        # Numbered points keep their numbers, so that "§4.3" can be found in the chat.
        points = re.findall(r"^(\d+)\. \*\*(.+?)\*\*", source, re.MULTILINE)
        assert points and all(f"{n}. {title}" in shown for n, title in points)
        assert any(e["type"] == "bold" for m in sent for e in m.entities)
    group = harness.group()
    await harness.command(ann, group, "/rules durak")  # in a group too
    assert harness.last(group).text
    menus = harness.server.calls_to("setMyCommands")
    assert {"en", "ru", "uk"} <= {c.params.get("language_code") for c in menus}
    assert all("record" in {c["command"] for c in m.params["commands"]} for m in menus)


class _RefusingBotAPI(http.server.BaseHTTPRequestHandler):
    """A Bot API that refuses every token, as Telegram answers a revoked one."""

    def do_POST(self) -> None:
        body = json.dumps({"ok": False, "error_code": 401, "description": "Unauthorized"})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")  # one for the module; it stops within 10 ms, not 0.5 s
def refusing_api() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _RefusingBotAPI)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _silent_port() -> str:
    """The address of a port nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


TOKEN = {"TELEGRAM_BOT_TOKEN": "1:x"}
NO_SECRET = {**TOKEN, "WEBHOOK_URL": "https://example.org/hook", "WEBHOOK_SECRET": None}
NO_API = "cannot reach the Bot API"


@pytest.mark.parametrize(
    ("env", "code", "says"),
    [
        ({"TELEGRAM_BOT_TOKEN": None}, 2, "TELEGRAM_BOT_TOKEN"),
        (NO_SECRET, 2, "WEBHOOK_SECRET"),
        ({**TOKEN, "REDIS_URL": "redis://127.0.0.1:1/0"}, 1, "REDIS_URL"),
        ({**TOKEN, "TELEGRAM_BASE_URL": "refusing", "REDIS_URL": None}, 2, "TELEGRAM_BOT_TOKEN"),
        ({**TOKEN, "TELEGRAM_BASE_URL": "silent", "REDIS_URL": None}, 1, NO_API),
        ({**TOKEN, "GAME_TTL": "0", "TELEGRAM_BASE_URL": "refusing"}, 2, "GAME_TTL: Input"),
    ],
    ids=[
        "no token",
        "a webhook without its secret",
        "no redis",
        "token refused",
        "no bot api",
        "games kept no time",
    ],
)
def test_a_failed_start_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    refusing_api: str,
    env: dict[str, str | None],
    code: int,
    says: str,
) -> None:
    """A start that fails says why in one line, no traceback of PTB's before it. Run in
    this process (one of its own proved nothing more, for 1.3 CPU-s of imports): main's root
    logger put back after, the heap not frozen."""
    apis = {"refusing": refusing_api, "silent": _silent_port()}
    env = {**env, "TELEGRAM_BASE_URL": apis.get(env.get("TELEGRAM_BASE_URL") or "")}
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setattr(bot_main, "freeze_startup_heap", lambda: None)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        assert bot_main.main() == code
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    said = capsys.readouterr().err
    lines = [line for line in said.splitlines() if "REDIS_URL is not set" not in line]
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], said
