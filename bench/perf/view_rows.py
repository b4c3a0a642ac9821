#!/usr/bin/env python3
"""The viewer at many ranks (issue 18): `pioscope synth --events N --ranks R` (which builds the
level-of-detail index, its row groups included, and reports its build time), then
`pioscope view TRACE --port 0 --no-open`, and for W random windows (spans log-uniform from the
whole trace down to a millionth of it, random places) two /api/window queries, interleaved:
- *all rows*: every row with `height=H` (the overview: row groups fitting H pixel rows);
- *screen rows*: a random block of S consecutive rows, without `height` (row by row).
Reports the median and worst time, the median CPU time the server spent (less noisy than the time
on a loaded machine) and the largest reply of each, and the index's size (lod*.parquet against the
whole store) and build time. A benchmark that reports figures; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/view_rows.py [--events 10M] [--ranks 1024] [--windows 20] [--px 1600]
                               [--height 200] [--screen-rows 60] [--trace DIR | --dir DIR]
                               [--keep] [--json]"""
import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from view_scale import PIOSCOPE, Server, parse_count, synthesize


def fetch(url: str) -> tuple:
    """(seconds, bytes of the reply, decoded JSON) of one GET."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
    return time.perf_counter() - t0, len(body), json.loads(body)


def cpu_s(pid: int) -> float:
    """CPU time of every thread of process `pid` so far, s (Linux schedstat: ns)."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def timed(pid: int, url: str) -> tuple:
    """(seconds, bytes, JSON, server CPU seconds) of one GET."""
    c0 = cpu_s(pid)
    dt, n, ans = fetch(url)
    return dt, n, ans, cpu_s(pid) - c0


def store_bytes(trace: Path) -> dict:
    files = {p.name: p.stat().st_size for p in trace.iterdir() if p.is_file()}
    lod = sum(v for k, v in files.items() if k.startswith("lod"))
    return {"store_bytes": sum(files.values()), "lod_bytes": lod}


def summary(times: list, sizes: list, cpu: list) -> dict:
    return {"median_ms": statistics.median(times) * 1e3, "worst_ms": max(times) * 1e3,
            "median_cpu_ms": statistics.median(cpu) * 1e3, "worst_cpu_ms": max(cpu) * 1e3,
            "max_reply_bytes": max(sizes)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", default="10M", help="events to generate (100M for the closing figure)")
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=1, help="of synth and of the random windows")
    ap.add_argument("--windows", type=int, default=20, help="random windows")
    ap.add_argument("--px", type=int, default=1600, help="canvas width asked for")
    ap.add_argument("--height", type=int, default=200, help="pixel rows of the all-rows overview")
    ap.add_argument("--screen-rows", type=int, default=60, help="rows of a screen-rows window")
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
        base = args.dir or Path(tempfile.mkdtemp(prefix="pioscope-view-rows-"))
        tmp = None if args.dir else base
        trace = base / f"synth-{events}-{args.ranks}"
        figures.update(synthesize(trace, events, args.ranks, args.seed))
    try:
        meta = json.loads((trace / "meta.json").read_text())
        figures["events"] = meta["counts"]["events"]
        figures.update(store_bytes(trace))
        srv = Server(trace)
        try:
            # The findings run in the background from the start: let them finish first.
            fetch(srv.url + "api/findings?trace=0")
            _, _, info = fetch(srv.url + "api/traces")
            d = info[0]["duration_ns"]
            nrows = info[0]["rows"]
            figures["ranks"] = info[0]["ranks"]
            figures["rows"] = nrows
            rng = random.Random(args.seed)
            overview, screen = ([], [], []), ([], [], [])
            pid = srv.proc.pid
            for _ in range(args.windows):
                span = max(1, int(d * 10 ** (-6 * rng.random())))
                t0 = rng.randint(0, max(0, d - span))
                first = rng.randint(0, max(0, nrows - args.screen_rows))
                last = min(nrows, first + args.screen_rows) - 1
                q = f"{srv.url}api/window?trace=0&t0={t0}&t1={t0 + span}&px={args.px}"
                dt, n, ans, cpu = timed(pid, f"{q}&rows=0-{nrows - 1}&height={args.height}")
                overview[0].append(dt)
                overview[1].append(n)
                overview[2].append(cpu)
                figures.setdefault("overview_answer", {"source": ans.get("source"), "rows": len(ans["rows"]),
                                                       "mode": ans["rows"][0].get("mode") if ans["rows"] else None})
                dt, n, _, cpu = timed(pid, f"{q}&rows={first}-{last}")
                screen[0].append(dt)
                screen[1].append(n)
                screen[2].append(cpu)
            figures["all_rows"] = summary(*overview)
            figures["screen_rows"] = summary(*screen)
        finally:
            srv.stop()
    finally:
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{figures['events']:,} events, {figures['rows']} rows; store {figures['store_bytes'] / 2**20:.1f} MiB, "
          f"index (lod*.parquet) {figures['lod_bytes'] / 2**20:.1f} MiB "
          f"(+{100 * figures['lod_bytes'] / max(1, figures['store_bytes'] - figures['lod_bytes']):.0f} %)"
          + (f", built in {figures['lod_build_s (synth)']:.1f} s" if 'lod_build_s (synth)' in figures
             else " (build time: synth's output, not run here)"))
    for k, label in (("all_rows", f"all rows, height={args.height}"), ("screen_rows", f"{args.screen_rows} rows")):
        r = figures[k]
        print(f"  {label:24} median {r['median_ms']:7.1f} ms  worst {r['worst_ms']:7.1f} ms  "
              f"server CPU median {r['median_cpu_ms']:6.1f} ms worst {r['worst_cpu_ms']:6.1f} ms  "
              f"largest reply {r['max_reply_bytes'] / 1e3:.0f} kB")
    print(f"  overview answer: {figures.get('overview_answer')}")


if __name__ == "__main__":
    main()
