// Range statistics panel: what /api/stats says about the shift-dragged time range, per
// trace, as tables (whatever arrays the server returns, with durations and bytes formatted).

import { isAbort } from "./api.js";
import { fmtDur, fmtBytes, esc } from "./units.js";

function cell(key, v) {
  if (typeof v === "number" && /(_ns$|^time|^busy|^dur|^t[01]$|^start$)/.test(key)) return fmtDur(v);
  if (typeof v === "number" && /bytes/.test(key)) return fmtBytes(v);
  if (v != null && typeof v === "object") return esc(JSON.stringify(v));
  return esc(v ?? "");
}

/** An array of objects as a table with the union of their keys as columns. */
function table(title, arr) {
  const cols = [];
  for (const o of arr.slice(0, 200)) for (const k of Object.keys(o)) if (!cols.includes(k)) cols.push(k);
  const head = cols.map((c) => `<th>${esc(c)}</th>`).join("");
  const body = arr.slice(0, 200).map((o) => `<tr>${cols.map((c) => `<td>${cell(c, o[c])}</td>`).join("")}</tr>`).join("");
  return `<h4>${esc(title.replace(/_/g, " "))}</h4><table class="grid"><tr>${head}</tr>${body}</table>`;
}

export function renderStats(stats) {
  let html = "";
  const scalars = [];
  for (const [k, v] of Object.entries(stats)) {
    if (Array.isArray(v)) {
      if (v.length && typeof v[0] === "object") html += table(k, v);
    } else if (v && typeof v === "object") {
      const arr = Object.entries(v).map(([name, o]) => (o && typeof o === "object" ? { name, ...o } : { name, value: o }));
      if (arr.length) html += table(k, arr);
    } else {
      scalars.push(`<tr><th>${esc(k)}</th><td>${cell(k, v)}</td></tr>`);
    }
  }
  return `<table class="kv">${scalars.join("")}</table>${html}`;
}

export class StatsView {
  constructor(el, model, panes, onError) {
    this.el = el;
    this.model = model;
    this.panes = panes;
    this.onError = onError;
    this.seq = 0;
    model.subscribe((what) => { if (what === "range") this.update(); });
    el.addEventListener("click", (ev) => {
      const b = ev.target.closest("button[data-act]");
      if (!b || !this.model.range) return;
      if (b.dataset.act === "zoom") this.model.show(this.model.range.t0, this.model.range.t1, 0);
      else this.model.setRange(null);
    });
    this.el.innerHTML = `<p class="dim">Shift-drag over the timeline to select a time range.</p>`;
  }

  async update() {
    const r = this.model.range;
    if (!r) { this.el.innerHTML = `<p class="dim">Shift-drag over the timeline to select a time range.</p>`; return; }
    if (r.dragging) { this.el.innerHTML = `<p>${fmtDur(r.t1 - r.t0)} selected…</p>`; return; }
    const seq = ++this.seq;
    try {
      const answers = await Promise.all(this.panes.map((p) => p.api.stats(r.t0, r.t1)));
      if (seq !== this.seq) return;
      let html = `<p id="range-span" data-t0="${r.t0}" data-t1="${r.t1}"><b>${fmtDur(r.t1 - r.t0)}</b> from ${fmtDur(r.t0)} `
        + `<button data-act="zoom">zoom to range</button> <button data-act="clear">clear</button></p>`;
      answers.forEach((a, i) => {
        if (this.panes.length > 1) html += `<h3>${esc(this.panes[i].name)}</h3>`;
        html += `<div class="stats" data-trace="${i}">${renderStats(a)}</div>`;
      });
      this.el.innerHTML = html;
    } catch (err) {
      if (!isAbort(err)) this.onError(err);
    }
  }
}
