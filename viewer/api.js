// Data access: the JSON API of `pioscope view` (docs/VIEWER.md), one Api per trace, with a small
// cache of window answers so that going back to a view already seen costs no request.

const WINDOW_CACHE = 12; // answers kept: a few MB each at most (the server caps their size)

/** GET a JSON document; a non-2xx answer throws with the server's {"error"} text. */
export async function getJSON(url, signal) {
  const res = await fetch(url, { signal });
  if (!res.ok) {
    let msg = `${res.status}`;
    try { msg += ` ${(await res.json()).error}`; } catch (_) { /* not JSON */ }
    throw new Error(`${url}: ${msg}`);
  }
  return res.json();
}

/** The list of traces served (`pioscope view A [B]`). */
export function traces() {
  return getJSON("api/traces");
}

/** Rows `rows` as the API wants them: "a-b" when contiguous, else a list. */
export function rowsParam(rows) {
  if (rows.length === 0) return "";
  let contiguous = true;
  for (let i = 1; i < rows.length; i++) if (rows[i] !== rows[i - 1] + 1) { contiguous = false; break; }
  return contiguous ? `${rows[0]}-${rows[rows.length - 1]}` : rows.join(",");
}

export class Api {
  constructor(trace) {
    this.trace = trace;
    this.cache = new Map(); // url -> answer, in insertion order (oldest first)
    this.inflight = new Map(); // kind -> AbortController of the newest request of that kind
  }

  url(path, params) {
    const q = new URLSearchParams({ trace: String(this.trace), ...params });
    return `api/${path}?${q}`;
  }

  /** A request of `kind` that supersedes the previous one of that kind (aborted). */
  async latest(kind, url, cached) {
    if (cached && this.cache.has(url)) return this.cache.get(url);
    const prev = this.inflight.get(kind);
    if (prev) prev.abort();
    const ctl = new AbortController();
    this.inflight.set(kind, ctl);
    try {
      const answer = await getJSON(url, ctl.signal);
      if (cached) {
        this.cache.set(url, answer);
        if (this.cache.size > WINDOW_CACHE) this.cache.delete(this.cache.keys().next().value);
      }
      return answer;
    } finally {
      if (this.inflight.get(kind) === ctl) this.inflight.delete(kind);
    }
  }

  rows() { return getJSON(this.url("rows", {})); }

  /** States or buckets of `rows` in [t0, t1] for a plot `px` wide; rows decoded
   * (`decodeStates`, `decodeBuckets`). */
  async window(t0, t1, px, rows) {
    const p = { t0: String(t0), t1: String(t1), px: String(px), rows: rowsParam(rows) };
    const answer = await this.latest("window", this.url("window", p), true);
    for (const row of answer.rows) {
      if (row.mode === "states") decodeStates(row);
      else if (row.mode === "buckets") decodeBuckets(row);
    }
    return answer;
  }

  /** `rows` merged into row groups that fit `height` pixel rows (issue 18): per group, mean
   * and worst busy fraction per bucket. */
  groups(t0, t1, px, rows, height) {
    const p = { t0: String(t0), t1: String(t1), px: String(px), rows: rowsParam(rows), height: String(height) };
    return this.latest("groups", this.url("window", p), true);
  }

  counters(t0, t1, px) {
    return this.latest("counters", this.url("counters", { t0: String(t0), t1: String(t1), px: String(px) }), true);
  }

  event(id) { return this.latest("event", this.url("event", { id: String(id) }), false); }

  stats(t0, t1) { return this.latest("stats", this.url("stats", { t0: String(t0), t1: String(t1) }), false); }

  search(q, limit = 100) { return this.latest("search", this.url("search", { q, limit: String(limit) }), false); }

  findings() { return getJSON(this.url("findings", {})); }

  /** What an imported Darshan log's counters say per rank, per file and over time. */
  darshan() { return getJSON(this.url("darshan", {})); }
}

/** A state row of a window answer (one array per field, ids and starts as differences:
 * docs/VIEWER.md) as the painter reads it: `row.states`, one `{id, start, dur, depth, func}` per
 * state. Decodes once; cached answers keep it. */
export function decodeStates(row) {
  const cols = row.states;
  if (Array.isArray(cols)) return;
  const states = new Array(cols.id.length);
  for (let i = 0, id = 0, start = 0; i < states.length; i++) {
    id += cols.id[i];
    start += cols.start[i];
    states[i] = { id, start, dur: cols.dur[i], depth: cols.depth[i], func: cols.func[i] };
  }
  row.states = states;
}

/** A bucket row of a window answer (runs of alike buckets, one array per field: docs/VIEWER.md)
 * as the painter reads it: `row.buckets`, one `{start, busy: [4 fractions], func, count}` per
 * bucket (the calls of a run go to its first bucket). Decodes once; cached answers keep it. */
export function decodeBuckets(row) {
  if (row.buckets) return;
  const buckets = [];
  let index = row.first;
  for (let i = 0; i < row.len.length; i++) {
    index += row.skip[i];
    const busy = [];
    for (let d = 0, packed = row.busy[i]; d < 4; d++, packed = Math.floor(packed / (row.busy_steps + 1))) {
      busy.push((packed % (row.busy_steps + 1)) / row.busy_steps);
    }
    for (let k = 0; k < row.len[i]; k++, index++) {
      buckets.push({ start: index * row.bucket_ns, busy, func: row.func[i], count: k === 0 ? row.count[i] : 0 });
    }
  }
  row.buckets = buckets;
}

/** True for the error a superseded (aborted) request throws: not worth reporting. */
export function isAbort(err) {
  return err && err.name === "AbortError";
}
