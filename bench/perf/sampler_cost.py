#!/usr/bin/env python3
"""The counters sampler's own CPU cost (issue 14 item 4): `pioscope sample` at 10 Hz over the
node and PROCS sleeping processes (a small job's ranks), found by name each round (a scan of
/proc, as `pioscope run` finds the job's processes), as a share of one core. Each rep runs
the sampler for SECONDS and reads its user + system time (wait4); reps alternate with a
baseline sampler that takes one round only (interval longer than the rep: process start,
first round and exit), whose CPU is subtracted. Reports the median over the reps. Goal: under
0.5 % of one core. A benchmark that reports a figure; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/sampler_cost.py [--reps 5] [--seconds 5] [--interval 100ms] [--procs 4]"""
import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"


def sampler_cpu(out: Path, interval: str, name: str, seconds: float) -> float:
    """CPU seconds (user + system) of one sampler run of `seconds`."""
    args = [str(PIOSCOPE), "sample", "--out", str(out), "--interval", interval, "--match", name]
    proc = subprocess.Popen(args)
    time.sleep(seconds)
    proc.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"sampler exited with status {status}")
    return usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--interval", default="100ms")
    ap.add_argument("--procs", type=int, default=4)
    a = ap.parse_args()
    sleepers = [subprocess.Popen(["sleep", "3600"]) for _ in range(a.procs)]
    shares = []
    try:
        with tempfile.TemporaryDirectory() as d:
            for rep in range(a.reps):
                base = sampler_cpu(Path(d) / f"base{rep}", "3600s", "sleep", a.seconds)
                run = sampler_cpu(Path(d) / f"run{rep}", a.interval, "sleep", a.seconds)
                share = max(run - base, 0.0) / a.seconds
                shares.append(share)
                print(f"rep {rep}: sampler {run * 1e3:.1f} ms CPU, baseline {base * 1e3:.1f} ms, "
                      f"over {a.seconds:.1f} s: {share * 100:.3f} % of one core")
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
    n_proc = len(os.listdir("/proc"))
    print(f"sampler at {a.interval}, node + {a.procs} processes ({n_proc} entries in /proc): "
          f"median {statistics.median(shares) * 100:.3f} % of one core "
          f"(min {min(shares) * 100:.3f} %, max {max(shares) * 100:.3f} %, {a.reps} reps)")


if __name__ == "__main__":
    main()
