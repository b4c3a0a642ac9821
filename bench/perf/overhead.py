#!/usr/bin/env python3
"""The tracer's cost, measured traced against untraced in the same run (median of repeats):
ns added per POSIX call (with the cost of the record clock, rdtsc, and of CLOCK_MONOTONIC
broken out: a call reads the clock twice), ns added per H5Dwrite of a small selection (the
HDF5 layer and the POSIX calls beneath), the overhead on the bundled benchmarks (4 ranks: HPIO
32-byte regions independent and collective, HPIO 1 KiB regions, mpi-io-test), and bytes per
event raw and in the merged store (every file of it). A benchmark that reports figures; no
assertion.

usage: bench/perf/overhead.py [--repeats 7] [--calls 2000000] [--h5-writes 100000]
                              [--bench-repeats 7] [--only posix|h5dwrite|benchmarks]"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
LIB_MPI = BUILD / "lib" / "libpioscope.so"
LIB_POSIX = BUILD / "lib" / "libpioscope-posix.so"
PIOSCOPE = BUILD / "bin" / "pioscope"
HPIO = BUILD / "bin" / "pioscope-hpio"


def traced_env(lib: Path, raw_dir: Path) -> dict:
    env = dict(os.environ)
    env["LD_PRELOAD"] = str(lib)
    env["PIOSCOPE_RAW_DIR"] = str(raw_dir)
    return env


def raw_bytes(raw_dir: Path) -> int:
    return sum(p.stat().st_size for p in raw_dir.glob("*.praw"))


def posix_call_cost(work: Path, calls: int, repeats: int) -> dict:
    """ns the tracer adds to a one-byte pwrite to /dev/shm: the probe alternates blocks of
    traced and untraced calls in one process; the raw files go to /dev/shm too."""
    probe = work / "pwrite_probe"
    subprocess.run(["cc", "-O2", "-o", probe, Path(__file__).with_name("pwrite_probe.c")],
                   check=True)
    shm = Path(tempfile.mkdtemp(prefix="pioscope-perf-", dir="/dev/shm"))
    added, rdtsc, monotonic, raw_per_event = [], [], [], []
    try:
        for i in range(repeats):
            raw_dir = shm / f"raw-{i}"
            out = subprocess.run([probe, str(calls), shm / "target.bin"], capture_output=True,
                                 text=True, check=True, env=traced_env(LIB_POSIX, raw_dir))
            traced, plain, rdtsc_ns, monotonic_ns = map(float, out.stdout.split())
            added.append(traced - plain)
            rdtsc.append(rdtsc_ns)
            monotonic.append(monotonic_ns)
            raw_per_event.append(raw_bytes(raw_dir) / calls)
            shutil.rmtree(raw_dir)
            print(f"  posix repeat {i + 1}/{repeats}: untraced {plain:.1f} ns/call, traced "
                  f"{traced:.1f} ns/call, rdtsc {rdtsc_ns:.1f} ns", file=sys.stderr)
    finally:
        shutil.rmtree(shm)
    median_added, median_rdtsc = statistics.median(added), statistics.median(rdtsc)
    return {"calls": calls, "repeats": repeats,
            "added_ns_per_call_median": median_added,
            "added_ns_per_call_all": [round(a, 2) for a in added],
            "rdtsc_ns_median": median_rdtsc,
            "clock_monotonic_ns_median": statistics.median(monotonic),
            "added_ns_beyond_two_clock_reads": median_added - 2 * median_rdtsc,
            "raw_bytes_per_event": statistics.median(raw_per_event)}


def h5dwrite_cost(work: Path, writes: int, repeats: int) -> dict:
    """ns the tracer adds to an H5Dwrite of one row of 16 doubles (h5dwrite_probe.c, HDF5's
    POSIX driver, file and raw files in /dev/shm): median of traced runs minus median of
    untraced runs, the two alternating."""
    probe = work / "h5dwrite_probe"
    subprocess.run(["h5pcc.mpich", "-shlib", "-O2", "-o", probe,
                    Path(__file__).with_name("h5dwrite_probe.c")], check=True)
    shm = Path(tempfile.mkdtemp(prefix="pioscope-perf-", dir="/dev/shm"))
    traced, plain = [], []
    try:
        for i in range(repeats):
            target = shm / "probe.h5"
            run = [probe, str(writes), target]
            plain.append(float(subprocess.run(run, capture_output=True, text=True,
                                              check=True).stdout))
            raw_dir = shm / f"raw-{i}"
            traced.append(float(subprocess.run(run, capture_output=True, text=True, check=True,
                                               env=traced_env(LIB_MPI, raw_dir)).stdout))
            shutil.rmtree(raw_dir)
            print(f"  h5dwrite repeat {i + 1}/{repeats}: untraced {plain[-1]:.0f} ns/write, "
                  f"traced {traced[-1]:.0f} ns/write", file=sys.stderr)
    finally:
        shutil.rmtree(shm)
    return {"writes": writes, "repeats": repeats,
            "untraced_ns_per_write_median": statistics.median(plain),
            "traced_ns_per_write_median": statistics.median(traced),
            "added_ns_per_write": statistics.median(traced) - statistics.median(plain)}


# The bundled benchmarks issue 19 measures the tracer on (4 ranks): the argv after the program
# and the phases whose time_s are summed. Many iterations per run: 4 ranks on 2 cores make
# single iterations jitter by ~15%.
MPI_IO_TEST = BUILD / "bin" / "pioscope-mpi-io-test"
BENCHMARKS = {
    "hpio-32B-independent": (HPIO, ["--region-size", "32", "--mode", "independent",
                                    "--iterations", "40"], ("write",)),
    "hpio-32B-collective": (HPIO, ["--region-size", "32", "--mode", "collective",
                                   "--iterations", "40"], ("write",)),
    "hpio-1KiB-independent": (HPIO, ["--region-size", "1024", "--region-count", "4096",
                                     "--mode", "independent", "--iterations", "40"],
                              ("write",)),
    "mpi-io-test": (MPI_IO_TEST, ["--blocks", "64", "--iterations", "10"], ("write", "read")),
}


def benchmark_seconds(name: str, path: Path, env=None) -> float:
    """Seconds of I/O one run of a bundled benchmark reports: the sum of its timed iterations
    of the phases measured (slowest rank; HPIO: open, write, sync, close)."""
    program, argv, phases = BENCHMARKS[name]
    out = subprocess.run(["mpiexec", "-n", "4", program, *argv, "--path", path, "--json"],
                         check=True, capture_output=True, text=True, env=env).stdout
    result = json.loads(out)
    return sum(sum(result[phase]["time_s"]) for phase in phases)


def store_bytes(store: Path) -> int:
    """Every file of a trace store: events, the small tables, meta.json and the viewer index."""
    return sum(p.stat().st_size for p in store.rglob("*") if p.is_file())


def benchmark_overhead(work: Path, name: str, repeats: int) -> dict:
    """Throughput traced against untraced, runs alternating; the tracer's overhead is the
    median of traced/untraced - 1 (time ratio, so throughput drops by overhead/(1+overhead))."""
    ratios = []
    for i in range(repeats):
        raw_dir = work / f"raw-{name}-{i}"
        plain = benchmark_seconds(name, work / "bench.dat")
        traced = benchmark_seconds(name, work / "bench.dat", traced_env(LIB_MPI, raw_dir))
        ratios.append(traced / plain - 1.0)
        print(f"  {name} repeat {i + 1}/{repeats}: untraced {plain:.3f} s, traced "
              f"{traced:.3f} s", file=sys.stderr)
        if i == 0:
            store = work / f"store-{name}"
            subprocess.run([PIOSCOPE, "merge", raw_dir, "-o", store], check=True,
                           stdout=subprocess.DEVNULL)
            events = json.loads((store / "meta.json").read_text())["counts"]["events"]
            store_per_event = store_bytes(store) / events
            raw_per_event = raw_bytes(raw_dir) / events
            shutil.rmtree(store)
        shutil.rmtree(raw_dir)
    return {"benchmark": name, "repeats": repeats,
            "overhead_percent_median": 100 * statistics.median(ratios),
            "overhead_percent_all": [round(100 * r, 2) for r in ratios],
            "events": events, "raw_bytes_per_event": raw_per_event,
            "store_bytes_per_event": store_per_event}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="POSIX probe pairs (default 7)")
    parser.add_argument("--calls", type=int, default=2_000_000,
                        help="pwrite calls per probe run (default 2000000)")
    parser.add_argument("--h5-writes", type=int, default=100_000,
                        help="H5Dwrite calls per probe run (default 100000)")
    parser.add_argument("--bench-repeats", type=int, default=7,
                        help="traced/untraced pairs per bundled benchmark (default 7)")
    parser.add_argument("--only", choices=["posix", "h5dwrite", "benchmarks"],
                        help="measure this figure alone")
    args = parser.parse_args()
    for needed in (LIB_MPI, LIB_POSIX, PIOSCOPE, HPIO, MPI_IO_TEST):
        if not needed.exists():
            print(f"overhead.py: {needed} is missing: run `make all` first", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="pioscope-perf-") as tmp:
        work = Path(tmp)
        figures = {"posix": lambda: posix_call_cost(work, args.calls, args.repeats),
                   "h5dwrite": lambda: h5dwrite_cost(work, args.h5_writes, args.repeats),
                   "benchmarks": lambda: [benchmark_overhead(work, name, args.bench_repeats)
                                          for name in BENCHMARKS]}
        report = {name: measure() for name, measure in figures.items()
                  if args.only in (None, name)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
