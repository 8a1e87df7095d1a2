"use strict";
// Belarusian football on the page, from the reader's view only (engine/games/football/
// view.py) and the ball's latest run (bot/games/football/page.py): the field from his own
// side (his row at the bottom, his left on the left; a spectator sees it from A's side),
// the goalkeepers in their goals, the draw piles, the ball where it stands and the path
// it came by; his set-up made here (goalkeeper, then his row from his left).
CT.game("football", {
  draw(p, root, prev) {
    const v = p.view, w = p.words, el = CT.el, me = p.seat === 1 ? 1 : 0, them = 1 - me;
    const was = prev && prev.kind === "football" ? prev.view : null;
    const rows = me === 1 ? [0, 1, 2, 3] : [3, 2, 1, 0], cols = me === 1 ? [3, 2, 1, 0] : [0, 1, 2, 3];
    const run = p.scene.run, setting = p.seat != null && v.phase === "setup" && !v.setup_done[p.seat];
    const step = (r, c) => p.moves.find(m => m.cell && m.cell[0] === r && m.cell[1] === c);
    const label = (text, e) => { e.setAttribute("role", "group"); e.setAttribute("aria-label", text); return e; };
    // The ball: a small card keyed by its run (``from``), so that it keeps its identity
    // from the hand to the goal and the shell's motion steps it from place to place.
    const ball = (c, id, cls) => {
      const b = CT.card(c, {small: true, key: "ball:" + id});
      b.classList.add("ball");
      if (cls) b.classList.add(cls);
      return b;
    };

    // The score: each player's goals, with the balls he scored.
    const score = el("div", "fb-score");
    for (const s of [me, them]) {
      const n = v.goals[s].length, side = label(`${v.players[s]}, ${w.goals}: ${n}`, el("div", "side" + (v.turn === s ? " act" : "")));
      side.append(el("span", "nm", v.players[s]), el("b", "g", String(n)));
      // the ball of a goal just scored flies here from the field
      const won = el("div", "won"), last = run && run.end === "goal" && run.seat === s ? n - 1 : -1;
      v.goals[s].forEach((c, i) => won.append(CT.card(c, {small: true, key: i === last ? "ball:" + run.from : `goal${s}.${i}`})));
      side.append(won);
      score.append(side);
    }
    root.append(score);

    // An end of the field: his draw pile, his goal with its goalkeeper, where his ball
    // waits to enter; in the set-up his goalkeeper's slot.
    const end = s => {
      const box = el("div", "end " + (s === me ? "near" : "far"));
      box.dataset.seat = s;
      const pile = label(`${w.pile}: ${v.piles[s]}`, el("div", "pile"));
      if (v.piles[s]) pile.append(CT.card(null, {key: "pile" + s}));
      pile.append(el("span", "n", String(v.piles[s])));
      const goal = label(`${w.keeper} ${v.players[s]}`, el("div", "goal"));
      goal.dataset.goal = s;
      if (setting && s === p.seat) goal.append(slot(0));
      else {
        const k = CT.card(v.keepers[s], {key: "keeper" + s});
        if (v.keepers[s] && !v.keepers_up[s]) k.classList.add("secret");
        if (was && !was.keepers_up[s] && v.keepers_up[s]) k.classList.add("flip");
        goal.append(k);
      }
      const spot = el("div", "spot");
      if (v.ball && !v.ball_at && v.turn === s) spot.append(ball(v.ball, p.scene.next));
      if (run && run.seat !== s && (run.end === "goal" || run.end === "saved")) {  // shot at this goal
        if (run.end === "saved" && run.ball) goal.append(ball(run.ball, run.from, "saved"));
        goal.append(el("span", "badge " + run.end, w[run.end]));
      }
      box.append(pile, goal, spot);
      return box;
    };

    // A set-up slot: 0 his goalkeeper, 1–4 his row from his left; a picked card fills it
    // (keyed as in his hand, so that it flies there from the hand).
    const slot = i => {
      const at = p.picks[i];
      if (at == null) {
        const e = el("div", "slot");
        e.setAttribute("role", "img");
        e.setAttribute("aria-label", i ? w.slot.replace("{n}", i) : w.keeper);
        return e;
      }
      const e = CT.card(v.hand[at], {key: "h" + at});
      e.classList.add("picked");
      return e;
    };

    const felt = el("div", "felt pitch");
    felt.append(end(them));
    const grid = label(w.field, el("div", "grid"));
    const path = run ? run.cells.map(([r, c]) => [cols.indexOf(c), rows.indexOf(r)]) : [];
    const onPath = (r, c) => run && run.cells.some(([a, b]) => a === r && b === c);
    rows.forEach((r, y) => cols.forEach((c, x) => {
      const cell = el("div", "cell");
      cell.style.gridArea = `${y + 1}/${x + 1}`;
      if (setting && r === (p.seat === 1 ? 3 : 0)) {
        cell.append(slot(1 + x));
        grid.append(cell);
        return;
      }
      const known = v.field[r][c], e = CT.card(known, {key: `f${r}.${c}`});
      if (known && !v.face_up[r][c]) e.classList.add("secret");
      if (was && !was.face_up[r][c] && v.face_up[r][c]) e.classList.add("flip");
      if (onPath(r, c)) cell.classList.add("trail");
      const m = step(r, c);
      if (m) {
        e.classList.add("play");
        CT.actionable(e, m.token, `${known ? CT.name(known) : w.card_back} — ${m.label}`, () => CT.send(m));
      }
      cell.append(e);
      if (v.ball_at && v.ball_at[0] === r && v.ball_at[1] === c) cell.append(ball(v.ball, run ? run.from : p.scene.next));
      else if (run && run.end === "out" && run.ball) {
        const [lr, lc] = run.cells[run.cells.length - 1];
        if (lr === r && lc === c) cell.append(ball(run.ball, run.from, "out"));
      }
      grid.append(cell);
    }));
    // The ball's path: a line through the cells it stood on, on to the goal it was shot at.
    if (path.length) {
      const ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg"), line = document.createElementNS(ns, "polyline");
      svg.setAttribute("viewBox", "0 0 4 4");
      svg.setAttribute("preserveAspectRatio", "none");
      svg.setAttribute("class", "path");
      svg.setAttribute("aria-hidden", "true");
      const pts = path.map(([x, y]) => `${x + 0.5},${y + 0.5}`);
      if (run.end && run.end !== "out") pts.push(`2,${run.seat === me ? -0.4 : 4.4}`);  // into the goal
      line.setAttribute("points", pts.join(" "));
      svg.append(line);
      grid.append(svg);
    }
    felt.append(grid, end(me));
    root.append(felt);

    // His set-up: the five dealt cards, each a tap away from the next free slot.
    if (setting) {
      const box = el("div", "setup");
      box.append(el("div", "lbl", p.picks.length ? w.ask_row : w.ask_keeper));
      const cards = [];
      v.hand.forEach((c, i) => {
        if (p.picks.includes(i)) return;
        const e = CT.card(c, {key: "h" + i}), moves = CT.movesOf(c);
        cards.push(moves.length ? CT.playable(e, c, moves) : e);
      });
      box.append(CT.fan(cards, {cw: 56, spread: 4}));
      root.append(box);
    }
  },
});
