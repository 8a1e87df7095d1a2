"use strict";
// The kit a game's page module draws its table with (CT in table.js; docs/webapp.md, "A
// game's page"): elements, cards and fans, the cards and cells a player taps, the sheet
// of a card's choices, and the moves that are no card's as buttons.
const $ = id => document.getElementById(id);
// What the page shows: the picture drawn and the one before it, the element the table is
// drawn in, and the card whose choice of moves is open (with the words it says them in).
const Shown = {picture: null, previous: null, root: null, pick: null, say: null};
const Kit = (() => {
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
    const n = Shown.picture.cardnames, suit = c.slice(-1), rank = c.slice(0, -1);
    return n.card.replace("{rank}", n.ranks[rank] || rank).replace("{suit}", n.suits[suit] || suit);
  }
  // A card as the chat writes it: "7♣", "Q♥" in the reader's letters.
  function short(c) {
    return (Shown.picture.faces[c.slice(0, -1)] || c.slice(0, -1)) + {S: "♠", C: "♣", D: "♦", H: "♥"}[c.slice(-1)];
  }
  // A text of the catalogues with its number: the form Intl.PluralRules picks.
  function count(word, n) {
    const S = Shown.picture, forms = S.words[word];
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
    if (!c) { e.classList.add("back"); e.setAttribute("aria-label", Shown.picture.words.card_back); return e; }
    const suit = c.slice(-1), rank = c.slice(0, -1);
    e.classList.add(suit === "D" || suit === "H" ? "red" : "black");
    e.dataset.card = c;
    e.setAttribute("aria-label", name(c));
    const corner = el("span", "ix");
    corner.append(el("b", "", Shown.picture.faces[rank] || rank), svg(suit, "s"));
    e.append(corner, svg(suit, "pip"));
    return e;
  }
  // Cards in a fan (a hand, an opponent's backs): overlapped to fit ``width`` pixels,
  // turned a little each, the playable ones raised by CSS (.play).
  function fan(cards, opts) {
    const o = opts || {}, box = el("div", "fan" + (o.cls ? " " + o.cls : "")), n = cards.length;
    const cw = o.cw || 56, width = o.width || Shown.root.clientWidth || 340, spread = o.spread == null ? 3 : o.spread;
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
    if (moves.length === 1) return actionable(e, moves[0].token, name(c) + " — " + moves[0].label, () => Live.send(moves[0]));
    return actionable(e, "pick:" + c, name(c), () => choose(c, moves, say));
  }
  function choose(c, moves, say) {
    Shown.pick = c; Shown.say = say;
    Bridge.haptic("pick");
    const sheet = $("sheet");
    sheet.textContent = "";
    sheet.setAttribute("aria-label", name(c));
    sheet.append(el("div", "lbl", name(c)));
    for (const m of moves) sheet.append(button(say ? Object.assign({}, m, {label: say(m)}) : m));
    const cancel = el("button", "sec", Shown.picture.words.cancel);
    cancel.onclick = unpick;
    sheet.append(cancel);
    sheet.hidden = false;
    document.body.dataset.pick = c;
    sheet.querySelector("button").focus();
  }
  // The choice closed: by Cancel, a move sent, or a new picture (its moves are gone).
  function unpick() {
    Shown.pick = null;
    const sheet = $("sheet");
    sheet.hidden = true; sheet.textContent = "";
    document.body.dataset.pick = "";
  }
  function button(m, cls) {
    const b = el("button", "mv" + (cls ? " " + cls : ""), m.label);
    b.dataset.move = m.token;
    if (m.card) b.dataset.card = m.card;
    b.onclick = () => Live.send(m);
    return b;
  }
  // The moves that are no card's (Take, Pass, I'm back, a confirmation) as buttons under
  // the table; with exactly one, it is the main one (Telegram's MainButton).
  function actions(moves) {
    const box = $("actions");
    box.textContent = "";
    for (const m of moves) box.append(button(m, moves.length === 1 ? "main" : ""));
    box.hidden = !moves.length || (Bridge.inTelegram && moves.length === 1);
    Bridge.mainButton(moves.length === 1 ? moves[0] : null);
  }
  Bridge.on("main_button_pressed", () => { const m = Bridge.mainMove(); if (m) Live.send(m); });

  return {
    el, card, fan, name, short, count, suit: s => svg(s, "suit"), actionable, playable,
    choose, unpick, actions,
  };
})();
