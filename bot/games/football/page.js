"use strict";
// Belarusian football on the page (its view: engine/games/football/view.py), seen from
// the reader's own side.
CT.game("football", {
  draw(p, main) {
    const v = p.view, w = p.words, me = p.seat === 1 ? 1 : 0, el = CT.el;
    const rows = me === 1 ? [0, 1, 2, 3] : [3, 2, 1, 0], cols = me === 1 ? [3, 2, 1, 0] : [0, 1, 2, 3];
    const g = v.goals.map(x => x.length);
    main.append(el("div", "score", v.players[0] + " " + g[0] + " : " + g[1] + " " + v.players[1]));
    const felt = el("div", "felt");
    const keeper = s => {
      const k = el("div", "keeper");
      const c = CT.card(v.keepers[s], {key: "k" + s});
      if (v.keepers[s] && !v.keepers_up[s]) c.classList.add("mine");
      k.append(el("span", "", "🧤 " + v.players[s]), c);
      return k;
    };
    felt.append(keeper(1 - me));
    const grid = el("div", "field");
    for (const r of rows) for (const c of cols) {
      const x = CT.card(v.field[r][c], {key: `f${r}.${c}`});
      if (v.ball_at && v.ball_at[0] === r && v.ball_at[1] === c) x.classList.add("ball");
      if (v.field[r][c] && !v.face_up[r][c]) x.classList.add("mine");
      // the ball steps onto a field card: a tap on that card plays the move
      const step = p.moves.find(m => m.cell && m.cell[0] === r && m.cell[1] === c);
      if (step) { x.classList.add("play"); CT.actionable(x, step.token, step.label, () => CT.send(step)); }
      grid.append(x);
    }
    felt.append(grid, keeper(me));
    if (v.ball) { const b = el("div", "row"); b.append(el("span", "lbl", "⚽ "), CT.card(v.ball, {small: true, key: "ball"})); felt.append(b); }
    main.append(felt);
    if (p.seat != null && v.hand.length) {
      const box = el("div", "hand");
      box.append(el("div", "lbl", w.hand));
      const row = el("div", "row");
      for (const c of v.hand) {
        const e = CT.card(c), moves = CT.movesOf(c);
        row.append(moves.length ? CT.playable(e, c, moves) : e);
      }
      box.append(row);
      main.append(box);
    }
  },
});
