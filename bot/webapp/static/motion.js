"use strict";
// Motion: the picture redrawn, the cards that moved flown from where they were, and the
// face-up cards gone from it flown to where the game says (reduced motion: none).
const Motion = (() => {
  const FLY = 340;  // ms a card takes to its new place
  const REDUCED = matchMedia("(prefers-reduced-motion: reduce)");
  // Where this redraw's face-up cards that leave the picture fly to (a selector).
  const flight = {sink: ""};
  // Where each card (by its key) stands in ``root``.
  function rects(root) {
    const m = new Map();
    for (const e of root.querySelectorAll("[data-key]")) m.set(e.dataset.key, {r: e.getBoundingClientRect(), n: e});
    return m;
  }
  function flying(delta) {
    const n = (+document.body.dataset.flying || 0) + delta;
    document.body.dataset.flying = n;
  }
  function fly(e, from, to, done) {
    const dx = from.left + from.width / 2 - (to.left + to.width / 2), dy = from.top + from.height / 2 - (to.top + to.height / 2);
    const s = from.width / (to.width || 1);
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1 && Math.abs(s - 1) < 0.02) return done && done();
    const end = getComputedStyle(e).transform, own = end === "none" ? "" : " " + end;
    flying(1);
    e.classList.add("up");  // above the others while it flies (z-index is no animation: it
    // would run on the main thread each frame; the transform runs on the compositor)
    const a = e.animate([{transform: `translate(${dx}px,${dy}px) scale(${s})${own}`}, {transform: own || "none"}], {duration: FLY, easing: "cubic-bezier(.2,.75,.25,1)"});
    a.onfinish = a.oncancel = () => { e.classList.remove("up"); flying(-1); if (done) done(); };
  }
  // A face-up card gone from the picture flies to the sink: a copy of it, stripped of
  // anything a tap or a reader could find.
  function sink(was, to) {
    const ghost = was.n.cloneNode(true);
    for (const x of [ghost, ...ghost.querySelectorAll("*")]) for (const a of ["data-move", "data-key", "data-card", "role", "tabindex", "aria-label"]) x.removeAttribute(a);
    ghost.classList.remove("play");
    Object.assign(ghost.style, {position: "fixed", left: was.r.left + "px", top: was.r.top + "px", margin: "0"});
    ghost.style.setProperty("--cw", was.r.width + "px");
    $("fly").append(ghost);
    flying(1);
    const a = ghost.animate([{transform: "none"}, {transform: `translate(${to.left - was.r.left}px,${to.top - was.r.top}px) scale(.8)`, opacity: 0.3}], {duration: FLY, easing: "cubic-bezier(.4,0,.6,1)"});
    a.onfinish = a.oncancel = () => { flying(-1); ghost.remove(); };
  }
  // ``root`` redrawn: from ``before`` (rects of the picture before), what flies where.
  function run(root, before) {
    if (REDUCED.matches || !before.size) return;
    const after = rects(root);
    for (const [key, now] of after) {
      const was = before.get(key), anchor = !was && now.n.dataset.from && root.querySelector(now.n.dataset.from);
      const from = was ? was.r : anchor && anchor.getBoundingClientRect();
      if (from) fly(now.n, from, now.r);
    }
    const to = flight.sink && root.querySelector(flight.sink);
    if (!to) return;
    const rect = to.getBoundingClientRect();
    for (const [key, was] of before) if (!after.has(key) && was.n.dataset.card) sink(was, rect);
  }
  return {
    // Where the cards of ``root`` stand before it is redrawn (none when it is empty).
    before: root => root.childElementCount ? rects(root) : new Map(),
    run,
    sinkTo: selector => { flight.sink = selector; },
  };
})();
