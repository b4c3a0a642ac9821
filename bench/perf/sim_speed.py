#!/usr/bin/env python3
"""How fast the simulator's engine runs (issue 4: >= 5,000,000 simulated events per second; the
HPIO collective pattern with 10,000 simulated ranks in <= 10 s). A benchmark that reports
figures; no assertion.

Builds and runs crates/pioscope-sim/examples/engine_speed.rs (the engine alone, with a recorder
that only counts, so the trace writer's cost is not in the figure) on:
  - messages: RANKS ranks, ROUNDS rounds of Isend/Irecv to 4 neighbours each way + WaitAll;
  - messages+io: the same with a 1 MiB write per rank and round (servers, caches, disks);
  - any --workload SPEC given (e.g. hpio:ranks=10000,region_count=1024,mode=collective,op=write).

Each case runs --repeat times (default 3); the row is the run with the median engine time.
--baseline EXE times an earlier build of the same example too (e.g. one copied before a change):
its runs interleave with the current build's, each case gets a second row for it, and the
ratios of the medians of build + engine time and of CPU time (current / baseline) end the case.
Columns: engine events, engine wall time, events/s, simulated time, the job build time (workload
generation: ROMIO's plans and ops), total = build + engine, the process's CPU time (user +
system, whole run: less sensitive than wall time to other jobs on the machine), MPI messages (those the aggregated
exchanges stand for included) and aggregated exchanges (dense two-phase exchanges simulated as
a whole, docs/MODEL.md "Aggregated exchange"). --set KEY=VALUE changes the model as in
`pioscope simulate` (e.g. aggregate_exchange_above=0: every exchange as messages).

usage: bench/perf/sim_speed.py [--ranks 10000] [--rounds 20] [--system pvfs2-2009]
                               [--workload SPEC ...] [--set KEY=VALUE ...] [--repeat 3]
                               [--no-build] [--baseline EXE]"""
import argparse
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "target" / "release" / "examples" / "engine_speed"


def build() -> None:
    cmd = ["cargo", "build", "--release", "-p", "pioscope-sim", "--example", "engine_speed"]
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        sys.exit("build failed")


def cpu_of_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(exe: Path, args: list) -> dict:
    before = cpu_of_children()
    p = subprocess.run([str(exe)] + args, capture_output=True, text=True)
    cpu = cpu_of_children() - before
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["killed"])[-1]}
    line = p.stdout.strip().splitlines()[-1]
    return dict(kv.split("=", 1) for kv in line.split()) | {"cpu_s": str(cpu)}


def median_run(runs: list) -> dict:
    """The run with the median engine time, or the first failure."""
    bad = [x for x in runs if "error" in x]
    return bad[0] if bad else sorted(runs, key=lambda x: float(x["wall_s"]))[len(runs) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--system", default="pvfs2-2009", help="preset or model file")
    ap.add_argument("--workload", action="append", default=[], help="a workload spec to time too")
    ap.add_argument("--set", action="append", default=[], help="a model override KEY=VALUE")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case (the median is shown)")
    ap.add_argument("--no-build", action="store_true", help="use the example binary as built")
    ap.add_argument("--baseline", help="an earlier build of the engine_speed example to time beside it")
    args = ap.parse_args()
    if not args.no_build:
        build()
    sets = [x for kv in args.set for x in ("--set", kv)]
    base = ["--ranks", str(args.ranks), "--system", args.system] + sets
    cases = [
        ("messages", base + ["--rounds", str(args.rounds), "--io", "0"]),
        ("messages+io", base + ["--rounds", str(max(1, args.rounds // 4)), "--io", str(1 << 20)]),
    ] + [(w, base + ["--workload", w]) for w in args.workload]
    print(
        f"{'case':<40} {'ranks':>7} {'events':>11} {'wall s':>8} {'events/s':>12} {'simulated s':>12} "
        f"{'build s':>8} {'total s':>8} {'cpu s':>7} {'messages':>13} {'exchanges':>9}"
    )
    exes = [("", EXAMPLE)] + ([(" (baseline)", Path(args.baseline))] if args.baseline else [])
    for name, a in cases:
        runs = {label: [] for label, _ in exes}
        for _ in range(max(1, args.repeat)):
            for label, exe in exes:  # interleaved, so drifts in machine load hit both alike
                runs[label].append(measure(exe, a))
        totals, cpus = {}, {}
        for label, _ in exes:
            r = median_run(runs[label])
            if "error" in r:
                print(f"{name + label:<40} failed: {r['error']}")
                continue
            totals[label] = statistics.median(float(x["build_s"]) + float(x["wall_s"]) for x in runs[label])
            cpus[label] = statistics.median(float(x["cpu_s"]) for x in runs[label])
            print(
                f"{name + label:<40} {r['ranks']:>7} {int(r['events']):>11,} {float(r['wall_s']):>8.2f} "
                f"{float(r['events_per_s']):>12,.0f} {float(r['simulated_s']):>12.3f} {float(r['build_s']):>8.2f} "
                f"{float(r['build_s']) + float(r['wall_s']):>8.2f} {cpus[label]:>7.2f} {int(r['messages']):>13,} "
                f"{int(r.get('exchanges', 0)):>9}"
            )
        if len(totals) == 2:
            wall = totals[""] / totals[" (baseline)"]
            cpu = cpus[""] / cpus[" (baseline)"]
            print(f"{'':<40} current / baseline (medians): build + engine {wall:.2f}, CPU {cpu:.2f}")
    print("target: >= 5,000,000 events/s; HPIO collective, 10,000 ranks: <= 10 s (build + engine)")


if __name__ == "__main__":
    main()
