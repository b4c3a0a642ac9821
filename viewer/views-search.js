// Search box: functions, files and events matching a name, a path or "rank N"; a function
// highlights its states, an event is selected and brought into view.

import { isAbort } from "./api.js";
import { fmtDur, esc } from "./units.js";
import { funcName } from "./views-details.js";

export class SearchView {
  constructor(input, el, model, panes, jump, onError) {
    this.input = input;
    this.el = el;
    this.model = model;
    this.panes = panes;
    this.jump = jump;
    this.onError = onError;
    this.seq = 0;
    this.answers = [];
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { ev.preventDefault(); this.run(input.value.trim()); }
      if (ev.key === "Escape") { input.blur(); }
    });
    el.addEventListener("click", (ev) => {
      const a = ev.target.closest("a[data-kind]");
      if (!a) return;
      ev.preventDefault();
      const pane = this.panes[Number(a.dataset.trace)];
      if (a.dataset.kind === "func") {
        const func = Number(a.dataset.func);
        const h = this.model.highlight;
        this.model.setHighlight(h && h.pane === pane.index && h.func === func ? null : { pane: pane.index, func });
      } else if (a.dataset.kind === "row") {
        pane.scrollToRow(Number(a.dataset.row));
      } else if (a.dataset.kind === "file") {
        this.input.value = a.dataset.path;
        this.run(a.dataset.path);
      } else if (a.dataset.kind === "event") {
        const e = this.answers[pane.index].events[Number(a.dataset.i)];
        this.jump(pane, e);
      }
    });
    el.innerHTML = `<p class="dim">Type a function, a file path or "rank N" and press Enter.</p>`;
  }

  async run(q) {
    if (!q) return;
    const seq = ++this.seq;
    try {
      const answers = await Promise.all(this.panes.map((p) => p.api.search(q)));
      if (seq !== this.seq) return;
      this.answers = answers;
      let html = "";
      answers.forEach((a, i) => {
        const pane = this.panes[i];
        if (this.panes.length > 1) html += `<h3>${esc(pane.name)}</h3>`;
        const fs = a.functions || [];
        const files = a.files || [];
        const evs = a.events || [];
        html += `<div class="search-results" data-trace="${i}" data-functions="${fs.length}" data-events="${evs.length}">`;
        html += `<h4>Functions (${fs.length})</h4><ul>` + fs.map((f) => {
          // A function is an object {id, name, layer} or just its name.
          const fn = typeof f === "object" ? (pane.functions.get(f.id) || f) : (pane.funcByName.get(f) || { id: f, name: f });
          const id = fn.id;
          return `<li><a href="#" data-kind="func" data-trace="${i}" data-func="${id}" class="func-hit">`
            + `<span class="swatch" style="background:${pane.colours.func(id, fn.layer)}"></span>${esc(fn.name ?? id)}</a>`
            + (f.calls != null ? ` <span class="dim">${f.calls} calls</span>` : "") + `</li>`;
        }).join("") + `</ul>`;
        if (files.length) {
          html += `<h4>Files (${files.length})</h4><ul>` + files.slice(0, 50).map((f) => {
            const path = typeof f === "object" ? (f.path ?? JSON.stringify(f)) : f;
            return `<li class="mono"><a href="#" data-kind="file" data-trace="${i}" data-path="${esc(path)}">${esc(path)}</a></li>`;
          }).join("") + `</ul>`;
        }
        const rows = a.rows || [];
        if (rows.length) {
          html += `<h4>Rows (${rows.length})</h4><ul>` + rows.slice(0, 50).map((r) =>
            `<li><a href="#" data-kind="row" data-trace="${i}" data-row="${r.row}">${esc(r.label ?? `row ${r.row}`)}</a></li>`).join("") + `</ul>`;
        }
        html += `<h4>Events (${evs.length}${evs.length >= 100 ? "+" : ""})</h4><ul>` + evs.map((e, k) =>
          `<li><a href="#" data-kind="event" data-trace="${i}" data-i="${k}" class="event-hit">${esc(funcName(pane, e))}</a>`
          + ` <span class="dim">${esc(pane.layout.rowInfo.get(e.row)?.label ?? `row ${e.row}`)} at ${fmtDur(e.start)}, ${fmtDur(e.dur)}</span></li>`).join("") + `</ul></div>`;
      });
      this.el.innerHTML = html;
    } catch (err) {
      if (!isAbort(err)) this.onError(err);
    }
  }
}
