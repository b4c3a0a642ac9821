// Numbers for people, in both pages: the viewer imports this module, the HTML report inlines it
// (crates/pioscope-cli/src/report_html/mod.rs). Durations, times on the axis, byte counts,
// rates, shares. A missing value (null, undefined, NaN) reads "-".

function missing(v) {
  return v === null || v === undefined || Number.isNaN(v);
}

/** A duration in ns as "12.3 ms" (seconds to the millisecond: the viewer reads times of long
 * runs with it). */
export function fmtDur(ns) {
  if (missing(ns)) return "-";
  const v = Number(ns);
  const a = Math.abs(v);
  if (a >= 1e9) return `${(v / 1e9).toFixed(3)} s`;
  if (a >= 1e6) return `${(v / 1e6).toFixed(2)} ms`;
  if (a >= 1e3) return `${(v / 1e3).toFixed(1)} µs`;
  return `${Math.round(v)} ns`;
}

/** A time on the axis with `step` ns between ticks: as many decimals as the step needs. */
export function fmtTime(ns, step) {
  const units = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]];
  for (const [div, name] of units) {
    if (step >= div || div === 1) {
      const decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / div) - 1e-9)));
      return `${(ns / div).toFixed(decimals)} ${name}`;
    }
  }
  return `${ns}`;
}

/** Labels for ticks `step` ns apart in a window ending at `t1`: absolute times in the unit of
 * the window's end ("1026.1885 s") while that needs at most 6 decimals, else offsets from a
 * base shown once ("+1.5 µs" after "1026.188 s"), so deep zooms far into a long run stay short. */
export function tickLabels(step, t0, t1) {
  const units = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]];
  const [div, name] = units.find(([d]) => Math.abs(t1) >= d) || units[3];
  const decimals = Math.max(0, Math.ceil(Math.log10(div / step) - 1e-9));
  if (decimals <= 6) return { base: null, label: (t) => `${(t / div).toFixed(decimals)} ${name}` };
  const base = Math.floor(t0 / (step * 10)) * step * 10;
  const baseDecimals = Math.min(9, Math.max(0, Math.ceil(Math.log10(div / (step * 10)) - 1e-9)));
  return { base: `${(base / div).toFixed(baseDecimals)} ${name}`, label: (t) => `+${fmtTime(t - base, step)}` };
}

/** Bytes as "4.0 MiB"; under 1 KiB whole bytes. */
export function fmtBytes(b) {
  if (missing(b)) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  let v = Number(b);
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${Math.round(v)} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** A throughput in B/s as "1.2 GiB/s" (binary units, as in the CLI's tables). */
export function fmtThroughput(bps) {
  return missing(bps) ? "-" : `${fmtBytes(bps)}/s`;
}

/** A histogram bin's lower bound in bytes as "4K": powers of two read best without decimals. */
export function fmtSize(b) {
  const units = ["B", "K", "M", "G", "T", "P", "E"];
  let v = Number(b);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return Math.round(v) + (i === 0 ? "" : units[i]);
}

/** Events per second as "1.23 k/s". */
export function fmtPerSec(x) {
  if (missing(x)) return "-";
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M/s`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(2)} k/s`;
  return `${x.toFixed(1)} /s`;
}

/** A share in [0, 1] as "42.5%". */
export function fmtPct(x) {
  return missing(x) ? "-" : `${(x * 100).toFixed(1)}%`;
}

/** A count as "12,345". */
export function fmtInt(n) {
  return missing(n) ? "-" : Number(n).toLocaleString("en-US");
}

/** A number with `d` decimals (1 unless told). */
export function fmtNum(x, d = 1) {
  return missing(x) ? "-" : Number(x).toFixed(d);
}

/** Escapes text for innerHTML. */
export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
