#!/usr/bin/env python3
"""How `pioscope merge` scales with the events of one rank (issue 19: >= 3 million events/s on
a 2-core machine, memory bounded whatever a rank recorded). Traces `pwrite_probe` (one
process, N one-byte pwrites to /dev/shm) under libpioscope-posix.so for each size, then times
`pioscope merge RAW -o TRACE` and measures its peak RSS and CPU time (user + system: on a
loaded machine the wall time says more about the other jobs); the rate counts the events
merged (meta.json), which the tracer may record more of than N (the probe's libc path is
recorded too under this library). The merges of the sizes (and with `--baseline BIN`, of that
other pioscope binary, e.g. one built from main, on the same raw files) are interleaved and
repeated; medians are printed. With `--enclosed` the calls are made inside one region open
the whole run (`region_probe`): merge's worst case, every record waiting for the region's.
A benchmark that reports figures; no assertion.

Build first: make -C <repo> runtime cli
usage: bench/perf/merge_scale.py [--events 1M,10M] [--repeats 3] [--baseline BIN] [--enclosed]"""
import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
PIOSCOPE = BUILD / "bin" / "pioscope"
LIB_POSIX = BUILD / "lib" / "libpioscope-posix.so"
GNU_TIME = Path("/usr/bin/time")
PROBE_SRC = Path(__file__).with_name("pwrite_probe.c")
ENCLOSED_SRC = Path(__file__).with_name("region_probe.c")
INCLUDE = ROOT / "runtime" / "include"


def parse_count(s: str) -> int:
    s = s.strip().replace("_", "").replace(",", "")
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(s[-1:].lower(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def trace_probe(probe: Path, work: Path, events: int) -> Path:
    """A raw directory of one process that made `events` pwrite calls under the tracer."""
    raw = work / f"raw-{events}"
    env = {"LD_PRELOAD": str(LIB_POSIX), "PIOSCOPE_RAW_DIR": str(raw), "PATH": "/usr/bin:/bin"}
    subprocess.run([str(probe), str(events), str(work / "target.bin")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return raw


def run_merge(pioscope: Path, raw: Path, out: Path) -> tuple:
    """(wall s, events merged, peak RSS bytes, CPU s) of `pioscope merge RAW -o OUT`."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(GNU_TIME), "-v", str(pioscope), "merge", str(raw), "-o", str(out)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"merge failed ({p.returncode}): {p.stderr.strip()}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) * 1024
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([0-9.]+)", p.stderr).group(1))
              for kind in ("User", "System"))
    events = json.loads((out / "meta.json").read_text())["counts"]["events"]
    shutil.rmtree(out)
    return wall, events, rss, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", default="1M,10M", help="pwrite calls per size, comma-separated")
    ap.add_argument("--repeats", type=int, default=3, help="merges of each size (median printed)")
    ap.add_argument("--baseline", type=Path, help="another pioscope binary timed alike, interleaved")
    ap.add_argument("--enclosed", action="store_true",
                    help="make the calls inside one region open the whole run (region_probe.c)")
    args = ap.parse_args()
    binaries = {"this": PIOSCOPE}
    if args.baseline:
        binaries["baseline"] = args.baseline.resolve()
    for need in (PIOSCOPE, LIB_POSIX, GNU_TIME):
        if not need.exists():
            sys.exit(f"{need} is missing: run `make -C {ROOT} runtime cli` (and install GNU time)")
    sizes = [parse_count(s) for s in args.events.split(",")]
    work = Path(tempfile.mkdtemp(prefix="pioscope-merge-scale-", dir="/dev/shm"))
    try:
        probe = work / "pwrite_probe"
        source = ENCLOSED_SRC if args.enclosed else PROBE_SRC
        subprocess.run(["cc", "-O2", "-I", str(INCLUDE), "-o", str(probe), str(source), "-ldl"],
                       check=True)
        raws = {n: trace_probe(probe, work, n) for n in sizes}
        (work / "target.bin").unlink(missing_ok=True)
        runs = {(b, n): [] for b in binaries for n in sizes}
        for _ in range(max(1, args.repeats)):  # interleaved: every size sees the same load
            for n in sizes:
                for b, binary in binaries.items():
                    runs[b, n].append(run_merge(binary, raws[n], work / "trace"))
        for n in sizes:
            raw_mb = sum(f.stat().st_size for f in raws[n].iterdir()) / 1e6
            for b in binaries:
                wall = statistics.median(r[0] for r in runs[b, n])
                cpu = statistics.median(r[3] for r in runs[b, n])
                events = runs[b, n][0][1]
                rss = max(r[2] for r in runs[b, n])
                print(f"{b:>8} {events:>12,} events (raw {raw_mb:.0f} MB): merge {wall:.1f} s "
                      f"({events / wall / 1e6:.2f} M events/s), CPU {cpu:.1f} s "
                      f"({events / cpu / 1e6:.2f} M events/CPU s), peak RSS {rss / 2**20:.0f} MiB "
                      f"({rss / events:.0f} B/event), median of {len(runs[b, n])}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
