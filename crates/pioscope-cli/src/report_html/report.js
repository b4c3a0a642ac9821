// report.js: draws the `pioscope report --html` page from the report JSON embedded in it
// (the object `pioscope report --json` prints). Plain JavaScript, inline SVG and one canvas;
// nothing is fetched. docs/REPORT.md describes the parts and the aggregation rules.
//
// Aggregation, so the page reads the same for 4 ranks and for 10,000: per-rank charts draw one
// bar per rank up to CAP ranks; above, ranks are cut into at most CAP buckets of consecutive
// ranks, and each bucket becomes one bar: the mean composition for stacked charts, the
// min / quartiles / median / max of its ranks for the others. The heat map arrives binned
// (at most 200 rank rows × 400 time columns, see crates/pioscope-analysis/src/heatmap.rs).
// Tables draw TABLE_ROWS rows at a time, after sorting all of them.
//
// The page runs this file as a module (strict) right after viewer/units.js, the viewer's
// number formatters (fmtDur, fmtBytes, ...), and viewer/colors.js (heatColor), which mod.rs
// inlines before it; the layer colours arrive in the app element's data-layer-colours.
(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  /** Most bars of a per-rank chart; more ranks are bucketed. */
  const CAP = 64;
  /** Rows a table draws at once ("show more" adds as many). */
  const TABLE_ROWS = 200;
  /** viewBox widths: a chart across the page, and one of a grid of small charts. */
  const WIDE = 960, SMALL = 480;
  const CLASSES = ["data", "metadata", "sync", "close", "wait", "mpi", "other"];
  const IO_CLASSES = ["data", "metadata", "sync", "close", "wait"];
  const COLOR = {
    data: "#3182ce", metadata: "#dd8a1e", sync: "#805ad5", close: "#e53e3e", wait: "#a0aec0",
    mpi: "#38a169", other: "#cbd5e0",
  };
  const SEVERITY_COLOR = { high: "#c53030", medium: "#d46b08", low: "#3f7ec1" };

  const R = JSON.parse(document.getElementById("pioscope-report").textContent);
  // `report --against A`: the diff of this run (B) against A, as `pioscope diff A B --json`.
  const diffElement = document.getElementById("pioscope-diff");
  const D = diffElement ? JSON.parse(diffElement.textContent) : null;
  // For the browser's console and for tests.
  window.pioscopeReport = R;
  window.pioscopeDiff = D;
  const app = document.getElementById("app");
  // pioscope's one colour table (crates/pioscope-trace/src/colours.rs), which the viewer and
  // the exports draw with too: layer name -> CSS colour.
  const LAYER_COLOURS = JSON.parse(app.dataset.layerColours);
  function layerColour(layer) { return LAYER_COLOURS[layer] || LAYER_COLOURS.tracer; }
  // The finding rules about storage servers (findings::SERVER_RULE_IDS).
  const SERVER_RULES = new Set(JSON.parse(app.dataset.serverRules || "[]"));

  // ---------- small helpers ----------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const c of children) append(e, c);
    return e;
  }
  function s(tag, attrs, ...children) {
    const e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    for (const c of children) append(e, c);
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") e.textContent = String(v);
      else if (k === "onclick") e.addEventListener("click", v);
      else if (k === "onchange") e.addEventListener("change", v);
      else e.setAttribute(k, String(v));
    }
  }
  function append(e, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) { for (const x of c) append(e, x); return; }
    e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  function title(text) { return s("title", { text: text }); }

  /** A value at quantile q of sorted values (linear interpolation). */
  function quantile(sorted, q) {
    if (sorted.length === 0) return 0;
    const pos = (sorted.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
  }
  /** Rounds up to 1, 2 or 5 times a power of ten (for axis maxima). */
  function niceCeil(x) {
    if (!(x > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(x)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x * (1 - 1e-9)) return m * p;
    return 10 * p;
  }
  /** Cuts `items` (sorted by rank) into at most CAP buckets of consecutive items. */
  function buckets(items) {
    const per = Math.ceil(items.length / CAP);
    const out = [];
    for (let i = 0; i < items.length; i += per) out.push(items.slice(i, i + per));
    return out;
  }
  /** Rank -1 holds the processes without MPI (a launcher, a job without MPI). */
  function rankName(r) { return r < 0 ? "no MPI" : String(r); }
  function rankLabel(a, b) { return a === b ? String(a) : a + "\u2013" + b; }

  function legend(keys, colors, labels) {
    return el("div", { class: "legend" }, keys.map(k =>
      el("span", null, el("span", { class: "key", style: "background:" + colors[k] }), labels ? labels[k] : k)));
  }

  // ---------- generic charts ----------
  /** Axes and the plotting frame of a column chart of `n` columns; returns geometry. */
  function frame(svg, n, max, yfmt, labels, height, width) {
    const W = width || WIDE, H = height || 240, L = 64, Rm = 10, T = 10, B = 30;
    const pw = W - L - Rm, ph = H - T - B;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    for (let i = 0; i <= 4; i++) {
      const y = T + ph - ph * i / 4;
      svg.appendChild(s("line", { class: "grid", x1: L, x2: L + pw, y1: y, y2: y }));
      svg.appendChild(s("text", { x: L - 6, y: y + 4, "text-anchor": "end", text: yfmt(max * i / 4) }));
    }
    svg.appendChild(s("line", { class: "axis", x1: L, x2: L + pw, y1: T + ph, y2: T + ph }));
    svg.appendChild(s("line", { class: "axis", x1: L, x2: L, y1: T, y2: T + ph }));
    const slot = pw / Math.max(n, 1);
    const bw = Math.min(slot * 0.8, 60);
    // Labels never overlap: one every `every` columns, from the longest label's width.
    const longest = Math.max(1, ...labels.map(l => String(l).length));
    const every = Math.max(1, Math.ceil((longest * 6.5 + 8) / slot));
    for (let i = 0; i < n; i += every) {
      const x = L + slot * (i + 0.5);
      svg.appendChild(s("text", { x: x, y: T + ph + 14, "text-anchor": "middle", text: labels[i] }));
    }
    return {
      x: i => L + slot * (i + 0.5) - bw / 2, bw: bw,
      y: v => T + ph - (max > 0 ? ph * Math.min(v, max) / max : 0),
      h: v => (max > 0 ? ph * Math.min(Math.max(v, 0), max) / max : 0),
      bottom: T + ph, left: L, width: pw,
    };
  }

  /** Stacked columns: items = [{label, parts: {key: value}, tip}]. */
  function stackedChart(name, items, keys, colors, yfmt, opts) {
    opts = opts || {};
    const svg = s("svg", {
      class: "chart", "data-chart": name, "data-bars": items.length,
      "data-aggregated": opts.aggregated ? "true" : "false", role: "img",
    });
    let max = opts.max;
    if (max === undefined) {
      max = 0;
      for (const it of items) max = Math.max(max, keys.reduce((a, k) => a + (it.parts[k] || 0), 0));
      // Counts: four whole-number steps, so every tick label is exact.
      max = opts.integer ? 4 * Math.max(1, Math.ceil(niceCeil(max / 4))) : niceCeil(max);
    }
    const g = frame(svg, items.length, max, yfmt, items.map(it => it.label), opts.height, opts.width);
    items.forEach((it, i) => {
      const bar = s("g", { class: "bar", "data-label": it.label });
      let acc = 0;
      for (const k of keys) {
        const v = it.parts[k] || 0;
        if (v <= 0) continue;
        const y0 = g.y(acc), y1 = g.y(acc + v);
        bar.appendChild(s("rect", { x: g.x(i), y: y1, width: g.bw, height: Math.max(y0 - y1, 0), fill: colors[k] }));
        acc += v;
      }
      bar.appendChild(title(it.tip));
      svg.appendChild(bar);
    });
    if (opts.axisLabel) svg.appendChild(s("text", { x: 8, y: 12, text: opts.axisLabel }));
    return svg;
  }

  /** Distribution columns: one box per bucket {label, min, q1, median, q3, max, mean, n}. */
  function boxChart(name, boxes, yfmt, opts) {
    opts = opts || {};
    const svg = s("svg", {
      class: "chart", "data-chart": name, "data-bars": boxes.length, "data-aggregated": "true", role: "img",
    });
    const max = opts.max !== undefined ? opts.max : niceCeil(Math.max(0, ...boxes.map(b => b.max)));
    const g = frame(svg, boxes.length, max, yfmt, boxes.map(b => b.label), opts.height, opts.width);
    const color = opts.color || COLOR.data;
    boxes.forEach((b, i) => {
      const bar = s("g", { class: "bar", "data-label": b.label });
      const cx = g.x(i) + g.bw / 2;
      bar.appendChild(s("line", { class: "whisker", x1: cx, x2: cx, y1: g.y(b.max), y2: g.y(b.min) }));
      bar.appendChild(s("rect", {
        x: g.x(i), y: g.y(b.q3), width: g.bw, height: Math.max(g.y(b.q1) - g.y(b.q3), 1),
        fill: color, "fill-opacity": 0.45, stroke: color,
      }));
      bar.appendChild(s("line", { class: "median", x1: g.x(i), x2: g.x(i) + g.bw, y1: g.y(b.median), y2: g.y(b.median) }));
      bar.appendChild(title((opts.unit || "ranks") + " " + b.label + " (" + b.n + "): min " + yfmt(b.min) +
        ", quartiles " + yfmt(b.q1) + " / " + yfmt(b.median) + " / " + yfmt(b.q3) + ", max " + yfmt(b.max) +
        ", mean " + yfmt(b.mean)));
      svg.appendChild(bar);
    });
    return svg;
  }

  /** Boxes of value(item) over each bucket of items (each item has .rank). */
  function distribution(items, value) {
    return buckets(items).map(group => {
      const vs = group.map(value).sort((a, b) => a - b);
      const mean = vs.reduce((a, b) => a + b, 0) / vs.length;
      return {
        label: rankLabel(group[0].rank, group[group.length - 1].rank), n: vs.length,
        min: vs[0], q1: quantile(vs, 0.25), median: quantile(vs, 0.5), q3: quantile(vs, 0.75),
        max: vs[vs.length - 1], mean: mean,
      };
    });
  }

  function figure(caption, sub, ...content) {
    return el("figure", { class: "chart-box" }, el("figcaption", null, caption, sub ? el("span", { class: "sub", text: " " + sub }) : null), content);
  }

  // ---------- sections ----------
  function section(id, heading, ...content) {
    return el("section", { id: id }, el("h2", { text: heading }), content);
  }

  function summary() {
    const j = R.job, b = R.breakdown.total;
    const hosts = j.hosts.length <= 8 ? j.hosts.join(", ") : j.hosts.length + " hosts";
    const counts = { high: 0, medium: 0, low: 0 };
    for (const f of R.findings) counts[f.severity] = (counts[f.severity] || 0) + 1;
    const items = [
      ["ranks", j.ranks > 0 ? fmtInt(j.ranks) : "no MPI"],
      ["hosts", j.hosts.length + (j.hosts.length <= 8 ? " (" + hosts + ")" : "")],
      ["processes", fmtInt(j.processes)],
      ["duration", fmtDur(j.duration_ns)],
      ["events", fmtInt(j.events)],
      ["I/O share of the ranks' wall time", fmtPct(b.shares.io)],
      ["MPI share", fmtPct(b.shares.mpi)],
      ["findings", R.findings.length + (R.findings.length ? " (" + counts.high + " high, " + counts.medium + " medium, " + counts.low + " low)" : "")],
      ["MPI library", j.mpi_library ? j.mpi_library.split(/\s+/).join(" ") : "-"],
      ["MPI-IO", j.mpi_io || "-"],
      ["tracer", j.tracer_version || "-"],
      ["scope", j.scope + (j.left_out ? ", " + fmtInt(j.left_out) + " records left out" : "")],
      ["start", j.start_unix_ns ? new Date(j.start_unix_ns / 1e6).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "-"],
    ];
    const parts = [el("dl", { class: "summary" }, items.map(([k, v]) => el("div", null, el("dt", { text: k }), el("dd", { text: v }))))];
    if (j.partial) parts.unshift(el("div", { class: "banner", text: "Partial trace: " + j.partial_reasons.join("; ") }));
    return section("summary", "Job", parts);
  }

  function findings() {
    const f = R.findings;
    if (f.length === 0) {
      return section("findings", "Findings", el("p", { class: "note", "data-findings": 0, text: "No rule fired on this run." }));
    }
    const maxCost = Math.max(1, ...f.map(x => x.cost_ns));
    const wall = R.breakdown.total.wall_ns;
    const list = el("ol", { class: "findings", "data-findings": f.length });
    f.forEach((x, i) => {
      const sev = x.severity;
      const cost = s("svg", { viewBox: "0 0 220 10", preserveAspectRatio: "none", class: "cost-bar" },
        s("rect", { x: 0, y: 0, width: 220, height: 10, fill: "#edf2f7" }),
        s("rect", { x: 0, y: 0, width: Math.max(1, 220 * x.cost_ns / maxCost), height: 10, fill: SEVERITY_COLOR[sev] || SEVERITY_COLOR.low }));
      const numbers = Object.keys(x.evidence.numbers || {});
      list.appendChild(el("li", null, el("article", { class: "finding sev-" + sev, "data-id": x.id, "data-severity": sev },
        el("h3", null,
          el("span", { class: "rank", text: "#" + (i + 1) }),
          el("span", { class: "badge sev-" + sev, text: sev }),
          el("span", { class: "finding-title", text: x.title }),
          el("span", { class: "id", text: x.id })),
        el("div", { class: "cost" }, cost, el("span", {
          text: "costs about " + fmtDur(x.cost_ns) + (wall > 0 ? " (" + fmtPct(x.cost_ns / wall) + " of the ranks' summed wall time)" : ""),
        })),
        x.evidence.summary ? el("p", { class: "evidence", text: x.evidence.summary }) : null,
        x.evidence.worst && x.evidence.worst.length ? el("ul", { class: "worst" }, x.evidence.worst.map(w => el("li", { text: w }))) : null,
        numbers.length ? el("details", null, el("summary", { text: "evidence numbers (" + numbers.length + ")" }),
          el("table", { class: "data" }, el("tbody", null, numbers.map(k => el("tr", null,
            el("td", { text: k }), el("td", { class: "num", text: fmtEvidence(k, x.evidence.numbers[k]) })))))) : null,
        x.remedy ? el("div", { class: "remedy" }, el("b", { text: "Remedy: " }), x.remedy) : null)));
    });
    return section("findings", "Findings, most costly first", list);
  }

  function fmtEvidence(k, v) {
    if (typeof v !== "number") return String(v);
    if (/_ns$/.test(k)) return fmtDur(v) + " (" + fmtInt(v) + " ns)";
    if (/bytes$/.test(k)) return fmtBytes(v) + " (" + fmtInt(v) + " B)";
    if (/share$|fraction$|density$/.test(k)) return fmtPct(v);
    return Number.isInteger(v) ? fmtInt(v) : String(Math.round(v * 1000) / 1000);
  }

  function timeSection() {
    const total = R.breakdown.total, ranks = R.breakdown.ranks.slice().sort((a, b) => a.rank - b.rank);
    const labels = { data: "I/O data", metadata: "I/O metadata", sync: "I/O sync", close: "I/O close", wait: "I/O waiting for other ranks", mpi: "MPI", other: "other" };
    const share = v => fmtPct(v);
    const parts = [];
    parts.push(legend(CLASSES, COLOR, labels));
    parts.push(figure("All ranks", "share of the summed wall time (" + fmtDur(total.wall_ns) + ")", shareBar(total, labels)));
    if (ranks.length === 0) return section("time", "Time breakdown", parts);
    if (ranks.length <= CAP) {
      parts.push(figure("Per rank", "share of each rank's wall time",
        stackedChart("time-ranks", ranks.map(r => ({ label: rankName(r.rank), parts: r.shares, tip: tipShares("rank " + r.rank + " (" + (r.host || "") + ")", r) })),
          CLASSES, COLOR, share, { max: 1 })));
    } else {
      const groups = buckets(ranks);
      const items = groups.map(g => {
        const mean = {};
        for (const k of CLASSES) mean[k] = g.reduce((a, r) => a + r.shares[k], 0) / g.length;
        const label = rankLabel(g[0].rank, g[g.length - 1].rank);
        return { label: label, parts: mean, tip: "ranks " + label + " (" + g.length + "), mean shares: " + CLASSES.map(k => labels[k] + " " + fmtPct(mean[k])).join(", ") };
      });
      parts.push(el("p", { class: "note", text: ranks.length + " ranks: each bar is a bucket of " + groups[0].length + " consecutive ranks (mean shares); the box chart below shows the spread of the I/O share inside each bucket." }));
      parts.push(figure("Per rank bucket", "mean share of the wall time",
        stackedChart("time-ranks", items, CLASSES, COLOR, share, { max: 1, aggregated: true })));
      parts.push(figure("I/O share per rank bucket", "min, quartiles, median, max over the bucket's ranks",
        boxChart("time-io-share", distribution(ranks, r => r.shares.io), share, { max: 1, color: COLOR.data })));
    }
    const phases = total.phases.filter(p => p.name !== "(none)");
    if (phases.length > 0) {
      parts.push(el("h3", { text: "User phases" }));
      parts.push(figure("I/O split per phase", "I/O time of the calls made in each phase",
        stackedChart("time-phases", total.phases.map(p => ({
          label: p.name, parts: p.io ? { data: p.io.data_ns, metadata: p.io.metadata_ns, sync: p.io.sync_ns, close: p.io.close_ns, wait: p.io.wait_ns } : {},
          tip: p.name + ": " + fmtDur(p.time_ns) + " (" + fmtPct(p.share) + " of the wall time)",
        })), IO_CLASSES, COLOR, fmtDur, {})));
    }
    return section("time", "Time breakdown", parts);
  }

  /** One horizontal bar of the whole wall time, each class labelled where it is wide enough. */
  function shareBar(total, labels) {
    const H = 46, svg = s("svg", { class: "chart", "data-chart": "time-total", "data-bars": 1, "data-aggregated": "false", viewBox: "0 0 " + WIDE + " " + H, role: "img" });
    const bar = s("g", { class: "bar" });
    const sum = CLASSES.reduce((a, k) => a + Math.max(total.shares[k], 0), 0) || 1;
    let x = 0;
    for (const k of CLASSES) {
      const w = WIDE * Math.max(total.shares[k], 0) / Math.max(sum, 1);
      if (w <= 0) continue;
      bar.appendChild(s("rect", { x: x, y: 4, width: w, height: 26, fill: COLOR[k] }, title(labels[k] + " " + fmtPct(total.shares[k]))));
      if (w > 70) bar.appendChild(s("text", { x: x + 4, y: 42, text: labels[k] + " " + fmtPct(total.shares[k]) }));
      x += w;
    }
    bar.appendChild(title(tipShares("all ranks", total)));
    svg.appendChild(bar);
    return svg;
  }

  function tipShares(who, r) {
    return who + ": wall " + fmtDur(r.wall_ns) + "; I/O " + fmtPct(r.shares.io) + " (data " + fmtPct(r.shares.data) +
      ", metadata " + fmtPct(r.shares.metadata) + ", sync " + fmtPct(r.shares.sync) + ", close " + fmtPct(r.shares.close) +
      "), MPI " + fmtPct(r.shares.mpi) + ", other " + fmtPct(r.shares.other);
  }

  function ranksSection() {
    const ranks = R.breakdown.ranks.slice().sort((a, b) => a.rank - b.rank);
    if (ranks.length === 0) return null;
    const parts = [];
    // Bytes per rank and file layer, from the per-rank table.
    const layers = ["hdf5", "pnetcdf", "mpiio", "posix", "stdio"];
    const bytes = new Map();
    const present = new Set();
    for (const row of R.tables.rank) {
      if (!layers.includes(row.layer)) continue;
      const r = Number(row.group);
      if (!bytes.has(r)) bytes.set(r, {});
      bytes.get(r)[row.layer] = row.bytes;
      if (row.bytes > 0) present.add(row.layer);
    }
    const shown = layers.filter(l => present.has(l));
    const items = ranks.map(r => ({ rank: r.rank, b: bytes.get(r.rank) || {}, r: r }));
    const aggregated = ranks.length > CAP;
    parts.push(el("p", { class: "note", text: aggregated
      ? ranks.length + " ranks: each box summarises a bucket of " + Math.ceil(ranks.length / CAP) + " consecutive ranks (min, quartiles, median, max)."
      : "One bar per rank. Layers nest: the POSIX bytes beneath MPI-IO calls count at both layers." }));
    const charts = el("div", { class: "charts" });
    for (const layer of shown) {
      const name = "rank-bytes-" + layer;
      charts.appendChild(figure("Bytes per rank", "at " + layer, aggregated
        ? boxChart(name, distribution(items, it => it.b[layer] || 0), fmtBytes, { color: layerColour(layer), width: SMALL })
        : stackedChart(name, items.map(it => ({ label: rankName(it.rank), parts: { v: it.b[layer] || 0 }, tip: "rank " + it.rank + ": " + fmtBytes(it.b[layer] || 0) + " at " + layer })),
          ["v"], { v: layerColour(layer) }, fmtBytes, { width: SMALL })));
    }
    charts.appendChild(figure("I/O time per rank", "outermost I/O calls, by class", aggregated
      ? boxChart("rank-io-time", distribution(ranks, r => r.io_ns), fmtDur, { color: COLOR.data, width: SMALL })
      : stackedChart("rank-io-time", ranks.map(r => ({
        label: rankName(r.rank), parts: { data: r.io.data_ns, metadata: r.io.metadata_ns, sync: r.io.sync_ns, close: r.io.close_ns, wait: r.io.wait_ns },
        tip: "rank " + r.rank + ": I/O " + fmtDur(r.io_ns) + " (data " + fmtDur(r.io.data_ns) + ", metadata " + fmtDur(r.io.metadata_ns) + ", sync " + fmtDur(r.io.sync_ns) + ", close " + fmtDur(r.io.close_ns) + ", waiting " + fmtDur(r.io.wait_ns) + ")",
      })), IO_CLASSES, COLOR, fmtDur, { width: SMALL })));
    if (ranks.some(r => r.mpi_ns > 0)) charts.appendChild(figure("MPI time per rank", "outermost MPI calls outside I/O", aggregated
      ? boxChart("rank-mpi-time", distribution(ranks, r => r.mpi_ns), fmtDur, { color: COLOR.mpi, width: SMALL })
      : stackedChart("rank-mpi-time", ranks.map(r => ({ label: rankName(r.rank), parts: { mpi: r.mpi_ns }, tip: "rank " + r.rank + ": MPI " + fmtDur(r.mpi_ns) })),
        ["mpi"], COLOR, fmtDur, { width: SMALL })));
    parts.push(charts);
    return section("ranks", "Per-rank bytes and time", parts);
  }

  function binIndex(min) { return min <= 0 ? 0 : Math.round(Math.log2(min)) + 1; }
  function binMin(i) { return i === 0 ? 0 : Math.pow(2, i - 1); }

  /** Histogram of a stats row: every bin from the smallest to the largest non-empty one. */
  function histogram(row, kind) {
    const counts = new Map(row.size_histogram.map(b => [binIndex(b.bin_min), b.count]));
    const idx = [...counts.keys()];
    const lo = Math.min(...idx), hi = Math.max(...idx);
    const items = [];
    for (let i = lo; i <= hi; i++) {
      const c = counts.get(i) || 0;
      const label = i === 0 ? "0" : fmtSize(binMin(i));
      items.push({ label: label, parts: { v: c }, tip: (i === 0 ? "size 0" : "[" + fmtBytes(binMin(i)) + ", " + fmtBytes(binMin(i + 1)) + ")") + ": " + fmtInt(c) + " calls" });
    }
    const svg = stackedChart("histogram", items, ["v"], { v: layerColour(row.layer) }, v => fmtInt(Math.round(v)), { height: 220, width: SMALL, integer: true });
    svg.setAttribute("data-bins", items.length);
    svg.setAttribute("data-layer", row.layer);
    svg.setAttribute("data-group", row.group);
    svg.setAttribute("data-kind", kind);
    return figure(kind === "layer" ? row.layer : row.group, (kind === "func" ? row.layer + ", " : "") + fmtInt(row.data_operations) + " data calls, " + fmtBytes(row.bytes) +
      ", sizes " + fmtBytes(row.size_min) + " \u2013 " + fmtBytes(row.size_max), svg);
  }

  function sizesSection() {
    const io = ["posix", "stdio", "mpiio", "hdf5", "pnetcdf"];
    const layers = R.tables.layer.filter(r => io.includes(r.layer) && r.size_histogram.length > 0);
    const funcs = R.tables.func.filter(r => io.includes(r.layer) && r.size_histogram.length > 0);
    if (layers.length === 0) return section("sizes", "Request sizes", el("p", { class: "note", text: "No data calls on files." }));
    return section("sizes", "Request sizes",
      el("p", { class: "note", text: "Data calls per power-of-two bin of the requested size: the bar labelled b counts sizes in [b, 2b)." }),
      el("h3", { text: "Per layer" }), el("div", { class: "charts" }, layers.map(r => histogram(r, "layer"))),
      el("h3", { text: "Per function" }), el("div", { class: "charts" }, funcs.map(r => histogram(r, "func"))));
  }

  function heatmapSection() {
    const h = R.heatmap;
    if (!h) return null;
    const rows = h.rows, cols = h.columns;
    const canvas = el("canvas", { width: cols, height: rows, "data-rows": rows, "data-columns": cols, "data-chart": "heatmap", role: "img" });
    const ctx = canvas.getContext("2d");
    const img = ctx.createImageData(cols, rows);
    const ranksIn = i => Math.min(h.per_row, h.units - i * h.per_row) || 1;
    for (let i = 0; i < rows; i++) {
      const cap = ranksIn(i) * h.bin_ns;
      for (let j = 0; j < cols; j++) {
        const c = heatColor(h.busy_ns[i][j] / cap);
        const p = 4 * (i * cols + j);
        img.data[p] = c[0]; img.data[p + 1] = c[1]; img.data[p + 2] = c[2]; img.data[p + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
    // Tall enough to read a few ranks, short enough for 200 rows.
    const cssHeight = Math.max(120, Math.min(rows * 24, 600));
    canvas.style.height = cssHeight + "px";
    const unit = h.unit === "process" ? "process" : "rank";
    const yaxis = el("div", { class: "yaxis", style: "height:" + cssHeight + "px" });
    const yticks = Math.min(rows, 8);
    for (let t = 0; t < yticks; t++) {
      const i = Math.round(t * (rows - 1) / Math.max(yticks - 1, 1));
      const first = i * h.per_row, last = Math.min(h.units, (i + 1) * h.per_row) - 1;
      yaxis.appendChild(el("span", { style: "top:" + ((i + 0.5) / rows * 100) + "%", text: unit + " " + rankLabel(first, Math.max(first, last)) }));
    }
    const xaxis = el("div", { class: "xaxis" });
    for (let t = 0; t <= 4; t++) {
      xaxis.appendChild(el("span", { style: "left:" + (t * 25) + "%", text: fmtDur(h.bin_ns * cols * t / 4) }));
    }
    const tip = el("div", { class: "tooltip" });
    canvas.addEventListener("mousemove", ev => {
      const rect = canvas.getBoundingClientRect();
      const j = Math.min(cols - 1, Math.floor((ev.clientX - rect.left) / rect.width * cols));
      const i = Math.min(rows - 1, Math.floor((ev.clientY - rect.top) / rect.height * rows));
      if (i < 0 || j < 0) return;
      const first = i * h.per_row, last = Math.min(h.units, (i + 1) * h.per_row) - 1;
      tip.textContent = unit + " " + rankLabel(first, Math.max(first, last)) + ", " + fmtDur(j * h.bin_ns) + " \u2013 " + fmtDur((j + 1) * h.bin_ns) +
        ": I/O busy " + fmtPct(h.busy_ns[i][j] / (ranksIn(i) * h.bin_ns)) + " (" + fmtDur(h.busy_ns[i][j]) + ")";
      tip.style.display = "block";
      tip.style.left = ev.clientX + 12 + "px";
      tip.style.top = ev.clientY + 12 + "px";
    });
    canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    const ramp = el("canvas", { class: "ramp", width: 220, height: 1 });
    const rc = ramp.getContext("2d"), ri = rc.createImageData(220, 1);
    for (let x = 0; x < 220; x++) {
      const c = heatColor(x / 219);
      ri.data.set([c[0], c[1], c[2], 255], 4 * x);
    }
    rc.putImageData(ri, 0, 0);
    const units = unit === "process" ? "processes" : "ranks";
    const note = rows + " rows of " + (h.per_row === 1 ? "one " + unit : h.per_row + " consecutive " + units) + " \u00d7 " + cols +
      " time bins of " + fmtDur(h.bin_ns) + ". Colour: the share of the bin the row's " + units + " spent in outermost I/O calls (POSIX, STDIO, MPI-IO).";
    return section("heatmap", "I/O over ranks and time",
      el("p", { class: "note", text: note }),
      el("div", { class: "heatmap" }, yaxis, canvas, xaxis),
      el("div", { class: "heat-legend" }, "idle", ramp, "busy the whole bin",
        h.unplaced_ns > 0 ? el("span", { text: "; " + fmtDur(h.unplaced_ns) + " of I/O by processes without a rank not shown" }) : null),
      tip);
  }

  // ---------- sortable tables ----------
  /** A sortable table over all `rows`, drawing TABLE_ROWS at a time. */
  function dataTable(name, columns, rows, initial) {
    const table = el("table", { class: "data sortable", "data-table": name, "data-rows": rows.length });
    const thead = el("thead"), tbody = el("tbody");
    const headRow = el("tr");
    let sortCol = initial ? initial.col : -1, desc = initial ? initial.desc : false, limit = TABLE_ROWS;
    let order = rows.slice();
    const foot = el("div", { class: "table-foot" });
    const more = el("button", { text: "show " + TABLE_ROWS + " more", type: "button" });
    const count = el("span");
    foot.append(count, more);
    more.addEventListener("click", () => { limit += TABLE_ROWS; draw(); });
    function sortBy(ci, d) {
      const c = columns[ci];
      const key = c.sort || c.get;
      order = rows.slice().sort((a, b) => {
        const x = key(a), y = key(b);
        let r;
        if (x === null || x === undefined) r = (y === null || y === undefined) ? 0 : 1;
        else if (y === null || y === undefined) r = -1;
        else if (typeof x === "number" && typeof y === "number") r = d ? y - x : x - y;
        else r = d ? String(y).localeCompare(String(x)) : String(x).localeCompare(String(y));
        return r;
      });
      headRow.querySelectorAll("th").forEach((th, i) => {
        if (i === ci) th.setAttribute("aria-sort", d ? "descending" : "ascending");
        else th.removeAttribute("aria-sort");
      });
    }
    columns.forEach((c, ci) => {
      const th = el("th", { class: c.num ? "num" : "", text: c.label, title: c.help || null, scope: "col" });
      th.addEventListener("click", () => {
        desc = sortCol === ci ? !desc : !!c.num;
        sortCol = ci;
        sortBy(ci, desc);
        draw();
      });
      headRow.appendChild(th);
    });
    thead.appendChild(headRow);
    table.append(thead, tbody);
    function draw() {
      tbody.textContent = "";
      const n = Math.min(limit, order.length);
      const frag = document.createDocumentFragment();
      for (let i = 0; i < n; i++) {
        const row = order[i];
        frag.appendChild(el("tr", null, columns.map(c => {
          const v = c.get(row);
          return el("td", { class: c.num ? "num" : "text", text: c.fmt ? c.fmt(v, row) : (v === null || v === undefined ? "-" : v) });
        })));
      }
      tbody.appendChild(frag);
      count.textContent = n < order.length ? "showing " + n + " of " + fmtInt(order.length) + " rows (sort to bring others up)" : fmtInt(order.length) + (order.length === 1 ? " row" : " rows");
      more.style.display = n < order.length ? "" : "none";
    }
    if (sortCol >= 0) sortBy(sortCol, desc);
    draw();
    return el("div", null, el("div", { class: "table-wrap" }, table), foot);
  }

  function statsColumns(groupLabel, numericGroup) {
    return [
      { label: groupLabel, get: r => numericGroup ? Number(r.group) : r.group, num: false },
      groupLabel === "layer" ? null : { label: "layer", get: r => r.layer },
      { label: "calls", get: r => r.operations, num: true, fmt: fmtInt },
      { label: "data calls", get: r => r.data_operations, num: true, fmt: fmtInt },
      { label: "bytes", get: r => r.bytes, num: true, fmt: fmtBytes },
      { label: "size min", get: r => r.size_min, num: true, fmt: fmtBytes },
      { label: "size mean", get: r => r.size_mean, num: true, fmt: fmtBytes },
      { label: "size max", get: r => r.size_max, num: true, fmt: fmtBytes },
      { label: "bytes/call", get: r => r.bytes_per_op, num: true, fmt: fmtBytes, help: "bytes / data calls" },
      { label: "total time", get: r => r.total_time_ns, num: true, fmt: fmtDur, help: "sum of durations" },
      { label: "busy time", get: r => r.busy_time_ns, num: true, fmt: fmtDur, help: "union of the call intervals per rank, summed over ranks" },
      { label: "load", get: r => r.ops_per_sec, num: true, fmt: fmtPerSec, help: "calls per second of busy time" },
      { label: "throughput", get: r => r.bytes_per_sec, num: true, fmt: fmtThroughput, help: "bytes per second of busy time" },
      { label: "errors", get: r => r.errors, num: true, fmt: fmtInt },
    ].filter(c => c);
  }

  function tablesSection() {
    const t = R.tables;
    const specs = [
      ["layer", "Layers", t.layer, statsColumns("layer"), { col: 1, desc: true }],
      ["func", "Functions", t.func, statsColumns("function"), { col: 9, desc: true }],
      ["file", "Files", t.file, statsColumns("file"), { col: 4, desc: true }],
      ["rank", "Ranks", t.rank, statsColumns("rank", true), { col: 0, desc: false }],
      ["host", "Hosts", t.host, statsColumns("host"), { col: 4, desc: true }],
      ["phase", "Phases", t.phase, statsColumns("phase"), { col: 9, desc: true }],
    ];
    // Storage servers, when the trace has server records (older reports have no such table).
    if (t.server && t.server.length) specs.push(["server", "Servers", t.server, statsColumns("server"), { col: 4, desc: true }]);
    const tabs = el("div", { class: "tabs", role: "tablist" });
    const panels = el("div");
    const built = {};
    function show(i) {
      const [name, , rows, cols, initial] = specs[i];
      tabs.querySelectorAll("button").forEach((b, k) => b.setAttribute("aria-selected", k === i ? "true" : "false"));
      if (!built[name]) built[name] = dataTable(name, cols, rows, initial);
      panels.textContent = "";
      panels.appendChild(built[name]);
    }
    specs.forEach((sp, i) => tabs.appendChild(el("button", { type: "button", role: "tab", "data-tab": sp[0], text: sp[1] + " (" + fmtInt(sp[2].length) + ")", onclick: () => show(i) })));
    const sec = section("tables", "Tables", el("p", { class: "note", text: "Click a column to sort. Rows hold one layer each: layers nest, so compare rows of one layer." }), tabs, panels);
    show(0);
    return sec;
  }

  /** A percentage (0..100, not a share), "-" when missing. */
  function fmtPercent(v) { return v === null || v === undefined ? "-" : fmtNum(v) + " %"; }

  // Storage servers: PIOviz's columns per server (`stats --by server`), what the client calls
  // became on them, and the server findings (traces with servers only).
  function serversSection() {
    const t = R.servers;
    if (!t || !t.servers || t.servers.length === 0) return null;
    const parts = [el("p", { class: "note", text: "Loads are operations per second of the job (" + fmtDur(t.duration_ns) +
      "); a storage access is a storage operation that moves data; throughput is storage bytes per second of busy time; " +
      "busy is the union of the server's network and storage operations; CPU from the sampled counters (- without samples)." })];
    parts.push(dataTable("servers", [
      { label: "server", get: r => r.server },
      { label: "role", get: r => r.role },
      { label: "net ops/s", get: r => r.network_ops_per_sec, num: true, fmt: fmtPerSec, help: "network operations (requests, replies) per second of the job" },
      { label: "storage ops/s", get: r => r.storage_ops_per_sec, num: true, fmt: fmtPerSec, help: "storage operations per second of the job" },
      { label: "accesses", get: r => r.storage_accesses, num: true, fmt: fmtInt, help: "storage operations that moved data" },
      { label: "bytes/access", get: r => r.bytes_per_access, num: true, fmt: fmtBytes },
      { label: "CPU %", get: r => r.cpu_percent, num: true, fmt: fmtPercent, help: "mean sampled user + system CPU, percent of one core" },
      { label: "CPU peak", get: r => r.cpu_peak_percent, num: true, fmt: fmtPercent },
      { label: "throughput", get: r => r.throughput, num: true, fmt: fmtThroughput, help: "storage bytes per second of busy time" },
      { label: "busy", get: r => r.busy_fraction, num: true, fmt: fmtPct, help: "busy time / job duration" },
    ], t.servers, { col: 0, desc: false }));
    if (t.calls.length || t.untied_server_ops > 0) {
      parts.push(el("h3", { text: "Client calls on the servers" }));
      parts.push(el("ul", { class: "server-calls" },
        t.calls.map(c => el("li", { text: c.summary })),
        t.untied_server_ops > 0 ? el("li", { text: fmtInt(t.untied_server_ops) + " server data operations tied to no client call" }) : null));
    }
    const found = R.findings.map((f, i) => [f, i]).filter(([f]) => SERVER_RULES.has(f.id));
    parts.push(el("h3", { text: "Server findings" }));
    parts.push(found.length === 0
      ? el("p", { class: "note", "data-server-findings": 0, text: "No server rule fired on this run." })
      : el("ul", { class: "server-findings", "data-server-findings": found.length }, found.map(([f, i]) =>
        el("li", null, el("a", { href: "#findings", text: "#" + (i + 1) }), " ", el("span", { class: "badge sev-" + f.severity, text: f.severity }), " " + f.title))));
    return section("servers", "Storage servers", parts);
  }

  // The sampled counters (counters.parquet) per node and traced process.
  function countersSection() {
    const c = R.counters;
    if (!c || c.length === 0) return null;
    return section("counters", "Node and process counters",
      el("p", { class: "note", text: "Sampled during the run. CPU is user + system, in percent of all cores for a node, of one core for a process; " +
        "iowait in percent of all cores (nodes only); disk and network bytes over the job (network: nodes only); memory at its highest." }),
      dataTable("counters", [
        { label: "host", get: r => r.host },
        { label: "process", get: r => r.process < 0 ? "node" : "process " + r.process, sort: r => r.process },
        { label: "samples", get: r => r.samples, num: true, fmt: fmtInt },
        { label: "CPU mean", get: r => r.cpu_mean_percent, num: true, fmt: fmtPercent },
        { label: "CPU peak", get: r => r.cpu_peak_percent, num: true, fmt: fmtPercent },
        { label: "iowait", get: r => r.iowait_mean_percent, num: true, fmt: fmtPercent },
        { label: "disk read", get: r => r.disk_read_bytes, num: true, fmt: fmtBytes },
        { label: "disk written", get: r => r.disk_write_bytes, num: true, fmt: fmtBytes },
        { label: "net received", get: r => r.net_rx_bytes, num: true, fmt: fmtBytes },
        { label: "net sent", get: r => r.net_tx_bytes, num: true, fmt: fmtBytes },
        { label: "memory peak", get: r => r.mem_peak_bytes, num: true, fmt: fmtBytes },
      ], c, { col: 0, desc: false }));
  }

  // An imported Darshan log: what it cannot support, and its counters per module
  // (docs/IMPORT.md; imported stores only).
  function darshanSection() {
    const d = R.darshan;
    if (!d) return null;
    return section("darshan", "Imported from a Darshan log",
      el("h3", { text: "What the log cannot support" }),
      el("ul", { class: "darshan-limits" }, d.cannot_support.map(t => el("li", { text: t }))),
      el("h3", { text: "Darshan counters per module" }),
      el("p", { class: "note", text: "Summed over the log's records; times are summed over ranks." }),
      dataTable("darshan", [
        { label: "module", get: m => m.module },
        { label: "records", get: m => m.records, num: true, fmt: fmtInt },
        { label: "files", get: m => m.files, num: true, fmt: fmtInt },
        { label: "reads", get: m => m.reads, num: true, fmt: fmtInt },
        { label: "writes", get: m => m.writes, num: true, fmt: fmtInt },
        { label: "read", get: m => m.bytes_read, num: true, fmt: fmtBytes },
        { label: "written", get: m => m.bytes_written, num: true, fmt: fmtBytes },
        { label: "read time", get: m => m.read_time_ns, num: true, fmt: fmtDur },
        { label: "write time", get: m => m.write_time_ns, num: true, fmt: fmtDur },
        { label: "meta time", get: m => m.meta_time_ns, num: true, fmt: fmtDur },
      ], d.modules, { col: 0, desc: false }));
  }

  function filesSection() {
    const files = R.patterns.files.filter(f => f.reads + f.writes > 0 || f.mpiio.independent_calls + f.mpiio.collective_calls > 0);
    const parts = [];
    if (files.length > 0) {
      parts.push(dataTable("files", [
        { label: "file", get: f => f.path },
        { label: "fs", get: f => f.fs_type },
        { label: "ranks", get: f => f.ranks, num: true, fmt: fmtInt },
        { label: "sharing", get: f => f.sharing },
        { label: "read", get: f => f.read_bytes, num: true, fmt: fmtBytes },
        { label: "written", get: f => f.written_bytes, num: true, fmt: fmtBytes },
        { label: "MPI-IO indep", get: f => f.mpiio.independent_calls, num: true, fmt: fmtInt },
        { label: "MPI-IO coll", get: f => f.mpiio.collective_calls, num: true, fmt: fmtInt },
        { label: "POSIX/indep", get: f => f.mpiio.posix_per_independent, num: true, fmt: v => fmtNum(v) },
        { label: "POSIX/coll", get: f => f.mpiio.posix_per_collective, num: true, fmt: v => fmtNum(v) },
        { label: "stripe", get: f => f.stripe_size, num: true, fmt: fmtBytes },
      ], files, { col: 5, desc: true }));
    } else {
      parts.push(el("p", { class: "note", text: "No file moved data." }));
    }
    const a = R.aggregation;
    if (a.collective_call_records > 0) {
      const aggs = a.aggregators.slice(0, 16).map(g => g.rank + " (" + g.host + ")").join(", ") + (a.aggregators.length > 16 ? ", ..." : "");
      parts.push(el("h3", { text: "Collective MPI-IO" }));
      parts.push(el("p", { text: fmtInt(a.collective_calls) + " collective calls on " + fmtInt(a.participants) + " ranks; " +
        a.aggregators.length + " aggregators" + (aggs ? ": rank " + aggs : "") + ". Hosts without an aggregator: " +
        (a.hosts_without_aggregator.length ? a.hosts_without_aggregator.slice(0, 16).join(", ") + (a.hosts_without_aggregator.length > 16 ? ", ..." : "") : "none") + "." }));
    }
    if (a.sieving.length > 0) {
      let req = 0, rd = 0, wr = 0, rmw = 0;
      for (const x of a.sieving) { req += x.requested_bytes; rd += x.posix_read_bytes; wr += x.posix_written_bytes; rmw += x.rmw_calls; }
      parts.push(el("h3", { text: "Data sieving beneath independent MPI-IO" }));
      parts.push(el("p", { text: fmtBytes(req) + " requested; POSIX read " + fmtBytes(rd) + " and wrote " + fmtBytes(wr) +
        (req > 0 ? " (" + ((rd + wr) / req).toFixed(2) + "x)" : "") + "; " + fmtInt(rmw) + " read-modify-write calls." }));
    }
    const m = R.patterns.metadata;
    if (m.operations + m.mpiio_operations > 0) {
      parts.push(el("h3", { text: "Metadata" }));
      parts.push(el("p", { text: fmtInt(m.operations) + " POSIX/STDIO metadata calls (" + fmtPerSec(m.per_sec) + " over the job, " + fmtDur(m.time_ns) + " in them)" +
        (m.by_function.length ? ": " + m.by_function.slice(0, 6).map(([f, n]) => f + " " + fmtInt(n)).join(", ") : "") + "; " + fmtInt(m.mpiio_operations) + " MPI-IO metadata calls." }));
    }
    return section("files", "Files, aggregation and metadata", parts);
  }

  // ---------- comparison with another run (report --against) ----------
  /** A signed time: "+1.20 ms". */
  function fmtDelta(v) { return (v > 0 ? "+" : "") + fmtDur(v); }
  /** A change in percent of A; "new" when A had none. */
  function fmtChange(c) {
    if (c.percent !== null && c.percent !== undefined) return (c.percent > 0 ? "+" : "") + fmtNum(c.percent) + " %";
    return c.b_ns > 0 ? "new" : "-";
  }
  function diffColumns(groupLabel, withLayer) {
    const side = (m, f) => (m ? f(m) : null);
    return [
      { label: groupLabel, get: r => r.group },
      withLayer ? { label: "layer", get: r => r.layer } : null,
      { label: "calls A", get: r => side(r.a, m => m.operations), num: true, fmt: v => (v === null ? "-" : fmtInt(v)) },
      { label: "calls B", get: r => side(r.b, m => m.operations), num: true, fmt: v => (v === null ? "-" : fmtInt(v)) },
      { label: "time A", get: r => side(r.a, m => m.time_ns), num: true, fmt: v => (v === null ? "-" : fmtDur(v)) },
      { label: "time B", get: r => side(r.b, m => m.time_ns), num: true, fmt: v => (v === null ? "-" : fmtDur(v)) },
      { label: "change", get: r => r.change.delta_ns, num: true, fmt: fmtDelta, help: "time B - time A" },
      { label: "%", get: r => r.change.percent, num: true, fmt: (v, r) => fmtChange(r.change), help: "change in percent of A" },
    ].filter(c => c);
  }
  function diffSection() {
    if (!D) return null;
    const parts = [el("p", { class: "note", text: "This run (B) against " + D.a.path + " (A): every change is B - A, every percentage of A. Rows of one run only show - on the other side." })];
    const head = [["I/O time", D.io_time], ["job", D.duration], ["paired top-level calls", D.calls.paired_time]];
    parts.push(el("table", { class: "data", "data-table": "diff-headline" },
      el("thead", null, el("tr", null, ["", "A", "B", "change", "%"].map(h => el("th", { class: h ? "num" : "", text: h })))),
      el("tbody", null, head.map(([k, c]) => el("tr", null,
        el("td", { text: k }), el("td", { class: "num", text: fmtDur(c.a_ns) }), el("td", { class: "num", text: fmtDur(c.b_ns) }),
        el("td", { class: "num", text: fmtDelta(c.delta_ns) }), el("td", { class: "num", text: fmtChange(c) }))))));
    parts.push(el("h3", { text: "Findings" }));
    if (D.findings.length === 0) parts.push(el("p", { class: "note", text: "No rule fired on either run." }));
    else parts.push(el("ul", { class: "diff-findings" }, D.findings.map(f => el("li", { "data-id": f.id, "data-status": f.status },
      el("span", { class: "badge status-" + f.status, text: f.status }), " ",
      el("span", { class: "id", text: f.id }), " ", f.title,
      el("span", { class: "sub", text: " (cost " + (f.cost_a_ns === null ? "-" : fmtDur(f.cost_a_ns)) + " \u2192 " + (f.cost_b_ns === null ? "-" : fmtDur(f.cost_b_ns)) + ")" })))));
    const tables = [
      ["diff-layer", "Layers", D.layers, diffColumns("layer", false)],
      ["diff-func", "Functions", D.functions, diffColumns("function", true)],
      ["diff-file", "Files", D.files, diffColumns("file", true)],
      ["diff-rank", "Ranks", D.ranks, diffColumns("rank", true)],
    ];
    if (D.darshan.length) tables.push(["diff-darshan", "Darshan counters per module", D.darshan, diffColumns("module", false)]);
    for (const [name, label, rows, cols] of tables) {
      parts.push(el("h3", { text: label }));
      parts.push(dataTable(name, cols, rows, null));
    }
    parts.push(el("h3", { text: "Calls whose time changed most (paired by order per rank and function)" }));
    parts.push(dataTable("diff-calls", [
      { label: "rank", get: r => r.rank, num: true },
      { label: "function", get: r => r.func },
      { label: "file", get: r => r.file_b || r.file_a },
      { label: "A", get: r => r.a_ns, num: true, fmt: fmtDur },
      { label: "B", get: r => r.b_ns, num: true, fmt: fmtDur },
      { label: "change", get: r => r.delta_ns, num: true, fmt: fmtDelta },
      { label: "%", get: r => r.percent, num: true, fmt: (v, r) => fmtChange(r) },
    ], D.calls.changed, null));
    if (D.calls.unpaired.length) {
      parts.push(el("p", { class: "note", text: "Without a counterpart: " + D.calls.unpaired.map(u => u.func + " " + fmtInt(u.count) + " only in " + u.side).join(", ") + "." }));
    }
    return section("diff", "Compared with " + D.a.path, parts);
  }

  // ---------- the page ----------
  function build() {
    const j = R.job;
    app.appendChild(el("header", { class: "top" },
      el("h1", { text: "pioscope report" }),
      j.command ? el("div", { class: "command", text: j.command }) : null));
    const nav = [["summary", "Job"], ["findings", "Findings (" + R.findings.length + ")"], ["time", "Time"], ["ranks", "Ranks"], ["sizes", "Sizes"], ["heatmap", "Heat map"], ["servers", "Servers"], ["counters", "Counters"], ["darshan", "Darshan"], ["tables", "Tables"], ["files", "Files"], ["diff", "Compared"]];
    const toc = el("nav", { class: "toc" });
    app.appendChild(toc);
    const sections = [summary, findings, timeSection, ranksSection, sizesSection, heatmapSection, serversSection, countersSection, darshanSection, tablesSection, filesSection, diffSection];
    for (const f of sections) {
      // One broken section must not take the others down: it says what failed instead.
      let sec;
      try {
        sec = f();
      } catch (e) {
        sec = el("section", null, el("div", { class: "banner", text: "This section could not be drawn: " + e }));
        console.error(e);
      }
      if (sec) app.appendChild(sec);
    }
    for (const [id, label] of nav) {
      if (document.getElementById(id)) {
        const a = el("a", { text: label });
        a.setAttribute("href", "#" + id);
        toc.appendChild(a);
      }
    }
    app.appendChild(el("footer", { text: "pioscope report of " + fmtInt(j.events) + " events. The data of this page: pioscope report TRACE --json." }));
    document.body.setAttribute("data-ready", "true");
  }
  build();
})();
