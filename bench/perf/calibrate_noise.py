#!/usr/bin/env python3
"""How far `pioscope calibrate`'s fit error can fall on this machine (issue 15; a figure, not a
test): the fit's median error set beside the run-to-run spread of the measurements themselves.

Runs `pioscope calibrate --save-runs` twice back to back (or reads two runs files given with
--runs), prints each fit's median and worst error (the last line of calibrate's table), then
matches the two measurements row by row (ping-pong sizes, storage runs by mode, pattern, size
and ranks, metadata runs by operation and ranks) and prints the median and worst of
|second - first| / first per group and over all rows. A model fitted to one run cannot be
expected nearer the other than this spread: it is the floor under the fit's error at the
machine's current load.

usage: bench/perf/calibrate_noise.py [--dir /tmp] [--runs FIRST.json SECOND.json] [--keep DIR]"""
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


def calibrate(out: Path, scratch: str, tag: str) -> Path:
    """One full calibration; returns its runs file and prints the fit's summary line."""
    runs = out / f"runs-{tag}.json"
    env = dict(os.environ, PIOSCOPE_BIN_DIR=str(ROOT / "build" / "bin"))
    cmd = [str(PIOSCOPE), "calibrate", "--force", "-o", str(out / f"model-{tag}.toml"),
           "--dir", scratch, "--save-runs", str(runs)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"calibrate failed: {p.stderr.strip()}")
    summary = [line for line in p.stdout.splitlines() if "median error" in line]
    print(f"fit {tag}: {summary[-1] if summary else '(no summary line)'}")
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
    ap.add_argument("--runs", nargs=2, type=Path, metavar="JSON", help="two --save-runs files instead of measuring")
    ap.add_argument("--keep", type=Path, help="keep the models and runs files in this directory")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        first, second = args.runs or (calibrate(out, args.dir, "1"), calibrate(out, args.dir, "2"))
        a, b = rows(first), rows(second)
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
