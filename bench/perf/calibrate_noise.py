#!/usr/bin/env python3
"""How far `pioscope calibrate`'s fit error can fall on this machine (issue 15; a figure, not a
test): the fit's median error set beside the run-to-run spread of the measurements themselves.

Runs `pioscope calibrate --save-runs` --count times back to back (2; or reads the runs files
given with --runs), prints each fit's median and worst error (the last line of calibrate's
table) and that of the fit of every run's per-measurement median (`calibrate --from-runs` of
them all: the model of what the machine usually does), then matches the first two runs' measurements row by row
(ping-pong sizes, storage runs by mode, pattern, size and ranks, metadata runs by operation
and ranks) and prints the median and worst of |second - first| / first per group and over all
rows. A model fitted to one run cannot be expected nearer the other than this spread: it is
the floor under the fit's error at the machine's current load.

usage: bench/perf/calibrate_noise.py [--dir /tmp] [--count 2 | --runs A.json B.json ...] [--keep DIR]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"


def calibrate(out: Path, tag: str, *args) -> None:
    """One `pioscope calibrate ARGS` writing model-TAG.toml; prints the fit's summary line."""
    env = dict(os.environ, PIOSCOPE_BIN_DIR=str(ROOT / "build" / "bin"))
    cmd = [str(PIOSCOPE), "calibrate", "--force", "-o", str(out / f"model-{tag}.toml"),
           *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"calibrate failed: {p.stderr.strip()}")
    summary = [line for line in p.stdout.splitlines() if "median error" in line]
    print(f"fit {tag}: {summary[-1] if summary else '(no summary line)'}", flush=True)


def measure(out: Path, scratch: str, tag: str) -> Path:
    """One full calibration; returns its runs file."""
    runs = out / f"runs-{tag}.json"
    calibrate(out, tag, "--dir", scratch, "--save-runs", runs)
    return runs


def rows(path: Path) -> dict:
    """Measured values by (group, row name) from a --save-runs file."""
    m = json.loads(path.read_text())
    out = {("ping-pong", str(p["size"])): p["one_way_s"] for p in m["net"]["points"]}
    for r in m["storage"]["runs"]:
        out[("storage", f"{r['mode']} {r['pattern']} {r['size']} x{r['concurrency']}")] = r["bytes_per_s"]
    for r in m["storage"]["metadata"]:
        out[("metadata", f"{r['op']} x{r['concurrency']}")] = r["ops_per_s"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp", help="scratch directory calibrate measures")
    ap.add_argument("--count", type=int, default=2, help="calibrations to run (at least 2)")
    ap.add_argument("--runs", nargs="+", type=Path, metavar="JSON",
                    help="--save-runs files (at least 2) instead of measuring")
    ap.add_argument("--keep", type=Path, help="keep the models and runs files in this directory")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        runs = args.runs or [measure(out, args.dir, str(n + 1)) for n in range(args.count)]
        if len(runs) < 2:
            ap.error("the spread needs at least 2 runs")
        if args.runs:
            for n, path in enumerate(runs):
                calibrate(out, str(n + 1), "--from-runs", path)
        calibrate(out, "median", "--from-runs", *runs)
        a, b = rows(runs[0]), rows(runs[1])
    common = [k for k in a if k in b and a[k] > 0]
    spread = {k: abs(b[k] - a[k]) / a[k] for k in common}
    print(f"{'rows':<10} {'count':>6} {'median':>8} {'worst':>8}  worst row")
    for group in ("ping-pong", "storage", "metadata", None):
        ks = [k for k in common if group is None or k[0] == group]
        if not ks:
            continue
        worst = max(ks, key=spread.get)
        print(f"{group or 'all':<10} {len(ks):>6} {100 * statistics.median(spread[k] for k in ks):>7.1f}% "
              f"{100 * spread[worst]:>7.0f}%  {worst[0]} {worst[1]}")
    print("run-to-run spread of the measurements: |second - first| / first")


if __name__ == "__main__":
    main()
