#!/usr/bin/env python3
"""The cost of tracing the storage servers (issue 14): HPIO and mpi-io-test throughput on the
GlusterFS lab (scripts/gluster-lab.sh, one brick), the servers traced in server mode against
the same servers untraced; the clients are not traced in either. Median of --repeats rounds,
traced and untraced alternating, each on a freshly started lab (4 ranks). A benchmark that reports figures; no assertion. Needs root.

usage: bench/perf/servers_overhead.py [--repeats 5] [--ranks 4] [--lab DIR]"""
import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "build" / "bin"
LAB = ROOT / "scripts" / "gluster-lab.sh"

# (name, binary, arguments, phase whose throughput counts)
BENCHMARKS = [
    ("hpio independent 32 B x 8192, write", "pioscope-hpio",
     ["--region-count", "8192", "--iterations", "1"], "write"),
    ("mpi-io-test 16 x 1 MiB blocks, write", "pioscope-mpi-io-test",
     ["--blocks", "16", "--block-size", "1M", "--iterations", "1", "--no-verify"], "write"),
    ("mpi-io-test 16 x 1 MiB blocks, read", "pioscope-mpi-io-test",
     ["--blocks", "16", "--block-size", "1M", "--iterations", "1", "--no-verify"], "read"),
]


def lab(*args):
    subprocess.run([str(LAB), *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def throughput(binary, args, phase, ranks, path):
    out = subprocess.run(["mpiexec", "-n", str(ranks), str(BIN / binary), "--json",
                          "--path", str(path), *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)[phase]["mean_throughput_bytes_per_s"]


def one_round(lab_dir, traced, ranks):
    """Each benchmark once on a fresh lab, its servers traced or not."""
    lab("up", "--dir", lab_dir, *([] if traced else ["--untraced"]))
    try:
        return {name: throughput(binary, args, phase, ranks, lab_dir / "mnt" / "bench.dat")
                for name, binary, args, phase in BENCHMARKS}
    finally:
        lab("down", "--dir", lab_dir)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--lab", type=Path, default=None)
    a = ap.parse_args()
    lab_dir = a.lab or Path(tempfile.mkdtemp(prefix="pioscope-servers-overhead-"))
    # Rounds alternate untraced and traced, so that a change of the machine's load meanwhile
    # falls on both alike.
    runs = {False: [], True: []}
    for _ in range(a.repeats):
        for traced in (False, True):
            runs[traced].append(one_round(lab_dir, traced, a.ranks))
    untraced, traced = ({name: statistics.median(r[name] for r in runs[t]) for name, *_ in BENCHMARKS}
                        for t in (False, True))
    print(f"servers traced vs untraced, GlusterFS lab (1 brick), {a.ranks} ranks, "
          f"median of {a.repeats}")
    print(f"{'benchmark':40} {'untraced MiB/s':>15} {'traced MiB/s':>13} {'overhead':>9}")
    for name, *_ in BENCHMARKS:
        u, t = untraced[name] / 2**20, traced[name] / 2**20
        print(f"{name:40} {u:15.2f} {t:13.2f} {100 * (u - t) / u:8.1f}%")


if __name__ == "__main__":
    main()
