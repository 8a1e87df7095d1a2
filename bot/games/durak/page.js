"use strict";
// Durak with a dummy on the page (its view: engine/games/durak/view.py).
DRAW.durak = function (v, main) {
  const w = S.words, moves = S.moves;
  // attacker and defender: a seat, or "dummy"
  const mark = i => (v.out.includes(i) ? "✅ " : "") + (v.attacker === i ? "⚔️ " : "") + (v.defender === i ? "🛡 " : "");
  const chips = el("div", "players");
  v.players.forEach((name, i) => {
    const p = el("div", "pl" + (S.actor === i ? " act" : ""), mark(i) + name + ": " + v.hand_counts[i]);
    for (const k of v.known[i]) p.append(" ", card(k, true));
    chips.append(p);
  });
  const d = el("div", "pl", mark("dummy") + "🂠 " + v.dummy_count);
  for (const k of v.dummy_known) d.append(" ", card(k, true));
  chips.append(d);
  main.append(chips);
  const felt = el("div", "felt");
  const top = el("div", "row");
  top.append(el("span", "lbl", w.trump + " "), card(v.trump, true), el("span", "lbl", " " + w.stock + ": " + v.stock + " · " + w.discard + ": " + v.discard));
  felt.append(top, el("div", "lbl", w.table));
  const pairs = el("div", "row table");
  for (const [a, b] of v.table) {
    const p = el("div", "pair");
    p.append(card(a));
    if (b) p.append(card(b));
    pairs.append(p);
  }
  felt.append(pairs);
  main.append(felt);
  if (S.seat != null) main.append(hand(v.hand, w.hand, moves.filter(m => !m.dummy)));
  if (v.dummy_hand) main.append(hand(v.dummy_hand, w.dummy, moves.filter(m => m.dummy)));
  main.append(moveButtons(moves));
};
