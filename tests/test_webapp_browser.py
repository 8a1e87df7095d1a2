"""The Mini App in a real browser (headless Chromium driven by Selenium): a durak game
played by clicking cards on the page while the other player taps buttons, a football
game played by clicking the field card the ball steps onto, every change
shown on the page (the latencies printed), a spectator's page never showing a private
card, a forged or replayed initData refused; and the pictures the README shows.

Chromium comes from Debian (``chromium``, ``chromium-driver``; scripts/test installs them
where it can). Without them these tests are skipped with one line that says so.

``CARDTABLE_SCREENSHOTS=1`` writes the screenshots into docs/ (the README's); otherwise
they go to the test's temporary directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.games.durak.game import Durak
from engine.games.football.game import Football
from testing.harness import Harness
from testing.tabletop import hidden_cards, leaks, stored
from testing.webapp import init_data, page_server, table_for_two, tampered

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if not (shutil.which("chromium") and shutil.which("chromedriver")):
    pytest.skip(
        "no chromium/chromedriver here (scripts/test installs them as root with apt)",
        allow_module_level=True,
    )

# Seconds the test waits for a change to show: a timeout for a page that never updates,
# not a measure (the latencies are printed, not asserted).
WITHIN = 10.0
DARK = {"bg_color": "#17212b", "text_color": "#f5f5f5", "hint_color": "#708499"}
DOCS = Path(__file__).resolve().parent.parent / "docs"


# Chromium as the machine's notes start it: nothing of its own on the network (this
# machine's network is closed, and lookups of Google's hosts can hang it), a fresh profile.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
DRIVER_TIMEOUT = 30.0  # seconds for any one call to chromedriver (Selenium has none)


@pytest.fixture(scope="module")
def browsers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Any]]:
    """Two phone-sized headless Chromium windows (a player's and a spectator's), shared by
    the module's tests: starting Chromium is the slow part. Each chromedriver leads a
    process group of its own, killed at the end whatever state Chromium is in, so that no
    browser outlives the run or holds its teardown."""
    drivers = []
    default = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DRIVER_TIMEOUT)  # read once, by each driver's connection pool
    try:
        for index in range(2):
            options = webdriver.ChromeOptions()
            options.binary_location = shutil.which("chromium") or ""
            for arg in CHROMIUM_FLAGS:
                options.add_argument(arg)
            profile = tmp_path_factory.mktemp(f"chromium{index}")
            options.add_argument(f"--user-data-dir={profile}")
            phone = {"width": 360, "height": 740, "pixelRatio": 2}  # a small phone's screen
            options.add_experimental_option("mobileEmulation", {"deviceMetrics": phone})
            service = webdriver.ChromeService(
                shutil.which("chromedriver"), popen_kw={"start_new_session": True}
            )
            drivers.append(webdriver.Chrome(options=options, service=service))
    finally:
        socket.setdefaulttimeout(default)
    yield drivers
    for driver in drivers:
        group = driver.service.process.pid
        with contextlib.suppress(Exception):
            driver.quit()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return DOCS if os.environ.get("CARDTABLE_SCREENSHOTS") == "1" else tmp_path


class Page:
    """One browser window showing the Mini App. Selenium blocks, so each call runs in a
    thread: the bot and the page's server share this test's event loop."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    async def js(self, script: str, *args: Any) -> Any:
        return await asyncio.to_thread(self.driver.execute_script, script, *args)

    async def open(
        self, root: str, param: str, data: str, theme: dict[str, str] | None = None
    ) -> float:
        """Opens the page as Telegram does (initData and the theme in the URL's fragment);
        the seconds from navigation to the first picture drawn."""
        colours = _quote(json.dumps(theme or {}))
        fragment = f"tgWebAppData={_quote(data)}&tgWebAppThemeParams={colours}"
        url = f"{root}/app/?t={param}#{fragment}"
        await asyncio.to_thread(self.driver.get, "about:blank")
        await asyncio.to_thread(self.driver.get, url)
        drawn = await self.wait(
            "return document.body.dataset.drawn || document.body.dataset.refused"
        )
        return float(drawn) / 1000 if drawn != "1" else 0.0

    async def wait(self, script: str, within: float = 5.0) -> Any:
        """Polls ``script`` in the page every 10 ms until it returns something true."""
        return await asyncio.to_thread(
            self.driver.execute_async_script,
            """const src = arguments[0], within = arguments[1], done = arguments[2];
            const f = new Function(src), t0 = performance.now();
            (function poll() {
              const v = f();
              if (v || performance.now() - t0 > within) done(v || null);
              else setTimeout(poll, 10);
            })();""",
            script,
            within * 1000,
        )

    async def version(self) -> int:
        return int(await self.js("return document.body.dataset.version || '0'"))

    async def newer_than(self, version: int) -> int:
        shown = await self.wait(
            f"const v = +document.body.dataset.version; return v > {version} ? v : 0", WITHIN
        )
        assert shown, f"the page did not change within {WITHIN} s"
        return int(shown)

    async def shown_cards(self) -> str:
        """Everything the page shows: its text and every card drawn (by notation)."""
        text: str = await self.js(
            "return document.body.innerText + ' ' + [...document.querySelectorAll('[data-card]')]"
            ".map(e => e.dataset.card).join(' ')"
        )
        return text

    async def click_one(self, selector: str, rng: random.Random) -> int:
        """Clicks one of the elements ``selector`` finds; how many it found. Counted and
        clicked in the page in one go: the page redraws every second (the turn time), which
        would leave an element found by the driver stale."""
        count: int = await self.js(f"return document.querySelectorAll({selector!r}).length")
        if count:
            index = rng.randrange(count)
            await self.js(f"document.querySelectorAll({selector!r})[{index}].click()")
        return count

    async def click_a_move(self, rng: random.Random) -> None:
        """Clicks a card it offers (or Take / Pass); when the card has several moves (a beat
        of either attack card), then one of the choices it shows."""
        found = await self.click_one(".card.play, button.mv", rng)
        assert found, "the page offers no move although it is this player's turn"
        pick = await self.js("return document.body.dataset.pick")
        if pick:
            assert await self.click_one(f'button.mv[data-card="{pick}"]', rng)


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


@pytest.fixture
async def root(harness: Harness) -> AsyncIterator[str]:
    async with page_server(harness) as url:
        yield url


async def test_durak_played_on_the_page_against_buttons(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    h = harness
    top, (ann, bob), param = await table_for_two(h, "durak")
    group = top.group
    page, spectator = Page(browsers[0]), Page(browsers[1])
    paint = await page.open(root, param, init_data(ann))
    await spectator.open(root, param, init_data(h.user("Cid", language_code="ru")))
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


async def test_football_field_on_the_page(
    harness: Harness, root: str, browsers: list[Any], shots: Path
) -> None:
    h = harness
    top, (ann, bob), param = await table_for_two(h, "football")
    rng = random.Random(3)
    for _ in range(20):  # both set up, and a few moves, through the buttons
        await top.step([ann, bob], rng)
    data = await stored(h, top.group)
    for page, user in zip(map(Page, browsers), (ann, bob), strict=True):
        dark = user is bob  # Bob's Telegram has a dark theme
        await page.open(root, param, init_data(user), DARK if dark else None)
        background = await page.js("return getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(23, 33, 43)") == dark
        seat = [s["user_id"] for s in data["seats"]].index(user.id)
        view = Football.from_json(data["state"]).view(seat)
        cells = await page.js("return document.querySelectorAll('.field .card').length")
        assert cells == 16
        text = await page.shown_cards()
        secret = hidden_cards("football", data["state"], seat)
        assert not leaks(text, secret)
        for card in (c for c in view.keepers if c):
            assert card in text  # his own goalkeeper, and any turned up
        lang = "en" if user is ann else "ru"
        assert await page.js("return document.documentElement.lang") == lang
        await asyncio.to_thread(
            page.driver.save_screenshot, str(shots / f"webapp-football-{lang}.png")
        )


async def test_football_played_by_tapping_the_field_cards(
    harness: Harness, root: str, browsers: list[Any]
) -> None:
    """Ann plays on the page by tapping the field card the ball is to step onto, Bob by
    his buttons: the page offers exactly her legal steps, as cards of the field."""
    h = harness
    top, (ann, bob), param = await table_for_two(h, "football")
    rng = random.Random(7)
    while Football.from_json((await stored(h, top.group))["state"]).view(None).phase == "setup":
        await top.step([ann, bob], rng)  # both set up through the buttons
    page = Page(browsers[0])
    await page.open(root, param, init_data(ann))
    taps = 0
    while (data := await stored(h, top.group))["phase"] == "playing":
        game = Football.from_json(data["state"])
        actor = game.to_act()
        assert actor is not None
        seated = sorted((ann, bob), key=lambda u: [s["user_id"] for s in data["seats"]].index(u.id))
        if seated[actor.player] is ann:
            await page.wait("return document.querySelectorAll('.field .card.play').length")
            assert await page.version() == data["version"]  # the page shows the newest state
            before = await page.version()
            assert not await page.js("return document.querySelectorAll('button.mv').length")
            assert await page.click_one(".field .card.play", rng) == len(game.legal_moves())
            await page.newer_than(before)
            taps += 1
        else:
            await top.caught_up(seated)
            await top.step([bob], rng)
    assert taps > 0 and data["phase"] == "finished"
