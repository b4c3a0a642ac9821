#!/usr/bin/env python3
"""How `pioscope export` scales (issue 5): writes a synthetic trace with `pioscope synth`, then
times `pioscope export TRACE --to F` for every format and measures its peak RSS and output
size. A benchmark that reports figures; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/export_scale.py [--events 10M] [--ranks 16] [--formats paje,chrome,otf2,csv]
                                  [--dir DIR] [--keep]"""
import argparse
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
GNU_TIME = Path("/usr/bin/time")


def size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def timed(cmd):
    """(wall seconds, peak RSS bytes or None, stdout) of cmd."""
    full = [str(GNU_TIME), "-f", "maxrss=%M"] + cmd if GNU_TIME.exists() else cmd
    t0 = time.perf_counter()
    r = subprocess.run(full, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    m = re.search(r"maxrss=(\d+)", r.stderr)
    return wall, int(m.group(1)) * 1024 if m else None, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="10M")
    ap.add_argument("--ranks", default="16")
    ap.add_argument("--formats", default="paje,chrome,otf2,csv")
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    work = a.dir or Path(tempfile.mkdtemp(prefix="pioscope-export-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    trace = work / "trace"
    try:
        if not trace.exists():
            subprocess.run([str(PIOSCOPE), "synth", "-o", str(trace), "--events", a.events,
                            "--ranks", a.ranks], check=True, capture_output=True)
        print(f"trace: {a.events} events, {a.ranks} ranks ({trace})")
        print(f"{'format':<8} {'wall s':>8} {'events/s':>12} {'peak RSS MB':>12} {'output MB':>10}")
        for fmt in a.formats.split(","):
            out = work / f"out.{fmt}"
            wall, rss, stdout = timed([str(PIOSCOPE), "export", str(trace), "--to", fmt,
                                       "-o", str(out), "--force"])
            n = int(stdout.split(" events")[0])
            print(f"{fmt:<8} {wall:8.2f} {n / wall:12,.0f} "
                  f"{(rss or 0) / 2**20:12.0f} {size(out) / 2**20:10.1f}")
            if not a.keep:
                shutil.rmtree(out) if out.is_dir() else out.unlink()
    finally:
        if not a.keep and not a.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
