// Details panel: every field of the clicked state, its hints, its parent and children (both
// clickable) and the matching message of a point-to-point call.

import { isAbort } from "./api.js";
import { fmtDur, fmtBytes, esc } from "./units.js";

const SKIP = new Set(["parent", "children", "children_total", "hints", "message", "id", "name", "func_name", "func_id"]);
// The fields a reader looks for first; the rest follow in the server's order.
const FIRST = ["func", "layer", "row", "start_ns", "duration_ns", "file", "offset", "size", "result", "error",
  "collective", "instance", "request", "peer", "tag", "comm", "region"];

/** The function name of an event or short state, whichever way the server spells it. */
export function funcName(pane, ev) {
  if (typeof ev.func === "string") return ev.func;
  if (ev.func_name) return ev.func_name;
  if (ev.name) return ev.name;
  const f = pane.functions.get(ev.func);
  return f ? f.name : `func ${ev.func}`;
}

function fmtField(key, v) {
  if (v == null) return "—";
  if (typeof v === "object") return esc(JSON.stringify(v));
  if (typeof v === "number" && /(^dur|_ns$|^duration)/.test(key)) return `${fmtDur(v)} <span class="raw">(${v})</span>`;
  if (typeof v === "number" && /^(start|end)/.test(key)) return `${fmtDur(v)}`;
  if (typeof v === "number" && (key === "size" || key === "bytes")) return `${fmtBytes(v)}`;
  return esc(v);
}

function stateLink(pane, s, cls = "") {
  const id = typeof s.func === "number" ? s.func : pane.funcByName.get(funcName(pane, s))?.id;
  const color = pane.colours.func(id, s.layer);
  return `<a href="#" class="state-link ${cls}" data-id="${s.id}" data-row="${s.row ?? ""}" data-start="${s.start}" data-dur="${s.dur}">`
    + `<span class="swatch" style="background:${color}"></span>${esc(funcName(pane, s))}</a>`
    + ` <span class="dim">${fmtDur(s.dur)}</span>`;
}

export class DetailsView {
  /** `jump(pane, state)` selects a state and brings it into view. */
  constructor(el, model, panes, jump, onError) {
    this.el = el;
    this.model = model;
    this.panes = panes;
    this.jump = jump;
    this.onError = onError;
    this.current = null;
    model.subscribe((what) => { if (what === "selection") this.update(); });
    el.addEventListener("click", (ev) => {
      const a = ev.target.closest("a.state-link");
      if (!a || !this.pane) return;
      ev.preventDefault();
      const row = a.dataset.row === "" ? null : Number(a.dataset.row);
      this.jump(this.pane, { id: Number(a.dataset.id), row, start: Number(a.dataset.start), dur: Number(a.dataset.dur) });
    });
    this.render(null);
  }

  async update() {
    const sel = this.model.selected;
    if (!sel) { this.render(null); return; }
    const pane = this.panes[sel.pane];
    this.pane = pane;
    try {
      const ev = await pane.api.event(sel.id);
      if (this.model.selected && this.model.selected.id === sel.id) this.render(ev);
    } catch (err) {
      if (!isAbort(err)) this.onError(err);
    }
  }

  render(ev) {
    this.current = ev;
    if (!ev) {
      this.el.innerHTML = `<p class="dim">Click a state to see its details.</p>`;
      return;
    }
    const pane = this.pane;
    const name = funcName(pane, ev);
    const rows = [];
    const keys = [...FIRST.filter((k) => k in ev), ...Object.keys(ev).filter((k) => !FIRST.includes(k))];
    for (const k of keys) {
      const v = ev[k];
      if (SKIP.has(k) || v == null || v === "") continue;
      const shown = k === "row" && pane.layout.rowInfo.has(v) ? esc(pane.layout.rowInfo.get(v).label) : fmtField(k, v);
      rows.push(`<tr><th>${esc(k)}</th><td>${shown}</td></tr>`);
    }
    let html = `<h3 id="details-func" data-id="${ev.id}">${esc(name)}</h3>`
      + `<p class="dim">event ${ev.id}${this.panes.length > 1 ? ` · ${esc(pane.name)}` : ""}</p>`
      + `<table class="kv">${rows.join("")}</table>`;
    const hints = ev.hints || [];
    if (hints.length) {
      html += `<h4>Hints (${hints.length})</h4><table class="kv">`
        + hints.map((h) => `<tr><th>${esc(h.key)}</th><td>${esc(h.value)}</td></tr>`).join("") + `</table>`;
    }
    html += `<h4>Parent</h4>` + (ev.parent ? `<p>${stateLink(pane, { row: ev.row, ...ev.parent }, "parent")}</p>` : `<p class="dim">none (top level)</p>`);
    const children = ev.children || [];
    const total = ev.children_total ?? children.length;
    html += `<h4 id="details-children" data-total="${total}">Children (${total})</h4>`;
    if (children.length) {
      html += `<ul class="children">${children.map((c) => `<li>${stateLink(pane, { row: ev.row, ...c }, "child")}</li>`).join("")}</ul>`;
      if (total > children.length) html += `<p class="dim">… and ${total - children.length} more</p>`;
    }
    if (ev.message) {
      const m = ev.message;
      const label = (row) => esc(pane.layout.rowInfo.get(row)?.label ?? `row ${row}`);
      html += `<h4>Message</h4><p>${fmtBytes(m.bytes)} from ${label(m.from_row)} at ${fmtDur(m.send)} `
        + `to ${label(m.to_row)} at ${fmtDur(m.recv)} (${fmtDur(m.recv - m.send)})</p>`;
      if (m.peer_event != null) {
        const sending = m.send_id === ev.id;
        const peerRow = sending ? m.to_row : m.from_row;
        const peerT = sending ? m.recv : m.send;
        html += `<p><a href="#" class="state-link peer" data-id="${m.peer_event}" data-row="${peerRow}" data-start="${peerT}" data-dur="0">`
          + `the matching ${sending ? "receive" : "send"}</a></p>`;
      }
    }
    this.el.innerHTML = html;
  }
}
