// Row geometry of one pane: host groups with a header, rows with stacked lanes per nesting
// depth, collapsed groups as one density row; which entries a scroll position shows.

export const LABEL_W = 132; // the label column left of the plot, CSS px
export const LANES = 4; // nesting depths drawn as lanes (deeper calls share the last lane)
export const LANE_H = 7;
export const ROW_H = LANES * LANE_H + 4;
export const HEADER_H = 16;
export const DENSITY_H = 20;
export const COUNTER_H = 34; // the throughput track at the top of each pane (not scrolled)
export const AUTO_COLLAPSE_ROWS = 200; // more rows than this: groups start collapsed

/** `rowsDoc` is the /api/rows answer; groups of one row never collapse. */
export class Layout {
  constructor(rowsDoc) {
    this.groups = rowsDoc.groups.map((g) => ({ host: g.host, rows: g.rows, collapsed: false }));
    this.rowInfo = new Map();
    for (const g of this.groups) for (const r of g.rows) this.rowInfo.set(r.row, r);
    if (this.rowInfo.size > AUTO_COLLAPSE_ROWS) for (const g of this.groups) g.collapsed = g.rows.length > 1;
    this.build();
  }

  /** Recomputes entries and their y after a group was collapsed or expanded. */
  build() {
    this.entries = [];
    this.rowY = new Map(); // row id -> entry, for arrows and jumps
    let y = 0;
    for (const g of this.groups) {
      if (g.collapsed && g.rows.length > 1) {
        // A collapsed group is one entry: its density row carries the header's label, so
        // thousands of hosts take one line each.
        const e = { type: "density", group: g, y, h: DENSITY_H };
        this.entries.push(e);
        for (const r of g.rows) this.rowY.set(r.row, e);
        y += DENSITY_H;
      } else {
        this.entries.push({ type: "header", group: g, y, h: HEADER_H });
        y += HEADER_H;
        for (const r of g.rows) {
          const e = { type: "row", row: r.row, info: r, group: g, y, h: ROW_H };
          this.entries.push(e);
          this.rowY.set(r.row, e);
          y += ROW_H;
        }
      }
    }
    this.height = y;
  }

  toggle(group) {
    group.collapsed = !group.collapsed;
    this.build();
  }

  /** Expands the collapsed groups holding any of rows [first, last]. */
  expandRows(first, last) {
    for (const g of this.groups) if (g.collapsed && g.rows.some((r) => r.row >= first && r.row <= last)) g.collapsed = false;
    this.build();
  }

  setAllCollapsed(collapsed) {
    for (const g of this.groups) g.collapsed = collapsed && g.rows.length > 1;
    this.build();
  }

  /** Entries overlapping [top, top + h) (binary search: thousands of rows stay cheap). */
  visible(top, h) {
    const es = this.entries;
    let lo = 0, hi = es.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (es[mid].y + es[mid].h <= top) lo = mid + 1; else hi = mid;
    }
    const out = [];
    for (let i = lo; i < es.length && es[i].y < top + h; i++) out.push(es[i]);
    return out;
  }

  /** The entry at content y, or null. */
  at(y) {
    const v = this.visible(y, 1);
    return v.length ? v[0] : null;
  }

  /** Lane (nesting depth) at content y inside a row entry. */
  static lane(entry, y) {
    return Math.max(0, Math.min(LANES - 1, Math.floor((y - entry.y - 2) / LANE_H)));
  }
}
