#!/usr/bin/env python3
"""Accuracy of the simulator on this machine (issue 4's closing figure, a benchmark, not a test).

Calibrates (or takes --system), then for each HPIO configuration (independent and collective,
32- and 1024-byte regions, cb_buffer_size 0.5, 4, 16 and 64 MiB for collective) traces the
real run with 4 ranks --runs times and simulates each trace twice:
  - replay: `pioscope simulate --trace OBSERVED`, the traced calls replayed on the model;
  - workload: `pioscope simulate --workload hpio:...`, the pattern generated from its description.
With 4 ranks on 2 cores a run's calls vary by tens of percent from run to run (scheduling), so
the reference is the median over the runs: per call index and rank, the median observed and the
median replayed duration. Per configuration it prints the median and worst relative error of
the MPI-IO write calls (matched per call index; within a call, ranks in order of duration,
since which rank takes a contended lock first is the scheduler's choice), the error of the whole write phase (sum
over calls of the slowest rank's call) for both simulations, the spread of the observed phase
over the runs, and whether the ranking of the configurations by write time is the same as
observed: strictly, and with configurations whose observed phases overlap across runs counted
as tied (their order is within the machine's noise).

    python3 bench/perf/sim_accuracy.py [--system FILE] [--iterations 3] [--runs 3] [--keep DIR]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
HPIO = ROOT / "build" / "bin" / "pioscope-hpio"
RANKS = 4
MIB = 1 << 20
WRITES = ("MPI_File_write", "MPI_File_write_all")


def configurations():
    for size in (32, 1024):
        yield {"mode": "independent", "region_size": size, "cb_buffer_size": None}
        for cb in (MIB // 2, 4 * MIB, 16 * MIB, 64 * MIB):
            yield {"mode": "collective", "region_size": size, "cb_buffer_size": cb}


def label(c):
    cb = "" if c["cb_buffer_size"] is None else f" cb={c['cb_buffer_size'] / MIB:g}M"
    return f"{c['mode']:<11} {c['region_size']:>4} B{cb}"


def run(*cmd):
    result = subprocess.run([str(x) for x in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def write_calls(trace: Path, funcs=WRITES):
    """{rank: [durations of top-level calls of `funcs` (MPI-IO writes), in order]} of a trace
    store."""
    t = pq.read_table(trace / "events.parquet",
                      columns=["rank", "start_ns", "duration_ns", "func", "depth"])
    t = t.filter(pc.and_(pc.is_in(pc.cast(t["func"], "string"),
                                  value_set=pa.array(list(funcs))),
                         pc.equal(t["depth"], 0)))
    calls = {}
    for rank, start, dur in sorted(zip(t["rank"].to_pylist(), t["start_ns"].to_pylist(),
                                       t["duration_ns"].to_pylist())):
        calls.setdefault(rank, []).append(dur)
    return calls


def phase_time(calls):
    """Write time of the job: per call index, the slowest rank; summed over calls."""
    n = min(len(v) for v in calls.values())
    return sum(max(v[i] for v in calls.values()) for i in range(n))


def by_duration(calls):
    """The same calls with, per call index, the ranks' durations in increasing order: which
    rank gets a contended lock (a data-sieving write) first is the scheduler's choice, not the
    program's, so a call is compared as the set of its ranks' durations."""
    ranks = sorted(calls)
    n = min(len(calls[k]) for k in ranks)
    cols = [sorted(calls[k][j] for k in ranks) for j in range(n)]
    return {k: [cols[j][i] for j in range(n)] for i, k in enumerate(ranks)}


def median_calls(runs):
    """Per rank and call index, the median duration over runs ({rank: [durations]} each)."""
    ranks = set.intersection(*(set(r) for r in runs))
    return {k: [statistics.median(r[k][j] for r in runs)
                for j in range(min(len(r[k]) for r in runs))] for k in ranks}


def ranking_right(rows, key, tied):
    """Same order by `key` as by the observed phase; with `tied`, pairs whose observed
    phases overlap across runs may come in either order."""
    for a in rows:
        for b in rows:
            if a["observed_s"] < b["observed_s"] and a[key] > b[key]:
                overlap = a["observed_max_s"] >= b["observed_min_s"]
                if not (tied and overlap):
                    return False
    return True


def rel(expected, observed):
    return abs(expected - observed) / observed if observed else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", help="model file (default: run `pioscope calibrate` first)")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3, help="traced runs per configuration")
    ap.add_argument("--keep", help="keep traces in this directory")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="pioscope-accuracy-"))
    work.mkdir(parents=True, exist_ok=True)
    system = args.system
    if system is None:
        system = work / "system.toml"
        print("calibrating...", flush=True)
        run(PIOSCOPE, "calibrate", "-o", system, "--force")
    rows = []
    for i, c in enumerate(configurations()):
        wl = work / f"workload-{i}"
        hints = [] if c["cb_buffer_size"] is None else ["--hint", f"cb_buffer_size={c['cb_buffer_size']}"]
        observed, replayed = [], []
        for n in range(args.runs):
            obs, rep = work / f"observed-{i}-{n}", work / f"replay-{i}-{n}"
            run(PIOSCOPE, "run", "-n", RANKS, "-o", obs, "--force", "--", HPIO,
                "--region-size", c["region_size"], "--mode", c["mode"],
                "--iterations", args.iterations, "--path", work / "hpio.dat", *hints)
            run(PIOSCOPE, "simulate", "--trace", obs, "--system", system, "-o", rep, "--force")
            observed.append(write_calls(obs))
            replayed.append(write_calls(rep))
        sets = [] if c["cb_buffer_size"] is None else ["--set", f"cb_buffer_size={c['cb_buffer_size']}"]
        spec = (f"hpio:ranks={RANKS},region_size={c['region_size']},region_count=32768,"
                f"region_space=128,mode={c['mode']},iterations={args.iterations}")
        run(PIOSCOPE, "simulate", "--workload", spec, "--system", system, *sets, "-o", wl,
            "--force")
        o = median_calls([by_duration(x) for x in observed])
        r = median_calls([by_duration(x) for x in replayed])
        w = write_calls(wl)
        errors = [rel(r[k][j], o[k][j]) for k in o if k in r
                  for j in range(min(len(o[k]), len(r[k])))]
        phases = [phase_time(x) / 1e9 for x in observed]
        rows.append({"config": label(c), "observed_s": phase_time(o) / 1e9,
                     "observed_min_s": min(phases), "observed_max_s": max(phases),
                     "replay_s": phase_time(r) / 1e9, "workload_s": phase_time(w) / 1e9,
                     "median_error": statistics.median(errors) if errors else None,
                     "worst_error": max(errors) if errors else None, "calls": len(errors)})
        x = rows[-1]
        print(f"{x['config']:<24} observed {x['observed_s']:7.3f} s ({x['observed_min_s']:.3f}-"
              f"{x['observed_max_s']:.3f})  replay {x['replay_s']:7.3f} s  workload "
              f"{x['workload_s']:7.3f} s  per-call error median {x['median_error']:.1%} worst "
              f"{x['worst_error']:.1%} ({x['calls']} calls)", flush=True)
    for key in ("replay_s", "workload_s"):
        for size in (32, 1024):
            sub = [x for x in rows if f" {size} B" in x["config"]]
            strict, tied = ranking_right(sub, key, False), ranking_right(sub, key, True)
            print(f"ranking of the {size}-byte configurations by {key[:-2]}: "
                  f"{'right' if strict else 'WRONG'} strictly, "
                  f"{'right' if tied else 'WRONG'} with ties within the observed spread")
    print(f"median of the per-configuration median errors: "
          f"{statistics.median(x['median_error'] for x in rows):.1%}")
    print(f"whole-phase error, replay: median "
          f"{statistics.median(rel(x['replay_s'], x['observed_s']) for x in rows):.1%}; "
          f"workload: median {statistics.median(rel(x['workload_s'], x['observed_s']) for x in rows):.1%}")
    (work / "accuracy.json").write_text(json.dumps(rows, indent=1))
    print(f"details: {work / 'accuracy.json'}")


if __name__ == "__main__":
    main()
