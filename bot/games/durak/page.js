"use strict";
// Durak on the page, drawn from the reader's view only (engine/games/durak/view.py): the
// others around the table (backs by count, the cards all know face up), the stock with
// the trump under it, the bout's pairs, the discard, the dummy at its seat, his own hand
// (and the dummy's for its controller) fanned at the bottom, the playable cards raised.
(() => {
  const sel = s => `[data-seat="${s}"]`;
  const actorOf = v => v && v.to_act ? (v.to_act.dummy ? "dummy" : v.to_act.player) : null;

  // What one picture's drawing shares: the view and its words, the view before, who acts,
  // the others in their order, and the cards' keys (a card's code, numbered when several
  // decks repeat it).
  function context(p, root, prev) {
    const v = p.view, seen = {};
    const d = {
      p, v, w: p.words, me: p.seat, width: root.clientWidth || 340,
      was: prev && prev.kind === "durak" ? prev.view : null,
      actor: actorOf(v),
      key: c => { seen[c] = (seen[c] || 0) + 1; return seen[c] > 1 ? c + "~" + seen[c] : c; },
    };
    d.around = others(v, d.me);
    return d;
  }
  // The others in turn order after him (the dummy right after the dealer).
  function others(v, me) {
    const n = v.players.length, hasDummy = v.dummy !== false, around = [];
    const next = s => s === "dummy" ? (v.dealer + 1) % n : s === v.dealer && hasDummy ? "dummy" : (s + 1) % n;
    for (let s = me == null ? 0 : next(me); around.length < n + hasDummy - (me != null); s = next(s)) around.push(s);
    return around;
  }
  // A seat of the others (or the dummy): name, role, the backs fanned by count with the
  // cards all know face up among them.
  function seat(d, s, label, count, known, under) {
    const v = d.v, w = d.w;
    const box = CT.el("div", "seat" + (d.actor === s ? " act" : "") + (v.out.includes(s) ? " out" : ""));
    box.dataset.seat = s;
    const role = v.attacker === s ? w.attacks : v.defender === s ? w.defends : v.out.includes(s) ? w.done : "";
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", [label, CT.count("cards", count), role].filter(Boolean).join(", "));
    const head = CT.el("div", "who");
    head.append(CT.el("span", "nm", label));
    if (under) head.append(CT.el("span", "sub", under));
    if (role) head.append(CT.el("span", "role " + (v.attacker === s ? "att" : v.defender === s ? "def" : "done"), role));
    const backs = [];
    for (let i = 0; i < count - known.length; i++) backs.push(CT.card(null, {key: `b${s}.${i}`, from: ".stock"}));
    head.append(CT.el("span", "n", String(count)));
    const many = d.around.length > 3;  // five others: three to a row, smaller
    const cw = many ? 24 : 30, room = many ? Math.min(90, d.width / 4.2) : Math.min(130, d.width / 2.6);
    box.append(head, CT.fan(backs, {cw, width: room, spread: 5, cls: "backs"}));
    // the cards everyone knows he holds, face up in front of his backs
    if (known.length) box.append(CT.fan(known.map(c => CT.card(c, {key: d.key(c)})), {cw, width: room, spread: 2, cls: "known"}));
    return box;
  }
  function seats(d) {
    const v = d.v, top = CT.el("div", "seats" + (d.around.length > 3 ? " many" : ""));
    for (const s of d.around) {
      top.append(s === "dummy"
        ? seat(d, "dummy", d.w.dummy_name, v.dummy_count, v.dummy_known, v.players[v.controller])
        : seat(d, s, v.players[s], v.hand_counts[s], v.known[s]));
    }
    return top;
  }
  const group = (cls, label) => {
    const e = CT.el("div", cls);
    e.setAttribute("role", "group");
    e.setAttribute("aria-label", label);
    return e;
  };
  // The stock with the trump face up under it, the last card to be drawn; drawn, or the
  // whole deck dealt, its suit is still trump.
  function stock(d) {
    const v = d.v, w = d.w, box = group("stock", `${w.stock}: ${v.stock}; ${w.trump}: ${CT.name(v.trump)}`);
    if (v.stock) {
      const trump = CT.card(v.trump, {key: d.key(v.trump)});
      trump.classList.add("trump");
      box.append(trump);
      if (v.stock > 1) box.append(CT.card(null, {key: "stock"}));
      box.append(CT.el("span", "n", String(v.stock)));
    } else {
      const suit = v.trump.slice(-1), mark = CT.el("div", "trumpmark " + (suit === "H" || suit === "D" ? "red" : "black"));
      mark.append(CT.suit(suit));
      box.append(mark);
    }
    return box;
  }
  // The bout's pairs, a new card flying in from the seat of who played it.
  function bout(d) {
    const box = group("bout", d.w.table), was = actorOf(d.was), from = was == null ? null : sel(was);
    for (const [a, b] of d.v.table) {
      const pair = CT.el("div", "pair" + (b ? " beaten" : ""));
      pair.append(CT.card(a, {key: d.key(a), from}));
      if (b) pair.append(CT.card(b, {key: d.key(b), from}));
      box.append(pair);
    }
    return box;
  }
  function discard(v, w) {
    const box = group("discard", `${w.discard}: ${v.discard}`);
    for (let i = 0; i < Math.min(3, Math.ceil(v.discard / 6)); i++) box.append(CT.card(null));
    box.append(CT.el("span", "n", String(v.discard)));
    return box;
  }
  // Where the bout's cards go when it ends: to the taker, or to the discard.
  function sink(v, was) {
    if (!(was && was.table.length && !v.table.length)) return;
    const took = was.defender != null && (was.defender === "dummy" ? v.dummy_count > was.dummy_count : v.hand_counts[was.defender] > was.hand_counts[was.defender]);
    CT.sink(took ? sel(was.defender) : ".discard");
  }
  // His hand (and the dummy's for its controller), fanned, the playable cards raised; a
  // choice between a card's moves in the page's words: which card it beats, or the
  // transfer.
  function hand(d, cards, label, dummy, cls) {
    const v = d.v, w = d.w, me = d.me;
    const say = m => m.beat ? w.beat_on.replace("{card}", CT.short(m.beat)) : v.phase === "defend" ? w.transfer : m.label;
    const box = CT.el("section", "hand " + cls + (d.actor === (dummy ? "dummy" : me) && me != null && v.to_act && v.to_act.player === me ? " turn" : ""));
    box.dataset.seat = dummy ? "dummy-hand" : "me";
    box.setAttribute("aria-label", label);
    const head = CT.el("div", "lbl");
    head.append(CT.el("span", "", label));
    box.append(head);
    const els = cards.map(c => {
      const e = CT.card(c, {key: d.key(c), from: ".stock"}), moves = CT.movesOf(c, m => !!m.dummy === dummy);
      return moves.length ? CT.playable(e, c, moves, say) : e;
    });
    // while some can be played, the others are dimmed
    if (els.some(e => e.dataset.move)) els.forEach(e => { if (!e.dataset.move) e.classList.add("dim"); });
    box.append(CT.fan(els, {cw: dummy ? 50 : 62, width: d.width * 0.9}));
    return box;
  }

  CT.game("durak", {
    draw(p, root, prev) {
      const d = context(p, root, prev), v = d.v;
      root.append(seats(d));
      // The felt: the stock with the trump under it, the bout's pairs, the discard.
      const felt = CT.el("div", "felt durak");
      felt.append(stock(d), bout(d), discard(v, d.w));
      root.append(felt);
      sink(v, d.was);
      if (v.dummy_hand) root.append(hand(d, v.dummy_hand, d.w.dummy, true, "dummys"));
      if (d.me != null) root.append(hand(d, v.hand, d.w.hand, false, "mine"));
    },
  });
})();
