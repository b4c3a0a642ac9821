// Legend: the colour of each layer and of each function the trace holds; a click on a
// function highlights its states (the others fade), a second click clears it.

import { LAYER_ORDER } from "./colors.js";
import { esc } from "./units.js";

export class LegendView {
  constructor(el, model, panes) {
    this.el = el;
    this.model = model;
    this.panes = panes;
    el.addEventListener("click", (ev) => {
      const a = ev.target.closest("a[data-func]");
      if (!a) return;
      ev.preventDefault();
      const pane = Number(a.dataset.trace);
      const func = Number(a.dataset.func);
      const h = model.highlight;
      model.setHighlight(h && h.pane === pane && h.func === func ? null : { pane, func });
    });
    model.subscribe((what) => { if (what === "highlight") this.render(); });
    this.render();
  }

  render() {
    const h = this.model.highlight;
    let html = "";
    this.panes.forEach((pane, i) => {
      if (this.panes.length > 1) html += `<h3>${esc(pane.name)}</h3>`;
      const byLayer = new Map();
      for (const f of pane.functions.values()) {
        if (!byLayer.has(f.layer)) byLayer.set(f.layer, []);
        byLayer.get(f.layer).push(f);
      }
      const layers = [...byLayer.keys()].sort((a, b) => LAYER_ORDER.indexOf(a) - LAYER_ORDER.indexOf(b));
      for (const layer of layers) {
        html += `<div class="legend-layer"><span class="swatch" style="background:${pane.colours.layer(layer)}"></span><b>${esc(layer)}</b></div><div class="legend-funcs">`;
        html += byLayer.get(layer).sort((a, b) => a.name.localeCompare(b.name)).map((f) => {
          const on = h && h.pane === i && h.func === f.id ? " on" : "";
          return `<a href="#" class="legend-func${on}" data-trace="${i}" data-func="${f.id}"><span class="swatch" style="background:${pane.colours.func(f.id, f.layer)}"></span>${esc(f.name)}</a>`;
        }).join("");
        html += `</div>`;
      }
    });
    this.el.innerHTML = html;
  }
}
