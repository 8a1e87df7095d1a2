"""The Mini App in a real browser for the tests: headless Chromium driven by Selenium,
phone-sized, and :class:`Page`, one window showing the page as Telegram opens it.

Chromium comes from Debian (``chromium``, ``chromium-driver``; scripts/test installs them
where it can); :data:`MISSING` says why the browser tests are skipped without them.
Selenium blocks, so every call runs in a thread: the bot and the page's server share the
test's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

MISSING = (
    None
    if shutil.which("chromium") and shutil.which("chromedriver")
    else "no chromium/chromedriver here (scripts/test installs them as root with apt)"
)
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
PHONE = {"width": 360, "height": 740, "pixelRatio": 2}  # a small phone's screen
DARK = {"bg_color": "#17212b", "text_color": "#f5f5f5", "hint_color": "#708499"}
# Whether the tests take their screenshots: only to write docs/'s pictures (each costs a
# frame drawn, captured and encoded, 0.2-0.4 s, for a file no one would look at).
PICTURES = os.environ.get("CARDTABLE_SCREENSHOTS") == "1"
# Seconds a test waits for a change to show: a timeout for a page that never updates,
# not a measure (the latencies are printed, not asserted).
WITHIN = 10.0
# Everything a page shows, as one text: its words and every card drawn (by notation).
SHOWN = (
    "(document.body.innerText + ' ' + [...document.querySelectorAll('[data-card]')]"
    ".map(e => e.dataset.card).join(' '))"
)
# The ``data-move`` tokens of the actions a page offers (those it shows), in page order.
OFFERED = (
    "[...document.querySelectorAll('[data-move]')]"
    ".filter(e => e.offsetParent !== null).map(e => e.dataset.move)"
)


def _chromium(profile: Path) -> Any:
    """A phone-sized headless Chromium on ``profile``, its chromedriver the leader of a
    process group of its own."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for arg in CHROMIUM_FLAGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_experimental_option("mobileEmulation", {"deviceMetrics": PHONE})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(
        shutil.which("chromedriver"), popen_kw={"start_new_session": True}
    )
    return webdriver.Chrome(options=options, service=service)


def on_each(act: Callable[[Any], Any], drivers: list[Any]) -> list[Any]:
    """``act`` done to every driver at once, one thread each (every Chromium is a process
    of its own: one's start or new tab need not wait for the other's)."""
    with ThreadPoolExecutor(max(1, len(drivers))) as pool:
        return list(pool.map(act, drivers))


@contextlib.contextmanager
def chromiums(profiles: list[Path]) -> Iterator[list[Any]]:
    """One phone-sized headless Chromium per profile directory, started together; each
    one's process group killed at the end (:func:`_quit`), so that none outlives the run."""
    drivers: list[Any] = []
    default = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DRIVER_TIMEOUT)  # read once, by each driver's connection pool
    try:
        try:
            with ThreadPoolExecutor(max(1, len(profiles))) as pool:
                starts = [pool.submit(_chromium, profile) for profile in profiles]
            drivers = [s.result() for s in starts if s.exception() is None]
            for s in starts:
                if (error := s.exception()) is not None:
                    raise error
        finally:
            socket.setdefaulttimeout(default)
        yield drivers
    finally:
        on_each(_quit, drivers)


def _quit(driver: Any) -> None:
    """Chromium and its chromedriver killed at once, whatever state they are in (the
    driver's own quit only waits: for Chromium to close its windows, then a second for
    chromedriver to stop listening, 1-1.3 s at the end of the run); chromedriver reaped."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(driver.service.process.pid, signal.SIGKILL)
    driver.service.process.wait()
    driver.service.stop()  # finds it gone: only closes its pipes


class Tabs:
    """The session's browsers, each on a fresh tab for every test. After a test its tabs
    are frozen at once (nothing of theirs reaches the next test's server), and fresh ones
    put in their place in the background (0.2-0.3 s of chromedriver calls not waited for)."""

    def __init__(self, drivers: list[Any]) -> None:
        self.drivers = drivers
        self._pool = ThreadPoolExecutor(1)
        self._renewing: Future[list[Any]] | None = None

    def ready(self) -> list[Any]:
        """The drivers, each showing its fresh tab."""
        renewing, self._renewing = self._renewing, None
        if renewing is not None:
            renewing.result()
        return self.drivers

    def renew(self) -> None:
        """Freezes every driver's tab now and starts putting a fresh one in its place."""
        on_each(_freeze, self.drivers)
        self._renewing = self._pool.submit(on_each, fresh_tab, self.drivers)

    def close(self) -> None:
        """Waits for the fresh tabs under way (a browser quit under them would only fail)."""
        try:
            self.ready()
        finally:
            self._pool.shutdown()


def _freeze(driver: Any) -> None:
    driver.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})


def fresh_tab(driver: Any) -> None:
    """Puts a new tab in the place of the driver's windows: what the DevTools protocol set
    up for a tab dies with it. Made without switching to it, so that the current one is
    closed without switching back: five calls to chromedriver, not seven."""
    from selenium.webdriver.remote.command import Command

    current = driver.current_window_handle
    others = [handle for handle in driver.window_handles if handle != current]
    tab = driver.execute(Command.NEW_WINDOW, {"type": "tab"})["value"]["handle"]
    driver.close()
    for handle in others:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(tab)


def page_url(
    root: str, param: str | None, data: str, theme: dict[str, str] | None, direct: bool = False
) -> str:
    """The page's address as Telegram opens it: initData and the theme in the fragment;
    the table parameter as ``t`` (a Mini App button's URL), or, ``direct``, as Telegram
    passes the ``startapp`` of a direct link: ``tgWebAppStartParam`` (the initData then
    carries it too, signed, as ``start_param``)."""
    colours = quote(json.dumps(theme or {}), safe="")
    fragment = f"tgWebAppData={quote(data, safe='')}&tgWebAppThemeParams={colours}"
    query = f"?{'tgWebAppStartParam' if direct else 't'}={param}" if param else ""
    return f"{root}/app/{query}#{fragment}"


class Page:
    """One browser window showing the Mini App."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    async def js(self, script: str, *args: Any) -> Any:
        return await asyncio.to_thread(self.driver.execute_script, script, *args)

    async def cdp(self, command: str, params: dict[str, Any]) -> Any:
        """A command of the Chrome DevTools Protocol to the page's browser."""
        return await asyncio.to_thread(self.driver.execute_cdp_cmd, command, params)

    async def open(
        self,
        root: str,
        param: str | None,
        data: str,
        theme: dict[str, str] | None = None,
        *,
        direct: bool = False,
    ) -> float:
        """Opens the page as Telegram does (see :func:`page_url`); the seconds from
        navigation to the first picture drawn (0.0 when it was refused)."""
        shown = await asyncio.to_thread(lambda: self.driver.current_url)
        if shown != "about:blank":  # a page: the same address again would only move in it
            await asyncio.to_thread(self.driver.get, "about:blank")
        await asyncio.to_thread(self.driver.get, page_url(root, param, data, theme, direct))
        drawn = await self.wait(
            "return document.body.dataset.drawn || document.body.dataset.refused"
        )
        return float(drawn) / 1000 if drawn != "1" else 0.0

    async def wait(self, script: str, within: float = 5.0) -> Any:
        """Runs ``script`` in the page until it returns something true: after each change
        of the document (so a new picture is seen as soon as it is drawn, not at the next
        tick of a timer) and every 10 ms (for what changes outside it)."""
        return await asyncio.to_thread(
            self.driver.execute_async_script,
            """const src = arguments[0], within = arguments[1], done = arguments[2];
            const f = new Function(src), t0 = performance.now();
            let timer = 0, over = false;
            const changes = new MutationObserver(poll);
            function poll() {
              if (over) return;
              const v = f();
              clearTimeout(timer);
              if (!v && performance.now() - t0 <= within) { timer = setTimeout(poll, 10); return; }
              over = true;
              changes.disconnect();
              done(v || null);
            }
            const all = {subtree: true, childList: true, attributes: true, characterData: true};
            changes.observe(document, all);
            poll();""",
            script,
            within * 1000,
        )

    async def still(self) -> None:
        """Waits until nothing on the page moves (no card in flight in a picture)."""
        assert await self.wait("return document.getAnimations().length === 0 ? 1 : 0")

    async def version(self) -> int:
        return int(await self.js("return document.body.dataset.version || '0'"))

    async def newer_than(self, version: int) -> int:
        shown = await self.wait(
            f"const v = +document.body.dataset.version; return v > {version} ? v : 0", WITHIN
        )
        assert shown, f"the page did not change within {WITHIN} s"
        return int(shown)

    async def read(self, script: str, once: str | None = None) -> Any:
        """The value of the expression ``script`` in the page: now, or as soon as the
        expression ``once`` holds there (the wait and the look in one call)."""
        if once is None:
            return await self.js(f"return {script}")
        found = await self.wait(f"return ({once}) && {script}", WITHIN)
        assert found is not None, f"the page did not come to {once} within {WITHIN} s"
        return found

    async def click_one(self, selector: str, rng: Any) -> str | None:
        """Clicks one of the elements ``selector`` finds: None when it finds none, else the
        card whose choice the click opened ('' for none). Clicked and read in one call: the
        page redraws every second, which would leave an element found by the driver stale."""
        count: int = await self.js(f"return document.querySelectorAll({selector!r}).length")
        if not count:
            return None
        click = f"document.querySelectorAll({selector!r})[{rng.randrange(count)}].click();"
        return str(await self.js(click + "return document.body.dataset.pick || ''"))

    async def click_a_move(self, rng: Any) -> None:
        """Clicks a card it offers (or Take / Pass); when the card has several moves (a beat
        of either attack card), then one of the choices it shows."""
        pick = await self.click_one(".card.play, button.mv", rng)
        assert pick is not None, "the page offers no move although it is this player's turn"
        if pick:
            assert await self.click_one(f'button.mv[data-card="{pick}"]', rng) is not None

    async def looks(self, at: int) -> tuple[str, list[str]]:
        """What the page shows and offers once it shows version ``at``."""
        once = f"+document.body.dataset.version >= {at}"
        text, offered = await self.read(f"[{SHOWN}, {OFFERED}]", once)
        return str(text), list(offered)

    async def tap(self, token: str) -> None:
        """Taps the (first visible) element that carries ``data-move`` ``token``."""
        tapped = await self.js(
            "const e = [...document.querySelectorAll('[data-move]')]"
            ".find(x => x.dataset.move === arguments[0] && x.offsetParent !== null);"
            "if (e) e.click(); return !!e;",
            token,
        )
        assert tapped, f"nothing on the page carries data-move={token!r}"

    async def lifecycle(self, state: str) -> None:
        """Freezes the page (``frozen``: its scripts and timers stop, as a phone does to a
        page it puts away) or wakes it (``active``)."""
        await self.cdp("Page.setWebLifecycleState", {"state": state})

    async def still_motion(self) -> None:
        """Asks the page for reduced motion, as a reader's system may: each new picture
        shows at once, nothing flies (and the browser draws no frame for it)."""
        reduce = {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]}
        await self.cdp("Emulation.setEmulatedMedia", reduce)

    async def console_errors(self) -> list[str]:
        """The console's errors since the last call (Chromium's log of the page)."""
        entries = await asyncio.to_thread(self.driver.get_log, "browser")
        return [e["message"] for e in entries if e["level"] == "SEVERE"]

    async def screenshot(self, path: Path) -> None:
        if PICTURES:
            await asyncio.to_thread(self.driver.save_screenshot, str(path))
