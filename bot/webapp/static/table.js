"use strict";
const H = new URLSearchParams(location.hash.slice(1));
const Q = new URLSearchParams(location.search);
const INIT = H.get("tgWebAppData") || (window.Telegram && Telegram.WebApp && Telegram.WebApp.initData) || "";
const TABLE = Q.get("t") || H.get("tgWebAppStartParam") || "";
const API = location.pathname.replace(/[^/]*$/, "") + "api/";
const SUITS = {S: "♠", C: "♣", D: "♦", H: "♥"};
let S = null, pick = null, TOKEN = "";
// Each game's drawing (games.js, one file per game in its bot folder) sets DRAW[its name]
// to a function (view, main) that draws its table into main.
const DRAW = {};

function post(ev, data) {
  const proxy = window.TelegramWebviewProxy;
  if (proxy) proxy.postEvent(ev, JSON.stringify(data || {}));
  else if (window.parent !== window) window.parent.postMessage(JSON.stringify({eventType: ev, eventData: data || {}}), "*");
}
// Telegram's colours: at start from the URL, later from its theme_changed event.
function theme(p) {
  const map = {bg_color: "--bg", text_color: "--fg", hint_color: "--hint", button_color: "--btn", button_text_color: "--btnfg", secondary_bg_color: "--sec"};
  for (const k in map) if (p[k]) document.documentElement.style.setProperty(map[k], p[k]);
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}
function card(c, small) {
  const e = el("div", "card" + (small ? " sm" : ""));
  if (!c) { e.classList.add("back"); return e; }
  const suit = c.slice(-1), rank = c.slice(0, -1);
  if (suit === "D" || suit === "H") e.classList.add("r");
  e.dataset.card = c;
  e.append(el("span", "", (S && S.faces[rank]) || rank), el("span", "s", SUITS[suit]));
  return e;
}
function toast(text) {
  const t = document.getElementById("toast");
  t.textContent = text; t.style.display = "block";
  clearTimeout(toast.timer); toast.timer = setTimeout(() => { t.style.display = "none"; }, 3000);
}
async function send(data) {
  pick = null;
  const r = await fetch(API + "move", {method: "POST", headers: {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}, body: JSON.stringify({data})});
  const b = await r.json().catch(() => ({}));
  if (b.refusal) toast(b.refusal);
}
function button(m) {
  const b = el("button", "mv", m.label);
  b.dataset.card = m.card || "";
  b.onclick = () => send(m.data);
  return b;
}
// A card with one move plays it; with several (a beat of either attack card) it asks which.
function hand(cards, label, moves) {
  const box = el("div");
  box.append(el("div", "lbl", label));
  const row = el("div", "row hand");
  for (const c of cards) {
    const e = card(c), mine = moves.filter(m => m.card === c);
    if (mine.length) {
      e.classList.add("play");
      e.onclick = () => { if (mine.length === 1) send(mine[0].data); else { pick = c; draw(); } };
    }
    row.append(e);
  }
  box.append(row);
  return box;
}
// Moves without a card or a field cell (Take, Pass, Confirm), and those of a picked card.
function moveButtons(moves) {
  const box = el("div", "btns");
  for (const m of moves) if (!m.cell && (!m.card || m.card === pick)) box.append(button(m));
  return box;
}
function draw() {
  const main = document.getElementById("main");
  main.textContent = "";
  if (!S) return;
  document.documentElement.lang = S.lang;
  document.body.dataset.version = S.version;
  document.body.dataset.pick = pick || "";
  document.getElementById("status").textContent = S.status;
  subline();
  if (DRAW[S.kind]) DRAW[S.kind](S.view, main);
  document.getElementById("events").textContent = S.events.slice(-3).join(" · ");
}
// Who is looking, and the turn time left: the one line the countdown redraws (a redraw of
// the cards would drop a tap that falls in it).
function subline() {
  const sub = [];
  if (S.seat == null) sub.push(S.words.spectator);
  if (S.turn_left != null) sub.push(S.words.turn_left.replace("{n}", S.turn_left));
  document.getElementById("sub").textContent = sub.join(" · ");
}
function show(s) {
  if (!s) { document.getElementById("status").textContent = S ? S.words.gone : "—"; S = null; draw(); return; }
  if (S && s.version !== S.version) pick = null;
  S = s; draw();
  if (!document.body.dataset.drawn) document.body.dataset.drawn = Math.round(performance.now());
  clearInterval(show.tick);
  show.tick = setInterval(() => { if (S && S.turn_left > 0) { S.turn_left--; subline(); } }, 1000);
}
window.Telegram = window.Telegram || {};
Telegram.WebView = Telegram.WebView || {receiveEvent(type, data) { if (type === "theme_changed" && data) theme(data.theme_params || {}); }};
function refused() {
  document.body.dataset.refused = "1";
  document.getElementById("status").textContent = "401";
}
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
async function renew() {
  let ok;
  try { ok = await session("Bearer " + TOKEN); } catch (e) { setTimeout(renew, 3000); return; }  // offline, busy
  if (ok) follow(); else refused();
}
// Server-sent pictures, read with fetch so that the token goes in a header, never in the
// URL; the stream ends with the token it was opened with, or idle (reopened then).
async function follow() {
  if (follow.ctl) follow.ctl.abort();
  const ctl = follow.ctl = new AbortController();
  let buf = "";
  try {
    const r = await fetch(API + "events?t=" + encodeURIComponent(TABLE), {headers: {"Authorization": "Bearer " + TOKEN}, signal: ctl.signal});
    if (!r.ok) throw new Error(r.status);
    follow.wait = 1000;
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      const blocks = (buf + value).split("\n\n");
      buf = blocks.pop();
      for (const b of blocks) if (b.startsWith("data: ")) show(JSON.parse(b.slice(6)));
    }
  } catch (e) { /* cut off, refused or replaced: below */ }
  if (ctl !== follow.ctl) return;  // a newer stream took its place
  if (S) document.getElementById("sub").textContent = S.words.offline;
  setTimeout(renew, follow.wait);
  follow.wait = Math.min(30000, (follow.wait || 1000) * 2);
}
async function start() {
  try { theme(JSON.parse(H.get("tgWebAppThemeParams") || "{}")); } catch (e) { /* no theme: ours */ }
  post("web_app_ready"); post("web_app_expand");
  TOKEN = sessionStorage.getItem("s:" + TABLE) || "";
  if (!(TOKEN && await session("Bearer " + TOKEN)) && !await session("tma " + INIT)) return refused();
  const r = await fetch(API + "state?t=" + encodeURIComponent(TABLE), {headers: {"Authorization": "Bearer " + TOKEN}});
  if (r.status === 401) return refused();
  const body = await r.json().catch(() => null);
  if (body && body.refusal) toast(body.refusal);
  show(r.ok ? body : null);
  follow();
}
// The games' drawings load after this file: start once the page has run them all.
document.addEventListener("DOMContentLoaded", start);
