"""Durak played whole on the Mini App's page, as people play it: two players, each in a
headless Chromium of his own, tapping only what the page offers (elements with
``data-move``), no chat button at all; the dummy played by its controller on his page.

Checked on the way: every legal move of the player to act is on his page and nothing
else is; the Record of the game replays to its end; no script error, no request outside
the bot's server; axe-core finds nothing serious or critical on the durak screens, light
and dark; a refused move says the bot's reason in the reader's language. Printed: the
frame times while cards fly, and the page's weight gzipped (asserted ≤ 40 KB).

``CARDTABLE_SCREENSHOTS=1`` writes docs/webapp.md's durak pictures into docs/.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from bot.core.i18n import plain
from bot.core.models import Table
from bot.tables.stats.finished import record_document
from engine import records
from engine.games.durak.game import Durak
from testing.browser import DARK, MISSING, WITHIN, Page
from testing.chats import FakeUser
from testing.clock import Clock
from testing.harness import Harness
from testing.tabletop import stored
from testing.webapp import client, init_data, table_for_two

keys = pytest.importorskip("selenium.webdriver.common.keys", reason="selenium is not installed")
if MISSING:
    pytest.skip(MISSING, allow_module_level=True)


# Run in every document the browsers open, before the page's own scripts: what went
# wrong (script errors, refused loads, policy violations, console.error), and the
# intervals between frames while a card flies (body[data-flying] > 0), but for those the
# test itself holds up (body[data-probed]: a screenshot, axe-core).
WATCH = """
if (!window.__errors) {
  window.__errors = [];
  const what = e => e.message || (e.target && (e.target.src || e.target.href)) || e;
  addEventListener("error", e => __errors.push(String(what(e))), true);
  addEventListener("unhandledrejection", e => __errors.push("unhandled: " + e.reason));
  addEventListener("securitypolicyviolation", e => __errors.push("csp: " + e.blockedURI));
  const said = console.error;
  console.error = (...a) => { __errors.push(a.join(" ")); said.apply(console, a); };
  window.__frames = [];
  let last = 0;
  requestAnimationFrame(function tick(t) {
    const b = document.body;
    if (last && b && +b.dataset.flying > 0 && !b.dataset.probed) __frames.push(t - last);
    last = t;
    requestAnimationFrame(tick);
  });
}
"""
PAGE_BUDGET = 40 * 1024  # bytes, gzipped: the whole page (issue 28)
ALL_MOVES = "return [...document.querySelectorAll('[data-move]')].map(e => e.dataset.move)"


class Player(Page):
    """A player's page, watched (WATCH), that he plays by tapping its data-move elements."""

    async def watch(self) -> None:
        await asyncio.to_thread(
            self.driver.execute_cdp_cmd, "Page.addScriptToEvaluateOnNewDocument", {"source": WATCH}
        )

    async def shows(self, version: int) -> None:
        shown = await self.wait(f"return +document.body.dataset.version >= {version}", WITHIN)
        assert shown, f"the page did not reach version {version} within {WITHIN} s"

    async def press(self, selector: str, keyboard: bool) -> None:
        """Taps the one element ``selector`` finds, or focuses it and presses Enter."""
        found = await self.js(f"return document.querySelectorAll({selector!r}).length")
        assert found == 1, f"{found} elements for {selector}"
        if not keyboard:
            await self.js(f"document.querySelector({selector!r}).click()")
            return
        await self.js(f"document.querySelector({selector!r}).focus()")
        active = await asyncio.to_thread(lambda: self.driver.switch_to.active_element)
        await asyncio.to_thread(active.send_keys, keys.Keys.ENTER)

    async def play(self, token: str, keyboard: bool = False) -> None:
        """Plays the move ``token``: its element, or its card's choice and then it."""
        offered = await self.js(ALL_MOVES)
        if token in offered:
            await self.press(f'[data-move="{token}"]', keyboard)
            return
        card = next(t for t in offered if t.startswith("pick:") and t[5:] in token)
        await self.press(f'[data-move="{card}"]', keyboard)
        await self.wait("return !document.getElementById('sheet').hidden")
        await self.press(f'#sheet [data-move="{token}"]', keyboard)

    async def probe(self, on: bool) -> None:
        """Marks the frames the test holds up (a screenshot, axe), which are not the page's."""
        if on:
            await self.js("document.body.dataset.probed = 1")
        else:  # the frame after the probe is still held up by it
            await self.js("setTimeout(() => delete document.body.dataset.probed, 100)")

    async def axe(self) -> list[str]:
        """axe-core's serious and critical findings on the page as it is now."""
        await self.probe(True)
        source = resources.files("selenium_axe_python").joinpath("axe-core", "axe.min.js")
        await self.js(source.read_text(encoding="utf-8"))
        found = await asyncio.to_thread(
            self.driver.execute_async_script,
            "const done = arguments[0];"
            "axe.run(document, {resultTypes: ['violations']}).then(r => done(JSON.stringify("
            "r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')"
            ".map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', ')))))",
        )
        await self.probe(False)
        return list(json.loads(found))

    async def errors(self) -> list[str]:
        return list(await self.js("return window.__errors || ['the watch did not run']"))

    async def foreign(self) -> list[str]:
        """Requests the page made outside the bot's server."""
        return list(
            await self.js(
                "return performance.getEntriesByType('resource').map(e => e.name)"
                ".filter(n => !n.startsWith(location.origin))"
            )
        )

    async def snap(self, path: Path) -> None:
        await self.probe(True)
        await asyncio.to_thread(self.driver.save_screenshot, str(path))
        await self.probe(False)


def _seated(data: dict[str, Any], users: list[FakeUser]) -> list[FakeUser]:
    ids = [s["user_id"] for s in data["seats"]]
    return sorted(users, key=lambda u: ids.index(u.id))


async def _page_weight(h: Harness) -> int:
    """The bytes the page costs on the wire, gzipped: the document and every file it loads."""
    total = 0
    async with client(h) as c:
        for path in ("", "table.js", "table.css", "games.js", "games.css", "icon.svg"):
            r = await c.get("/app/" + path, headers={"Accept-Encoding": "gzip"})
            assert r.status_code == 200
            total += len(gzip.compress(r.content, mtime=0))
    return total


def _figures(frames: list[float]) -> str:
    if not frames:
        return "no frame while cards flew"
    ordered = sorted(frames)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (
        f"{len(ordered)} frames while cards flew: median {ordered[len(ordered) // 2]:.1f} ms, "
        f"p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms, over 50 ms: "
        f"{sum(f > 50 for f in ordered)}"
    )


async def test_durak_with_the_dummy_played_whole_on_two_pages(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    h = harness
    top, users, param = await table_for_two(h, "durak")
    ann, bob = users
    group = top.group
    pages = {ann.id: Player(browsers[0]), bob.id: Player(browsers[1])}
    for user, theme in ((ann, None), (bob, DARK)):  # Bob's Telegram is dark, in Russian
        await pages[user.id].watch()
        await pages[user.id].open(root, param, init_data(user), theme)
    rng = random.Random(11)
    moves = dummy_moves = keyboard = 0
    findings: dict[str, list[str]] = {}
    while (data := await stored(h, group))["phase"] == "playing":
        game = Durak.from_json(data["state"])
        actor = game.to_act()
        assert actor is not None
        user = _seated(data, users)[actor.player]
        page, other = pages[user.id], pages[(bob if user is ann else ann).id]
        await page.shows(data["version"])
        legal = sorted(game.move_token(m) for m in game.legal_moves())
        offered = set(await page.js(ALL_MOVES))
        # Every legal move is on his page (a card with several: behind its pick), and
        # nothing else; the other player's page offers nothing.
        direct = {t for t in offered if not t.startswith("pick:")}
        picked = {t[5:] for t in offered if t.startswith("pick:")}
        assert direct <= set(legal), (direct, legal)
        assert all(t in direct or any(c in t for c in picked) for t in legal), (offered, legal)
        assert await other.js(ALL_MOVES) == []
        if moves in (0, 12):
            for who, p in pages.items():
                findings[f"{who} at move {moves}"] = await p.axe()
        token = rng.choice(legal)
        by_keys = moves % 5 == 3  # now and then by the keyboard: focus, Enter
        await page.play(token, keyboard=by_keys)
        keyboard += by_keys
        dummy_moves += token.startswith("d")
        if moves == 9:
            await page.wait("return +document.body.dataset.flying > 0", 2)
            await page.snap(shots / "webapp-durak-flight.png")
        await page.shows(data["version"] + 1)
        await other.shows(data["version"] + 1)
        moves += 1
        if moves == 8:
            await pages[ann.id].wait("return !+document.body.dataset.flying", 2)
            await pages[bob.id].wait("return !+document.body.dataset.flying", 2)
            await pages[ann.id].snap(shots / "webapp-durak-light-en.png")
            await pages[bob.id].snap(shots / "webapp-durak-dark-ru.png")
    assert data["phase"] == "finished" and dummy_moves > 0 and keyboard > 0
    for who, p in pages.items():
        await p.shows(data["version"])
        findings[f"{who} at the end"] = await p.axe()
        assert await p.errors() == []
        assert await p.console_errors() == []
        assert await p.foreign() == []
    assert not any(findings.values()), json.dumps(findings, indent=1)
    # The game's Record, as the bot hands it out, replays to its end.
    _, content = record_document(Table.model_validate(data))
    record = json.loads(content)
    replayed = records.replay(record)
    assert replayed["ok"] and replayed["finished"]
    assert replayed["result"] == Durak.from_json(data["state"]).result()
    assert len(record["moves"]) == moves
    frames = [f for p in pages.values() for f in await p.js("return window.__frames")]
    weight = await _page_weight(h)
    print(
        f"\ndurak on two pages: {moves} moves ({dummy_moves} the dummy's, {keyboard} by "
        f"the keyboard); {_figures(frames)}; the page {weight} bytes gzipped"
    )
    assert weight <= PAGE_BUDGET


async def test_a_refused_move_says_why_in_the_reader_s_language(
    harness: Harness, clock: Clock, root: str, browsers: list[Any]
) -> None:
    """A page that missed the news (its live stream cut) still offers a move its turn's
    timeout has already made: the server refuses it, and the page says the bot's reason
    in the reader's language, as a tap on the chat's button would be told, with an error
    pulse."""
    h = harness
    top, users, param = await table_for_two(h, "durak", turn_time=1)
    data = await stored(h, top.group)
    actor = Durak.from_json(data["state"]).to_act()
    assert actor is not None
    mover = _seated(data, users)[actor.player]
    page = Player(browsers[0])
    cdp = page.driver.execute_cdp_cmd
    await asyncio.to_thread(cdp, "Network.enable", {})
    await asyncio.to_thread(cdp, "Network.setBlockedURLs", {"urls": ["*api/events*"]})
    try:
        await page.open(root, param, init_data(mover))
        await page.shows(data["version"])
        await clock.advance(3.5)  # his turn's time runs out: the bot moves for him
        after = await stored(h, top.group)
        assert after["version"] > data["version"]
        assert await page.version() == data["version"]  # the page never heard of it
        token = (await page.js(ALL_MOVES))[0]
        await page.play(token)
        refusal = await page.wait("return document.body.dataset.refusal", WITHIN)
    finally:
        await asyncio.to_thread(cdp, "Network.setBlockedURLs", {"urls": []})
    now = Durak.from_json(after["state"]).to_act()
    mine = now is not None and _seated(after, users)[now.player] is mover
    key = "tap.superseded" if mine else "illegal.not_your_turn"
    assert refusal == plain(mover.language_code or "en", key)
    assert await page.js("return document.body.dataset.haptic") == "error"
    assert await page.js("return document.getElementById('toast').textContent") == refusal
    final = await stored(h, top.group)  # no move made (his tap only brought him back)
    assert (final["state"], final["moves"]) == (after["state"], after["moves"])
