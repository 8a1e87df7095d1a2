"use strict";
// Durak on the page, drawn from the reader's view only (engine/games/durak/view.py): the
// others around the table (backs by count, the cards all know face up), the stock with
// the trump under it, the bout's pairs, the discard, the dummy at its seat, his own hand
// (and the dummy's for its controller) fanned at the bottom, the playable cards raised.
CT.game("durak", {
  draw(p, root, prev) {
    const v = p.view, w = p.words, was = prev && prev.kind === "durak" ? prev.view : null;
    const seen = {};  // a card's key: its code, numbered when several decks repeat it
    const key = c => { seen[c] = (seen[c] || 0) + 1; return seen[c] > 1 ? c + "~" + seen[c] : c; };
    const actor = v.to_act ? (v.to_act.dummy ? "dummy" : v.to_act.player) : null;
    const wasActor = was && was.to_act ? (was.to_act.dummy ? "dummy" : was.to_act.player) : null;
    const sel = s => `[data-seat="${s}"]`;
    const width = root.clientWidth || 340;

    // A seat of the others (or the dummy): name, role, the backs fanned by count with the
    // cards all know face up among them.
    function seat(s, label, count, known, under) {
      const box = CT.el("div", "seat" + (actor === s ? " act" : "") + (v.out.includes(s) ? " out" : ""));
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
      const many = around.length > 3;  // five others: three to a row, smaller
      const cw = many ? 24 : 30, room = many ? Math.min(90, width / 4.2) : Math.min(130, width / 2.6);
      box.append(head, CT.fan(backs, {cw, width: room, spread: 5, cls: "backs"}));
      // the cards everyone knows he holds, face up in front of his backs
      if (known.length) box.append(CT.fan(known.map(c => CT.card(c, {key: key(c)})), {cw, width: room, spread: 2, cls: "known"}));
      return box;
    }
    const me = p.seat, n = v.players.length, hasDummy = v.dummy !== false;
    // The others in turn order after him (the dummy right after the dealer).
    const next = s => s === "dummy" ? (v.dealer + 1) % n : s === v.dealer && hasDummy ? "dummy" : (s + 1) % n;
    const around = [];
    for (let s = me == null ? 0 : next(me); around.length < n + hasDummy - (me != null); s = next(s)) around.push(s);
    const top = CT.el("div", "seats" + (around.length > 3 ? " many" : ""));
    for (const s of around) {
      top.append(s === "dummy"
        ? seat("dummy", w.dummy_name, v.dummy_count, v.dummy_known, v.players[v.controller])
        : seat(s, v.players[s], v.hand_counts[s], v.known[s]));
    }
    root.append(top);

    // The felt: the stock with the trump under it, the bout's pairs, the discard.
    const felt = CT.el("div", "felt durak");
    const stock = CT.el("div", "stock");
    stock.setAttribute("role", "group");
    stock.setAttribute("aria-label", `${w.stock}: ${v.stock}; ${w.trump}: ${CT.name(v.trump)}`);
    if (v.stock) {  // the trump face up under the stock, the last card to be drawn
      const trump = CT.card(v.trump, {key: key(v.trump)});
      trump.classList.add("trump");
      stock.append(trump);
      if (v.stock > 1) stock.append(CT.card(null, {key: "stock"}));
      stock.append(CT.el("span", "n", String(v.stock)));
    } else {  // drawn, or the whole deck dealt: its suit is still trump
      const suit = v.trump.slice(-1), mark = CT.el("div", "trumpmark " + (suit === "H" || suit === "D" ? "red" : "black"));
      mark.append(CT.suit(suit));
      stock.append(mark);
    }
    const table = CT.el("div", "bout");
    table.setAttribute("aria-label", w.table);
    table.setAttribute("role", "group");
    const from = wasActor == null ? null : sel(wasActor);
    for (const [a, b] of v.table) {
      const pair = CT.el("div", "pair" + (b ? " beaten" : ""));
      pair.append(CT.card(a, {key: key(a), from}));
      if (b) pair.append(CT.card(b, {key: key(b), from}));
      table.append(pair);
    }
    const discard = CT.el("div", "discard");
    discard.setAttribute("role", "group");
    discard.setAttribute("aria-label", `${w.discard}: ${v.discard}`);
    for (let i = 0; i < Math.min(3, Math.ceil(v.discard / 6)); i++) discard.append(CT.card(null));
    discard.append(CT.el("span", "n", String(v.discard)));
    felt.append(stock, table, discard);
    root.append(felt);

    // Where the bout's cards go when it ends: to the taker, or to the discard.
    if (was && was.table.length && !v.table.length) {
      const took = was.defender != null && (was.defender === "dummy" ? v.dummy_count > was.dummy_count : v.hand_counts[was.defender] > was.hand_counts[was.defender]);
      CT.sink(took ? sel(was.defender) : ".discard");
    }

    // A choice between a card's moves, in the page's words: which card it beats, or the
    // transfer.
    const say = m => m.beat ? w.beat_on.replace("{card}", CT.short(m.beat)) : v.phase === "defend" ? w.transfer : m.label;
    // His hand (and the dummy's for its controller), fanned, the playable cards raised.
    function hand(cards, label, dummy, cls) {
      const box = CT.el("section", "hand " + cls + (actor === (dummy ? "dummy" : me) && me != null && v.to_act && v.to_act.player === me ? " turn" : ""));
      box.dataset.seat = dummy ? "dummy-hand" : "me";
      box.setAttribute("aria-label", label);
      const head = CT.el("div", "lbl");
      head.append(CT.el("span", "", label));
      box.append(head);
      const els = cards.map(c => {
        const e = CT.card(c, {key: key(c), from: ".stock"}), moves = CT.movesOf(c, m => !!m.dummy === dummy);
        return moves.length ? CT.playable(e, c, moves, say) : e;
      });
      // while some can be played, the others are dimmed
      if (els.some(e => e.dataset.move)) els.forEach(e => { if (!e.dataset.move) e.classList.add("dim"); });
      box.append(CT.fan(els, {cw: dummy ? 50 : 62, width: width * 0.9}));
      return box;
    }
    if (v.dummy_hand) root.append(hand(v.dummy_hand, w.dummy, true, "dummys"));
    if (me != null) root.append(hand(v.hand, w.hand, false, "mine"));
  },
});
