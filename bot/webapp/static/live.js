"use strict";
// The session and the live stream: the initData traded once for a session token, the
// token renewed before it runs out, the table's pictures followed as server-sent events,
// and the moves sent. What it hears goes to the page's handlers (table.js, Live.start).
const Live = (() => {
  const Q = new URLSearchParams(location.search);
  const TG = window.Telegram && Telegram.WebApp;
  const INIT = Bridge.hash.get("tgWebAppData") || (TG && TG.initData) || "";
  // The table: ``t`` in a Mini App button's address; from the group's direct link
  // (t.me/<bot>/<app>?startapp=…) Telegram puts its parameter in the query as
  // tgWebAppStartParam (and signs it in initData's start_param, which the server reads).
  const TABLE = Q.get("t") || Q.get("tgWebAppStartParam") || Bridge.hash.get("tgWebAppStartParam") || "";
  const API = location.pathname.replace(/[^/]*$/, "") + "api/";
  const STALE = 12000;  // ms without a byte; the server sends one every 5 s
  // The session and its stream: the token, its renewal's timer; whether the page is live,
  // when it last heard a byte, the retry's timer and its next wait, the stream open now;
  // the wait the server asked for before its stream is opened again (its ``retry:``);
  // the version of the picture a move was sent from; the page's handlers.
  // whether the session was refused for good (halted: nothing more is heard or asked).
  const link = {token: "", renewal: 0, live: true, heard: 0, retry: 0, wait: 0, back: 0, stream: null, sent: null, to: null, halted: false};
  const bearer = () => ({"Authorization": "Bearer " + link.token});

  // The initData is traded once for a session token (a second trade is refused as a
  // replay); the token is renewed with itself before it runs out, and kept for a reload.
  // A busy server (429, 503) is asked again later; 401 or 404: no session.
  async function session(auth) {
    const r = await fetch(API + "session?t=" + encodeURIComponent(TABLE), {method: "POST", headers: {"Authorization": auth}});
    if (r.status === 429 || r.status >= 500) throw new Error("busy");
    if (!r.ok) return false;
    const b = await r.json();
    link.token = b.token;
    sessionStorage.setItem("s:" + TABLE, link.token);
    clearTimeout(link.renewal);  // the last minute of the initData's day: no renewal
    if (b.expires_in > 60 && !link.halted) link.renewal = setTimeout(renew, b.expires_in * 1000 * 2 / 3);
    return true;
  }
  // Live, or not: a stream that ended is opened again at once when it had lived a while
  // (the server ends one when the session renews, when it has been idle, when the process
  // stops), else after a growing wait; meanwhile the page says it is offline. So is one
  // the server ended with a ``retry:`` (its table could not be read as a replica holds
  // it, and every page of the table heard so at once): the wait's jitter spreads them. A
  // stream that has been quiet for longer than the server's keep-alives allow is taken for
  // dead (a phone that slept, a network that changed): when the page wakes, is shown again
  // or the network comes back, it reconnects now rather than at its next retry.
  function online(on) {
    if (link.halted && !on) return;  // no session: it says so, not that it is offline
    link.live = on;
    document.body.dataset.offline = on ? "" : "1";
    if (link.to) link.to.online();
  }
  function later() {
    const wait = link.wait || 500;
    link.wait = Math.min(8000, wait * 2);
    clearTimeout(link.retry);
    link.retry = setTimeout(renew, wait * (0.75 + Math.random() / 2));
  }
  function wake() {
    if (link.halted || link.live && performance.now() - link.heard < STALE) return;
    link.wait = 0;
    clearTimeout(link.retry);
    renew();
  }
  async function renew() {
    let ok;
    if (link.halted) return;
    try { ok = await session("Bearer " + link.token); } catch (e) { if (!link.halted) { online(false); later(); } return; }  // offline, busy
    if (link.halted) return;
    if (ok) follow(); else link.to.refused();
  }
  // The pictures of a stream's bytes, on from ``buf`` (what came before its last blank
  // line); returns what is left. A ``retry:`` is no sign of being live.
  function pictures(buf, value) {
    link.heard = performance.now();
    const blocks = (buf + value).split("\n\n");
    const left = blocks.pop();
    for (const b of blocks) {
      if (b.startsWith("retry: ")) { link.back = +b.slice(7); continue; }
      if (!link.live) { online(true); link.wait = 0; }
      if (b.startsWith("data: ")) show(JSON.parse(b.slice(6)));
    }
    return left;
  }
  // A picture to the page. A bug in its drawing is told on the console (and so to the
  // tests' watch), not taken for a cut stream: the page stays live, and draws the next.
  function show(picture) {
    try { link.to.show(picture); } catch (e) { console.error("the picture could not be drawn:", e); }
  }
  // Server-sent pictures, read with fetch so that the token goes in a header, never in the
  // URL; the stream ends with the token it was opened with, or idle (reopened then).
  async function follow() {
    if (link.stream) link.stream.abort();
    const ctl = link.stream = new AbortController();
    let buf = "", opened = 0, ended = false;
    link.back = 0;
    try {
      const r = await fetch(API + "events?t=" + encodeURIComponent(TABLE), {headers: bearer(), signal: ctl.signal});
      if (!r.ok) throw new Error(r.status);
      opened = link.heard = performance.now();
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const {value, done} = await reader.read();
        if (done) { ended = true; break; }
        if (ctl !== link.stream) break;  // halted, or replaced: what it still held is stale
        buf = pictures(buf, value);
      }
    } catch (e) { /* cut off, refused or replaced: below */ }
    if (ctl !== link.stream) return;  // a newer stream took its place
    if (ended && !link.back && performance.now() - opened > 2000) { link.wait = 0; renew(); return; }
    online(false);
    link.wait = Math.max(link.wait, link.back);
    later();
  }
  addEventListener("online", wake);
  addEventListener("offline", () => { online(false); if (link.stream) link.stream.abort(); });
  addEventListener("pageshow", wake);
  document.addEventListener("visibilitychange", wake);
  setInterval(() => { if (link.heard && performance.now() - link.heard > STALE && link.stream) link.stream.abort(); }, 3000);

  // One move per picture: a second tap before the picture changes would be refused as
  // stale (its position stamp), so it is not sent.
  async function send(m) {
    const S = Shown.picture;
    if (link.sent === S.version) return;
    link.sent = S.version; Kit.unpick();
    Bridge.haptic("tap");
    try {
      const r = await fetch(API + "move", {method: "POST", headers: {...bearer(), "Content-Type": "application/json"}, body: JSON.stringify({data: m.data})});
      const b = await r.json().catch(() => ({}));
      if (b.refusal) link.to.refusal(b.refusal);
      if (!r.ok) link.sent = null;
    } catch (e) {
      link.sent = null;
      if (Shown.picture) link.to.notice(Shown.picture.words.offline);
    }
  }
  // The page's session (kept from a reload, or traded for), its first picture, then the
  // stream. ``to``: the page's handlers: show(picture or null), refused(), refusal(text),
  // notice(text), online().
  async function start(to) {
    link.to = to;
    link.token = sessionStorage.getItem("s:" + TABLE) || "";
    if (!(link.token && await session("Bearer " + link.token)) && !await session("tma " + INIT)) return to.refused();
    const r = await fetch(API + "state?t=" + encodeURIComponent(TABLE), {headers: bearer()});
    if (r.status === 401) return to.refused();
    const body = await r.json().catch(() => null);
    if (body && body.refusal) to.notice(body.refusal);
    show(r.ok ? body : null);
    follow();
  }
  return {
    start, send, online,
    isLive: () => link.live,
    // No session: no retry, no renewal, and the open stream cut (a picture it still held,
    // say one that came while the page slept, would offer moves again).
    halt: () => {
      link.halted = true;
      clearTimeout(link.retry); clearTimeout(link.renewal);
      if (link.stream) link.stream.abort();
      link.stream = null;
    },
  };
})();
