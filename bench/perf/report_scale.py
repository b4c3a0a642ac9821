#!/usr/bin/env python3
"""How `pioscope report` scales (issue 3: 100,000,000 events in <= 60 s and <= 2 GB peak memory).
Writes a synthetic trace with `pioscope synth`, then times `pioscope report TRACE --json` and
measures its peak RSS. A benchmark that reports figures; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/report_scale.py [--events 100M] [--ranks 16] [--seed 1] [--dir DIR] [--keep]"""
import argparse
import os
import re
import resource
import shutil
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


def run_report(trace: Path) -> tuple:
    """(wall seconds, peak RSS bytes) of `pioscope report TRACE --json > /dev/null`."""
    cmd = [str(PIOSCOPE), "report", str(trace), "--json"]
    if GNU_TIME.exists():
        cmd = [str(GNU_TIME), "-v"] + cmd
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        p = subprocess.run(cmd, stdout=null, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"report failed ({p.returncode}): {p.stderr.strip()}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    if m:
        rss = int(m.group(1)) * 1024
    else:  # no GNU time: the largest child so far (only this child is large)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return wall, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", default="100M", help="events to generate (100M, 10M, 1G, ...)")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, help="where to write the trace (default: a temporary dir)")
    ap.add_argument("--keep", action="store_true", help="keep the trace afterwards")
    args = ap.parse_args()
    if not PIOSCOPE.exists():
        sys.exit(f"{PIOSCOPE} is missing: run `make -C {ROOT} cli` first")
    events = parse_count(args.events)
    parent = args.dir.parent if args.dir else None
    tmp = Path(tempfile.mkdtemp(prefix="pioscope-scale-", dir=parent))
    trace = args.dir if args.dir else tmp / "trace"
    try:
        t0 = time.perf_counter()
        subprocess.run([str(PIOSCOPE), "synth", "-o", str(trace), "--events", str(events),
                        "--ranks", str(args.ranks), "--seed", str(args.seed), "--force"],
                       check=True, stdout=subprocess.DEVNULL)
        gen = time.perf_counter() - t0
        size = store_bytes(trace)
        wall, rss = run_report(trace)
        print(f"events            {events:,} ({args.ranks} ranks)")
        print(f"generation        {gen:.1f} s ({events / gen / 1e6:.2f} M events/s)")
        print(f"store             {size / 1e6:.1f} MB ({size / events:.2f} bytes/event)")
        print(f"report wall       {wall:.1f} s ({events / wall / 1e6:.2f} M events/s)")
        print(f"report peak RSS   {rss / 2**20:.0f} MiB")
    finally:
        if not args.keep:
            shutil.rmtree(trace, ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
