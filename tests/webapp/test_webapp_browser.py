"""The Mini App in a real browser (headless Chromium driven by Selenium,
testing/browser.py): a durak game played by clicking cards on the page while the other
player taps buttons, every change shown on the page (the latencies printed), a
spectator's page never showing a private card, a forged or replayed initData refused;
and the pictures the README shows. Football on the pages: tests/webapp/test_webapp_football.py.

Without Chromium and its driver these tests are skipped with one line that says so.

``CARDTABLE_SCREENSHOTS=1`` writes the screenshots into docs/ (the README's); otherwise
they go to the test's temporary directory.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import pytest

from engine.games.durak.game import Durak
from testing.browser import MISSING, Page
from testing.harness import Harness
from testing.tabletop import hidden_cards, leaks, stored
from testing.webapp import init_data, table_for_two, tampered

pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if MISSING:
    pytest.skip(MISSING, allow_module_level=True)


async def test_durak_played_on_the_page_against_buttons(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    h = harness
    top, (ann, bob), param = await table_for_two(h, "durak")
    group = top.group
    page, spectator = Page(browsers[0]), Page(browsers[1])
    paint = await page.open(root, param, init_data(ann))
    cid = h.user("Cid", language_code="ru")  # by the group's link
    await spectator.open(root, param, init_data(cid, start_param=param), direct=True)
    assert paint > 0
    fcp = await page.js(
        "return performance.getEntriesByName('first-contentful-paint')[0].startTime"
    )
    weight = await page.js("return performance.getEntriesByType('navigation')[0].transferSize")
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
        shown = await page.newer_than(before)
        latencies.append(time.perf_counter() - start)
        assert await spectator.newer_than(before) >= shown
        public = hidden_cards("durak", (await stored(h, group))["state"], None)
        text = await spectator.shown_cards()
        assert not leaks(text, public), text
        moves += 1
        if moves == 4:
            await asyncio.to_thread(page.driver.save_screenshot, str(shots / "webapp-durak-en.png"))
            await asyncio.to_thread(
                spectator.driver.save_screenshot, str(shots / "webapp-durak-ru.png")
            )
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
