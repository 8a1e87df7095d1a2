"use strict";
// Belarusian football on the page (its view: engine/games/football/view.py), seen from
// the reader's own side.
DRAW.football = function (v, main) {
  const w = S.words, me = S.seat === 1 ? 1 : 0;
  const rows = me === 1 ? [0, 1, 2, 3] : [3, 2, 1, 0], cols = me === 1 ? [3, 2, 1, 0] : [0, 1, 2, 3];
  const g = v.goals.map(x => x.length);
  main.append(el("div", "score", v.players[0] + " " + g[0] + " : " + g[1] + " " + v.players[1]));
  const felt = el("div", "felt");
  const keeper = s => {
    const k = el("div", "keeper");
    const c = card(v.keepers[s]);
    if (v.keepers[s] && !v.keepers_up[s]) c.classList.add("mine");
    k.append(el("span", "", "🧤 " + v.players[s]), c);
    return k;
  };
  felt.append(keeper(1 - me));
  const grid = el("div", "field");
  for (const r of rows) for (const c of cols) {
    const x = card(v.field[r][c]);
    if (v.ball_at && v.ball_at[0] === r && v.ball_at[1] === c) x.classList.add("ball");
    if (v.field[r][c] && !v.face_up[r][c]) x.classList.add("mine");
    // the ball steps onto a field card: a tap on that card plays the move
    const step = S.moves.find(m => m.cell && m.cell[0] === r && m.cell[1] === c);
    if (step) { x.classList.add("play"); x.onclick = () => send(step.data); }
    grid.append(x);
  }
  felt.append(grid, keeper(me));
  if (v.ball) { const b = el("div", "row"); b.append(el("span", "lbl", "⚽ "), card(v.ball, true)); felt.append(b); }
  main.append(felt);
  if (S.seat != null && v.hand.length) main.append(hand(v.hand, w.hand, S.moves.filter(m => m.card)));
  main.append(moveButtons(S.moves));
};
