"use strict";
// The page: each picture the session brings drawn (the shell's part, then the game's page
// module's), the turn's countdown, the refusals and notices, and CT, what a game's page
// module is given (docs/webapp.md, "A game's page"). Loaded after bridge.js, theme.js,
// kit.js, motion.js and live.js, before games.js.
const Table = (() => {
  const games = {};
  // The timers of the turn's countdown and of the notice shown.
  const timers = {tick: 0, toast: 0};

  function toast(text) {
    const t = $("toast");
    t.textContent = text; t.classList.add("on");
    clearTimeout(timers.toast); timers.toast = setTimeout(() => t.classList.remove("on"), 3500);
  }
  // A refused move: the engine's reason, as in the chat, and an error pulse.
  function refusal(text) {
    toast(text);
    document.body.dataset.refusal = text;
    Bridge.haptic("error");
  }
  function draw() {
    const S = Shown.picture, main = Shown.root;
    const t0 = performance.now(), before = Motion.before(main);
    main.textContent = "";
    Motion.sinkTo("");
    if (!S) { Kit.actions([]); Bridge.closing(false); return; }
    document.documentElement.lang = S.lang;
    document.body.dataset.version = S.version;
    document.body.dataset.pick = Shown.pick || "";
    document.body.dataset.kind = S.kind;
    $("status").textContent = S.status;
    subline();
    const game = games[S.kind];
    if (game) game.draw(S, main, Shown.previous);
    Kit.actions(S.moves.filter(m => !m.card && !m.cell));
    $("events").textContent = S.events.slice(-3).join(" · ");
    Bridge.closing(S.seat != null && S.phase === "playing");
    Motion.run(main, before);
    document.body.dataset.drawms = (performance.now() - t0).toFixed(1);  // its cost, for the tests
  }
  // Who is looking, and the turn time left: the one line the countdown redraws (a redraw of
  // the cards would drop a tap that falls in it).
  function subline() {
    const S = Shown.picture, sub = [];
    if (S.seat == null) sub.push(S.words.spectator);
    if (S.turn_left != null) sub.push(S.words.turn_left.replace("{n}", S.turn_left));
    if (!Live.isLive()) sub.unshift(S.words.offline);
    $("sub").textContent = sub.join(" · ");
  }
  // A choice stays open through a picture that leaves its moves as they were (the
  // table's bookkeeping changes its version too); otherwise it closes.
  function keepPick(s) {
    const S = Shown.picture, pick = Shown.pick;
    if (!pick || !S || s.version === S.version) return;
    const of = x => JSON.stringify(x.moves.filter(m => m.card === pick).map(m => m.data));
    if (of(s) === of(S)) Kit.choose(pick, s.moves.filter(m => m.card === pick), Shown.say); else Kit.unpick();
  }
  function show(s) {
    if (!s) { $("status").textContent = Shown.picture ? Shown.picture.words.gone : "—"; Shown.picture = null; draw(); return; }
    keepPick(s);
    const S = Shown.picture, mine = x => x && x.seat != null && x.actor === x.seat && x.moves.length > 0;
    const turn = mine(s) && !(S && mine(S) && S.version === s.version);
    Shown.previous = S; Shown.picture = s;
    draw();
    if (turn && !(S && mine(S))) Bridge.haptic("tap");
    if (!document.body.dataset.drawn) document.body.dataset.drawn = Math.round(performance.now());
    clearInterval(timers.tick);
    timers.tick = setInterval(() => { if (Shown.picture && Shown.picture.turn_left > 0) { Shown.picture.turn_left--; subline(); } }, 1000);
  }
  // No session: a forged or replayed opening, or one that slept past its session (it
  // keeps its last picture, with nothing to tap, and says to open the table again).
  function refused() {
    document.body.dataset.refused = "1";
    Live.halt();
    const S = Shown.picture;
    if (!S) { $("status").textContent = "401"; return; }
    clearInterval(timers.tick);
    S.moves = []; S.turn_left = null;
    Live.online(true);
    draw();
    $("status").textContent = S.words.expired;
  }
  function start() {
    Shown.root = $("main");
    Theme.start();
    for (const ev of ["web_app_ready", "web_app_expand", "web_app_request_theme", "web_app_request_viewport", "web_app_request_safe_area", "web_app_request_content_safe_area"]) Bridge.post(ev);
    addEventListener("resize", () => { if (Shown.picture) draw(); });
    Live.start({show, refused, refusal, notice: toast, online: () => { if (Shown.picture) subline(); }});
  }
  // The games' page modules load after this file: start once the page has run them all.
  document.addEventListener("DOMContentLoaded", start);
  return {game: (kind, module) => { games[kind] = module; }};
})();

// What a game's page module is given.
const CT = {
  // A game's page module: CT.game(kind, {draw(picture, root, previous)}).
  game: Table.game,
  el: Kit.el, card: Kit.card, fan: Kit.fan, name: Kit.name, short: Kit.short, count: Kit.count, suit: Kit.suit,
  actionable: Kit.actionable, playable: Kit.playable, send: Live.send, haptic: Bridge.haptic,
  // Where face-up cards that leave the picture fly to in this redraw (a selector).
  sink: Motion.sinkTo,
  // The moves of ``card`` (its own hand's, or the dummy's: ``filter``).
  movesOf: (c, filter) => Shown.picture.moves.filter(m => m.card === c && (!filter || filter(m))),
};
