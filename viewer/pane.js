// One trace on screen: its rows (layout, or the overview of many rows as row groups: rowzoom.js),
// its last answers from the server, and the requests that refresh them when the window, the
// scroll position or the rows' zoom changes. Panes of two traces stack and share the model's
// time window.

import { Api, isAbort } from "./api.js";
import { Layout, LABEL_W, COUNTER_H, ROW_H, HEADER_H } from "./layout.js";
import { Palette } from "./colors.js";
import { RowZoom, groupAt } from "./rowzoom.js";

const ROW_MARGIN = 8; // rows fetched beyond the visible ones, so a small scroll shows data at once
const TIME_MARGIN = 0.25; // of the span fetched on each side, so a small pan shows data at once

export class Pane {
  constructor(index, info, rowsDoc, host, onChange, onError) {
    this.index = index;
    this.info = info;
    this.name = info.name;
    this.api = new Api(index);
    this.layout = new Layout(rowsDoc);
    this.functions = new Map(rowsDoc.functions.map((f) => [f.id, f]));
    this.funcByName = new Map(rowsDoc.functions.map((f) => [f.name, f]));
    this.layers = rowsDoc.layers;
    this.colours = new Palette(rowsDoc);
    this.rowAnswers = new Map(); // row id -> last answer row (states or buckets)
    this.groupAnswers = new Map(); // display row -> the last row group answered holding it
    this.messages = [];
    this.rowZoom = new RowZoom(this.layout.rowInfo.size);
    this.overview = null; // the last row groups answered for the overview's rows
    this.groupArrows = []; // the overview's arrows drawn, for the tooltips
    this.rowsAsked = []; // the rows of the last row-by-row request (the test hook)
    this.counters = null;
    this.drawn = [];
    this.onChange = onChange;
    this.onError = onError;
    this.pending = 0; // requests in flight
    this.answered = false; // the first window answer arrived (for the ready mark)

    this.el = document.createElement("div");
    this.el.className = "pane";
    this.el.dataset.trace = String(index);
    this.scroller = document.createElement("div");
    this.scroller.className = "scroller";
    this.canvas = document.createElement("canvas");
    this.canvas.className = "plot";
    this.spacer = document.createElement("div");
    this.scroller.append(this.canvas, this.spacer);
    this.el.append(this.scroller);
    host.append(this.el);
    this.scroller.addEventListener("scroll", () => this.onChange("scroll", this));
    this.measure();
  }

  get scrollTop() { return this.scroller.scrollTop; }

  /** Reads the pane's size from the page and sizes the virtual scroll area. */
  measure() {
    this.width = this.scroller.clientWidth;
    this.height = this.scroller.clientHeight;
    // The overview fits its rows into the plot: nothing to scroll.
    const content = this.rowZoom.active ? 0 : this.layout.height;
    this.spacer.style.height = `${Math.max(0, COUNTER_H + content - this.height)}px`;
  }

  plotWidth() { return Math.max(1, this.width - LABEL_W); }

  plotHeight() { return Math.max(1, this.height - COUNTER_H); }

  /** Rows the current scroll position shows (with a margin), and the rows of the visible
   * collapsed groups with how many density rows show them. */
  wanted() {
    const vis = this.layout.visible(this.scrollTop, this.height - COUNTER_H);
    const rows = [];
    const dense = [];
    let denseRows = 0;
    for (const e of vis) {
      if (e.type === "row") rows.push(e.row);
      else if (e.type === "density") {
        denseRows++;
        for (const r of e.group.rows) dense.push(r.row);
      }
    }
    dense.sort((a, b) => a - b);
    if (rows.length) {
      const all = this.layout.entries;
      const first = all.indexOf(vis[0]);
      const last = all.indexOf(vis[vis.length - 1]);
      for (let i = Math.max(0, first - ROW_MARGIN); i < first; i++) if (all[i].type === "row") rows.unshift(all[i].row);
      for (let i = last + 1; i < Math.min(all.length, last + 1 + ROW_MARGIN); i++) if (all[i].type === "row") rows.push(all[i].row);
      rows.sort((a, b) => a - b);
    }
    return { rows: [...new Set(rows)], dense, denseRows };
  }

  /** Asks the server for the window around [t0, t1]; the answers replace the drawn ones as
   * they arrive (until then the last answers stay drawn, scaled to the new window). */
  refresh(t0, t1) {
    const duration = this.info.duration_ns;
    const span = t1 - t0;
    // Snap the fetched window to a grid of span/8 so that small moves hit the cache.
    const q = Math.max(1, Math.round(span / 8));
    const a = Math.max(0, Math.floor((t0 - span * TIME_MARGIN) / q) * q);
    const b = Math.min(duration, Math.ceil((t1 + span * TIME_MARGIN) / q) * q);
    if (!(b > a)) {
      this.rowAnswers.clear();
      this.groupAnswers.clear();
      this.messages = [];
      this.answered = true;
      this.onChange("answer", this);
      return;
    }
    const px = Math.max(1, Math.round(this.plotWidth() * (b - a) / Math.max(1, span)));
    this.track(this.api.counters(a, b, px), (ans) => { this.counters = ans; });
    // A taller pane may hold the overview's rows one by one now.
    if (this.rowZoom.active && !RowZoom.needs(this.rowZoom.count, this.plotHeight())) this.showDetail(this.rowZoom.range.from, 0);
    if (this.rowZoom.active) {
      this.refreshOverview(a, b, px);
      return;
    }
    const { rows, dense, denseRows } = this.wanted();
    this.rowsAsked = rows;
    if (rows.length) {
      this.track(this.api.window(a, b, px, rows), (ans) => {
        const keep = new Set(rows);
        const next = new Map();
        for (const [r, v] of this.rowAnswers) if (keep.has(r)) next.set(r, v);
        for (const r of ans.rows) next.set(r.row, r);
        this.rowAnswers = next;
        this.messages = ans.messages || [];
        this.answered = true;
      });
    } else {
      this.answered = this.answered || !dense.length;
    }
    if (dense.length) {
      // One pixel row per density row: the server merges the rows into groups that fit.
      this.track(this.api.groups(a, b, px, dense, denseRows), (ans) => {
        const byRow = new Map();
        for (const g of ans.rows) if (g.mode === "groups") for (let r = g.first; r <= g.last; r++) byRow.set(r, g);
        this.groupAnswers = byRow;
        this.answered = true;
      });
    }
  }

  /** Asks for the overview's rows merged into as many groups as the plot has bands; a trace
   * without row grades (answered row by row) falls back to the detail layout for good. */
  refreshOverview(a, b, px) {
    const { from, to } = this.rowZoom.range;
    const rows = Array.from({ length: to - from }, (_, i) => from + i);
    this.track(this.api.groups(a, b, px, rows, RowZoom.capacity(this.plotHeight())), (ans) => {
      if (!this.rowZoom.active) return; // left the overview while the request ran
      if (ans.rows.some((r) => r.mode !== "groups")) {
        this.rowZoom.unavailable = true;
        this.rowZoom.range = null;
        this.measure();
        this.onChange("scroll", this); // asks for the rows of the detail layout
        return;
      }
      this.overview = ans;
      this.answered = true;
    });
  }

  /** Zooms the rows by `factor` (< 1: fewer, taller rows) around the row at `y` from the
   * plot's top: inside the overview, out of it into the detail layout, or back. */
  zoomRows(factor, y) {
    const plotH = this.plotHeight();
    if (this.rowZoom.active) {
      const detail = this.rowZoom.zoom(factor, y, plotH);
      if (detail) this.showDetail(detail.row, detail.y);
    } else if (factor > 1) {
      this.rowZoom.zoomOut(factor, this.rowAtY(y), y, plotH);
    }
    this.measure();
  }

  /** The overview of every row when they do not fit the plot's bands, else the detail
   * layout: how a pane starts, and *reset zoom*. */
  resetRows() {
    this.rowZoom.start(this.plotHeight());
    this.measure();
  }

  /** Whether the rows are too many for the plot's bands and the trace has row grades. */
  hasOverview() { return this.rowZoom.possible(this.plotHeight()); }

  /** The detail layout (the host buttons act on it). */
  leaveOverview() {
    this.rowZoom.range = null;
    this.measure();
  }

  /** Moves the rows by `dy` pixels (positive: later rows come up). */
  panRows(dy) {
    if (this.rowZoom.active) this.rowZoom.pan(dy, this.plotHeight());
    else this.scroller.scrollTop += dy;
  }

  /** Zooms into the overview's group at `y` from the plot's top (a click on its band). */
  expandAt(y) {
    const g = groupAt(this.overview, this.rowZoom.pos(y, this.plotHeight()));
    if (!g) return;
    const detail = this.rowZoom.expand(g.first, g.last, this.plotHeight());
    if (detail) this.showDetail(detail.row, detail.y + HEADER_H); // its host's header in view too
    this.measure();
  }

  /** The detail layout with `row` at `y` from the plot's top; the hosts of the rows it then
   * shows are expanded. */
  showDetail(row, y) {
    const plotH = this.plotHeight();
    this.rowZoom.range = null;
    const above = Math.ceil(y / ROW_H);
    this.layout.expandRows(row - above, row + Math.ceil((plotH - y) / ROW_H));
    this.measure();
    const e = this.layout.rowY.get(row);
    if (e) this.scroller.scrollTop = Math.max(0, e.y - y);
  }

  /** The row (fractional position) at `y` from the plot's top of the detail layout. */
  rowAtY(y) {
    const e = this.layout.at(this.scrollTop + y);
    if (!e) return this.rowZoom.total - 1;
    if (e.type === "row") return e.row + (this.scrollTop + y - e.y) / e.h;
    const rows = e.group.rows;
    return e.type === "density" ? (rows[0].row + rows[rows.length - 1].row + 1) / 2 : rows[0].row;
  }

  track(promise, apply) {
    this.pending++;
    promise.then((ans) => {
      apply(ans);
      this.onChange("answer", this);
    }).catch((err) => {
      if (!isAbort(err)) this.onError(err);
    }).finally(() => {
      this.pending--;
      this.onChange("settled", this);
    });
  }

  /** Scrolls so that `row` is visible (centred when it was not). */
  scrollToRow(row) {
    this.leaveOverview();
    let e = this.layout.rowY.get(row);
    if (e && e.type === "density") {
      this.layout.toggle(e.group);
      this.measure();
      e = this.layout.rowY.get(row);
    }
    if (!e) return;
    const top = this.scrollTop;
    const viewH = this.height - COUNTER_H;
    if (e.y < top || e.y + e.h > top + viewH) this.scroller.scrollTop = Math.max(0, e.y - viewH / 2);
    this.onChange("scroll", this); // a group may have expanded even when nothing scrolled
  }
}
