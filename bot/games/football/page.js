"use strict";
// Belarusian football on the page, from the reader's view only (engine/games/football/
// view.py) and the ball's latest run (bot/games/football/page.py): the field from his own
// side (his row at the bottom, his left on the left; a spectator sees it from A's side),
// the goalkeepers in their goals, the draw piles, the ball where it stands and the path
// it came by; his set-up made here (goalkeeper, then his row from his left).
(() => {
  const el = CT.el;
  const label = (text, e) => { e.setAttribute("role", "group"); e.setAttribute("aria-label", text); return e; };
  // The ball: a small card keyed by its run (``from``), so that it keeps its identity
  // from the hand to the goal and the shell's motion steps it from place to place.
  const ball = (c, id, cls) => {
    const b = CT.card(c, {small: true, key: "ball:" + id});
    b.classList.add("ball");
    if (cls) b.classList.add(cls);
    return b;
  };
  // What one picture's drawing shares: the view and its words, the view before, his side
  // and the other, the field's rows and columns as he sees them, the ball's run, whether
  // he is making his set-up.
  function context(p, prev) {
    const v = p.view, me = p.seat === 1 ? 1 : 0;
    return {
      p, v, w: p.words, me, them: 1 - me, run: p.scene.run,
      was: prev && prev.kind === "football" ? prev.view : null,
      rows: me === 1 ? [0, 1, 2, 3] : [3, 2, 1, 0], cols: me === 1 ? [3, 2, 1, 0] : [0, 1, 2, 3],
      setting: p.seat != null && v.phase === "setup" && !v.setup_done[p.seat],
    };
  }
  // The score: each player's goals, with the balls he scored.
  function score(d) {
    const v = d.v, run = d.run, box = el("div", "fb-score");
    for (const s of [d.me, d.them]) {
      const n = v.goals[s].length, side = label(`${v.players[s]}, ${d.w.goals}: ${n}`, el("div", "side" + (v.turn === s ? " act" : "")));
      side.append(el("span", "nm", v.players[s]), el("b", "g", String(n)));
      // the ball of a goal just scored flies here from the field
      const won = el("div", "won"), last = run && run.end === "goal" && run.seat === s ? n - 1 : -1;
      v.goals[s].forEach((c, i) => won.append(CT.card(c, {small: true, key: i === last ? "ball:" + run.from : `goal${s}.${i}`})));
      side.append(won);
      box.append(side);
    }
    return box;
  }
  // A set-up slot: 0 his goalkeeper, 1–4 his row from his left; a picked card fills it
  // (keyed as in his hand, so that it flies there from the hand).
  function slot(d, i) {
    const at = d.p.picks[i];
    if (at == null) {
      const e = el("div", "slot");
      e.setAttribute("role", "img");
      e.setAttribute("aria-label", i ? d.w.slot.replace("{n}", i) : d.w.keeper);
      return e;
    }
    const e = CT.card(d.v.hand[at], {key: "h" + at});
    e.classList.add("picked");
    return e;
  }
  // A goal with its goalkeeper (in his set-up, his goalkeeper's slot), and the end of the
  // ball's run when it was a shot at this goal.
  function goal(d, s) {
    const v = d.v, run = d.run, box = label(`${d.w.keeper} ${v.players[s]}`, el("div", "goal"));
    box.dataset.goal = s;
    if (d.setting && s === d.p.seat) box.append(slot(d, 0));
    else {
      const k = CT.card(v.keepers[s], {key: "keeper" + s});
      if (v.keepers[s] && !v.keepers_up[s]) k.classList.add("secret");
      if (d.was && !d.was.keepers_up[s] && v.keepers_up[s]) k.classList.add("flip");
      box.append(k);
    }
    if (run && run.seat !== s && (run.end === "goal" || run.end === "saved")) {  // shot at this goal
      if (run.end === "saved" && run.ball) box.append(ball(run.ball, run.from, "saved"));
      box.append(el("span", "badge " + run.end, d.w[run.end]));
    }
    return box;
  }
  // An end of the field: his draw pile, his goal, where his ball waits to enter.
  function end(d, s) {
    const v = d.v, box = el("div", "end " + (s === d.me ? "near" : "far"));
    box.dataset.seat = s;
    const pile = label(`${d.w.pile}: ${v.piles[s]}`, el("div", "pile"));
    if (v.piles[s]) pile.append(CT.card(null, {key: "pile" + s}));
    pile.append(el("span", "n", String(v.piles[s])));
    const spot = el("div", "spot");
    if (v.ball && !v.ball_at && v.turn === s) spot.append(ball(v.ball, d.p.scene.next));
    box.append(pile, goal(d, s), spot);
    return box;
  }
  // The card of the field's cell (r, c), a step of his move to tap, the ball on it.
  function cell(d, r, c) {
    const v = d.v, run = d.run, box = el("div", "cell");
    const known = v.field[r][c], e = CT.card(known, {key: `f${r}.${c}`});
    if (known && !v.face_up[r][c]) e.classList.add("secret");
    if (d.was && !d.was.face_up[r][c] && v.face_up[r][c]) e.classList.add("flip");
    if (run && run.cells.some(([a, b]) => a === r && b === c)) box.classList.add("trail");
    const m = d.p.moves.find(x => x.cell && x.cell[0] === r && x.cell[1] === c);
    if (m) {
      e.classList.add("play");
      CT.actionable(e, m.token, `${known ? CT.name(known) : d.w.card_back} — ${m.label}`, () => CT.send(m));
    }
    box.append(e);
    if (v.ball_at && v.ball_at[0] === r && v.ball_at[1] === c) box.append(ball(v.ball, run ? run.from : d.p.scene.next));
    else if (run && run.end === "out" && run.ball) {
      const [lr, lc] = run.cells[run.cells.length - 1];
      if (lr === r && lc === c) box.append(ball(run.ball, run.from, "out"));
    }
    return box;
  }
  // The ball's path: a line through the cells it stood on, on to the goal it was shot at.
  function trail(d) {
    const run = d.run, ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg"), line = document.createElementNS(ns, "polyline");
    svg.setAttribute("viewBox", "0 0 4 4");
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("class", "path");
    svg.setAttribute("aria-hidden", "true");
    const pts = run.cells.map(([r, c]) => `${d.cols.indexOf(c) + 0.5},${d.rows.indexOf(r) + 0.5}`);
    if (run.end && run.end !== "out") pts.push(`2,${run.seat === d.me ? -0.4 : 4.4}`);  // into the goal
    line.setAttribute("points", pts.join(" "));
    svg.append(line);
    return svg;
  }
  // The field as he sees it; in his set-up, his row is his slots.
  function field(d) {
    const grid = label(d.w.field, el("div", "grid"));
    d.rows.forEach((r, y) => d.cols.forEach((c, x) => {
      const mine = d.setting && r === (d.p.seat === 1 ? 3 : 0), box = mine ? el("div", "cell") : cell(d, r, c);
      if (mine) box.append(slot(d, 1 + x));
      box.style.gridArea = `${y + 1}/${x + 1}`;
      grid.append(box);
    }));
    if (d.run && d.run.cells.length) grid.append(trail(d));
    return grid;
  }
  // His set-up: the five dealt cards, each a tap away from the next free slot.
  function setup(d) {
    const box = el("div", "setup"), p = d.p;
    box.append(el("div", "lbl", p.picks.length ? d.w.ask_row : d.w.ask_keeper));
    const cards = [];
    d.v.hand.forEach((c, i) => {
      if (p.picks.includes(i)) return;
      const e = CT.card(c, {key: "h" + i}), moves = CT.movesOf(c);
      cards.push(moves.length ? CT.playable(e, c, moves) : e);
    });
    box.append(CT.fan(cards, {cw: 56, spread: 4}));
    return box;
  }

  CT.game("football", {
    draw(p, root, prev) {
      const d = context(p, prev);
      root.append(score(d));
      const felt = el("div", "felt pitch");
      felt.append(end(d, d.them), field(d), end(d, d.me));
      root.append(felt);
      if (d.setting) root.append(setup(d));
    },
  });
})();
