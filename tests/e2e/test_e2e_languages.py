"""Every screen in every language: both games, the commands, the standings and the Mini App,
shown to players of one language, hold no catalogue key, no ``{placeholder}`` and (but
in English) no English word, copied from the English texts or put together in code."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.callbacks import Action, decode
from bot.core.i18n import DEFAULT, LANGS, catalogue, forms, t
from bot.screens import render_stats
from bot.tables.stats import count
from testing.chats import FakeGroup, FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, is_action, set_lobby, stored, table_key
from testing.webapp import bearer, page_server, table_param, token

NAMES = ("Ann", "Bob", "Cid")
SPECTATOR = "Dan"
STRANGER = "Eve"  # has never written to the bot: cannot join until she does
TITLE = "Card night"
# Words that every language writes as they are.
_KEPT = {"Telegram", "JSON"}
_TAG = re.compile(r"<[^>]+>")
_COMMAND = re.compile(r"/\w+")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_WORD = re.compile(r"[^\W\d_]{4,}")
SEEDS = Path(__file__).resolve().parents[2] / "seeds"
_PLACEHOLDER = re.compile(r"\{\w*\}")
_NAMESPACES = "|".join(sorted({key.split(".")[0] for key in catalogue(DEFAULT)}))
_KEY = re.compile(rf"\b(?:{_NAMESPACES})\.[A-Za-z_]+\b")
SMALLEST = {"durak": {"deck_size": 24}, "football": {"deck_size": 36, "decks": 1}}


def _texts_of_markup(markup: Any) -> list[str]:
    if isinstance(markup, str):
        markup = json.loads(markup)
    rows = (markup or {}).get("inline_keyboard", [])
    return [button["text"] for row in rows for button in row]


def shown(h: Harness, lang: str, elsewhere: list[range]) -> list[tuple[str, str]]:
    """(which call, text) of all the bot showed (the command menu of ``lang`` too), but in
    the calls ``elsewhere`` (made while the table was in another language)."""
    out: list[tuple[str, str]] = []
    for number, call in enumerate(h.server.calls):
        if call.error is not None or any(number in calls for calls in elsewhere):
            continue
        params = call.params
        out += [(call.method, params[f]) for f in ("text", "caption") if params.get(f)]
        out += [
            (f"{call.method} button", text) for text in _texts_of_markup(params.get("reply_markup"))
        ]
    for (_, code), commands in h.server.commands.items():
        if code == ("" if lang == DEFAULT else lang):
            out += [("setMyCommands", c["description"]) for c in commands]
    return out


@cache
def _words(lang: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the Latin words of the language's own texts and rules, the English texts' words)."""
    own = [text for entry in catalogue(lang).values() for text in forms(entry)]
    own += [p.read_text(encoding="utf-8") for p in SEEDS.glob(f"*.{lang}.md")]
    english = [text for entry in catalogue(DEFAULT).values() for text in forms(entry)]
    english_words = set(_WORD.findall(_PLACEHOLDER.sub(" ", _TAG.sub(" ", " ".join(english)))))
    own_text = _COMMAND.sub(" ", _PLACEHOLDER.sub(" ", " ".join(own)))
    return frozenset(_LATIN_WORD.findall(own_text)), frozenset(english_words - _KEPT)


def problems(lang: str, texts: list[tuple[str, str]]) -> list[str]:
    """What in ``texts`` is not a finished text of ``lang``."""
    found = []
    for where, text in texts:
        words = _TAG.sub(" ", text)
        for name in (*NAMES, SPECTATOR, STRANGER, TITLE):
            words = words.replace(name, " ")
        if keys := _KEY.findall(words):
            found.append(f"{where}: key {keys} in {text!r}")
        if fields := _PLACEHOLDER.findall(words):
            found.append(f"{where}: placeholder {fields} in {text!r}")
        if lang != DEFAULT:
            own, english_words = _words(lang)
            words = _COMMAND.sub(" ", words)
            english = set(_LATIN_WORD.findall(words)) - own - _KEPT
            english |= set(_WORD.findall(words)) & english_words
            if english:
                found.append(f"{where}: English {sorted(english)} in {text!r}")
    return found


async def _private_commands(h: Harness, user: FakeUser) -> None:
    for command in ("/start", "/help", "/rules", "/stats", "/record", "/endgame", "/forgetme"):
        await h.command(user, user, command)
    await h.tap(user, h.last(user), is_action(Action.FORGET))


async def _lobby(top: Tabletop, players: list[FakeUser], spectator: FakeUser, game: str) -> range:
    """The picker, the lobby, every setting, a computer seat, refused taps, the start; the
    language setting goes round every catalogue: the calls made meanwhile."""
    await top.open(players[0], game)
    for user in players[1:]:
        await top.join(user)
    await top.start(spectator)  # not his to start: an alert
    stranger = top.h.user(STRANGER, language_code=spectator.language_code, started=False)
    await top.join(stranger)  # she gets the link to open a private chat
    await top.tap_group(players[0], Action.SETTINGS)
    calls = top.h.server.calls
    elsewhere = range(0)
    tapped: set[str] = set()
    while True:  # each setting once, those a change brings up (durak's variants) too
        options = [b for b in top.table_message().buttons if is_action(Action.OPTION)(b)]
        todo = [arg for arg in (decode(b.callback_data).arg for b in options) if arg not in tapped]
        if not todo:
            break
        arg = todo[0]
        tapped.add(arg)
        if arg != "l":
            await top.tap_group(players[0], Action.OPTION, arg)
            continue
        start = len(calls)
        lang = (await stored(top.h, top.group))["lobby"]["lang"]
        for step in range(1, len(LANGS) + 1):
            await top.tap_group(players[0], Action.OPTION, arg)
            now = LANGS[(LANGS.index(lang) + step) % len(LANGS)]
            line = t(now, "settings.language", name=t(now, "language.name"))
            assert line in (top.table_message().text or ""), now
        elsewhere = range(start, len(calls) - 1)  # the last edit is in the players' again
    await top.tap_group(players[0], Action.SETTINGS)
    await top.tap_group(players[0], Action.COMPUTER, "+")
    await top.tap_group(players[0], Action.COMPUTER, "v")
    await top.tap_group(players[0], Action.COMPUTER, "-")
    await top.tap_group(players[0], Action.COMPUTER, "-")  # none left: an alert
    # Each deck was shown; the game is played on the smallest (its screens are the same).
    await set_lobby(top.h.redis, table_key(top.group), SMALLEST[game])
    await top.start(players[0])
    return elsewhere


async def _mini_app(top: Tabletop, players: list[FakeUser], spectator: FakeUser) -> list[str]:
    """What the Mini App shows a player and a spectator: words, status, log, moves."""
    h = top.h
    param = await table_param(h, top.group)
    texts: list[str] = []
    async with page_server(h) as root, httpx.AsyncClient(base_url=root, verify=False) as c:
        for user in (*players, spectator):
            r = await c.get("/app/api/state", headers=bearer(await token(c, user, param)))
            assert r.status_code == 200, r.text
            state = r.json()
            # The page fills its words' placeholders and picks their plural forms itself.
            for word in state["words"].values():
                forms = word.values() if isinstance(word, dict) else [word]
                texts += [_PLACEHOLDER.sub("3", form) for form in forms]
            names = state["cardnames"]
            suits = list(names["suits"].values())
            for i, rank in enumerate(names["ranks"].values()):  # every rank, every suit
                suit = suits[i % len(suits)]
                texts.append(names["card"].replace("{rank}", rank).replace("{suit}", suit))
            texts += [state["status"], *state["events"]]
            texts += [move["label"] for move in state["moves"]]
            texts += list(state["faces"].values())
    return texts


@pytest.mark.parametrize("lang", LANGS)
async def test_every_screen_reads_in_the_players_language(
    harness: Harness, lang: str, monkeypatch: pytest.MonkeyPatch, deals: Callable[[int], None]
) -> None:
    h = harness
    deals(1)  # the same games in every language and run (the bot's own deals: 1.8-4.7 s)
    # The standings show a player after one game rather than three: their screens are the
    # same, and two more durak games per language cost half this test's time.
    for module in (count, render_stats):
        monkeypatch.setattr(module, "MIN_GAMES", 1)
    players = [h.user(name, language_code=lang) for name in NAMES]
    spectator = h.user(SPECTATOR, language_code=lang)
    group: FakeGroup = h.group(TITLE, creator=players[0])
    await _private_commands(h, players[0])
    top = Tabletop(h, group)
    web: list[str] = []

    # Durak: a game for the standings, with the Mini App; then the next one, ended.
    elsewhere = [await _lobby(top, players, spectator, "durak")]
    web += await _mini_app(top, players, spectator)
    await top.play(players, random.Random(1))
    await top.tap_group(players[1], Action.RECORD)
    await top.tap_group(players[1], Action.STANDINGS)
    await top.tap_group(players[0], Action.AGAIN)
    await h.command(players[0], group, "/endgame")
    await h.command(players[0], group, "/stats")
    said = await h.send_text(players[1], group, "gg")
    await h.command(players[0], group, "/stats", reply_to=said)
    await h.command(players[0], players[0], "/stats")
    await h.command(players[0], group, "/record")

    # Football: a whole game, with the Mini App and a spectator.
    await h.command(players[0], group, "/newgame")
    elsewhere.append(await _lobby(top, players[:2], spectator, "football"))
    web += await _mini_app(top, players[:2], spectator)
    await top.play(players[:2], random.Random(6))
    await h.command(players[0], group, "/stats")
    await h.command(players[0], group, "/newgame")
    await top.tap_group(players[0], Action.PICK, "d")
    await h.command(players[0], group, "/endgame")

    texts = shown(h, lang, elsewhere)
    methods = {where for where, _ in texts}
    assert {"sendMessage", "editMessageText", "answerCallbackQuery", "setMyCommands"} <= methods
    assert len(texts) > 300 and web
    assert problems(lang, texts + [("Mini App", text) for text in web]) == []
    # The players read their own language: the texts are the catalogue's.
    seen = "\n".join(text for _, text in texts)
    for key in ("lobby.pick", "durak.header", "football.legend", "cmd.help", "stats.row_durak"):
        assert t(lang, key).split("{")[0] in seen, key
    data = await stored(h, group)
    assert data["lobby"]["lang"] == lang


def test_the_check_finds_what_it_exists_to_catch() -> None:
    """A key, a placeholder, English copied or from code: not a name, a command or Telegram."""
    found = problems(
        "be",
        [
            ("a", "Ход: <b>Ann</b> · Card night · /newgame · Telegram, JSON"),
            ("b", "lobby.title"),
            ("c", "Калода: {n} карт"),
            ("d", "Deck: 5 cards"),
            ("e", "🤖 Computer 1"),
        ],
    )
    assert sorted({problem.split(":")[0] for problem in found}) == ["b", "c", "d", "e"]
    assert problems("en", [("d", "Deck: 5 cards")]) == []
