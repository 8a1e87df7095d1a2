"""A player's Mini App page in a browser, watched for errors and frame times, played
by tapping its data-move elements.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

from testing.browser import PICTURES, WITHIN, Page

# Run in every document the browsers open, before the page's own scripts: what went
# wrong (script errors, refused loads, policy violations, console.error), and the
# intervals between frames while a card flies (body[data-flying] > 0) and for a second
# after, but for those the test itself holds up (body[data-probed]: a screenshot, axe-core).
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
  window.__still = [];  // the frames while nothing flies: what the machine allows
  window.__draws = [];  // what each redraw cost (body[data-drawms])
  addEventListener("DOMContentLoaded", () => new MutationObserver(
    () => __draws.push(+document.body.dataset.drawms)
  ).observe(document.body, {attributes: true, attributeFilter: ["data-drawms"]}));
  // Frames are asked for only while a card flies and for a second after (the still ones):
  // a page asking for every frame all the time would keep the browser drawing for nothing.
  let last = 0, left = 0;
  const tick = t => {
    const b = document.body, flies = +b.dataset.flying > 0;
    if (last && !b.dataset.probed) (flies ? __frames : __still).push(t - last);
    last = t;
    left = flies ? 60 : left - 1;
    if (left > 0) requestAnimationFrame(tick); else last = 0;
  };
  addEventListener("DOMContentLoaded", () => new MutationObserver(() => {
    if (left <= 0) { left = 60; requestAnimationFrame(tick); }
  }).observe(document.body, {attributes: true, attributeFilter: ["data-flying"]}));
}
"""


ALL_MOVES = "return [...document.querySelectorAll('[data-move]')].map(e => e.dataset.move)"


class Redrawn(Exception):
    """What the test was to tap is no longer on the page: a newer picture came between."""


class Player(Page):
    """A player's page, watched (WATCH), that he plays by tapping its data-move elements."""

    async def watch(self) -> None:
        await self.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})

    async def shows(self, version: int) -> None:
        shown = await self.wait(f"return +document.body.dataset.version >= {version}", WITHIN)
        assert shown, f"the page did not reach version {version} within {WITHIN} s"

    async def moves_at(self, version: int) -> list[str]:
        """The ``data-move`` tokens the page offers once it shows ``version``: the wait
        and the look in one call to the browser."""
        return list(await self.read(ALL_MOVES[7:], f"+document.body.dataset.version >= {version}"))

    async def press(self, selector: str, keyboard: bool) -> None:
        """Taps the one element ``selector`` finds, or focuses it and presses Enter."""
        # Found and tapped (or focused) in one call: a new picture in between would
        # leave an element found by an earlier call detached.
        act = "focus" if keyboard else "click"
        found = await self.js(
            f"const all = document.querySelectorAll({selector!r});"
            f"if (all.length === 1) all[0].{act}(); return all.length"
        )
        assert found <= 1, f"{found} elements for {selector}"
        if not found:  # the picture changed since the caller looked: it looks again
            raise Redrawn(selector)
        if keyboard:  # Enter, to whatever has the focus: one call to the driver
            from selenium.webdriver import ActionChains, Keys

            await asyncio.to_thread(ActionChains(self.driver).send_keys(Keys.ENTER).perform)

    async def play(
        self, token: str, keyboard: bool = False, offered: list[str] | None = None
    ) -> bool:
        """Plays the move ``token``: its element, or its card's choice and then it;
        whether it went through a choice. ``offered``: the page's tokens, when the caller
        has just looked."""
        if offered is None:
            offered = list(await self.js(ALL_MOVES))
        if token in offered:
            await self.press(f'[data-move="{token}"]', keyboard)
            return False
        card = next((t for t in offered if t.startswith("pick:") and t[5:] in token), None)
        if card is None:  # not on this picture (a newer one came): the caller looks again
            raise Redrawn(token)
        await self.press(f'[data-move="{card}"]', keyboard)
        await self.wait("return !document.getElementById('sheet').hidden")
        await self.press(f'#sheet [data-move="{token}"]', keyboard)
        return True

    async def probe(self, on: bool) -> None:
        """Marks the frames the test holds up (a screenshot, axe), which are not the page's."""
        if on:
            await self.js("document.body.dataset.probed = 1")
        else:  # the frame after the probe is still held up by it
            await self.js("setTimeout(() => delete document.body.dataset.probed, 100)")

    async def axe(self) -> list[str]:
        """axe-core's serious and critical findings on the page as it is now. Its frames
        are marked as the probe's (:meth:`probe`), in the same calls as the run."""
        if not await self.js("document.body.dataset.probed = 1; return typeof axe === 'object'"):
            source = resources.files("selenium_axe_python").joinpath("axe-core", "axe.min.js")
            await self.js(source.read_text(encoding="utf-8"))  # once per document (0.5 MB)
        found = await asyncio.to_thread(
            self.driver.execute_async_script,
            "const done = arguments[0];"
            "axe.run(document, {resultTypes: ['violations']}).then(r => {"
            "setTimeout(() => delete document.body.dataset.probed, 100);"
            "done(JSON.stringify("
            "r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')"
            ".map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))))})",
        )
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
        if PICTURES:
            await self.probe(True)
            await self.screenshot(path)
            await self.probe(False)


async def at_once(
    pages: dict[Any, Page], ask: Callable[..., Awaitable[Any]], *args: Any
) -> dict[Any, Any]:
    """``ask(page, *args)`` of every page at once (each its own browser), by their keys."""
    found = await asyncio.gather(*(ask(page, *args) for page in pages.values()))
    return dict(zip(pages, found, strict=True))
