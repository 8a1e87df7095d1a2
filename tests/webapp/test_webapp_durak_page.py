"""Durak on the Mini App's page, as people play it: each player in a headless Chromium of his
own, tapping only what the page offers (``data-move``). ``CARDTABLE_SCREENSHOTS=1`` writes
docs/webapp.md's and the README's durak pictures into docs/."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.core.i18n import plain
from bot.core.keys import CHANGED
from bot.core.models import Table
from bot.core.replicas import Unconfirmed
from bot.core.store import Snapshot
from bot.tables.stats.finished import record_document
from bot.webapp import api, streams
from bot.webapp.page import TELEGRAM_WEB
from engine import records
from engine.games.durak.game import Durak
from testing.browser import DARK, MISSING, PICTURES, SHOWN, WITHIN, Page, page_url
from testing.chats import FakeGroup, FakeUser
from testing.clock import Clock
from testing.harness import Harness
from testing.page_player import ALL_MOVES, Player, Redrawn, at_once
from testing.tabletop import Tabletop, hidden_cards, leaks, stored, table_key
from testing.webapp import (
    init_data,
    page_weight,
    table_for_two,
    table_param,
    tampered,
)

pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if MISSING:
    pytest.skip(MISSING, allow_module_level=True)


PAGE_BUDGET = 40 * 1024  # bytes, gzipped: the whole page (issue 28)


def _seated(data: dict[str, Any], users: list[FakeUser]) -> list[FakeUser]:
    ids = [s["user_id"] for s in data["seats"]]
    return sorted(users, key=lambda u: ids.index(u.id))


def _figures(frames: list[float]) -> str:
    if not frames:
        return "no frame"
    ordered = sorted(frames)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (
        f"{len(ordered)} frames: median {ordered[len(ordered) // 2]:.1f} ms, "
        f"p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms, over 50 ms: "
        f"{sum(f > 50 for f in ordered)}"
    )


# What a test does at points of the game: (the stage, the moves made so far, the page of
# the player to act); the stages: "turn" (his page shows his moves), "flying" (a card of
# his move in flight), "moved" (every page shows the move).
Hook = Callable[[str, int, Player], Awaitable[None]]


async def play_whole(
    h: Harness,
    group: FakeGroup,
    users: list[FakeUser],
    pages: dict[int, Player],
    seed: int,
    hook: Hook | None = None,
    transfer: bool = False,
) -> tuple[dict[str, Any], Counter[str]]:
    """Plays to the end on the pages alone, each move a random legal one tapped (now and then
    by the keyboard), checking that every legal move is on the actor's page (behind a pick
    where a card has several) and nothing else is on any page. ``transfer``: the first
    transfer offered is made. The table at the end, and what was played, counted."""
    rng = random.Random(seed)
    played: Counter[str] = Counter()
    seen: dict[int, list[str]] = {}  # what each page offers at version ``at``
    at = -1
    while (data := await stored(h, group))["phase"] == "playing":
        game = Durak.from_json(data["state"])
        actor = game.to_act()
        assert actor is not None
        user = _seated(data, users)[actor.player]
        page = pages[user.id]
        if at != data["version"]:
            at = data["version"]
            seen = await at_once(pages, Player.moves_at, at)
        legal = sorted(game.move_token(m) for m in game.legal_moves())
        offered = set(seen[user.id])
        direct = {t for t in offered if not t.startswith("pick:")}
        picked = {t[5:] for t in offered if t.startswith("pick:")}
        assert direct <= set(legal), (direct, legal)
        assert all(t in direct or any(c in t for c in picked) for t in legal), (offered, legal)
        assert all(moves == [] for who, moves in seen.items() if who != user.id)
        if hook:
            await hook("turn", played["moves"], page)
        transfers = [t for t in legal if t.lstrip("d").startswith("r")]
        token = rng.choice(
            transfers if transfer and transfers and not played["transfer"] else legal
        )
        by_keys = played["moves"] % 5 == 3  # now and then by the keyboard: focus, Enter
        try:
            played["pick"] += await page.play(token, by_keys, seen[user.id])
        except Redrawn:
            played["redrawn"] += 1
            at = -1
            continue
        played["keyboard"] += by_keys
        played["dummy"] += token.startswith("d")
        played["transfer"] += token.lstrip("d").startswith("r")
        if hook:
            await hook("flying", played["moves"], page)
        at = data["version"] + 1
        seen = await at_once(pages, Player.moves_at, at)
        played["moves"] += 1
        if hook:
            await hook("moved", played["moves"], page)
    return data, played


async def check_the_end(h: Harness, data: dict[str, Any], pages: dict[int, Player]) -> None:
    """Every page shows the end, with no error and no request but to the bot's server; the
    game's Record replays to its end."""
    assert data["phase"] == "finished"

    async def troubles(page: Player) -> tuple[list[str], list[str], list[str]]:
        await page.shows(data["version"])
        return await page.errors(), await page.console_errors(), await page.foreign()

    for found in (await at_once(pages, troubles)).values():  # both pages at once
        assert found == ([], [], []), found
    record = json.loads(record_document(Table.model_validate(data)))
    replayed = records.replay(record)
    assert replayed["ok"] and replayed["finished"]
    assert replayed["result"] == Durak.from_json(data["state"]).result()
    assert len(record["moves"]) == len(data["played"]["moves"])


async def frames(pages: dict[int, Player]) -> str:
    """The frame times while cards flew, and beside them those while nothing did (the
    same pages, the same machine: how much of a long frame is the load of the machine)."""
    flying = [f for p in pages.values() for f in await p.js("return window.__frames")]
    still = [f for p in pages.values() for f in await p.js("return window.__still")]
    draws = sorted([d for p in pages.values() for d in await p.js("return window.__draws")])
    return (
        f"{_figures(flying)} (while nothing flew: {_figures(still)}); a redraw with its "
        f"motion set up: median {draws[len(draws) // 2]:.1f} ms, max {draws[-1]:.1f} ms"
    )


async def open_pages(
    root: str, param: str, users: list[FakeUser], browsers: list[Any], still: bool = False
) -> dict[int, Player]:
    """Each user's page in a browser of his own, watched, all opened at once; Bob's
    Telegram is dark. ``still``: with reduced motion (nothing flies)."""

    async def opened(user: FakeUser, driver: Any) -> Player:
        page = Player(driver)
        await page.watch()
        if still:
            await page.still_motion()
        await page.open(root, param, init_data(user), DARK if user.first_name == "Bob" else None)
        await page.console_errors()  # from here on: none
        return page

    pages = await asyncio.gather(*map(opened, users, browsers))
    return {user.id: page for user, page in zip(users, pages, strict=True)}


async def test_durak_with_the_dummy_played_whole_on_two_pages(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    """The seed's game: Ann and Bob and the dummy, played by its controller's page (24
    cards, one deal: 24 moves, 8 of them the dummy's, each checked as in a longer game)."""
    h = harness
    top, users, param = await table_for_two(h, "durak", deck_size=24, deal=112)
    pages = await open_pages(root, param, users, browsers)
    ann, bob = (pages[u.id] for u in users)
    findings: dict[str, list[str]] = {}

    async def hook(stage: str, moves: int, page: Player) -> None:
        if stage == "turn" and moves in (0, 12):  # axe-core, light (Ann) and dark (Bob)
            on = {f"Ann at move {moves}": ann, f"Bob at move {moves}": bob}
            findings.update(await at_once(on, Player.axe))
        if PICTURES and stage == "flying" and moves == 9:  # its waits only for pictures taken
            await page.wait("return +document.body.dataset.flying > 0", 2)
            await page.snap(shots / "webapp-durak-flight.png")
        if PICTURES and stage == "moved" and moves == 8:
            for p in (ann, bob):
                await p.wait("return !+document.body.dataset.flying", 2)
            await ann.snap(shots / "webapp-durak-light-en.png")
            await bob.snap(shots / "webapp-durak-dark-ru.png")

    data, played = await play_whole(h, top.group, users, pages, 11, hook)
    await check_the_end(h, data, pages)
    findings.update(await at_once({"Ann at the end": ann, "Bob at the end": bob}, Player.axe))
    assert not any(findings.values()), json.dumps(findings, indent=1)
    assert played["dummy"] > 0 and played["keyboard"] > 0
    weight = await page_weight(h)
    print(
        f"\ndurak on two pages: {played['moves']} moves ({played['dummy']} the dummy's, "
        f"{played['keyboard']} by the keyboard); {await frames(pages)}; "
        f"the page {weight} bytes gzipped"
    )
    assert weight <= PAGE_BUDGET


async def test_perevodnoy_played_whole_on_two_pages(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    """Durak with transfers and no dummy: a transfer is a card the defender plays (where
    it could also beat, the page asks which). With 24 cards, one deal (27 moves, 4 of them
    transfers, 2 through a choice), and nothing flying (the flights are the test's before)."""
    h = harness
    top, users, param = await table_for_two(
        h, "durak", dummy=False, transfer=True, deck_size=24, deal=2091
    )
    pages = await open_pages(root, param, users, browsers, still=True)
    findings: dict[str, list[str]] = {}

    async def hook(stage: str, moves: int, page: Player) -> None:
        """The first choice between a card's moves: opened, checked, pictured, cancelled."""
        if stage != "turn" or findings:
            return
        picks = [t for t in await page.js(ALL_MOVES) if t.startswith("pick:")]
        if not picks:
            return
        await page.press(f'[data-move="{picks[0]}"]', keyboard=False)
        assert await page.wait("return !document.getElementById('sheet').hidden")
        findings[f"a choice at move {moves}"] = await page.axe()
        await page.snap(shots / "webapp-durak-choice.png")
        await page.press("#sheet button.sec", keyboard=True)  # Cancel, by the keyboard
        assert await page.js("return document.getElementById('sheet').hidden")

    data, played = await play_whole(h, top.group, users, pages, 4, hook, transfer=True)
    await check_the_end(h, data, pages)
    assert not await pages[users[0].id].js("return document.querySelector('[data-seat=dummy]')")
    assert played["transfer"] > 0 and played["dummy"] == 0
    assert findings and not any(findings.values()), json.dumps(findings, indent=1)
    print(
        f"\nperevodnoy on two pages: {played['moves']} moves ({played['transfer']} transfers, "
        f"{played['pick']} through a choice)"
    )


async def test_a_refused_move_says_why_in_the_reader_s_language(
    harness: Harness, clock: Clock, root: str, browsers: list[Any]
) -> None:
    """A page that missed the news (its stream cut) offers a move the turn's timeout already
    made: the page says the server's refusal in the reader's language, with an error pulse."""
    h = harness
    # The clock is real time plus what the test adds: a turn time of a second could run
    # out while Chromium opens the page, so the turn is long and the test moves past it
    # (20 s: each second moved is nine turns of the bot's pollers).
    top, users, param = await table_for_two(h, "durak", turn_time=20)
    data = await stored(h, top.group)
    actor = Durak.from_json(data["state"]).to_act()
    assert actor is not None
    mover = _seated(data, users)[actor.player]
    page = Player(browsers[0])
    await page.cdp("Network.enable", {})
    await page.cdp("Network.setBlockedURLs", {"urls": ["*api/events*"]})
    await page.open(root, param, init_data(mover))
    await page.shows(data["version"])
    # nor may it read the table again when it reconnects
    await page.cdp("Network.setBlockedURLs", {"urls": ["*api/events*", "*api/state*"]})
    await clock.advance(22)  # his turn's time runs out: the bot moves for him
    after = await stored(h, top.group)
    assert after["version"] > data["version"]
    assert await page.version() == data["version"]  # the page never heard of it
    token = (await page.js(ALL_MOVES))[0]
    await page.play(token)
    refusal = await page.wait("return document.body.dataset.refusal", WITHIN)
    now = Durak.from_json(after["state"]).to_act()
    mine = now is not None and _seated(after, users)[now.player] is mover
    key = "tap.superseded" if mine else "illegal.not_your_turn"
    assert refusal == plain(mover.language_code or "en", key)
    assert await page.js("return document.body.dataset.haptic") == "error"
    assert await page.js("return document.getElementById('toast').textContent") == refusal
    final = await stored(h, top.group)  # no move made (his tap only brought him back)
    assert (final["state"], final["played"]["moves"]) == (after["state"], after["played"]["moves"])


async def test_a_picture_the_page_fails_to_draw_is_told_and_the_stream_goes_on(
    harness: Harness, root: str, browsers: list[Any]
) -> None:
    """A bug in a game's drawing is told on the console, and the page stays live: the
    stream is not taken for cut (the page does not say it is offline), the next picture
    is drawn as it comes."""
    h = harness
    top, users, param = await table_for_two(h, "durak", deal=1)
    page = Player(browsers[0])
    await page.watch()
    await page.open(root, param, init_data(users[0]))
    await page.shows((await stored(h, top.group))["version"])
    await page.js(
        "const card = CT.card; let bugs = 1; CT.card = (...a) => {"
        "  if (bugs-- > 0) throw new Error('a drawing bug');"
        "  return card(...a);"
        "};"
    )
    rng = random.Random(1)
    for drawn in (False, True):  # the first picture fails to draw, the next is drawn whole
        await page.js("delete document.body.dataset.drawms")  # set by a draw that ends
        before = (await stored(h, top.group))["version"]
        await top.step(users, rng)
        await page.newer_than(before)
        assert not await page.js("return document.body.dataset.offline === '1'")
        if drawn:
            assert await page.js("return 'drawms' in document.body.dataset")
    errors = await page.errors()
    assert len(errors) == 1 and "a drawing bug" in errors[0], errors


# The page's calls (each with whether it said it was offline), the streams it has open
# (their answers come), and its clock, moved on by __ahead: in place before its scripts run.
CALLS = """
window.__calls = []; window.__streams = 0;
const fetched = window.fetch, now = performance.now.bind(performance);
window.fetch = (url, options) => {
  const name = String(url).split("?")[0].split("/").pop();
  __calls.push([name, document.body.dataset.offline === "1"]);
  const answer = fetched(url, options);
  if (name === "events") answer.then(() => { __streams++; }, () => {});
  return answer;
};
window.__ahead = 0;
performance.now = () => now() + __ahead;
"""


async def test_a_stream_ended_unconfirmed_is_opened_again_after_a_wait(
    harness: Harness, clock: Clock, root: str, browsers: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream that lived a while and ended is opened again at once (here: idle); one the
    server ended because its table's read was not confirmed, which every page of the table
    hears at once, is opened again after a jittered wait, the page saying it is offline
    meanwhile. (Before, at once too: every page came back together.)"""
    h = harness
    top, (ann, _), param = await table_for_two(h, "durak", turn_time=0)
    monkeypatch.setattr(streams, "KEEPALIVE", 0.05)
    monkeypatch.setattr(streams, "IDLE", 10.0)  # not five minutes of the bot's pollers
    page = Page(browsers[0])
    await page.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": CALLS})
    await page.open(root, param, init_data(ann))
    # once its stream is open (before, the stream would seem to have opened just now)
    assert await page.wait("return __streams >= 1", WITHIN)
    await page.js("__calls.length = 0; __ahead += 5000;")
    await clock.advance(streams.IDLE + 1)  # the stream ends, idle
    assert await page.wait("return __calls.some(c => c[0] === 'events')", WITHIN)
    assert (await page.js("return __calls"))[0] == ["session", False], "at once"
    load = api.load

    async def unconfirmed(application: Any, key: str) -> Snapshot:
        """The read the notice brings, not confirmed; the next one (the page's return) is."""
        monkeypatch.setattr(api, "load", load)
        raise Unconfirmed(None, 1, 0, 300)

    await page.js("__calls.length = 0; __ahead += 5000;")
    monkeypatch.setattr(api, "load", unconfirmed)
    monkeypatch.setattr(streams, "BACK_OFF", "retry: 100\n\n")  # its wait: 0.1 s, not 1 s
    version = (await stored(h, top.group))["version"]
    await h.redis.publish(CHANGED, f"{version + 1} {table_key(top.group)}")
    assert await page.wait("return __calls.length", WITHIN)
    assert (await page.js("return __calls"))[0] == ["session", True], "offline, after a wait"
    assert await page.wait("return document.body.dataset.offline === ''", WITHIN), "back"


async def test_six_players_without_the_dummy_the_whole_deck_dealt(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    """Six players and no dummy: the whole deck is dealt, so no stock is drawn (the
    trump's suit shows where it lay) and the trump card, dealt face up, shows in its
    holder's seat to everyone, or in his own hand; five others sit around Ann's table.
    A few moves are played on the pages and by the others' chat buttons."""
    h = harness
    names = ("Cid", "Dan", "Eve", "Fay")
    users = [h.user("Ann"), h.user("Bob", language_code="ru"), *map(h.user, names)]
    group = h.group(creator=users[0])
    top = Tabletop(h, group)
    await top.setup_game("durak", users, settings={"dummy": False})
    pages = await open_pages(root, await table_param(h, group), users[:2], browsers, still=True)
    data = await stored(h, group)
    seats = _seated(data, users)
    for user, page in ((u, pages[u.id]) for u in users[:2]):
        view = Durak.from_json(data["state"]).view(seats.index(user))
        assert view.whole_deck and view.stock == 0 and not view.dummy
        holder = view.trump_held_by
        where = "me" if holder == view.seat else str(holder)
        drawn, stock, marks, trump = await page.js(
            "const n = s => document.querySelectorAll(s).length;"
            "return [[...document.querySelectorAll('[data-seat]')].map(e => e.dataset.seat),"
            "n('.stock .card'), n('.trumpmark'), n(arguments[0])]",
            f'[data-seat="{where}"] [data-card="{view.trump}"]',
        )
        assert sorted(drawn) == sorted([*(str(s) for s in range(6) if s != view.seat), "me"])
        assert (stock, marks, trump) == (0, 1, 1)
    assert list((await at_once(pages, Player.axe)).values()) == [[], []]  # both at once
    await pages[users[0].id].snap(shots / "webapp-durak-six.png")
    rng = random.Random(2)
    for _ in range(12):  # a few moves, on the pages and by the chat's buttons
        data = await stored(h, group)
        game = Durak.from_json(data["state"])
        actor = game.to_act()
        if actor is None:
            break
        user = _seated(data, users)[actor.player]
        if user.id in pages:
            await pages[user.id].shows(data["version"])
            await pages[user.id].play(rng.choice([game.move_token(m) for m in game.legal_moves()]))
        else:
            await top.caught_up(users)
            await top.step([user], rng)
        await at_once(pages, Player.shows, data["version"] + 1)
    for page in pages.values():
        assert await page.errors() == [] and await page.console_errors() == []


# Telegram's Android view as the page meets it: a proxy it posts its events to (recorded).
TELEGRAM = """
window.__tg = [];
window.TelegramWebviewProxy = {postEvent: (type, data) => __tg.push([type, JSON.parse(data)])};
"""


# A message from the frame's parent as the browser delivers it: of the parent's origin.
FROM_PARENT = """
const fromParent = (source, origin, data) =>
  dispatchEvent(new MessageEvent("message", {data, origin, source}));
"""
# Telegram's theme_changed, dark, as its web clients post it: JSON (a string) in JavaScript.
THEME_DARK = json.dumps(
    json.dumps({"eventType": "theme_changed", "eventData": {"theme_params": DARK}})
)
# Telegram's web client as the page meets it: the page in a frame, whose parent (here a
# stand-in) records the events the page posts to it and the origin each is addressed to.
WEB_CLIENT = """
window.__posted = [];
(() => {
  const stand = new MessageChannel().port1;
  stand.postMessage = (data, origin) => __posted.push([JSON.parse(data).eventType, origin]);
  Object.defineProperty(window, "parent", {get: () => stand});
})();
"""


async def in_telegram(driver: Any, script: str, url: str) -> Player:
    """The page opened at ``url`` as a Telegram app opens it, ``script`` run before its own."""
    page = Player(driver)
    await page.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": script})
    await asyncio.to_thread(page.driver.get, url)
    assert await page.wait("return document.body.dataset.drawn")
    return page


async def test_in_telegram_its_main_button_haptics_theme_and_safe_areas(
    harness: Harness, root: str, browsers: list[Any]
) -> None:
    """Inside Telegram the page is ready and expanded, asks for the theme and the safe
    areas, asks before closing while he plays, taps lightly when his turn comes, puts
    *Take* on the MainButton (and its press takes), follows a theme change and the safe
    areas live."""
    h = harness
    top, users, param = await table_for_two(h, "durak", deal=6)  # soon Ann must take
    ann, bob = users
    url = page_url(root, param, init_data(ann), None) + "&tgWebAppPlatform=android"
    page = await in_telegram(browsers[0], TELEGRAM, url)
    sent = "return __tg.map(e => e[0])"
    posted = set(await page.js(sent))
    assert {"web_app_ready", "web_app_expand", "web_app_request_theme"} <= posted
    assert {"web_app_request_safe_area", "web_app_request_content_safe_area"} <= posted
    closing = "return __tg.filter(e => e[0] === 'web_app_setup_closing_behavior').map(e => e[1])"
    assert (await page.js(closing))[-1] == {"need_confirmation": True}
    rng = random.Random(1)
    while True:  # on until Ann must beat or take: Bob by his buttons, Ann on the page
        data = await stored(h, top.group)
        game = Durak.from_json(data["state"])
        actor = game.to_act()
        assert actor is not None, "the game ended before Ann had to take"
        legal = [game.move_token(m) for m in game.legal_moves()]
        if _seated(data, users)[actor.player] is bob:
            await page.js("__tg.length = 0")
            await top.caught_up(users)
            await top.step([bob], rng)
            continue
        await page.shows(data["version"])
        if "t" in legal:
            break
        with contextlib.suppress(Redrawn):
            await page.play(rng.choice(legal))
    haptics = "return __tg.filter(e => e[0] === 'web_app_trigger_haptic_feedback').map(e => e[1])"
    assert {"type": "impact", "impact_style": "light"} in await page.js(haptics)  # his turn
    main = "return __tg.filter(e => e[0] === 'web_app_setup_main_button').map(e => e[1])"
    button = (await page.js(main))[-1]
    assert button["is_visible"] and button["text"] == plain("en", "durak.btn.take")
    assert await page.js("return document.getElementById('actions').hidden")  # Telegram's own
    await page.js("Telegram.WebView.receiveEvent('main_button_pressed', {})")
    await page.shows(data["version"] + 1)
    taken = Durak.from_json((await stored(h, top.group))["state"]).view(None)
    assert taken.phase == "take" or not taken.table  # he took (and the bout went on)
    # The theme and the safe areas, changed while the page is open; the theme as
    # Telegram's web clients send it, a message from the frame's parent (here the page
    # is on top, its own parent) of their origin.
    await page.js(FROM_PARENT + f"fromParent(window, {TELEGRAM_WEB[0]!r}, {THEME_DARK})")
    assert await page.wait(
        "return getComputedStyle(document.body).backgroundColor === 'rgb(23, 33, 43)'"
    )
    assert await page.js("return document.documentElement.dataset.theme") == "dark"
    area = {"top": 24, "bottom": 30, "left": 0, "right": 0}
    await page.js(f"Telegram.WebView.receiveEvent('safe_area_changed', {json.dumps(area)})")
    assert await page.js("return getComputedStyle(document.body).paddingBottom") == "40px"


async def test_in_telegram_s_web_client_it_talks_to_telegram_s_origin_only(
    harness: Harness, root: str, browsers: list[Any]
) -> None:
    """In a frame of Telegram's web client the page addresses its events to Telegram's
    origin only (a parent of any other origin hears none of them), and takes its parent's
    messages only from that origin: the same theme from another origin changes nothing."""
    h = harness
    _, (ann, _), param = await table_for_two(h, "durak")
    url = page_url(root, param, init_data(ann), None) + "&tgWebAppPlatform=weba"
    page = await in_telegram(browsers[0], WEB_CLIENT, url)
    posted = await page.js("return __posted")
    assert {"iframe_ready", "web_app_ready", "web_app_request_theme"} <= {e for e, _ in posted}
    assert {origin for _, origin in posted} == set(TELEGRAM_WEB)
    for other in ("https://evil.example", "https://webk.telegram.org", root.rstrip("/")):
        await page.js(FROM_PARENT + f"fromParent(window.parent, {other!r}, {THEME_DARK})")
    assert await page.js("return document.documentElement.dataset.theme") == "light"
    await page.js(FROM_PARENT + f"fromParent(window.parent, {TELEGRAM_WEB[0]!r}, {THEME_DARK})")
    assert await page.js("return document.documentElement.dataset.theme") == "dark"


async def test_durak_played_on_the_page_against_buttons(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    """Ann plays on her page, Bob by his chat's buttons, Cid watches by the group's link:
    every change shows on both pages at once (nothing flies: reduced motion), the
    watcher's never shows a card he may not know. A 24-card game, to its end."""
    h = harness
    top, (ann, bob), param = await table_for_two(h, "durak", deck_size=24, deal=9)
    group = top.group
    page, spectator = Page(browsers[0]), Page(browsers[1])
    for p in (page, spectator):  # nothing flies: every change is a new picture at once
        await p.still_motion()
    cid = h.user("Cid", language_code="ru")  # by the group's link
    paint, _ = await asyncio.gather(  # both pages at once
        page.open(root, param, init_data(ann)),
        spectator.open(root, param, init_data(cid, start_param=param), direct=True),
    )
    assert paint > 0
    fcp, weight = await page.read(  # once the browser has noted the paint (a frame later)
        "[performance.getEntriesByName('first-contentful-paint')[0].startTime,"
        " performance.getEntriesByType('navigation')[0].transferSize]",
        "performance.getEntriesByName('first-contentful-paint').length",
    )
    rng = random.Random(5)
    latencies: list[float] = []
    moves = 0
    while True:
        data = await stored(h, group)
        if data["phase"] != "playing":
            break
        actor = Durak.from_json(data["state"]).to_act()
        assert actor is not None
        before = await page.version()
        start = time.perf_counter()
        if actor.player == 0:  # Ann plays on the page
            await page.click_a_move(rng)
        else:  # Bob taps his buttons
            await top.caught_up([ann, bob])
            start = time.perf_counter()
            await top.step([bob], rng)
        watched = asyncio.create_task(spectator.newer_than(before))  # both pages at once
        shown = await page.newer_than(before)
        latencies.append(time.perf_counter() - start)
        if await watched < shown:  # one tap, two versions (seen at 25: 26 and 27), which
            # its stream brought in two reads where Ann's brought them in one: it comes to
            # Ann's version too
            await spectator.newer_than(shown - 1)
        public = hidden_cards("durak", (await stored(h, group))["state"], None)
        moving = "document.getAnimations().length, +document.body.dataset.flying || 0"
        (text, *still), mine = await asyncio.gather(  # one look at each, both at once
            spectator.read(f"[{SHOWN}, {moving}]"), page.read(f"[{moving}]")
        )
        assert not leaks(text, public), text
        assert still == [0, 0] and mine == [0, 0]  # nothing flies
        moves += 1
        if moves == 4:
            await page.screenshot(shots / "webapp-durak-en.png")
            await spectator.screenshot(shots / "webapp-durak-ru.png")
    assert moves > 4 and data["phase"] == "finished"
    print(
        f"\ndurak on the page: {moves} changes, page {weight} bytes on the wire, "
        f"first contentful paint {fcp:.0f} ms, "
        f"first picture {paint * 1000:.0f} ms, "
        f"update latency median {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms"
    )


async def test_a_forged_or_replayed_initdata_shows_nothing(
    harness: Harness, root: str, browsers: list[Any]
) -> None:
    _, (ann, _), param = await table_for_two(harness, "durak")
    page, elsewhere = Page(browsers[0]), Page(browsers[1])
    cards = "return document.querySelectorAll('.card').length"
    await page.open(root, param, tampered(init_data(ann)))
    assert await page.js("return document.body.dataset.refused") == "1"
    assert await page.js(cards) == 0
    opening = init_data(ann)
    for _ in range(2):  # opened, then reloaded: the page goes on with its session
        await page.open(root, param, opening)
        assert await page.js(cards) > 0
    # The same initData in another browser (captured on the way): a replay.
    await elsewhere.open(root, param, opening)
    assert await elsewhere.js("return document.body.dataset.refused") == "1"
    assert await elsewhere.js(cards) == 0
