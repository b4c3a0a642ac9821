// The Darshan panel: a log imported without DXT has no calls to draw on the timeline, so the page
// shows what its counters say instead (the /api/darshan answer): the HEATMAP module as bytes over
// ranks and time, and the ranks and files with the most I/O time. Hidden for every other trace.

import { heatColor } from "./colors.js";
import { fmtBytes, fmtDur, fmtInt, esc } from "./units.js";

const CELL_W = 3; // px per time column, at least (the canvas is scaled up to it)
const CELL_H = 3; // px per rank row, at least

export class DarshanView {
  constructor(el, panes, onError) {
    this.el = el;
    this.panes = panes;
    this.onError = onError;
    /** What was drawn, for the test hook: per pane {heatmaps, ranks, files}. */
    this.drawn = [];
    this.loaded = false;
  }

  async load() {
    try {
      await this.show();
    } catch (err) {
      this.onError(err);
    } finally {
      this.loaded = true;
    }
  }

  async show() {
    const answers = await Promise.all(this.panes.map((p) => p.api.darshan()));
    const shown = answers.map((a, i) => [a, this.panes[i]]).filter(([a]) => a.imported && !a.has_dxt_events);
    if (!shown.length) return;
    this.el.hidden = false;
    for (const [a, pane] of shown) {
      const part = document.createElement("div");
      part.className = "darshan-trace";
      part.innerHTML = `<h3>${esc(pane.name)}: Darshan counters (no DXT trace: no calls to draw)</h3>`;
      for (const h of a.heatmaps) part.appendChild(heatmap(h));
      if (!a.heatmaps.length) part.insertAdjacentHTML("beforeend", `<p class="dim">The log has no HEATMAP module (Darshan 3.4 and later write one).</p>`);
      part.insertAdjacentHTML("beforeend", table("ranks", "Ranks", a.ranks, "files") + table("files", "Files", a.files, "ranks"));
      this.el.appendChild(part);
      this.drawn[pane.index] = { heatmaps: a.heatmaps.length, ranks: a.ranks.top.length, files: a.files.top.length };
    }
  }
}

/** One module's heat map: a canvas of rows (rank bins) x columns (time bins). */
function heatmap(h) {
  const box = document.createElement("div");
  box.className = "darshan-heatmap";
  const rowsOf = h.per_row === 1 ? "one rank" : `${h.per_row} consecutive ranks`;
  box.innerHTML = `<h4>${esc(h.module)} bytes over ranks and time</h4>`
    + `<p class="dim">${h.rows} rows of ${rowsOf} × ${h.columns} bins of ${fmtDur(h.bin_ns)}; `
    + `${fmtBytes(h.read_bytes)} read, ${fmtBytes(h.write_bytes)} written; darkest: ${fmtBytes(h.max_bytes)} in a cell.</p>`;
  const canvas = document.createElement("canvas");
  canvas.className = "heatmap";
  canvas.width = h.columns;
  canvas.height = h.rows;
  Object.assign(canvas.dataset, { module: h.module, rows: h.rows, columns: h.columns });
  canvas.style.width = `${Math.max(h.columns * CELL_W, 300)}px`;
  canvas.style.height = `${Math.max(h.rows * CELL_H, 40)}px`;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(h.columns, h.rows);
  for (let i = 0; i < h.rows; i++) {
    for (let j = 0; j < h.columns; j++) {
      const c = heatColor(h.max_bytes > 0 ? h.bytes[i][j] / h.max_bytes : 0);
      img.data.set([c[0], c[1], c[2], 255], 4 * (i * h.columns + j));
    }
  }
  ctx.putImageData(img, 0, 0);
  box.appendChild(canvas);
  return box;
}

/** The ranks or files with the most I/O time. */
function table(kind, title, list, withWhat) {
  const more = list.count > list.top.length ? ` (the ${list.top.length} with the most I/O time of ${fmtInt(list.count)})` : "";
  return `<h4>${title}${more}</h4><table class="grid ${kind}"><thead><tr><th>${kind === "ranks" ? "rank" : "file"}</th>`
    + `<th>I/O time</th><th>bytes</th><th>${withWhat}</th></tr></thead><tbody>`
    + list.top.map((r) => `<tr><td>${esc(r.name ?? String(r.key))}</td><td>${fmtDur(r.io_ns)}</td>`
      + `<td>${fmtBytes(r.bytes)}</td><td>${fmtInt(r.with)}</td></tr>`).join("")
    + `</tbody></table>`;
}
