// Canvas painting: states, buckets, density rows, message arrows, the throughput track, the
// time axis and the labels (the overview's row groups: draw-overview.js). Rectangles are batched
// by colour (one path and one fill per colour per frame), at the screen's devicePixelRatio.

import { LABEL_W, LANES, LANE_H, COUNTER_H, DENSITY_H } from "./layout.js";
import { fmtBytes, fmtTime, fmtThroughput, tickLabels } from "./units.js";
import { Batch } from "./batch.js";
import { FADED, WORST_MARK } from "./colors.js";
import { paintOverview, paintOverviewLabels } from "./draw-overview.js";

const DEEP_LANE = ["", "hsl(220, 12%, 52%)", "hsl(220, 12%, 62%)", "hsl(220, 12%, 70%)"];

/** Sizes `canvas` to `w` × `h` CSS px at the device pixel ratio; returns its 2D context in
 * CSS px units. */
export function sizeCanvas(canvas, w, h) {
  const dpr = window.devicePixelRatio || 1;
  const pw = Math.max(1, Math.round(w * dpr));
  const ph = Math.max(1, Math.round(h * dpr));
  if (canvas.width !== pw || canvas.height !== ph) {
    canvas.width = pw;
    canvas.height = ph;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** Tick positions for [t0, t1] over `px` pixels: a 1-2-5 step about every 110 px. */
export function ticks(t0, t1, px) {
  const span = Math.max(1, t1 - t0);
  const raw = span / Math.max(1, px / 110);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const out = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
  return { step, list: out };
}

/** The x ↔ time mapping of a plot of width `w` (CSS px, labels included). */
export function xScale(model, w) {
  const plotW = Math.max(1, w - LABEL_W);
  const k = plotW / Math.max(1, model.t1 - model.t0);
  return { x: (t) => LABEL_W + (t - model.t0) * k, t: (x) => model.t0 + (x - LABEL_W) / k, plotW };
}

/** Paints the shared time axis. */
export function paintAxis(canvas, model, w, h) {
  const ctx = sizeCanvas(canvas, w, h);
  const s = xScale(model, w);
  ctx.clearRect(0, 0, w, h);
  ctx.fillStyle = "#f4f5f7";
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = "#333";
  ctx.font = "11px sans-serif";
  ctx.textBaseline = "middle";
  const { step, list } = ticks(model.t0, model.t1, s.plotW);
  const labels = tickLabels(step, model.t0, model.t1);
  const shown = `${fmtTime(model.t1 - model.t0, (model.t1 - model.t0) / 10)} shown`;
  ctx.fillText(labels.base ? `${labels.base} +…` : shown, 6, h / 2, LABEL_W - 10);
  ctx.strokeStyle = "#888";
  ctx.beginPath();
  for (const t of list) {
    const x = Math.round(s.x(t)) + 0.5;
    ctx.moveTo(x, h - 6);
    ctx.lineTo(x, h);
  }
  ctx.stroke();
  ctx.textAlign = "center";
  for (const t of list) ctx.fillText(labels.label(t), s.x(t), h / 2 - 2);
  ctx.textAlign = "left";
  if (model.range) paintRange(ctx, model, s, h);
}

function paintRange(ctx, model, s, h) {
  const x0 = Math.max(LABEL_W, s.x(model.range.t0));
  const x1 = s.x(model.range.t1);
  if (x1 < LABEL_W) return;
  ctx.fillStyle = "rgba(255, 190, 0, 0.18)";
  ctx.fillRect(x0, 0, Math.max(1, x1 - x0), h);
  ctx.strokeStyle = "rgba(200, 140, 0, 0.9)";
  ctx.strokeRect(x0 + 0.5, 0.5, Math.max(1, x1 - x0) - 1, h - 1);
}

/** Paints one pane (a trace): throughput track, then the visible rows. Records what was
 * drawn in `pane.drawn` (states with their boxes, for clicks and the test hook) and returns
 * the frame's counts. */
export function paintPane(pane, model) {
  const w = pane.width;
  const h = pane.height;
  const ctx = sizeCanvas(pane.canvas, w, h);
  const s = xScale(model, w);
  const top = pane.scrollTop;
  const yOf = (contentY) => COUNTER_H + contentY - top;
  const counts = { rows: 0, states: 0, buckets: 0, density: 0, arrows: 0, groupCells: 0, worstMarks: 0, groupBands: 0, groupArrows: 0 };
  const drawn = [];
  const batch = new Batch();
  const hl = model.highlight && model.highlight.pane === pane.index ? model.highlight.func : null;
  const sel = model.selected && model.selected.pane === pane.index ? model.selected.id : null;
  let selBox = null;

  ctx.clearRect(0, 0, w, h);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, w, h);

  // Grid lines first, under everything.
  const { list } = ticks(model.t0, model.t1, s.plotW);
  ctx.strokeStyle = "#eceef1";
  ctx.beginPath();
  for (const t of list) {
    const x = Math.round(s.x(t)) + 0.5;
    ctx.moveTo(x, COUNTER_H);
    ctx.lineTo(x, h);
  }
  ctx.stroke();

  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, COUNTER_H, w - LABEL_W, h - COUNTER_H);
  ctx.clip();

  // The overview draws row groups instead of the layout's entries (draw-overview.js).
  const overview = pane.rowZoom.active;
  const entries = overview ? [] : pane.layout.visible(top, h - COUNTER_H);
  const rowAnswer = pane.rowAnswers;

  for (const e of entries) {
    const y = yOf(e.y);
    if (e.type === "header") {
      batch.rect("#eef0f3", LABEL_W, y, w - LABEL_W, e.h);
    } else if (e.type === "density") {
      counts.density++;
      batch.rect("#f6f7f9", LABEL_W, y, w - LABEL_W, e.h - 1);
      paintGroups(batch, pane, e, y, s, w, hl, counts);
    } else {
      counts.rows++;
      const a = rowAnswer.get(e.row);
      if (!a) continue;
      if (a.mode === "states") {
        for (const st of a.states) {
          const end = st.start + st.dur;
          if (end < model.t0 || st.start > model.t1) continue;
          const x0 = Math.max(LABEL_W - 1, s.x(st.start));
          const x1 = Math.min(w + 1, s.x(end));
          const lane = Math.min(LANES - 1, st.depth);
          const ry = y + 2 + lane * LANE_H;
          const rw = Math.max(1, x1 - x0);
          const color = hl != null && st.func !== hl ? FADED : pane.colours.func(st.func);
          batch.rect(color, x0, ry, rw, LANE_H - 1);
          drawn.push({ id: st.id, func: st.func, row: e.row, start: st.start, dur: st.dur, x: x0, y: ry, w: rw, h: LANE_H - 1 });
          if (st.id === sel) selBox = [x0, ry, rw, LANE_H - 1];
          counts.states++;
        }
      } else if (a.mode === "buckets") {
        const bw = a.bucket_ns;
        for (const b of a.buckets) {
          const x0 = s.x(b.start);
          const x1 = s.x(b.start + bw);
          if (x1 < LABEL_W || x0 > w) continue;
          const bwPx = Math.max(1, x1 - x0);
          for (let d = 0; d < LANES; d++) {
            const busy = b.busy[d] || 0;
            if (busy <= 0) continue;
            const bh = Math.max(1, Math.round(busy * (LANE_H - 1)));
            let color;
            if (d === 0) color = hl != null && b.func !== hl ? FADED : pane.colours.func(b.func);
            else color = b.layers && b.layers[d] ? pane.colours.layer(b.layers[d]) : DEEP_LANE[d];
            batch.rect(color, x0, y + 2 + d * LANE_H + (LANE_H - 1 - bh), bwPx, bh);
          }
          counts.buckets++;
        }
      }
    }
  }
  batch.flush(ctx);

  if (selBox) {
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 2;
    ctx.strokeRect(selBox[0] - 1, selBox[1] - 1, selBox[2] + 2, selBox[3] + 2);
    ctx.lineWidth = 1;
  }
  if (overview) paintOverview(ctx, pane, s, w, hl, counts);
  else counts.arrows = paintMessages(ctx, pane, s, yOf, top, h);
  ctx.restore();

  paintCounters(ctx, pane, s, w);
  paintLabels(ctx, pane, entries, yOf, h);
  if (overview) paintOverviewLabels(ctx, pane);
  if (model.range) paintRange(ctx, model, s, h);
  pane.drawn = drawn;
  return counts;
}

/** A density row (a collapsed host) from the row groups answered for its rows: per bucket a
 * bar of the group's mean busy fraction in its function's colour, and a dark tick at the
 * busy fraction of its worst row. Groups sharing the row split its height. */
function paintGroups(batch, pane, e, y, s, w, hl, counts) {
  const groups = [];
  for (const r of e.group.rows) {
    const g = pane.groupAnswers.get(r.row);
    if (g && groups[groups.length - 1] !== g) groups.push(g);
  }
  if (!groups.length) return;
  const gh = (DENSITY_H - 3) / groups.length;
  groups.forEach((g, k) => {
    const base = y + 1 + gh * (k + 1);
    for (let i = 0; i < g.index.length; i++) {
      const start = g.index[i] * g.bucket_ns;
      const x0 = s.x(start);
      const x1 = s.x(start + g.bucket_ns);
      if (x1 < LABEL_W || x0 > w) continue;
      const bw = Math.max(1, x1 - x0);
      const f = g.func[i];
      const colour = hl != null && f !== hl ? FADED : pane.colours.func(f, null);
      const bh = Math.max(1, (g.busy[i] / 1000) * gh);
      batch.rect(colour, x0, base - bh, bw, bh);
      counts.groupCells++;
      if (g.worst[i] > g.busy[i]) {
        batch.rect(WORST_MARK, x0, base - Math.max(1, (g.worst[i] / 1000) * gh), bw, 1);
        counts.worstMarks++;
      }
    }
  });
}

/** MPI messages as arrows from send to receive; only those touching a visible row. */
function paintMessages(ctx, pane, s, yOf, top, h) {
  const msgs = pane.messages;
  if (!msgs || !msgs.length) return 0;
  const mid = (row) => {
    const e = pane.layout.rowY.get(row);
    return e ? yOf(e.y) + e.h / 2 : null;
  };
  ctx.strokeStyle = "rgba(20, 20, 20, 0.55)";
  ctx.fillStyle = "rgba(20, 20, 20, 0.7)";
  ctx.beginPath();
  const heads = [];
  let n = 0;
  for (const m of msgs) {
    const y0 = mid(m.from_row);
    const y1 = mid(m.to_row);
    if (y0 == null || y1 == null) continue;
    if ((y0 < COUNTER_H && y1 < COUNTER_H) || (y0 > h && y1 > h)) continue;
    const x0 = s.x(m.send);
    const x1 = s.x(m.recv);
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    heads.push([x0, y0, x1, y1]);
    n++;
  }
  ctx.stroke();
  ctx.beginPath();
  for (const [x0, y0, x1, y1] of heads) {
    const a = Math.atan2(y1 - y0, x1 - x0);
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - 6 * Math.cos(a - 0.4), y1 - 6 * Math.sin(a - 0.4));
    ctx.lineTo(x1 - 6 * Math.cos(a + 0.4), y1 - 6 * Math.sin(a + 0.4));
    ctx.closePath();
  }
  ctx.fill();
  return n;
}

const TRACK_COLORS = [
  "40, 110, 200", "200, 90, 40", "60, 150, 80", "140, 80, 170",
  "180, 150, 30", "30, 150, 160", "200, 60, 130", "110, 110, 110",
];

/** The counter tracks (aggregate I/O throughput first, then per server when present, then the
 * sampled node and process counters: CPU %, disk and network B/s, memory) as lines at the
 * pane's top, each scaled to its own maximum in the window; the first one filled. */
function paintCounters(ctx, pane, s, w) {
  ctx.fillStyle = "#fafbfc";
  ctx.fillRect(0, 0, w, COUNTER_H);
  ctx.strokeStyle = "#d5d8dd";
  ctx.beginPath();
  ctx.moveTo(0, COUNTER_H - 0.5);
  ctx.lineTo(w, COUNTER_H - 0.5);
  ctx.stroke();
  ctx.fillStyle = "#333";
  ctx.font = "bold 11px sans-serif";
  ctx.textBaseline = "top";
  ctx.fillText(pane.name, 6, 3, LABEL_W - 10);
  const tracks = ((pane.counters && pane.counters.tracks) || []).slice(0, TRACK_COLORS.length);
  if (!tracks.length) return;
  ctx.font = "10px sans-serif";
  ctx.fillStyle = "#555";
  ctx.fillText(tracks.length > 1 ? `${tracks[0].name} +${tracks.length - 1}` : tracks[0].name, 6, 15, LABEL_W - 10);
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, 0, w - LABEL_W, COUNTER_H);
  ctx.clip();
  let labelX = LABEL_W + 4;
  tracks.forEach((track, i) => {
    const pts = track.points || [];
    let max = 0;
    for (const [, v] of pts) if (v > max) max = v;
    if (!pts.length || max <= 0) return;
    const rgb = TRACK_COLORS[i];
    const base = COUNTER_H - 2;
    const scale = (COUNTER_H - 6) / max;
    ctx.beginPath();
    ctx.moveTo(s.x(pts[0][0]), base);
    for (const [t, v] of pts) ctx.lineTo(s.x(t), base - v * scale);
    ctx.lineTo(s.x(pts[pts.length - 1][0]), base);
    if (i === 0) {
      ctx.fillStyle = `rgba(${rgb}, 0.25)`;
      ctx.fill();
    }
    ctx.strokeStyle = `rgba(${rgb}, 0.9)`;
    ctx.stroke();
    const label = `${i ? `${track.name} ` : ""}max ${fmtTrackValue(max, track.unit)}`;
    ctx.fillStyle = `rgb(${rgb})`;
    ctx.fillText(label, labelX, 2);
    labelX += ctx.measureText(label).width + 14;
  });
  ctx.restore();
}

/** A track's value for its label: throughput, bytes, or a number with its unit. */
function fmtTrackValue(v, unit) {
  if (unit === "B/s" || !unit) return fmtThroughput(v);
  if (unit === "B") return fmtBytes(v);
  return `${v.toPrecision(3)} ${unit}`;
}

/** The label column: group headers (with their expand/collapse mark) and row names. */
function paintLabels(ctx, pane, entries, yOf, h) {
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, COUNTER_H, LABEL_W, h - COUNTER_H);
  ctx.clip();
  ctx.fillStyle = "#f7f8fa";
  ctx.fillRect(0, COUNTER_H, LABEL_W, h - COUNTER_H);
  ctx.textBaseline = "middle";
  for (const e of entries) {
    const y = yOf(e.y);
    if (e.type === "header") {
      ctx.fillStyle = "#e3e6eb";
      ctx.fillRect(0, y, LABEL_W, e.h);
      ctx.fillStyle = "#222";
      ctx.font = "bold 11px sans-serif";
      const mark = e.group.rows.length > 1 ? (e.group.collapsed ? "▸ " : "▾ ") : "";
      ctx.fillText(`${mark}${e.group.host} (${e.group.rows.length})`, 4, y + e.h / 2, LABEL_W - 8);
    } else if (e.type === "density") {
      ctx.fillStyle = "#eceef2";
      ctx.fillRect(0, y, LABEL_W, e.h - 1);
      ctx.fillStyle = "#222";
      ctx.font = "bold 11px sans-serif";
      ctx.fillText(`▸ ${e.group.host} (${e.group.rows.length})`, 4, y + e.h / 2, LABEL_W - 8);
    } else {
      ctx.fillStyle = "#333";
      ctx.font = "11px sans-serif";
      ctx.fillText(e.info.label, 14, y + e.h / 2, LABEL_W - 18);
    }
  }
  ctx.strokeStyle = "#d5d8dd";
  ctx.beginPath();
  ctx.moveTo(LABEL_W - 0.5, COUNTER_H);
  ctx.lineTo(LABEL_W - 0.5, h);
  ctx.stroke();
  ctx.restore();
}
