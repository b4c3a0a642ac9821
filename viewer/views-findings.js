// Findings list: the report's findings of each trace, ranked as the report ranks them; a
// click jumps to the finding's evidence (its time range, its rows, its event).

import { fmtDur, esc } from "./units.js";

export class FindingsView {
  constructor(el, model, panes, goTo, onError) {
    this.el = el;
    this.model = model;
    this.panes = panes;
    this.goTo = goTo;
    this.onError = onError;
    this.lists = [];
    el.addEventListener("click", (ev) => {
      const a = ev.target.closest("a.finding");
      if (!a) return;
      ev.preventDefault();
      const pane = this.panes[Number(a.dataset.trace)];
      const f = this.lists[pane.index][Number(a.dataset.i)];
      if (f && f.jump) this.goTo(pane, f.jump);
    });
    el.innerHTML = `<p class="dim">Loading findings…</p>`;
  }

  async load() {
    try {
      const answers = await Promise.all(this.panes.map((p) => p.api.findings()));
      // A list, or an object holding it (as `pioscope report --json` does).
      this.lists = answers.map((a) => (Array.isArray(a) ? a : (a && a.findings) || []));
    } catch (err) {
      this.el.innerHTML = `<p class="dim">No findings (${esc(err.message)}).</p>`;
      return;
    }
    let html = "";
    this.lists.forEach((list, i) => {
      if (this.panes.length > 1) html += `<h3>${esc(this.panes[i].name)}</h3>`;
      if (!list.length) { html += `<p class="dim">No finding.</p>`; return; }
      html += `<ol class="findings">` + list.map((f, k) =>
        `<li class="sev-${esc(f.severity ?? "")}"><a href="#" class="finding" data-trace="${i}" data-i="${k}">${esc(f.title ?? f.id)}</a>`
        + `<div class="dim">${esc(f.id ?? "")}${f.cost_ns != null ? ` · costs ${fmtDur(f.cost_ns)}` : ""}${f.severity ? ` · ${esc(f.severity)}` : ""}</div></li>`).join("") + `</ol>`;
    });
    this.el.innerHTML = html;
  }
}
