// Painting of the overview (issue 18): the rows of a pane's row range squeezed into the plot as
// row group bands, a heat map per bucket (the group's mean busy fraction as the strength of its
// function's colour), the worst rank marked at its own y, the messages summarised as one arrow
// per pair of groups, and the label column's rank marks. What rowzoom.js computes, drawn.

import { LABEL_W, COUNTER_H } from "./layout.js";
import { Batch } from "./batch.js";
import { FADED, WORST_MARK } from "./colors.js";

const HEAT_LEVELS = 8; // shades of a function's colour, from faint (little busy) to full
const BAND_GAP_PX = 6; // bands at least this high keep a pixel of white between them
const LABEL_STEP_PX = 28; // rank marks in the label column at least this far apart
const ARROW = "rgba(20, 20, 20, 0.6)";

const shades = new Map(); // "colour|level" -> CSS colour with alpha

/** `colour` (an `hsl(...)` of the server's table) at heat level `level` of HEAT_LEVELS. */
function heat(colour, level) {
  const key = `${colour}|${level}`;
  let c = shades.get(key);
  if (!c) {
    const alpha = (0.15 + 0.85 * level / HEAT_LEVELS).toFixed(3);
    c = colour.startsWith("hsl(") ? `hsla(${colour.slice(4, -1)}, ${alpha})` : colour;
    shades.set(key, c);
  }
  return c;
}

/** The band of group `g` on the canvas: [y0, y1), or null when off the plot. */
function bandOf(pane, g) {
  const plotH = pane.height - COUNTER_H;
  const y0 = COUNTER_H + pane.rowZoom.y(g.first, plotH);
  const y1 = COUNTER_H + pane.rowZoom.y(g.last + 1, plotH);
  return y1 <= COUNTER_H || y0 >= pane.height ? null : [y0, y1];
}

/** Paints the overview answer of `pane` into the plot (clipped by the caller); adds to
 * `counts` (groupBands, groupCells, worstMarks, groupArrows) and records the arrows drawn in
 * `pane.groupArrows` for the tooltips. */
export function paintOverview(ctx, pane, s, w, hl, counts) {
  const answer = pane.overview;
  pane.groupArrows = [];
  if (!answer) return;
  const plotH = pane.height - COUNTER_H;
  const rowPx = pane.rowZoom.rowPx(plotH);
  const batch = new Batch();
  for (const g of answer.rows) {
    const band = bandOf(pane, g);
    if (!band) continue;
    const [y0, y1] = band;
    const bh = Math.max(1, y1 - y0 - (y1 - y0 >= BAND_GAP_PX ? 1 : 0));
    counts.groupBands++;
    for (let i = 0; i < g.index.length; i++) {
      const start = g.index[i] * g.bucket_ns;
      const x0 = s.x(start);
      const x1 = s.x(start + g.bucket_ns);
      if (x1 < LABEL_W || x0 > w || g.busy[i] <= 0) continue;
      const bw = Math.max(1, x1 - x0);
      const f = g.func[i];
      const level = Math.min(HEAT_LEVELS, Math.ceil((g.busy[i] / 1000) * HEAT_LEVELS));
      batch.rect(hl != null && f !== hl ? FADED : heat(pane.colours.func(f, null), level), x0, y0, bw, bh);
      counts.groupCells++;
      if (g.rows > 1 && g.worst[i] > g.busy[i]) {
        // At the worst rank's own place in the band: the mark says which rank it is.
        const wy = COUNTER_H + pane.rowZoom.y(g.worst_row[i], plotH);
        batch.rect(WORST_MARK, x0, Math.min(wy, y0 + bh - 1), bw, Math.max(1, Math.min(rowPx, bh)));
        counts.worstMarks++;
      }
    }
  }
  batch.flush(ctx);
  counts.groupArrows = paintGroupArrows(ctx, pane, answer, s.plotW);
}

/** One arrow per pair of distinct groups that exchanged messages in the window, from the
 * sending band to the receiving one, bowed into the plot's left side by their distance; its
 * width grows with the bytes (logarithmically). Messages inside one group are in its tooltip. */
function paintGroupArrows(ctx, pane, answer, plotW) {
  const pairs = (answer.group_messages || []).filter((m) => m.from !== m.to);
  if (!pairs.length) return 0;
  const byFirst = new Map(answer.rows.map((g) => [g.first, g]));
  const maxBytes = Math.max(1, ...pairs.map((m) => m.bytes));
  const x0 = LABEL_W + 2;
  ctx.strokeStyle = ARROW;
  ctx.fillStyle = ARROW;
  let n = 0;
  for (const m of pairs) {
    const a = byFirst.get(m.from);
    const b = byFirst.get(m.to);
    if (!a || !b) continue;
    const ya = centre(pane, a);
    const yb = centre(pane, b);
    if ((ya < COUNTER_H && yb < COUNTER_H) || (ya > pane.height && yb > pane.height)) continue;
    const cx = x0 + 10 + Math.min(plotW * 0.2, Math.abs(yb - ya) * 0.6);
    ctx.lineWidth = 1 + 3 * Math.log1p(m.bytes) / Math.log1p(maxBytes);
    ctx.beginPath();
    ctx.moveTo(x0, ya);
    ctx.quadraticCurveTo(cx, (ya + yb) / 2, x0, yb);
    ctx.stroke();
    const dir = Math.atan2(yb - (ya + yb) / 2, x0 - cx);
    ctx.beginPath();
    ctx.moveTo(x0, yb);
    ctx.lineTo(x0 - 6 * Math.cos(dir - 0.4), yb - 6 * Math.sin(dir - 0.4));
    ctx.lineTo(x0 - 6 * Math.cos(dir + 0.4), yb - 6 * Math.sin(dir + 0.4));
    ctx.closePath();
    ctx.fill();
    // The curve's apex: where the tooltip finds the arrow.
    pane.groupArrows.push({ x: (x0 + cx) / 2, y: (ya + yb) / 2, from: a, to: b, count: m.count, bytes: m.bytes });
    n++;
  }
  ctx.lineWidth = 1;
  return n;
}

function centre(pane, g) {
  const plotH = pane.height - COUNTER_H;
  return COUNTER_H + (pane.rowZoom.y(g.first, plotH) + pane.rowZoom.y(g.last + 1, plotH)) / 2;
}

/** The label column of the overview: each band's ranks when it is high enough for them, else
 * the rank at a mark every LABEL_STEP_PX. */
export function paintOverviewLabels(ctx, pane) {
  const answer = pane.overview;
  if (!answer) return;
  const label = (row) => pane.layout.rowInfo.get(row)?.label ?? `row ${row}`;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, COUNTER_H, LABEL_W, pane.height - COUNTER_H);
  ctx.clip();
  ctx.fillStyle = "#333";
  ctx.font = "11px sans-serif";
  ctx.textBaseline = "middle";
  let next = COUNTER_H;
  for (const g of answer.rows) {
    const band = bandOf(pane, g);
    if (!band || band[0] < next) continue;
    const [y0, y1] = band;
    if (y1 - y0 >= 12) {
      ctx.fillText(`${label(g.first)} – ${label(g.last)}`, 6, (y0 + y1) / 2, LABEL_W - 10);
      next = y1;
    } else {
      ctx.fillText(`${label(g.first)} …`, 6, Math.max(y0, COUNTER_H) + 7, LABEL_W - 10);
      next = y0 + LABEL_STEP_PX;
    }
  }
  ctx.restore();
}
