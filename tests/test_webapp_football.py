"""Football played on the Mini App alone, and the page kept live: headless Chromium, two
players each in a browser of his own (Selenium drives them, testing/browser.py).

A whole game, set-up included, is played by tapping what the pages offer (each action
found by its ``data-move``), no chat button tapped; its Record replays to the end; no
page logs a console error. The figures a reader of docs/webapp.md is given are printed
(``pytest -s``): open → first picture, a move's commit → the other page showing it (p50,
p95, from the commit's own notice to the frame after the page drew it), the page's
weight gzipped. The live test moves the game from everywhere else (a chat button, a
turn that timed out) and cuts the server off for a while: the pages say they are
offline, and catch up by themselves when it is back.

``CARDTABLE_SCREENSHOTS=1`` writes the screenshots into docs/ (docs/webapp.md's).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.callbacks import Action
from bot.tables import games
from engine import records
from engine.games.football.game import Football
from testing.browser import DARK, MISSING, Page
from testing.harness import Harness
from testing.tabletop import Tabletop, hidden_cards, leaks, stored, table_key
from testing.webapp import Commits, init_data, serving, table_for_two

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


async def weight(page: Page) -> int:
    """The page's bytes as the server sends them gzipped: the page and every file it
    loaded (the browser's own list), each fetched again with gzip accepted."""
    urls = await page.js(
        "return [location.href.split('#')[0], "
        "...performance.getEntriesByType('resource')"
        ".filter(e => e.initiatorType !== 'fetch' && e.name.includes('/app/'))"
        ".map(e => e.name)]"
    )
    total = 0
    async with httpx.AsyncClient() as client:
        for url in urls:
            request = client.build_request("GET", url, headers={"Accept-Encoding": "gzip"})
            response = await client.send(request, stream=True)
            assert response.headers.get("content-encoding") == "gzip", url
            total += sum([len(chunk) async for chunk in response.aiter_raw()])
            await response.aclose()
    return total


async def no_leak(h: Harness, top: Tabletop, page: Page, seat: int | None) -> None:
    data = await stored(h, top.group)
    text = await page.shown_cards()
    assert not leaks(text, hidden_cards("football", data["state"], seat)), text


async def test_a_whole_game_of_football_on_two_pages(
    harness: Harness, browsers: list[Any], shots: Path
) -> None:
    """Ann and Bob set up and play a whole game on their pages alone (the page's
    ``data-move`` tokens: ``setup:<card>``, ``setup:confirm``, the field's cells)."""
    h = harness
    top, (ann, bob), param = await table_for_two(h, "football")
    pages = {ann.id: Page(browsers[0]), bob.id: Page(browsers[1])}
    rng = random.Random(11)
    answered = len(h.server.calls_to("answerCallbackQuery"))  # the lobby's taps
    async with serving(h) as web, Commits(h, table_key(top.group)) as commits:
        paint = [
            await open_logged(pages[ann.id], web.root, param, init_data(ann)),
            await open_logged(pages[bob.id], web.root, param, init_data(bob), theme=DARK),
        ]
        await pages[ann.id].console_errors()
        await pages[bob.id].console_errors()
        taps = 0
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
            await page.wait(f"return +document.body.dataset.version >= {data['version']}")
            offered = await page.tokens()
            if view.phase == "setup":
                picks = [t for t in offered if t.startswith("setup:") and t[6:] not in ("reset",)]
                assert picks, offered
                token = "setup:confirm" if "setup:confirm" in picks else rng.choice(picks)
            else:
                legal = games.legal_for(game, seat_of(data, user)) or []
                assert sorted(offered) == sorted(token for token, _ in legal), offered
                token = rng.choice(offered)
            if token.startswith("setup:") and token != "setup:confirm":
                laid[user.id].append(token[6:])
            if view.phase == "setup" and len(laid[user.id]) == 2 and user is ann:
                await page.still()
                await page.screenshot(shots / "webapp-football-setup-en.png")
            before = data["version"]
            await page.tap(token)
            taps += 1
            await page.newer_than(before)
            await other.newer_than(before)
            for u in (ann, bob):
                await no_leak(h, top, pages[u.id], seat_of(data, u))
            if taps == 24:  # the ball on its way: the pictures of docs/webapp.md
                for p in pages.values():
                    await p.still()
                await pages[ann.id].screenshot(shots / "webapp-football-en.png")
                await pages[bob.id].screenshot(shots / "webapp-football-ru.png")
        versions = set(range(data["version"] - taps, data["version"] + 1))
        lag = latencies(commits, [await shown_at(p) for p in pages.values()], versions)
        errors = [e for p in pages.values() for e in await p.console_errors()]
        size = await weight(pages[ann.id])
    assert data["phase"] == "finished" and taps > 12 and not errors, errors
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
        f"({len(lag)} showings), page {size} bytes gzipped"
    )
