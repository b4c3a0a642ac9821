#!/usr/bin/env python3
"""How `pioscope view`'s server scales (issue 5: a window query <= 200 ms at any zoom on
100,000,000 events). Writes a synthetic trace with `pioscope synth` (which also builds the
level-of-detail index and reports its build time), times the index build again on its own
(`pioscope view` rebuilds a missing index on open), then starts `pioscope view TRACE --port 0
--no-open` and times /api/window over every row at several zoom levels (whole trace, 1/10,
1/1000, 1 us, each centred in the trace and at a few other places), the median of repeats.
First paint is measured in the browser by bench/perf/view_paint.py. A benchmark that reports
figures; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/view_scale.py [--events 10M] [--ranks 16] [--repeats 7] [--px 1200]
                                [--trace DIR | --dir DIR] [--keep] [--json]"""
import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
URL = re.compile(r"http://127\.0\.0\.1:\d+/")


def parse_count(s: str) -> int:
    s = s.strip().replace("_", "").replace(",", "")
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(s[-1:].lower(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def seconds(text: str) -> float:
    """A human duration as pioscope prints it ("133.15 ms", "2.31 s", "1 min 3 s") in s."""
    units = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
    total = 0.0
    for value, unit in re.findall(r"([\d.]+)\s*(ns|µs|us|ms|min|s|h)\b", text):
        total += float(value) * units[unit]
    return total


def get(url: str) -> tuple:
    """(seconds, decoded JSON) of one GET."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
    return time.perf_counter() - t0, json.loads(body)


class Server:
    """`pioscope view TRACE --port 0 --no-open` in the background; `.url` once it serves."""

    def __init__(self, trace: Path):
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen([str(PIOSCOPE), "view", str(trace), "--port", "0", "--no-open"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = None
        self.lines = []
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            m = URL.search(line)
            if m:
                self.url = m.group(0)
                break
        self.ready_s = time.perf_counter() - self.t0
        if not self.url:
            sys.exit("pioscope view did not start:\n" + "\n".join(self.lines))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def synthesize(trace: Path, events: int, ranks: int, seed: int) -> dict:
    """`pioscope synth` into `trace`; its time and what it says of the index it built."""
    figures = {}
    t0 = time.perf_counter()
    p = subprocess.run([str(PIOSCOPE), "synth", "-o", str(trace), "--events", str(events),
                        "--ranks", str(ranks), "--seed", str(seed), "--force"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"synth failed: {p.stderr}")
    figures["synth_s"] = time.perf_counter() - t0
    m = re.search(r"level-of-detail index: (\d+) buckets in (\d+) levels.*wall (.*)", p.stdout)
    if m:
        figures["lod_buckets"] = int(m.group(1))
        figures["lod_levels"] = int(m.group(2))
        figures["lod_build_s (synth)"] = seconds(m.group(3))
    return figures


def summarize(ans: dict) -> str:
    rows = ans.get("rows", [])
    states = sum(len(r["states"]["id"]) for r in rows if r.get("mode") == "states")
    buckets = sum(sum(r.get("len") or []) for r in rows)
    modes = sorted({r.get("mode") for r in rows})
    return f"{'/'.join(m for m in modes if m)} {states} states {buckets} buckets ({ans.get('source')})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", default="10M", help="events to generate (100M for the closing figure)")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=7, help="queries per zoom level (median)")
    ap.add_argument("--px", type=int, default=1200, help="canvas width asked for")
    ap.add_argument("--trace", type=Path, help="use this existing trace instead of synthesizing")
    ap.add_argument("--dir", type=Path, help="where to write the trace (default: a temporary dir)")
    ap.add_argument("--keep", action="store_true", help="keep the trace afterwards")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    if not PIOSCOPE.exists():
        sys.exit(f"{PIOSCOPE} not found: build it first (make cli)")

    figures = {}
    tmp = None
    if args.trace:
        trace = args.trace
    else:
        events = parse_count(args.events)
        base = args.dir or Path(tempfile.mkdtemp(prefix="pioscope-view-scale-"))
        tmp = None if args.dir else base
        trace = base / f"synth-{events}"
        figures.update(synthesize(trace, events, args.ranks, args.seed))
    try:
        meta = json.loads((trace / "meta.json").read_text())
        figures["events"] = meta["counts"]["events"]
        figures["duration_ns"] = meta["job"]["duration_ns"]
        # The index built on open (older traces): remove it and time the server's start.
        saved = {}
        for name in ("lod.parquet", "lod_spans.parquet"):
            f = trace / name
            if f.exists():
                saved[name] = f.stat().st_size
                f.unlink()
        srv = Server(trace)
        figures["view_start_with_lod_build_s"] = srv.ready_s
        srv.stop()
        figures["lod_bytes"] = sum((trace / n).stat().st_size for n in saved or ("lod.parquet",)
                                   if (trace / n).exists())
        figures["events_bytes"] = (trace / "events.parquet").stat().st_size
        srv = Server(trace)
        figures["view_start_s"] = srv.ready_s
        try:
            # The findings run in the background from the start; wait for them so that they
            # do not share the CPU with the timed queries.
            dt, found = get(srv.url + "api/findings?trace=0")
            figures["findings_s"] = dt
            figures["findings"] = len(found)
            _, info = get(srv.url + "api/traces")
            d = info[0]["duration_ns"]
            figures["lod"] = info[0].get("lod")
            dt, rows = get(srv.url + "api/rows?trace=0")
            figures["rows_ms"] = dt * 1e3
            nrows = sum(len(g["rows"]) for g in rows["groups"])
            figures["rows"] = nrows
            zooms = [("whole", d), ("1/10", d // 10), ("1/1000", d // 1000), ("1 us", 1000)]
            table = []
            for name, span in zooms:
                times = []
                what = ""
                for k in range(args.repeats):
                    # Centred, then at other places along the trace.
                    centre = d // 2 if k == 0 else d * (k + 1) // (args.repeats + 2)
                    t0 = max(0, min(d - span, centre - span // 2))
                    url = f"{srv.url}api/window?trace=0&t0={t0}&t1={t0 + span}&px={args.px}&rows=0-{nrows - 1}"
                    dt, ans = get(url)
                    times.append(dt)
                    if k == 0:
                        what = summarize(ans)
                med = statistics.median(times) * 1e3
                table.append({"zoom": name, "window_ns": span, "median_ms": med,
                              "max_ms": max(times) * 1e3, "answer": what})
            figures["window"] = table
            dt, _ = get(f"{srv.url}api/counters?trace=0&px={args.px}")
            figures["counters_whole_ms"] = dt * 1e3
            dt, _ = get(f"{srv.url}api/window?trace=0&px={args.px}&group=1")
            figures["density_whole_ms"] = dt * 1e3
        finally:
            srv.stop()
    finally:
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"events {figures['events']:,}, rows {figures.get('rows')}, job {figures['duration_ns'] / 1e9:.1f} s")
    for k in ("synth_s", "lod_build_s (synth)", "view_start_with_lod_build_s", "view_start_s", "findings_s"):
        if k in figures:
            print(f"  {k:30} {figures[k]:8.2f} s")
    print(f"  lod.parquet {figures.get('lod_bytes', 0) / 2**20:.1f} MiB, events.parquet "
          f"{figures['events_bytes'] / 2**20:.1f} MiB, index {figures.get('lod')}")
    print(f"  /api/rows {figures['rows_ms']:.1f} ms, counters (whole) {figures['counters_whole_ms']:.1f} ms, "
          f"density rows (whole) {figures['density_whole_ms']:.1f} ms")
    print(f"  {'window':8} {'median ms':>10} {'max ms':>8}  answer")
    for r in figures["window"]:
        print(f"  {r['zoom']:8} {r['median_ms']:10.1f} {r['max_ms']:8.1f}  {r['answer']}")


if __name__ == "__main__":
    main()
