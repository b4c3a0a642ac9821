// Mouse and keyboard: wheel zoom around the cursor (ctrl-wheel or over the labels: the rows),
// drag pan, shift-drag range selection, clicks on states, group headers and overview bands, and
// the keys (docs/VIEWER.md). Changes go to the model or, for rows, to the pane through
// `actions`; nothing here draws.

import { LABEL_W, COUNTER_H, Layout } from "./layout.js";
import { xScale } from "./draw.js";

const CLICK_SLOP = 3; // px a press may move and still count as a click

/** The state drawn at (x, y) of the pane's canvas, or null; thin states get 2 px of slack. */
export function stateAt(pane, x, y) {
  let best = null;
  for (const d of pane.drawn) {
    if (y < d.y || y > d.y + d.h) continue;
    if (x < d.x - 2 || x > d.x + d.w + 2) continue;
    const inside = x >= d.x && x <= d.x + d.w;
    const score = (inside ? 0 : 1e9) + d.w;
    if (!best || score < best.score) best = { ...d, score };
  }
  return best;
}

/** Wires the panes' canvases, the axis and the document's keys to `model`. `actions` holds
 * what input cannot do alone: `toggleGroup(pane, group)`, `hover(pane, state|null, x, y)`,
 * the rows' `zoomRows(pane, factor, y)`, `panRows(pane, dy)`, `expandAt(pane, y)` (y from the
 * plot's top), `hoverOverview(pane, canvasX, canvasY, x, y)` and `reset()` (rows and time). */
export function attachInput(model, panes, axis, actions) {
  for (const pane of panes) attachPane(model, pane, actions);
  attachAxis(model, axis);
  document.addEventListener("keydown", (ev) => onKey(model, panes, actions, ev));
}

function localXY(canvas, ev) {
  const r = canvas.getBoundingClientRect();
  return [ev.clientX - r.left, ev.clientY - r.top];
}

function wheel(model, width, x, ev) {
  const s = xScale(model, width);
  const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
  const dx = ev.deltaX * unit;
  const dy = ev.deltaY * unit;
  if (Math.abs(dx) > Math.abs(dy)) {
    model.pan(dx * (model.t1 - model.t0) / s.plotW);
  } else {
    const anchor = x >= LABEL_W ? s.t(x) : (model.t0 + model.t1) / 2;
    model.zoom(Math.exp(dy * 0.0015), anchor);
  }
}

function attachPane(model, pane, actions) {
  const canvas = pane.canvas;
  canvas.addEventListener("wheel", (ev) => {
    const overview = pane.rowZoom.active;
    if (ev.altKey && !overview) return; // Alt + wheel scrolls the rows (the browser does it)
    ev.preventDefault();
    const [x, y] = localXY(canvas, ev);
    const dy = ev.deltaY * (ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1);
    if (ev.altKey) actions.panRows(pane, dy);
    else if ((ev.ctrlKey || (x < LABEL_W && pane.hasOverview())) && y >= COUNTER_H && dy) {
      actions.zoomRows(pane, Math.exp(dy * 0.0015), y - COUNTER_H);
    } else wheel(model, pane.width, x, ev);
  }, { passive: false });

  let press = null;
  canvas.addEventListener("mousedown", (ev) => {
    if (ev.button !== 0) return;
    const [x, y] = localXY(canvas, ev);
    press = { x, y, lastY: y, t0: model.t0, t1: model.t1, top: pane.scrollTop, shift: ev.shiftKey, moved: false };
    ev.preventDefault();
  });
  canvas.addEventListener("mousemove", (ev) => {
    if (press) return;
    const [x, y] = localXY(canvas, ev);
    if (pane.rowZoom.active) actions.hoverOverview(pane, x, y, ev.clientX, ev.clientY);
    else actions.hover(pane, x >= LABEL_W && y >= COUNTER_H ? stateAt(pane, x, y) : null, ev.clientX, ev.clientY);
  });
  canvas.addEventListener("mouseleave", () => actions.hover(pane, null, 0, 0));
  // Double-click a state: the window fits it.
  canvas.addEventListener("dblclick", (ev) => {
    const [x, y] = localXY(canvas, ev);
    const hit = x >= LABEL_W && y >= COUNTER_H ? stateAt(pane, x, y) : null;
    if (hit) model.show(hit.start, hit.start + Math.max(1, hit.dur), 0.1);
  });
  window.addEventListener("mousemove", (ev) => {
    if (!press) return;
    const [x, y] = localXY(canvas, ev);
    if (Math.abs(x - press.x) > CLICK_SLOP || Math.abs(y - press.y) > CLICK_SLOP) press.moved = true;
    if (!press.moved) return;
    const s = xScale({ t0: press.t0, t1: press.t1 }, pane.width);
    if (press.shift) {
      const a = s.t(Math.max(LABEL_W, press.x));
      const b = s.t(Math.max(LABEL_W, x));
      model.setRange({ t0: Math.round(Math.min(a, b)), t1: Math.round(Math.max(a, b)), pane: pane.index, dragging: true });
    } else {
      const dt = (press.x - x) * (press.t1 - press.t0) / s.plotW;
      model.setWindow(press.t0 + dt, press.t1 + dt);
      if (pane.rowZoom.active) actions.panRows(pane, press.lastY - y);
      else pane.scroller.scrollTop = press.top + (press.y - y);
      press.lastY = y;
    }
  });
  window.addEventListener("mouseup", (ev) => {
    if (!press) return;
    const p = press;
    press = null;
    if (p.moved) {
      if (p.shift && model.range) model.setRange({ t0: model.range.t0, t1: model.range.t1, pane: pane.index });
      return;
    }
    const [x, y] = localXY(canvas, ev);
    click(model, pane, actions, x, y);
  });
}

function click(model, pane, actions, x, y) {
  if (y < COUNTER_H) return;
  if (pane.rowZoom.active) {
    actions.expandAt(pane, y - COUNTER_H); // a group's band or label: its rows
    return;
  }
  const contentY = y - COUNTER_H + pane.scrollTop;
  const entry = pane.layout.at(contentY);
  if (!entry) return;
  if (entry.type === "header" || entry.type === "density" || x < LABEL_W) {
    if (entry.type !== "row" && entry.group.rows.length > 1) actions.toggleGroup(pane, entry.group);
    return;
  }
  const hit = stateAt(pane, x, y);
  if (hit) {
    model.select(pane.index, hit.id);
    return;
  }
  // A click on a summary (bucket) zooms in around it: there are states beneath to show.
  const a = pane.rowAnswers.get(entry.row);
  if (a && a.mode === "buckets" && Layout.lane(entry, contentY) >= 0) {
    model.zoom(0.25, xScale(model, pane.width).t(x));
  } else {
    model.select(pane.index, null);
  }
}

function attachAxis(model, axis) {
  axis.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = axis.getBoundingClientRect();
    wheel(model, r.width, ev.clientX - r.left, ev);
  }, { passive: false });
}

function onKey(model, panes, actions, ev) {
  const tag = (ev.target && ev.target.tagName) || "";
  if (tag === "INPUT" || tag === "TEXTAREA" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const span = model.t1 - model.t0;
  const page = panes.length ? panes[0] : null;
  switch (ev.key) {
    case "ArrowLeft": case "a": case "A": model.pan(-span * 0.1); break;
    case "ArrowRight": case "d": case "D": model.pan(span * 0.1); break;
    case "ArrowUp": case "w": case "W": case "+": case "=": model.zoom(0.8); break;
    case "ArrowDown": case "s": case "S": case "-": case "_": model.zoom(1.25); break;
    case "PageDown": if (page) actions.panRows(page, page.plotHeight() * 0.8); break;
    case "PageUp": if (page) actions.panRows(page, -page.plotHeight() * 0.8); break;
    case "Home": actions.reset(); break;
    case "Escape":
      model.select(null, null);
      model.setRange(null);
      model.setHighlight(null);
      break;
    default: return;
  }
  ev.preventDefault();
}
