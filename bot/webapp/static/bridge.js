"use strict";
// Telegram's side of the page, both ways: the events Telegram sends it (its apps' web
// views call Telegram.WebView.receiveEvent; its web clients post the same events from the
// frame's parent) and those it sends Telegram (to its apps' proxy, or posted to the
// parent); and Telegram's feel made of them: haptics, the closing confirmation, the
// MainButton (docs/webapp.md).
const Bridge = (() => {
  const hash = new URLSearchParams(location.hash.slice(1));
  const platform = hash.get("tgWebAppPlatform") || "";
  // Telegram's web clients (web.telegram.org, its /k/ and /a/ alike: one origin), the
  // only parent the page talks to either way; the server lets no other one frame it
  // (bot/webapp/page.py, TELEGRAM_WEB).
  const WEB = "https://web.telegram.org";
  // What the page told Telegram last: whether closing asks first, the MainButton's move.
  const told = {closing: null, main: null};
  const handlers = {};

  function post(ev, data) {
    const proxy = window.TelegramWebviewProxy;
    if (proxy) proxy.postEvent(ev, JSON.stringify(data || {}));
    else if (window.parent !== window) window.parent.postMessage(JSON.stringify({eventType: ev, eventData: data || {}}), WEB);
  }
  window.Telegram = window.Telegram || {};
  Telegram.WebView = Telegram.WebView || {};
  const inherited = Telegram.WebView.receiveEvent;
  Telegram.WebView.receiveEvent = (type, data) => {
    if (handlers[type]) handlers[type](data || {});
    if (inherited) inherited(type, data);
  };
  // Telegram's web clients send them as messages from the frame's parent: {eventType,
  // eventData} as JSON. A message of any other origin is not Telegram's.
  addEventListener("message", e => {
    if (e.source !== window.parent || e.origin !== WEB || typeof e.data !== "string") return;
    let m = null;
    try { m = JSON.parse(e.data); } catch (err) { return; }
    if (m && typeof m.eventType === "string") Telegram.WebView.receiveEvent(m.eventType, m.eventData);
  });
  if (window.parent !== window && !window.TelegramWebviewProxy) post("iframe_ready", {reload_supported: false});

  function haptic(kind) {
    const styles = {tap: {type: "impact", impact_style: "light"}, error: {type: "notification", notification_type: "error"}, pick: {type: "selection_change"}};
    if (styles[kind]) post("web_app_trigger_haptic_feedback", styles[kind]);
    document.body.dataset.haptic = kind;
  }
  function closing(need) {
    if (told.closing !== need) post("web_app_setup_closing_behavior", {need_confirmation: need});
    told.closing = need;
  }
  // The one main action (Take, Pass, I'm back, a set-up's confirmation) on Telegram's
  // MainButton; the page's own button carries it too, shown outside Telegram.
  function mainButton(move) {
    told.main = move;
    const s = getComputedStyle(document.documentElement);
    post("web_app_setup_main_button", move
      ? {is_visible: true, is_active: true, text: move.label, color: s.getPropertyValue("--btn").trim(), text_color: s.getPropertyValue("--btnfg").trim()}
      : {is_visible: false});
  }

  return {
    hash,
    // Inside Telegram the main action is its MainButton; in a plain browser (the tests, a
    // look without Telegram) it is a button of the page.
    inTelegram: !!(window.TelegramWebviewProxy || (platform && platform !== "unknown")),
    post, haptic, closing, mainButton,
    // What the page does with Telegram's event ``type``: run(eventData).
    on: (type, run) => { handlers[type] = run; },
    mainMove: () => told.main,
  };
})();
