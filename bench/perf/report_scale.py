#!/usr/bin/env python3
"""How `pioscope report` scales (issue 19: 100,000,000 events in <= 10 s and <= 2 GB peak memory
on a 2-core machine). Writes a synthetic trace with `pioscope synth` (or takes --trace), then
times `pioscope report TRACE --json` with its CPU time and peak RSS, and, as the reference in
the same run, DuckDB grouping the same events.parquet by function (what a scan costs: the
report's own work is the rest). The runs are interleaved and repeated; medians are printed.
With --baseline BIN, another pioscope binary (an earlier build) is timed on the same trace,
interleaved with the others, so a change is measured before/after under the same load.
A benchmark that reports figures; no assertion.

Build first: make -C <repo> cli. The reference needs DuckDB: python3 -m pip install duckdb
(without it the reference is skipped and said so).
usage: bench/perf/report_scale.py [--events 100M] [--ranks 16] [--seed 1] [--repeats 3]
                                  [--dir DIR | --trace TRACE] [--keep] [--baseline BIN]"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
GNU_TIME = Path("/usr/bin/time")


def parse_count(s: str) -> int:
    s = s.strip().replace("_", "").replace(",", "")
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(s[-1:].lower(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def store_bytes(d: Path) -> int:
    return sum(f.stat().st_size for f in d.iterdir() if f.is_file())


def run_report(trace: Path, binary: Path = PIOSCOPE) -> tuple:
    """(wall s, CPU s, peak RSS bytes) of `BINARY report TRACE --json > /dev/null`."""
    cmd = [str(binary), "report", str(trace), "--json"]
    if GNU_TIME.exists():
        cmd = [str(GNU_TIME), "-v"] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        p = subprocess.run(cmd, stdout=null, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"report failed ({p.returncode}): {p.stderr.strip()}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    if m:
        rss = int(m.group(1)) * 1024
    else:  # no GNU time: the largest child so far (only this child is large)
        rss = after.ru_maxrss * 1024
    return wall, cpu, rss


def duckdb_group_by(trace: Path):
    """Wall seconds of DuckDB's `GROUP BY func` over events.parquet (count, durations, sizes),
    None without the duckdb module."""
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect()
    t0 = time.perf_counter()
    con.execute("SELECT func, count(*), sum(duration_ns), sum(size) FROM read_parquet(?) GROUP BY func",
                [str(trace / "events.parquet")]).fetchall()
    wall = time.perf_counter() - t0
    con.close()
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", default="100M", help="events to generate (100M, 10M, 1G, ...)")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, help="where to write the trace (default: a temporary dir)")
    ap.add_argument("--trace", type=Path, help="time this existing trace instead of writing one")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each measurement (median printed)")
    ap.add_argument("--keep", action="store_true", help="keep the trace afterwards")
    ap.add_argument("--baseline", type=Path, metavar="BIN",
                    help="also time this pioscope binary's report, interleaved (before/after)")
    args = ap.parse_args()
    if not PIOSCOPE.exists():
        sys.exit(f"{PIOSCOPE} is missing: run `make -C {ROOT} cli` first")
    tmp = None
    if args.trace:
        trace = args.trace
    else:
        events = parse_count(args.events)
        parent = args.dir.parent if args.dir else None
        tmp = Path(tempfile.mkdtemp(prefix="pioscope-scale-", dir=parent))
        trace = args.dir if args.dir else tmp / "trace"
    try:
        if tmp is not None:
            t0 = time.perf_counter()
            subprocess.run([str(PIOSCOPE), "synth", "-o", str(trace), "--events", str(events),
                            "--ranks", str(args.ranks), "--seed", str(args.seed), "--force"],
                           check=True, stdout=subprocess.DEVNULL)
            gen = time.perf_counter() - t0
            print(f"generation        {gen:.1f} s ({events / gen / 1e6:.2f} M events/s)")
        events = json.loads((trace / "meta.json").read_text())["counts"]["events"]
        ranks = json.loads((trace / "meta.json").read_text())["job"]["ranks"]
        size = store_bytes(trace)
        reports, baseline, refs = [], [], []
        for _ in range(max(1, args.repeats)):  # interleaved: all see the same machine load
            if args.baseline:
                baseline.append(run_report(trace, args.baseline))
            reports.append(run_report(trace))
            refs.append(duckdb_group_by(trace))
        print(f"events            {events:,} ({ranks} ranks)")
        print(f"store             {size / 1e6:.1f} MB ({size / events:.2f} bytes/event)")
        print(f"load average      {os.getloadavg()[0]:.1f} (2 cores: other work shares them)")
        for name, runs in (("baseline", baseline), ("report", reports)):
            if not runs:
                continue
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rss = max(r[2] for r in runs)
            print(f"{name + ' wall':<17} {wall:.1f} s ({events / wall / 1e6:.2f} M events/s), "
                  f"CPU {cpu:.1f} s, median of {len(runs)}")
            print(f"{name + ' peak RSS':<17} {rss / 2**20:.0f} MiB")
        if refs[0] is None:
            print("duckdb GROUP BY   skipped: python3 -m pip install duckdb")
        else:
            ref = statistics.median(refs)
            print(f"duckdb GROUP BY   {ref:.2f} s (func over events.parquet, median of {len(refs)})")
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(trace, ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
