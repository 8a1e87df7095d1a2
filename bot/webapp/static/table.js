"use strict";
// The Mini App's shell: the session and the live pictures, Telegram's look and feel
// (theme, viewport, haptics, MainButton, closing confirmation), and the kit a game's
// page module draws its table with (CT below; docs/webapp.md, "A game's page").
const CT = (() => {
  const H = new URLSearchParams(location.hash.slice(1));
  const Q = new URLSearchParams(location.search);
  const TG = window.Telegram && Telegram.WebApp;
  const INIT = H.get("tgWebAppData") || (TG && TG.initData) || "";
  // The table: ``t`` in a Mini App button's address; from the group's direct link
  // (t.me/<bot>/<app>?startapp=…) Telegram puts its parameter in the query as
  // tgWebAppStartParam (and signs it in initData's start_param, which the server reads).
  const TABLE = Q.get("t") || Q.get("tgWebAppStartParam") || H.get("tgWebAppStartParam") || "";
  const API = location.pathname.replace(/[^/]*$/, "") + "api/";
  // Inside Telegram the main action is its MainButton; in a plain browser (the tests, a
  // look without Telegram) it is a button of the page.
  const PLATFORM = H.get("tgWebAppPlatform") || "";
  const IN_TELEGRAM = !!(window.TelegramWebviewProxy || (PLATFORM && PLATFORM !== "unknown"));
  const REDUCED = matchMedia("(prefers-reduced-motion: reduce)");
  const $ = id => document.getElementById(id);
  const games = {};
  let S = null, prev = null, pick = null, TOKEN = "", main = null, sinkTo = "", sent = null;

  function post(ev, data) {
    const proxy = window.TelegramWebviewProxy;
    if (proxy) proxy.postEvent(ev, JSON.stringify(data || {}));
    else if (window.parent !== window) window.parent.postMessage(JSON.stringify({eventType: ev, eventData: data || {}}), "*");
  }

  // ----- Telegram's look: its colours (AA contrast kept), its viewport and safe areas

  const rgb = h => { const m = /^#?([0-9a-f]{6})$/i.exec(h || ""); return m ? [0, 2, 4].map(i => parseInt(m[1].substr(i, 2), 16)) : null; };
  const hex = c => "#" + c.map(x => Math.round(x).toString(16).padStart(2, "0")).join("");
  const lum = c => { const l = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
  const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  // ``c`` moved towards ``to`` until it stands out 4.5:1 against ``on`` (WCAG AA).
  function legible(c, on, to) {
    for (let k = 0; k < 20 && contrast(c, on) < 4.5; k++) c = c.map((v, i) => v + (to[i] - v) * 0.15);
    return c;
  }
  const VARS = {bg_color: "--bg", text_color: "--fg", hint_color: "--hint", button_color: "--btn", button_text_color: "--btnfg", secondary_bg_color: "--sec", link_color: "--link", destructive_text_color: "--bad"};
  const THEME = {bg_color: "#ffffff", text_color: "#222222", hint_color: "#707579", button_color: "#2481cc", button_text_color: "#ffffff", secondary_bg_color: "#f1f1f4", link_color: "#2481cc", destructive_text_color: "#d32f2f"};
  function theme(p) {
    const t = Object.assign({}, THEME, p || {}), root = document.documentElement.style;
    const bg = rgb(t.bg_color) || rgb(THEME.bg_color), fg = rgb(t.text_color) || rgb(THEME.text_color);
    const dark = lum(bg) < 0.2;
    if (dark && !(p && p.secondary_bg_color)) t.secondary_bg_color = hex(bg.map(v => v + 18));
    for (const k in VARS) if (rgb(t[k])) root.setProperty(VARS[k], t[k]);
    root.setProperty("--hint", hex(legible(rgb(t.hint_color) || fg, bg, fg)));
    const btnfg = rgb(t.button_text_color) || [255, 255, 255];
    root.setProperty("--btn", hex(legible(rgb(t.button_color) || rgb(THEME.button_color), btnfg, lum(btnfg) > 0.5 ? [0, 0, 0] : [255, 255, 255])));
    document.documentElement.dataset.theme = dark ? "dark" : "light";
  }
  function insets(kind, d) {
    for (const side of ["top", "bottom", "left", "right"]) document.documentElement.style.setProperty(`--${kind}-${side}`, (+d[side] || 0) + "px");
  }
  const EVENTS = {
    theme_changed: d => theme(d.theme_params),
    viewport_changed: d => { if (d.height) document.documentElement.style.setProperty("--vh", d.height + "px"); },
    safe_area_changed: d => insets("safe", d),
    content_safe_area_changed: d => insets("content", d),
    main_button_pressed: () => { const m = mainButton.move; if (m) send(m); },
  };
  window.Telegram = window.Telegram || {};
  Telegram.WebView = Telegram.WebView || {};
  const inherited = Telegram.WebView.receiveEvent;
  Telegram.WebView.receiveEvent = (type, data) => {
    if (EVENTS[type]) EVENTS[type](data || {});
    if (inherited) inherited(type, data);
  };
  // Telegram's web clients show the page in a frame and send it the same events as
  // messages from the frame's parent: {eventType, eventData} as JSON.
  addEventListener("message", e => {
    if (e.source !== window.parent || typeof e.data !== "string") return;
    let m = null;
    try { m = JSON.parse(e.data); } catch (err) { return; }
    if (m && typeof m.eventType === "string") Telegram.WebView.receiveEvent(m.eventType, m.eventData);
  });
  if (window.parent !== window && !window.TelegramWebviewProxy) post("iframe_ready", {reload_supported: false});

  // ----- Telegram's feel: haptics, closing confirmation, MainButton

  function haptic(kind) {
    const styles = {tap: {type: "impact", impact_style: "light"}, error: {type: "notification", notification_type: "error"}, pick: {type: "selection_change"}};
    if (styles[kind]) post("web_app_trigger_haptic_feedback", styles[kind]);
    document.body.dataset.haptic = kind;
  }
  function closing(need) {
    if (closing.need !== need) post("web_app_setup_closing_behavior", {need_confirmation: need});
    closing.need = need;
  }
  // The one main action (Take, Pass, I'm back, a set-up's confirmation) on Telegram's
  // MainButton; the page's own button carries it too, shown outside Telegram.
  function mainButton(move) {
    mainButton.move = move;
    const s = getComputedStyle(document.documentElement);
    post("web_app_setup_main_button", move
      ? {is_visible: true, is_active: true, text: move.label, color: s.getPropertyValue("--btn").trim(), text_color: s.getPropertyValue("--btnfg").trim()}
      : {is_visible: false});
  }

  // ----- the kit a game draws with

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function svg(id, cls) {
    const ns = "http://www.w3.org/2000/svg", s = document.createElementNS(ns, "svg"), u = document.createElementNS(ns, "use");
    s.setAttribute("class", cls); s.setAttribute("aria-hidden", "true");
    u.setAttribute("href", "#s" + id);
    s.append(u);
    return s;
  }
  // A card's name in the reader's language ("seven of hearts"), from the catalogues.
  function name(c) {
    const n = S.cardnames, suit = c.slice(-1), rank = c.slice(0, -1);
    return n.card.replace("{rank}", n.ranks[rank] || rank).replace("{suit}", n.suits[suit] || suit);
  }
  // A card as the chat writes it: "7♣", "Q♥" in the reader's letters.
  function short(c) {
    return (S.faces[c.slice(0, -1)] || c.slice(0, -1)) + {S: "♠", C: "♣", D: "♦", H: "♥"}[c.slice(-1)];
  }
  // A text of the catalogues with its number: the form Intl.PluralRules picks.
  function count(word, n) {
    const forms = S.words[word];
    const text = typeof forms === "string" ? forms : forms[new Intl.PluralRules(S.lang).select(n)] || forms.other;
    return text.replace("{n}", n);
  }
  // A card drawn by the page: its corner (rank and suit) and a big suit in the middle,
  // vector shapes and text, sharp at any size (--cw sets its width). ``c`` null: its back.
  // opts.key: the element's identity across pictures (motion; a face-up card's is its
  // code); opts.from: a selector it flies in from when it is new.
  function card(c, opts) {
    const o = opts || {}, e = el("div", "card" + (o.small ? " sm" : ""));
    e.setAttribute("role", "img");
    if (o.key || c) e.dataset.key = o.key || c;
    if (o.from) e.dataset.from = o.from;
    if (!c) { e.classList.add("back"); e.setAttribute("aria-label", S.words.card_back); return e; }
    const suit = c.slice(-1), rank = c.slice(0, -1);
    e.classList.add(suit === "D" || suit === "H" ? "red" : "black");
    e.dataset.card = c;
    e.setAttribute("aria-label", name(c));
    const corner = el("span", "ix");
    corner.append(el("b", "", S.faces[rank] || rank), svg(suit, "s"));
    e.append(corner, svg(suit, "pip"));
    return e;
  }
  // Cards in a fan (a hand, an opponent's backs): overlapped to fit ``width`` pixels,
  // turned a little each, the playable ones raised by CSS (.play).
  function fan(cards, opts) {
    const o = opts || {}, box = el("div", "fan" + (o.cls ? " " + o.cls : "")), n = cards.length;
    const cw = o.cw || 56, width = o.width || main.clientWidth || 340, spread = o.spread == null ? 3 : o.spread;
    const step = n > 1 ? Math.min(cw * 0.62, (width - cw) / (n - 1)) : 0;
    box.style.setProperty("--cw", cw + "px");
    box.style.width = (cw + step * Math.max(0, n - 1)) + "px";
    cards.forEach((e, i) => {
      const mid = i - (n - 1) / 2;
      e.style.left = (i * step) + "px";
      e.style.setProperty("--r", (mid * spread * Math.min(1, 8 / n)) + "deg");
      e.style.setProperty("--y", (Math.abs(mid) ** 1.6 * spread * 0.35) + "px");
      box.append(e);
    });
    return box;
  }
  // An element a player taps to act: data-move (the action's token), a button for a
  // reader and the keyboard; a tap sends the move.
  function actionable(e, token, label, run) {
    e.dataset.move = token;
    e.setAttribute("role", "button");
    e.tabIndex = 0;
    if (label) e.setAttribute("aria-label", label);
    e.onclick = run;
    e.onkeydown = k => { if (k.key === "Enter" || k.key === " ") { k.preventDefault(); run(); } };
    return e;
  }
  // A card of his hand made playable: with one move it plays it, with several it asks
  // which (the sheet of choices; the card's token is "pick:<card>").
  // ``say`` (optional): a choice's words, where the game has better ones than the chat's
  // button label.
  function playable(e, c, moves, say) {
    e.classList.add("play");
    if (moves.length === 1) return actionable(e, moves[0].token, name(c) + " — " + moves[0].label, () => send(moves[0]));
    return actionable(e, "pick:" + c, name(c), () => choose(c, moves, say));
  }
  function choose(c, moves, say) {
    pick = c; choose.say = say;
    haptic("pick");
    const sheet = $("sheet");
    sheet.textContent = "";
    sheet.setAttribute("aria-label", name(c));
    sheet.append(el("div", "lbl", name(c)));
    for (const m of moves) sheet.append(button(say ? Object.assign({}, m, {label: say(m)}) : m));
    const cancel = el("button", "sec", S.words.cancel);
    cancel.onclick = unpick;
    sheet.append(cancel);
    sheet.hidden = false;
    document.body.dataset.pick = c;
    sheet.querySelector("button").focus();
  }
  // The choice closed: by Cancel, a move sent, or a new picture (its moves are gone).
  function unpick() {
    pick = null;
    const sheet = $("sheet");
    sheet.hidden = true; sheet.textContent = "";
    document.body.dataset.pick = "";
  }
  function button(m, cls) {
    const b = el("button", "mv" + (cls ? " " + cls : ""), m.label);
    b.dataset.move = m.token;
    if (m.card) b.dataset.card = m.card;
    b.onclick = () => send(m);
    return b;
  }
  // The moves that are no card's (Take, Pass, I'm back, a confirmation) as buttons under
  // the table; with exactly one, it is the main one (Telegram's MainButton).
  function actions(moves) {
    const box = $("actions");
    box.textContent = "";
    for (const m of moves) box.append(button(m, moves.length === 1 ? "main" : ""));
    box.hidden = !moves.length || (IN_TELEGRAM && moves.length === 1);
    mainButton(moves.length === 1 ? moves[0] : null);
  }

  // ----- motion: the picture redrawn, the cards that moved flown from where they were

  const FLY = 340;  // ms a card takes to its new place
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
  function motion(before) {
    if (REDUCED.matches || !before.size) return;
    const after = rects(main);
    for (const [key, now] of after) {
      const was = before.get(key), anchor = !was && now.n.dataset.from && main.querySelector(now.n.dataset.from);
      const from = was ? was.r : anchor && anchor.getBoundingClientRect();
      if (from) fly(now.n, from, now.r);
    }
    // A face-up card gone from the picture flies to where the game says (the discard,
    // the taker): a copy of it, stripped of anything a tap or a reader could find.
    const sink = sinkTo && main.querySelector(sinkTo);
    if (!sink) return;
    const to = sink.getBoundingClientRect();
    for (const [key, was] of before) {
      if (after.has(key) || !was.n.dataset.card) continue;
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
  }

  // ----- the picture and the moves

  function toast(text) {
    const t = $("toast");
    t.textContent = text; t.classList.add("on");
    clearTimeout(toast.timer); toast.timer = setTimeout(() => t.classList.remove("on"), 3500);
  }
  // One move per picture: a second tap before the picture changes would be refused as
  // stale (its position stamp), so it is not sent.
  async function send(m) {
    if (sent === S.version) return;
    sent = S.version; unpick();
    haptic("tap");
    try {
      const r = await fetch(API + "move", {method: "POST", headers: {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}, body: JSON.stringify({data: m.data})});
      const b = await r.json().catch(() => ({}));
      if (b.refusal) refusal(b.refusal);
      if (!r.ok) sent = null;
    } catch (e) {
      sent = null;
      if (S) toast(S.words.offline);
    }
  }
  // A refused move: the engine's reason, as in the chat, and an error pulse.
  function refusal(text) {
    toast(text);
    document.body.dataset.refusal = text;
    haptic("error");
  }
  function draw() {
    const t0 = performance.now(), before = main.childElementCount ? rects(main) : new Map();
    main.textContent = "";
    sinkTo = "";
    if (!S) { actions([]); closing(false); return; }
    document.documentElement.lang = S.lang;
    document.body.dataset.version = S.version;
    document.body.dataset.pick = pick || "";
    document.body.dataset.kind = S.kind;
    $("status").textContent = S.status;
    subline();
    const game = games[S.kind];
    if (game) game.draw(S, main, prev);
    const moves = S.moves.filter(m => !m.card && !m.cell);
    actions(moves);
    $("events").textContent = S.events.slice(-3).join(" · ");
    closing(S.seat != null && S.phase === "playing");
    motion(before);
    document.body.dataset.drawms = (performance.now() - t0).toFixed(1);  // its cost, for the tests
  }
  // Who is looking, and the turn time left: the one line the countdown redraws (a redraw of
  // the cards would drop a tap that falls in it).
  function subline() {
    const sub = [];
    if (S.seat == null) sub.push(S.words.spectator);
    if (S.turn_left != null) sub.push(S.words.turn_left.replace("{n}", S.turn_left));
    if (!live) sub.unshift(S.words.offline);
    $("sub").textContent = sub.join(" · ");
  }
  function show(s) {
    if (!s) { $("status").textContent = S ? S.words.gone : "—"; S = null; draw(); return; }
    // A choice stays open through a picture that leaves its moves as they were (the
    // table's bookkeeping changes its version too); otherwise it closes.
    if (pick && S && s.version !== S.version) {
      const of = x => JSON.stringify(x.moves.filter(m => m.card === pick).map(m => m.data));
      if (of(s) === of(S)) choose(pick, s.moves.filter(m => m.card === pick), choose.say); else unpick();
    }
    const mine = x => x && x.seat != null && x.actor === x.seat && x.moves.length > 0;
    const turn = mine(s) && !(S && mine(S) && S.version === s.version);
    prev = S; S = s;
    draw();
    if (turn && !(prev && mine(prev))) haptic("tap");
    if (!document.body.dataset.drawn) document.body.dataset.drawn = Math.round(performance.now());
    clearInterval(show.tick);
    show.tick = setInterval(() => { if (S && S.turn_left > 0) { S.turn_left--; subline(); } }, 1000);
  }
  // No session: a forged or replayed opening, or one that slept past its session (it
  // keeps its last picture, with nothing to tap, and says to open the table again).
  function refused() {
    document.body.dataset.refused = "1";
    clearTimeout(retry);
    if (!S) { $("status").textContent = "401"; return; }
    clearInterval(show.tick);
    S.moves = []; S.turn_left = null;
    online(true);
    draw();
    $("status").textContent = S.words.expired;
  }

  // ----- the session and the live stream

  // The initData is traded once for a session token (a second trade is refused as a
  // replay); the token is renewed with itself before it runs out, and kept for a reload.
  // A busy server (429, 503) is asked again later; 401 or 404: no session.
  async function session(auth) {
    const r = await fetch(API + "session?t=" + encodeURIComponent(TABLE), {method: "POST", headers: {"Authorization": auth}});
    if (r.status === 429 || r.status >= 500) throw new Error("busy");
    if (!r.ok) return false;
    const b = await r.json();
    TOKEN = b.token;
    sessionStorage.setItem("s:" + TABLE, TOKEN);
    clearTimeout(session.timer);  // the last minute of the initData's day: no renewal
    if (b.expires_in > 60) session.timer = setTimeout(renew, b.expires_in * 1000 * 2 / 3);
    return true;
  }
  // Live, or not: a stream that ended is opened again at once when it had lived a while
  // (the server ends one when the session renews, when it has been idle, when the process
  // stops), else after a growing wait; meanwhile the page says it is offline. A stream that
  // has been quiet for longer than the server's keep-alives allow is taken for dead (a
  // phone that slept, a network that changed): when the page wakes, is shown again or the
  // network comes back, it reconnects now rather than at its next retry.
  const STALE = 12000;  // ms without a byte; the server sends one every 5 s
  let live = true, heard = 0, retry = 0;
  function online(on) {
    live = on;
    document.body.dataset.offline = on ? "" : "1";
    if (S) subline();
  }
  function later() {
    const wait = follow.wait || 500;
    follow.wait = Math.min(8000, wait * 2);
    clearTimeout(retry);
    retry = setTimeout(renew, wait * (0.75 + Math.random() / 2));
  }
  function wake() {
    if (live && performance.now() - heard < STALE) return;
    follow.wait = 0;
    clearTimeout(retry);
    renew();
  }
  async function renew() {
    let ok;
    try { ok = await session("Bearer " + TOKEN); } catch (e) { online(false); later(); return; }  // offline, busy
    if (ok) follow(); else refused();
  }
  // Server-sent pictures, read with fetch so that the token goes in a header, never in the
  // URL; the stream ends with the token it was opened with, or idle (reopened then).
  async function follow() {
    if (follow.ctl) follow.ctl.abort();
    const ctl = follow.ctl = new AbortController();
    let buf = "", opened = 0, ended = false;
    try {
      const r = await fetch(API + "events?t=" + encodeURIComponent(TABLE), {headers: {"Authorization": "Bearer " + TOKEN}, signal: ctl.signal});
      if (!r.ok) throw new Error(r.status);
      opened = heard = performance.now();
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const {value, done} = await reader.read();
        if (done) { ended = true; break; }
        heard = performance.now();
        if (!live) { online(true); follow.wait = 0; }
        const blocks = (buf + value).split("\n\n");
        buf = blocks.pop();
        for (const b of blocks) if (b.startsWith("data: ")) show(JSON.parse(b.slice(6)));
      }
    } catch (e) { /* cut off, refused or replaced: below */ }
    if (ctl !== follow.ctl) return;  // a newer stream took its place
    if (ended && performance.now() - opened > 2000) { follow.wait = 0; renew(); return; }
    online(false);
    later();
  }
  addEventListener("online", wake);
  addEventListener("offline", () => { online(false); if (follow.ctl) follow.ctl.abort(); });
  addEventListener("pageshow", wake);
  document.addEventListener("visibilitychange", wake);
  setInterval(() => { if (heard && performance.now() - heard > STALE && follow.ctl) follow.ctl.abort(); }, 3000);
  async function start() {
    main = $("main");
    let p = null;
    try { p = JSON.parse(H.get("tgWebAppThemeParams") || "null"); } catch (e) { /* no theme: ours */ }
    theme(p);
    post("web_app_ready"); post("web_app_expand"); post("web_app_request_theme");
    post("web_app_request_viewport"); post("web_app_request_safe_area"); post("web_app_request_content_safe_area");
    addEventListener("resize", () => { if (S) draw(); });
    TOKEN = sessionStorage.getItem("s:" + TABLE) || "";
    if (!(TOKEN && await session("Bearer " + TOKEN)) && !await session("tma " + INIT)) return refused();
    const r = await fetch(API + "state?t=" + encodeURIComponent(TABLE), {headers: {"Authorization": "Bearer " + TOKEN}});
    if (r.status === 401) return refused();
    const body = await r.json().catch(() => null);
    if (body && body.refusal) toast(body.refusal);
    show(r.ok ? body : null);
    follow();
  }
  // The games' page modules load after this file: start once the page has run them all.
  document.addEventListener("DOMContentLoaded", start);

  return {
    // A game's page module: CT.game(kind, {draw(picture, root, previous)}).
    game: (kind, module) => { games[kind] = module; },
    el, card, fan, name, short, count, suit: s => svg(s, "suit"), actionable, playable, send, haptic,
    // Where face-up cards that leave the picture fly to in this redraw (a selector).
    sink: selector => { sinkTo = selector; },
    // The moves of ``card`` (its own hand's, or the dummy's: ``filter``).
    movesOf: (c, filter) => S.moves.filter(m => m.card === c && (!filter || filter(m))),
  };
})();
