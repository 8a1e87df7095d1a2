"use strict";
// Telegram's look on the page: its colours (AA contrast kept), its viewport and its safe
// areas, as CSS variables (table.css), followed live.
const Theme = (() => {
  const rgb = h => { const m = /^#?([0-9a-f]{6})$/i.exec(h || ""); return m ? [0, 2, 4].map(i => parseInt(m[1].substr(i, 2), 16)) : null; };
  const hex = c => "#" + c.map(x => Math.round(x).toString(16).padStart(2, "0")).join("");
  const lum = c => { const l = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
  const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  // ``c`` moved towards ``to`` until it stands out 4.5:1 against ``on`` (WCAG AA).
  function legible(c, on, to) {
    for (let k = 0; k < 20 && contrast(c, on) < 4.5; k++) c = c.map((v, i) => v + (to[i] - v) * 0.15);
    return c;
  }
  const VARS = {bg_color: "--bg", text_color: "--fg", hint_color: "--hint", button_color: "--btn", button_text_color: "--btnfg", secondary_bg_color: "--sec", link_color: "--link", destructive_text_color: "--bad"};
  const THEME = {bg_color: "#ffffff", text_color: "#222222", hint_color: "#707579", button_color: "#2481cc", button_text_color: "#ffffff", secondary_bg_color: "#f1f1f4", link_color: "#2481cc", destructive_text_color: "#d32f2f"};
  function apply(p) {
    const t = Object.assign({}, THEME, p || {}), root = document.documentElement.style;
    const bg = rgb(t.bg_color) || rgb(THEME.bg_color), fg = rgb(t.text_color) || rgb(THEME.text_color);
    const dark = lum(bg) < 0.2;
    if (dark && !(p && p.secondary_bg_color)) t.secondary_bg_color = hex(bg.map(v => v + 18));
    for (const k in VARS) if (rgb(t[k])) root.setProperty(VARS[k], t[k]);
    root.setProperty("--hint", hex(legible(rgb(t.hint_color) || fg, bg, fg)));
    const btnfg = rgb(t.button_text_color) || [255, 255, 255];
    root.setProperty("--btn", hex(legible(rgb(t.button_color) || rgb(THEME.button_color), btnfg, lum(btnfg) > 0.5 ? [0, 0, 0] : [255, 255, 255])));
    document.documentElement.dataset.theme = dark ? "dark" : "light";
  }
  function insets(kind, d) {
    for (const side of ["top", "bottom", "left", "right"]) document.documentElement.style.setProperty(`--${kind}-${side}`, (+d[side] || 0) + "px");
  }
  Bridge.on("theme_changed", d => apply(d.theme_params));
  Bridge.on("viewport_changed", d => { if (d.height) document.documentElement.style.setProperty("--vh", d.height + "px"); });
  Bridge.on("safe_area_changed", d => insets("safe", d));
  Bridge.on("content_safe_area_changed", d => insets("content", d));

  // The theme the page opened with (its address's), or ours; then Telegram's, asked for.
  function start() {
    let p = null;
    try { p = JSON.parse(Bridge.hash.get("tgWebAppThemeParams") || "null"); } catch (e) { /* no theme: ours */ }
    apply(p);
  }
  return {start};
})();
