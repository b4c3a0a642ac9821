// The vertical zoom of one pane (issue 18): either the overview, a range of rows squeezed into
// the plot's height and drawn from row groups, or the detail layout (layout.js), one row per
// ROW_H. Pure arithmetic over row positions (display row ids, dense 0..n in display order): no
// drawing, no requests, no DOM.

import { ROW_H } from "./layout.js";

const BAND_PX = 4; // the thinnest row group band: the server is asked for plotH / BAND_PX groups
const MIN_ROWS = 2; // an overview shows at least this many rows

export class RowZoom {
  /** `total` rows, in the detail layout until `start`. */
  constructor(total) {
    this.total = total;
    this.range = null; // {from, to}: rows [from, to) span the plot; null: the detail layout
    this.unavailable = false; // the server answered row by row: the trace has no row grades
    this.carry = 0; // the fraction of a row a pan moved beyond the whole rows (drags move by pixels)
  }

  get active() { return this.range !== null; }

  /** Row groups the plot holds: the `height` the page asks for. */
  static capacity(plotH) { return Math.max(1, Math.floor(plotH / BAND_PX)); }

  /** Whether `count` rows need the overview in a plot `plotH` high. */
  static needs(count, plotH) { return count > RowZoom.capacity(plotH); }

  /** Whether the rows are too many for the plot's bands and the trace has row grades. */
  possible(plotH) { return !this.unavailable && RowZoom.needs(this.total, plotH); }

  /** Starts in the overview of every row when they do not fit the plot's bands. */
  start(plotH) {
    this.range = this.possible(plotH) ? { from: 0, to: this.total } : null;
  }

  get count() { return this.range ? this.range.to - this.range.from : 0; }

  /** Pixels per row in the overview. */
  rowPx(plotH) { return plotH / Math.max(1, this.count); }

  /** The y (from the plot's top) where row position `pos` starts. */
  y(pos, plotH) { return (pos - this.range.from) * this.rowPx(plotH); }

  /** The row position (fractional) at `y` from the plot's top. */
  pos(y, plotH) { return this.range.from + y / this.rowPx(plotH); }

  /** Sets the overview to `count` rows with position `anchor` at fraction `frac` of the
   * plot's height, kept inside [0, total). */
  place(count, anchor, frac) {
    const n = Math.max(MIN_ROWS, Math.min(this.total, Math.round(count)));
    const from = Math.max(0, Math.min(this.total - n, Math.round(anchor - frac * n)));
    this.range = { from, to: from + n };
  }

  /** Zooms the overview by `factor` (< 1: fewer rows) around the row at `y`. Returns the row
   * to show in the detail layout (with its y) when the rows then fit the plot's bands, else
   * null. */
  zoom(factor, y, plotH) {
    const anchor = this.pos(y, plotH);
    const next = this.count * factor;
    if (!RowZoom.needs(next, plotH)) {
      this.range = null;
      return { row: Math.max(0, Math.min(this.total - 1, Math.floor(anchor))), y };
    }
    this.place(next, anchor, y / plotH);
    return null;
  }

  /** Zooms out of the detail layout into an overview just above the plot's capacity, with the
   * row at `y` (position `anchor`) kept under the cursor; false when every row fits anyway. */
  zoomOut(factor, anchor, y, plotH) {
    if (!this.possible(plotH)) return false;
    this.place(Math.max(RowZoom.capacity(plotH) + 1, Math.ceil((plotH / ROW_H) * factor)), anchor, y / plotH);
    return true;
  }

  /** Moves the overview by `dy` pixels (positive: later rows come up). */
  pan(dy, plotH) {
    const want = this.range.from + this.carry + dy / this.rowPx(plotH);
    this.place(this.count, want, 0);
    this.carry = Math.abs(want - this.range.from) < 1 ? want - this.range.from : 0;
  }

  /** Zooms into rows [first, last]: the overview of them, or the detail layout (returns the
   * first row) when they fit. */
  expand(first, last, plotH) {
    const n = last - first + 1;
    if (!RowZoom.needs(n, plotH)) {
      this.range = null;
      return { row: first, y: 0 };
    }
    this.place(n, first, 0);
    return null;
  }
}

/** The group of an overview answer at row position `pos`, or null (groups sorted by first). */
export function groupAt(answer, pos) {
  if (!answer) return null;
  const gs = answer.rows;
  let lo = 0, hi = gs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (gs[mid].last < pos) lo = mid + 1; else hi = mid;
  }
  const g = gs[lo];
  return g && g.first <= pos ? g : null;
}

/** The index into a group's bucket arrays of the bucket holding time `t`, or -1. */
export function bucketAt(group, t) {
  const want = Math.floor(t / group.bucket_ns);
  const idx = group.index;
  let lo = 0, hi = idx.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (idx[mid] < want) lo = mid + 1; else hi = mid;
  }
  return idx[lo] === want ? lo : -1;
}
