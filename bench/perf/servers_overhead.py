#!/usr/bin/env python3
"""The cost of tracing the storage servers (issue 14): HPIO and mpi-io-test on the GlusterFS
lab (scripts/gluster-lab.sh, one brick), the brick daemon traced in server mode against the
same daemon untraced; the clients are not traced in either. Two figures per benchmark: the
application's throughput, and the brick daemon's CPU time (its threads' run time, ns, from
/proc/PID/task/*/schedstat) per MiB the benchmark moved (written, and read back for mpi-io-test), which the machine's load
moves much less. Each is the median over --rounds rounds. A benchmark that reports figures; no
assertion. Needs root.

One lab serves every round: its daemons preload a link that points at a runtime or at an
empty library, and `gluster-lab.sh restart` starts the brick daemon anew after the link has
changed, so a switch costs a volume restart, not a lab. Each round runs every variant
(untraced, then each --runtime) once, starting with another one each round, so that a drift
of the machine's load falls on all alike; after a restart a first run of each benchmark warms
the new daemon and is not measured. glusterd, the management daemon, stays traced throughout
(it is not on the data path).

usage: bench/perf/servers_overhead.py [--rounds 7] [--ranks 4] [--hpio-iterations 8] [--lab DIR]
                                      [--runtime LIB]..."""
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
BIN = ROOT / "build" / "bin"
RUNTIME = ROOT / "build" / "lib" / "libpioscope-posix.so"
LAB = ROOT / "scripts" / "gluster-lab.sh"
# The name the lab script preloads from PIOSCOPE_LIB_DIR.
PRELOAD_NAME = "libpioscope-posix.so"


def benchmarks(hpio_iterations):
    """(name, binary, arguments, phases whose throughput is reported and whose bytes count)."""
    return [
        ("hpio independent 32 B x 8192", "pioscope-hpio",
         ["--region-count", "8192", "--iterations", str(hpio_iterations)], ("write",)),
        ("mpi-io-test 16 x 1 MiB blocks", "pioscope-mpi-io-test",
         ["--blocks", "16", "--block-size", "1M", "--iterations", "1", "--no-verify"],
         ("write", "read")),
    ]


def lab(*args, env=None):
    subprocess.run([str(LAB), *map(str, args)], check=True, stdout=subprocess.DEVNULL, env=env)


def brick_pid():
    out = subprocess.run(["pgrep", "-x", "glusterfsd"], capture_output=True, text=True).stdout
    pids = out.split()
    if len(pids) != 1:
        raise SystemExit(f"servers_overhead.py: expected one glusterfsd, found {pids or 'none'}")
    return int(pids[0])


def cpu_seconds(pid):
    """CPU time of the process's threads, to the nanosecond: the sum of their run times
    (/proc/PID/task/TID/schedstat). /proc/PID/stat counts in clock ticks (10 ms), a few
    percent of one HPIO run's quarter second of daemon CPU. A thread that ended between two
    readings drops out; a brick daemon's threads live as long as it does."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended meanwhile
    return total / 1e9


def run(binary, args, phases, ranks, path):
    """One run: the throughput of each phase and the brick daemon's CPU seconds per MiB moved
    (the phases' bytes, every iteration)."""
    pid = brick_pid()
    before = cpu_seconds(pid)
    out = subprocess.run(["mpiexec", "-n", str(ranks), str(BIN / binary), "--json",
                          "--path", str(path), *args],
                         check=True, capture_output=True, text=True).stdout
    cpu = cpu_seconds(pid) - before
    result = json.loads(out)
    moved = result["aggregate_bytes"] * result["iterations_done"] * len(phases)
    figures = {phase: result[phase]["mean_throughput_bytes_per_s"] for phase in phases}
    figures["cpu_ms_per_mib"] = 1000 * cpu / (moved / 2**20)
    return figures


def switch(link, target, lab_dir, env):
    """The brick daemon restarted with `target` preloaded."""
    tmp = link.with_suffix(".new")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    tmp.replace(link)
    lab("restart", "--dir", lab_dir, env=env)


def loadavg():
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7,
                    help="rounds, each running every variant once (default 7)")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--hpio-iterations", type=int, default=8,
                    help="HPIO iterations per run (default 8)")
    ap.add_argument("--lab", type=Path, default=None, help="the lab's directory (default: a new "
                    "temporary one, removed at the end)")
    ap.add_argument("--runtime", type=Path, action="append",
                    help="a tracer the traced daemon preloads (default build/lib/"
                    "libpioscope-posix.so); repeated, each is a variant of its own, to compare "
                    "two builds in the same rounds")
    a = ap.parse_args()
    runtimes = [r.resolve() for r in a.runtime or [RUNTIME]]
    for runtime in runtimes:
        if not runtime.exists():
            raise SystemExit(f"servers_overhead.py: {runtime} is missing: run `make all` first")
    own_lab = a.lab is None
    lab_dir = (a.lab or Path(tempfile.mkdtemp(prefix="pioscope-servers-overhead-"))).resolve()
    # The daemons preload libpioscope-posix.so of this directory: a link to a runtime (traced)
    # or to an empty library (untraced).
    libs = lab_dir / "preload"
    libs.mkdir(parents=True, exist_ok=True)
    empty = libs / "empty.so"
    subprocess.run(["cc", "-shared", "-o", str(empty), "-x", "c", "/dev/null"], check=True)
    link = libs / PRELOAD_NAME
    link.unlink(missing_ok=True)
    link.symlink_to(runtimes[0])
    env = dict(os.environ, PIOSCOPE_LIB_DIR=str(libs))
    marks = benchmarks(a.hpio_iterations)
    variants = [empty, *runtimes]
    # Column names: untraced, traced (or traced1, traced2, ... for several runtimes).
    names = {empty: "untraced", **{r: "traced" + (str(i + 1) if len(runtimes) > 1 else "")
                                   for i, r in enumerate(runtimes)}}
    runs = {v: [] for v in variants}
    load_start = loadavg()
    try:
        lab("up", "--dir", lab_dir, env=env)
        for r in range(a.rounds):
            # Each round starts with another variant, so that a drift of the machine's load
            # falls on all alike.
            for v in variants[r % len(variants):] + variants[:r % len(variants)]:
                switch(link, v, lab_dir, env)
                target = lab_dir / "mnt" / "bench.dat"
                # A first run warms the new daemon (its memory pools, inode tables), unmeasured.
                for name, binary, args, phases in marks:
                    run(binary, args, phases, a.ranks, target)
                runs[v].append({name: run(binary, args, phases, a.ranks, target)
                                for name, binary, args, phases in marks})
                print(f"  round {r + 1}/{a.rounds} {names[v]}: "
                      + ", ".join(f"{name}: {fig['cpu_ms_per_mib']:.1f} ms/MiB"
                                  for name, fig in runs[v][-1].items())
                      + f" (load {loadavg()})", file=sys.stderr)
    finally:
        lab("down", "--dir", lab_dir, env=env)
        if own_lab:
            shutil.rmtree(lab_dir, ignore_errors=True)
    print(f"brick daemon traced vs untraced, GlusterFS lab (1 brick), {a.ranks} ranks, median of "
          f"{a.rounds} rounds; load average {load_start} at the start, {loadavg()} at the end")
    for runtime in runtimes:
        print(f"  {names[runtime]}: {runtime}")
    head = "".join(f" {names[v]:>12}" for v in variants)
    ratios = "".join(f" {names[v] + '/untr.':>14}" for v in runtimes)
    print(f"{'benchmark':44}{head}{ratios}")
    for name, _, _, phases in marks:
        for figure in (*phases, "cpu_ms_per_mib"):
            values = [[one[name][figure] for one in runs[v]] for v in variants]
            med = [statistics.median(vs) for vs in values]
            scale, unit = (1, "ms CPU/MiB") if figure == "cpu_ms_per_mib" else (2**-20, "MiB/s")
            what = f"{name}, {'daemon CPU' if figure == 'cpu_ms_per_mib' else figure}"
            print(f"{what:44}" + "".join(f" {m * scale:12.2f}" for m in med)
                  + "".join(f" {m / med[0]:14.3f}" for m in med[1:]) + f"  {unit}")
            # The rounds' spread: at a load of 10 and more it is wider than the tracer's cost.
            print(f"{'  (min-max of the rounds)':44}"
                  + "".join(f" {f'{min(vs) * scale:.1f}-{max(vs) * scale:.1f}':>12}"
                            for vs in values))


if __name__ == "__main__":
    main()
