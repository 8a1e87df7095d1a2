"""Football on the Mini App alone, and the page kept live, each player in a headless Chromium
of his own; the figures docs/webapp.md gives are printed (``pytest -s``).
``CARDTABLE_SCREENSHOTS=1`` writes the screenshots into docs/ (docs/webapp.md's)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from bot.core.callbacks import Action
from bot.core.i18n import plain as t
from bot.tables import games
from bot.webapp import streams
from bot.webapp.auth import SESSION
from engine import records
from engine.games.football.game import Football
from testing.browser import DARK, MISSING, OFFERED, PICTURES, SHOWN, WITHIN, Page
from testing.clock import Clock
from testing.harness import Harness
from testing.page_player import Player, at_once
from testing.tabletop import Tabletop, hidden_cards, leaks, stored, table_key
from testing.webapp import Commits, PageServer, init_data, page_weight, table_for_two

pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if MISSING:
    pytest.skip(MISSING, allow_module_level=True)

# Logs, in the page, when each version was drawn and when the frame after it was done
# (performance.timeOrigin + now: milliseconds since the epoch, as the test's clock).
SHOWN_LOG = """
window.__shown = window.__shown || {};
const seen = () => {
  const v = document.body.dataset.version;
  if (!v || v in __shown) return;
  const drawn = performance.timeOrigin + performance.now();
  __shown[v] = [drawn, drawn];
  const done = () => { __shown[v][1] = performance.timeOrigin + performance.now(); };
  requestAnimationFrame(() => setTimeout(done));
};
new MutationObserver(seen)
  .observe(document.body, {attributes: true, attributeFilter: ["data-version"]});
seen();
"""


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def seat_of(data: dict[str, Any], user: Any) -> int:
    return [s["user_id"] for s in data["seats"]].index(user.id)


async def open_logged(page: Page, root: str, param: str, data: str, **theme: Any) -> float:
    paint = await page.open(root, param, data, theme.get("theme"))
    await page.js(SHOWN_LOG)
    return paint


async def shown_at(page: Page) -> dict[int, float]:
    """When the page showed each version (seconds since the epoch, the frame after)."""
    log = await page.js("return window.__shown")
    return {int(v): at[1] / 1000 for v, at in log.items()}


def latencies(commits: Commits, pages: list[dict[int, float]], versions: set[int]) -> list[float]:
    """Seconds from each version's commit to each page showing it."""
    found = []
    for shown in pages:
        for version in versions:
            if version in shown and version in commits.at:
                found.append(shown[version] - commits.at[version])
    return found


async def test_a_whole_game_of_football_on_two_pages(
    harness: Harness, browsers: list[Any], shots: Path
) -> None:
    """Ann and Bob set up and play a whole game on their pages alone (the page's
    ``data-move`` tokens: ``setup:<card>``, ``setup:confirm``, the field's cells)."""
    h = harness
    top, (ann, bob), param = await table_for_two(h, "football", deal=6)  # 37 taps
    pages = {ann.id: Player(browsers[0]), bob.id: Player(browsers[1])}
    rng = random.Random(11)
    answered = len(h.server.calls_to("answerCallbackQuery"))  # the lobby's taps
    findings: dict[str, list[str]] = {}
    async with PageServer(h) as web, Commits(h, table_key(top.group)) as commits:
        await at_once(pages, Player.watch)
        paint = await asyncio.gather(  # both pages opened at once
            open_logged(pages[ann.id], web.root, param, init_data(ann)),
            open_logged(pages[bob.id], web.root, param, init_data(bob), theme=DARK),
        )
        await at_once(pages, Player.console_errors)  # from here on: none
        taps, at = 0, -1  # seen: what each page shows and offers at version ``at``
        laid: dict[int, list[str]] = {ann.id: [], bob.id: []}
        while (data := await stored(h, top.group))["phase"] == "playing":
            game = Football.from_json(data["state"])
            view = game.view(None)
            if view.phase == "setup":  # both at once: the one who has not finished taps
                user = next(u for u in (ann, bob) if not view.setup_done[seat_of(data, u)])
            else:
                actor = game.to_act()
                assert actor is not None
                user = next(u for u in (ann, bob) if seat_of(data, u) == actor.player)
            page, other = pages[user.id], pages[(bob if user is ann else ann).id]
            if at != data["version"]:
                at = data["version"]
                seen = await at_once(pages, Player.looks, at)
            offered = seen[user.id][1]
            if view.phase == "setup":
                picks = [t for t in offered if t.startswith("setup:") and t[6:] not in ("reset",)]
                assert picks, offered
                token = "setup:confirm" if "setup:confirm" in picks else rng.choice(picks)
            else:
                legal = games.legal_for(game, seat_of(data, user)) or []
                assert sorted(offered) == sorted(token for token, _ in legal), offered
                token = rng.choice(offered)
            if len(laid[user.id]) == 1 and user is ann and not findings:  # she starts over
                token = "setup:reset"
                on = {"en, light, set-up": page, "ru, dark, set-up": other}
                findings.update(await at_once(on, Player.axe))
            if token == "setup:reset":
                laid[user.id] = []
            elif token.startswith("setup:") and token != "setup:confirm":
                laid[user.id].append(token[6:])
            if PICTURES and view.phase == "setup" and len(laid[user.id]) == 2 and user is ann:
                await page.still()
                await page.snap(shots / "webapp-football-setup-en.png")
            before = data["version"]
            await page.tap(token)
            taps += 1
            at = before + 1
            seen = await at_once(pages, Player.looks, at)
            state = (await stored(h, top.group))["state"]
            for u in (ann, bob):
                hidden = hidden_cards("football", state, seat_of(data, u))
                assert not leaks(seen[u.id][0], hidden), seen[u.id][0]
            now = Football.from_json(state).view(None)
            if taps >= 16 and now.ball_at and "en, light, playing" not in findings:
                # the ball on its way: the pictures of docs/webapp.md
                await at_once(pages, Player.still)
                await pages[ann.id].snap(shots / "webapp-football-en.png")
                await pages[bob.id].snap(shots / "webapp-football-ru.png")
                on = {"en, light, playing": pages[ann.id], "ru, dark, playing": pages[bob.id]}
                findings.update(await at_once(on, Player.axe))
        versions = set(range(data["version"] - taps, data["version"] + 1))
        lag = latencies(commits, [await shown_at(p) for p in pages.values()], versions)
        on = {"en, light, the end": pages[ann.id], "ru, dark, the end": pages[bob.id]}
        findings.update(await at_once(on, Player.axe))
        errors = [e for p in pages.values() for e in await p.console_errors() + await p.errors()]
        foreign = [e for p in pages.values() for e in await p.foreign()]
        frames = [f for p in pages.values() for f in await p.js("return window.__frames")]
        size = await page_weight(h)
    assert data["phase"] == "finished" and taps > 12 and not errors, errors
    assert not foreign, foreign  # nothing asked of anyone but the bot's server
    assert len(findings) == 6 and not any(findings.values()), findings  # axe: none serious
    assert len(h.server.calls_to("answerCallbackQuery")) == answered, "a chat button was tapped"
    final = Football.from_json(data["state"])
    for user in (ann, bob):  # laid as he tapped them: goalkeeper, then his row from his left
        seat = seat_of(data, user)
        home = final.view(seat).field[0] if seat == 0 else final.view(seat).field[3][::-1]
        assert [final.view(seat).keepers[seat], *home][:4] == laid[user.id]
    await top.tap_group(ann, Action.RECORD)
    _, content = h.last_document(top.group)
    replayed = records.replay(json.loads(content))
    assert replayed["ok"] and replayed["finished"]
    assert replayed["result"] == Football.from_json(data["state"]).result()
    print(
        f"\nfootball on two pages: {taps} taps, first picture {paint[0] * 1000:.0f} / "
        f"{paint[1] * 1000:.0f} ms, a move's commit to the other pages: "
        f"p50 {quantile(lag, 0.5) * 1000:.0f} ms, p95 {quantile(lag, 0.95) * 1000:.0f} ms "
        f"({len(lag)} showings), page {size} bytes gzipped; while the ball moved "
        f"{len(frames)} frames, p95 {quantile(frames, 0.95):.0f} ms, max {max(frames):.0f} ms"
    )


async def test_every_move_shows_on_every_page_and_a_page_catches_up(
    harness: Harness, clock: Clock, browsers: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moves made on a page, by a button, by a timeout and by the computer show on both pages;
    through a server outage the pages say they are offline and catch up when it is back; a
    page asleep catches up when it wakes, and one asleep past its session says so."""
    h = harness
    # 52 cards, 17 balls each: Bob moves often enough for every way of moving; turns of
    # 20 s, not 60 (the clock moved past one steps the bot's pollers nine times a second)
    top, (ann, bob), param = await table_for_two(h, "football", deck_size=52, turn_time=20, deal=6)
    monkeypatch.setattr(streams, "KEEPALIVE", 0.05)  # a stream sees its session end at once
    rng = random.Random(5)
    while Football.from_json((await stored(h, top.group))["state"]).view(None).phase == "setup":
        await top.step([ann, bob], rng)  # set up by the chat's buttons
    pages = {ann.id: Page(browsers[0]), bob.id: Page(browsers[1])}
    made: dict[str, set[int]] = {way: set() for way in ("page", "button", "timeout", "computer")}
    outage = asleep = 0.0
    async with PageServer(h) as web, Commits(h, table_key(top.group)) as commits:

        async def still_and_open(user: Any) -> None:
            """Nothing flies: the test is of what shows, and when."""
            await pages[user.id].still_motion()
            await open_logged(pages[user.id], web.root, param, init_data(user))

        await asyncio.gather(still_and_open(ann), still_and_open(bob))  # both pages at once
        await pages[ann.id].console_errors()
        # on until the computer has played for him a few times (every way of moving seen)
        while (data := await stored(h, top.group))["phase"] == "playing" and (
            len(made["computer"]) < 3
        ):
            game = Football.from_json(data["state"])
            actor = game.to_act()
            assert actor is not None
            user = next(u for u in (ann, bob) if seat_of(data, u) == actor.player)
            bob_seat = data["seats"][seat_of(data, bob)]
            before = data["version"]
            if user is ann:  # she plays on her page
                await pages[ann.id].wait(f"return +document.body.dataset.version >= {before}")
                await pages[ann.id].tap(rng.choice(await pages[ann.id].read(OFFERED)))
                made["page"].add(before + 1)
            elif len(made["button"]) == 3 and not outage:  # (not counted: shown when back)
                outage = await through_an_outage(h, top, web, [*pages.values()], bob, rng)
            elif len(made["button"]) == 4 and not asleep:
                asleep = await through_a_sleep(h, top, pages[ann.id], bob, rng)
            elif len(made["button"]) < 6:
                await top.step([bob], rng)
                made["button"].add(before + 1)
            elif not bob_seat["away"]:  # his time runs out (twice: then he is away)
                await clock.advance(data["lobby"]["settings"]["turn_time"] + 1)
                made["timeout"].add(before + 1)
            else:  # away: the computer plays for him, at its pace
                while (await stored(h, top.group))["version"] == before:
                    await clock.advance(1)
                made["computer"].add(before + 1)
            await at_once(pages, Page.newer_than, before)
        shown = [await shown_at(p) for p in pages.values()]
        # Ann's page asleep past its session (it could not renew it meanwhile): it keeps
        # its picture, offers nothing, and says to open the table again.
        await pages[ann.id].lifecycle("frozen")
        await clock.advance(20)  # a turn; then the session's rest at once, not 8,600 polls
        clock.offset += SESSION
        await pages[ann.id].lifecycle("active")
        assert await pages[ann.id].wait("return document.body.dataset.refused === '1'", WITHIN)
        said = await pages[ann.id].js("return document.getElementById('status').textContent")
        assert said == t("en", "webapp.expired") and not await pages[ann.id].read(OFFERED)
        errors = [e for e in await pages[bob.id].console_errors() if "/app/api/" not in e]
    assert made["timeout"] and made["computer"] and outage and asleep
    assert not errors, errors  # Ann's page was cut off on purpose: its network errors
    figures = []
    for source, versions in made.items():
        lag = latencies(commits, shown, versions)
        assert lag, source
        p50, p95 = quantile(lag, 0.5) * 1000, quantile(lag, 0.95) * 1000
        figures.append(f"{source} p50 {p50:.0f} / p95 {p95:.0f} ms")
    print(
        "\nfootball, a move's commit to both pages: " + ", ".join(figures) + "; "
        f"back from a server outage in {outage * 1000:.0f} ms, from a sleep in "
        f"{asleep * 1000:.0f} ms"
    )


async def through_an_outage(
    h: Harness, top: Tabletop, web: PageServer, pages: list[Page], bob: Any, rng: random.Random
) -> float:
    """The server stops; Bob moves by his button meanwhile; it starts again. The seconds
    from its start to both pages showing the move, which they fetch by themselves."""
    await web.stop()
    for page in pages:
        assert await page.wait("return document.body.dataset.offline === '1'"), "not offline"
        lang, said = await page.js(
            "return [document.documentElement.lang, document.getElementById('sub').textContent]"
        )
        assert said.startswith(t(lang, "webapp.offline"))
    await top.step([bob], rng)
    version = (await stored(h, top.group))["version"]
    start = time.perf_counter()
    await web.start()
    for page in pages:
        assert await page.wait(f"return +document.body.dataset.version >= {version}", WITHIN)
        assert await page.js("return document.body.dataset.offline") == ""
    return time.perf_counter() - start


async def through_a_sleep(
    h: Harness, top: Tabletop, page: Page, bob: Any, rng: random.Random
) -> float:
    """Ann's page sleeps (frozen, as a phone freezes a page it hides, with no network);
    Bob moves meanwhile; it wakes. The seconds from its waking to its showing the move."""
    await page.cdp("Network.enable", {})
    conditions = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    await page.cdp("Network.emulateNetworkConditions", {"offline": True, **conditions})
    await page.lifecycle("frozen")
    await top.step([bob], rng)
    version = (await stored(h, top.group))["version"]
    start = time.perf_counter()
    await page.cdp("Network.emulateNetworkConditions", {"offline": False, **conditions})
    await page.lifecycle("active")
    assert await page.wait(f"return +document.body.dataset.version >= {version}", WITHIN)
    return time.perf_counter() - start


@pytest.mark.settings(webapp_name="table")
async def test_the_groups_link_opens_each_his_own_view(
    harness: Harness, browsers: list[Any]
) -> None:
    """The group's direct link shows a player his own seat and anyone else the public view;
    another group's link opened after it, its own table."""
    h = harness
    top, (ann, _), param = await table_for_two(h, "football")
    (link,) = [b.url for b in top.table_message().buttons if b.url]
    assert link is not None and link.endswith(f"?startapp={param}")
    mine, theirs = Page(browsers[0]), Page(browsers[1])
    cid = h.user("Cid", language_code="uk")
    data = await stored(h, top.group)
    hand = Football.from_json(data["state"]).view(seat_of(data, ann)).hand
    async with PageServer(h) as web:
        await asyncio.gather(  # both pages at once
            *(
                page.open(web.root, param, init_data(user, start_param=param), direct=True)
                for page, user in ((mine, ann), (theirs, cid))
            )
        )
        shown = await mine.read(SHOWN)
        assert all(card in shown for card in hand)  # her five dealt cards
        assert await mine.read(OFFERED)  # her set-up, on her own page
        assert t("uk", "webapp.spectator") in await theirs.js("return document.body.innerText")
        assert not await theirs.read(OFFERED)
        text = await theirs.read(SHOWN)
        public = hidden_cards("football", (await stored(h, top.group))["state"], None)
        assert not leaks(text, public), text
        # Another group's link, opened in the same web view (Telegram's web client keeps
        # the page's storage): that table, not the one before.
        _, (other, _), elsewhere = await table_for_two(h, "durak")
        await theirs.open(web.root, elsewhere, init_data(other, start_param=elsewhere), direct=True)
        assert await theirs.js("return document.body.dataset.kind") == "durak"
