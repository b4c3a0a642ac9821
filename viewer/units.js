// Numbers for people: durations, times on the axis, byte counts.

/** A duration in ns as "12.3 ms". */
export function fmtDur(ns) {
  if (ns == null || Number.isNaN(ns)) return "";
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${Math.round(ns)} ns`;
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

/** Bytes as "4.0 MiB". */
export function fmtBytes(b) {
  if (b == null) return "";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = b;
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${b} B` : `${v.toFixed(1)} ${u[i]}`;
}

/** A rate in B/s as "1.2 GB/s" (decimal units, as storage people quote them). */
export function fmtRate(v) {
  const u = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"];
  let i = 0;
  while (v >= 1000 && i < u.length - 1) { v /= 1000; i++; }
  return `${v.toFixed(v < 10 && i > 0 ? 1 : 0)} ${u[i]}`;
}

/** Escapes text for innerHTML. */
export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
