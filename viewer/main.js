// The page's entry: loads the traces and their rows, builds one pane per trace under a shared
// time axis, schedules requests (debounced) and frames (one per animation frame), shows the
// tooltips, and exposes the read-only test hook `window.pioscopeView`.

import { traces as getTraces, getJSON } from "./api.js";
import { Model } from "./model.js";
import { Pane } from "./pane.js";
import { paintAxis, paintPane } from "./draw.js";
import { attachInput } from "./input.js";
import { DetailsView } from "./views-details.js";
import { StatsView } from "./views-stats.js";
import { SearchView } from "./views-search.js";
import { FindingsView } from "./views-findings.js";
import { LegendView } from "./views-legend.js";
import { DarshanView } from "./views-darshan.js";
import { fmtDur, fmtBytes, fmtInt, fmtPct } from "./units.js";
import { LABEL_W, COUNTER_H } from "./layout.js";
import { RowZoom, groupAt, bucketAt } from "./rowzoom.js";
import { xScale } from "./draw.js";

const REQUEST_DEBOUNCE_MS = 90; // wait this long after the last zoom/pan before asking
const AXIS_H = 24;

const facts = {
  rows: 0, rowsDrawn: 0, statesDrawn: 0, bucketsDrawn: 0, densityRowsDrawn: 0, arrowsDrawn: 0,
  groupCellsDrawn: 0, worstMarksDrawn: 0, groupBandsDrawn: 0, groupArrowsDrawn: 0,
  t0: 0, t1: 0, selected: null, range: null, frames: 0, requests: 0, errors: [], readyMs: null, frameMs: 0,
};

function showError(err) {
  const msg = err && err.message ? err.message : String(err);
  facts.errors.push(msg);
  const el = document.getElementById("status");
  el.textContent = msg;
  el.classList.add("error");
}

async function main() {
  const list = await getTraces();
  if (!list.length) throw new Error("the server serves no trace");
  const docs = await Promise.all(list.map((t) => getJSON(`api/rows?trace=${t.index}`)));
  const model = new Model(Math.max(...list.map((t) => t.duration_ns)));
  document.title = `pioscope view — ${list.map((t) => t.name).join(" | ")}`;
  document.getElementById("title").textContent = list.map((t) => t.name).join("  vs  ");

  const host = document.getElementById("panes");
  const axis = document.getElementById("axis");
  let frameQueued = false;
  let refreshTimer = null;
  let ready = false;

  const invalidate = () => {
    if (frameQueued) return;
    frameQueued = true;
    requestAnimationFrame(frame);
  };
  const onChange = (what) => {
    if (what === "scroll") scheduleRefresh();
    invalidate(); // also after "answer" and "settled": the status shows whether requests remain
  };
  const panes = list.map((t, i) => new Pane(i, t, docs[i], host, onChange, showError));
  for (const p of panes) p.el.style.flexGrow = String(Math.max(1, Math.min(4, p.layout.height / 300)));
  for (const p of panes) p.resetRows(); // the flex shares above changed every pane's height
  facts.rows = panes.reduce((n, p) => n + p.layout.rowInfo.size, 0);

  function refreshNow() {
    refreshTimer = null;
    for (const p of panes) { p.refresh(model.t0, model.t1); facts.requests++; }
    // Debounced with the requests: browsers throttle frequent history updates.
    if (model.t0 !== 0 || model.t1 !== model.duration) history.replaceState(null, "", `#t0=${model.t0}&t1=${model.t1}`);
    else if (location.hash) history.replaceState(null, "", location.pathname);
    invalidate();
  }
  function scheduleRefresh() {
    if (refreshTimer) clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refreshNow, REQUEST_DEBOUNCE_MS);
  }

  function frame() {
    frameQueued = false;
    const started = performance.now();
    // Scrollbars are always shown (style.css), so every pane's plot has the axis's width.
    paintAxis(axis, model, panes[0].width, AXIS_H);
    const total = { rows: 0, states: 0, buckets: 0, density: 0, arrows: 0, groupCells: 0, worstMarks: 0, groupBands: 0, groupArrows: 0 };
    for (const p of panes) {
      const c = paintPane(p, model);
      for (const k of Object.keys(total)) total[k] += c[k];
    }
    Object.assign(facts, {
      rowsDrawn: total.rows, statesDrawn: total.states, bucketsDrawn: total.buckets,
      densityRowsDrawn: total.density, arrowsDrawn: total.arrows, t0: model.t0, t1: model.t1,
      groupCellsDrawn: total.groupCells, worstMarksDrawn: total.worstMarks,
      groupBandsDrawn: total.groupBands, groupArrowsDrawn: total.groupArrows,
      selected: model.selected ? model.selected.id : null,
      range: model.range ? { t0: model.range.t0, t1: model.range.t1 } : null,
    });
    facts.frames++;
    facts.frameMs = performance.now() - started;
    document.getElementById("window").textContent = `${fmtDur(model.t0)} – ${fmtDur(model.t1)}`;
    const status = document.getElementById("status");
    if (!status.classList.contains("error")) status.textContent = panes.some((p) => p.pending) ? "loading…" : "";
    if (!ready && panes.every((p) => p.answered)) {
      ready = true;
      // Milliseconds since navigation start: the first-paint figure of bench/perf/view_paint.py.
      facts.readyMs = performance.now();
      document.body.dataset.ready = "1";
    }
  }

  // What a click elsewhere (search, details, findings) does: select and bring into view.
  function jump(pane, st) {
    if (st.row != null) pane.scrollToRow(st.row);
    if (st.start != null && (st.start + st.dur < model.t0 || st.start > model.t1 || st.dur > model.t1 - model.t0)) {
      model.show(st.start, st.start + Math.max(st.dur, 1), 1);
    }
    model.select(pane.index, st.id);
  }
  function goTo(pane, j) {
    if (j.rows && j.rows.length) pane.scrollToRow(j.rows[0]);
    model.show(j.t0, j.t1, 0.05);
    model.select(pane.index, j.event ?? null);
  }

  // The window lives in the URL's hash (#t0=..&t1=..): a reload or a shared link shows it again.
  const hash = new URLSearchParams(location.hash.slice(1));
  const h0 = Number(hash.get("t0"));
  const h1 = Number(hash.get("t1"));
  if (hash.has("t0") && Number.isFinite(h0) && Number.isFinite(h1) && h1 > h0) model.setWindow(h0, h1);
  model.subscribe((what) => {
    if (what === "window") scheduleRefresh();
    invalidate();
  });
  const tip = (text, x, y) => {
    const el = document.getElementById("tip");
    el.hidden = !text;
    if (!text) return;
    el.textContent = text;
    el.style.left = `${x + 12}px`;
    el.style.top = `${y + 12}px`;
  };
  // After a change of a pane's rows (overview range, layout): ask and draw again.
  const rowsChanged = () => { tip(null); scheduleRefresh(); invalidate(); };
  const actions = {
    toggleGroup(pane, group) { pane.layout.toggle(group); pane.measure(); rowsChanged(); },
    zoomRows(pane, factor, y) { pane.zoomRows(factor, y); rowsChanged(); },
    panRows(pane, dy) { pane.panRows(dy); rowsChanged(); },
    expandAt(pane, y) { pane.expandAt(y); rowsChanged(); },
    hover(pane, st, x, y) {
      if (!st) { tip(null); return; }
      const f = pane.functions.get(st.func);
      tip(`${f ? f.name : st.func} · ${fmtDur(st.dur)} · ${pane.layout.rowInfo.get(st.row)?.label ?? ""}`, x, y);
    },
    hoverOverview(pane, px, py, x, y) { tip(overviewTip(pane, model, px, py), x, y); },
    reset() {
      for (const p of panes) p.resetRows();
      model.reset();
      rowsChanged();
    },
  };
  attachInput(model, panes, axis, actions);
  new DetailsView(document.getElementById("details"), model, panes, jump, showError);
  new StatsView(document.getElementById("stats"), model, panes, showError);
  new SearchView(document.getElementById("search"), document.getElementById("search-results"), model, panes, jump, showError);
  const findings = new FindingsView(document.getElementById("findings"), model, panes, goTo, showError);
  new LegendView(document.getElementById("legend"), model, panes);
  document.getElementById("collapse").addEventListener("click", () => {
    for (const p of panes) { p.layout.setAllCollapsed(true); p.leaveOverview(); }
    rowsChanged();
  });
  document.getElementById("expand").addEventListener("click", () => {
    for (const p of panes) { p.layout.setAllCollapsed(false); p.leaveOverview(); }
    rowsChanged();
  });
  document.getElementById("reset").addEventListener("click", () => actions.reset());
  // Window resizes, and panels opening or closing, change the panes' sizes.
  const resized = new ResizeObserver(() => { for (const p of panes) p.measure(); scheduleRefresh(); invalidate(); });
  for (const p of panes) resized.observe(p.scroller);

  const darshan = new DarshanView(document.getElementById("darshan"), panes, showError);
  exposeHook(panes, () => refreshTimer !== null, darshan);
  refreshNow();
  findings.load();
  darshan.load();
}

/** `window.pioscopeView`: facts the browser tests read; nothing in it changes the page. */
function exposeHook(panes, waiting, darshan) {
  const hook = {
    /** Every state drawn in the last frame, in page (client) coordinates. */
    drawnStates(trace = 0) {
      const p = panes[trace];
      const r = p.canvas.getBoundingClientRect();
      return p.drawn.map((d) => ({ id: d.id, func: p.functions.get(d.func)?.name ?? String(d.func), row: d.row,
        x: r.left + d.x, y: r.top + d.y, w: d.w, h: d.h }));
    },
    /** The plot area of a pane (right of the labels, below the throughput track), in page
     * coordinates. */
    plotRect(trace = 0) {
      const p = panes[trace];
      const r = p.canvas.getBoundingClientRect();
      return { left: r.left + LABEL_W, top: r.top + COUNTER_H, width: p.width - LABEL_W, height: p.height - COUNTER_H };
    },
    /** Rows of each pane: [{row, label, kind}] in display order. */
    rowList(trace = 0) {
      return [...panes[trace].layout.rowInfo.values()].map((r) => ({ row: r.row, label: r.label, kind: r.kind }));
    },
    /** The overview of a pane, or null in the detail layout: its rows [from, to), the groups
     * the plot has room for (`capacity`), and of the last answer drawn its grade, groups and
     * pairs of distinct groups that exchanged messages. */
    overview(trace = 0) {
      const p = panes[trace];
      if (!p.rowZoom.active) return null;
      const a = p.overview;
      return { ...p.rowZoom.range, capacity: RowZoom.capacity(p.plotHeight()),
        grade: a && a.rows.length ? a.rows[0].grade : null, groups: a ? a.rows.length : 0,
        pairs: a && a.group_messages ? a.group_messages.filter((m) => m.from !== m.to).length : null };
    },
    /** The overview's arrows between groups drawn in the last frame: the bend of each in page
     * coordinates (where its tooltip shows), the groups' first rows, messages and bytes. */
    groupArrows(trace = 0) {
      const p = panes[trace];
      const r = p.canvas.getBoundingClientRect();
      return p.groupArrows.map((a) => ({ x: r.left + a.x, y: r.top + a.y, from: a.from.first, to: a.to.first,
        count: a.count, bytes: a.bytes }));
    },
    /** The rows of a pane's last row-by-row request (visible rows and their margin). */
    rowsAsked(trace = 0) { return [...panes[trace].rowsAsked]; },
    /** Requests in flight, and whether a refresh waits for its debounce. */
    get pending() { return panes.reduce((n, p) => n + p.pending, 0) + (waiting() ? 1 : 0); },
    get panes() { return panes.length; },
    /** The Darshan panel once loaded: per pane {heatmaps, ranks, files} drawn (null for a
     * pane it does not show); null before. */
    get darshan() { return darshan.loaded ? panes.map((p) => darshan.drawn[p.index] ?? null) : null; },
  };
  for (const k of Object.keys(facts)) {
    Object.defineProperty(hook, k, { get: () => (Array.isArray(facts[k]) ? [...facts[k]] : facts[k]), enumerable: true });
  }
  window.pioscopeView = Object.freeze(hook);
}

main().catch((err) => {
  showError(err);
  console.error(err);
});

/** The tooltip of the overview at canvas point (`px`, `py`): an arrow between groups (its
 * messages and bytes) or a group's bucket (its rows, mean and worst busy, worst row, calls). */
function overviewTip(pane, model, px, py) {
  const label = (row) => pane.layout.rowInfo.get(row)?.label ?? `row ${row}`;
  const rows = (g) => `${label(g.first)} – ${label(g.last)}`;
  let arrow = null; // the nearest bend within 8 px: bends of neighbouring groups are close
  for (const a of pane.groupArrows) {
    const d = Math.hypot(a.x - px, a.y - py);
    if (d < 8 && (!arrow || d < arrow.d)) arrow = { ...a, d };
  }
  if (arrow) return `${rows(arrow.from)} → ${rows(arrow.to)}: ${fmtInt(arrow.count)} messages, ${fmtBytes(arrow.bytes)}`;
  const g = groupAt(pane.overview, Math.floor(pane.rowZoom.pos(py - COUNTER_H, pane.plotHeight())));
  if (!g) return null;
  const head = `${rows(g)} (${g.rows} rows)`;
  const inside = (pane.overview.group_messages || []).find((m) => m.from === g.first && m.to === g.first);
  const within = inside ? ` · ${fmtInt(inside.count)} messages inside, ${fmtBytes(inside.bytes)}` : "";
  if (px < LABEL_W) return `${head}${within}`;
  const i = bucketAt(g, xScale(model, pane.width).t(px));
  if (i < 0) return `${head}: idle${within}`;
  const f = pane.functions.get(g.func[i]);
  return `${head}: mean busy ${fmtPct(g.busy[i] / 1000)}, worst ${fmtPct(g.worst[i] / 1000)} `
    + `(${label(g.worst_row[i])}) · ${fmtInt(g.count[i])} calls · ${f ? f.name : "-"}${within}`;
}
