#!/usr/bin/env python3
"""How `pioscope fleet` scales (issue 17): wall time and peak memory over 1,000 inputs on this
machine, and whether memory stays flat as the number of jobs grows.

Makes N inputs in a temporary directory from real ones: the Darshan logs of PyDarshan's
examples (scripts/darshan-logs.sh; symbolic links, found by their first bytes) and the two
HPIO traces of tests/data (hard-linked copies: the walk does not follow links to directories),
a TRACE_SHARE of them traces. Then runs `pioscope fleet DIR -o OUT` for each size and each -j,
interleaved, REPEAT times, and prints the median wall time, the jobs per second, the peak RSS
of the whole process tree (GNU time: the largest of pioscope, the PyDarshan readers and the
DuckDB ranking it starts), of pioscope itself and of the DuckDB ranking's Python process (their
VmHWM, read while they run). With --baseline BIN (another pioscope, e.g. main's build) every
run is repeated with it, interleaved, on the same inputs.

With --ranking-jobs N,... the ranking alone (ranking.py running ranking.sql with DuckDB, as
`fleet` runs it, same memory limit) over the last fleet's tables copied until they hold N jobs
(each copy's inputs renamed, so N distinct jobs): its wall time and peak RSS, to show that its
memory stays bounded as the jobs grow.
A benchmark that reports figures; no assertion. The machine is shared: figures are indicative.

Build first: make -C <repo> cli
usage: bench/perf/fleet_scale.py [--sizes 100,1000] [--jobs 1,2] [--trace-share 0.1] [--repeat 1]
                                 [--baseline BIN] [--ranking-jobs 10000,1000000]"""
import argparse
import itertools
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
GNU_TIME = Path("/usr/bin/time")
LOGS = ROOT / "build" / "third_party" / "darshan-logs"
TRACES = [ROOT / "tests" / "data" / "hpio-collective", ROOT / "tests" / "data" / "hpio-independent"]
RANKING = ROOT / "crates" / "pioscope-analysis" / "src" / "fleet"


def make_inputs(dir: Path, n: int, trace_share: float) -> None:
    logs = sorted(LOGS.glob("*.darshan"))
    traces = round(n * trace_share)
    for i, src in zip(range(traces), itertools.cycle(TRACES)):
        subprocess.run(["cp", "-al", str(src), str(dir / f"trace-{i:05d}")], check=True)
    for i, src in zip(range(n - traces), itertools.cycle(logs)):
        (dir / f"log-{i:05d}.darshan").symlink_to(src)


def vmhwm(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    m = re.search(r"VmHWM:\s+(\d+) kB", text)
    return int(m.group(1)) * 1024 if m else 0


def child_pid(pid: int):
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None


def ranking_pid(pid: int):
    """The DuckDB ranking's Python process among pioscope's children, if it runs now."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for child in children:
            if b"import duckdb" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)
    except (OSError, ValueError):
        pass
    return None


def run_fleet(pioscope: Path, inputs: Path, out: Path, jobs: int) -> tuple:
    """(wall s, tree peak RSS, pioscope's own peak RSS, the ranking's peak RSS, stdout) of one
    fleet run."""
    cmd = [str(GNU_TIME), "-v", str(pioscope), "fleet", str(inputs), "-o", str(out), "--force",
           "-j", str(jobs)]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    own, ranking = [0], [0]

    def watch():
        # GNU time's child is pioscope; VmHWM only grows, so the last reading is the peak
        # (polled often: the ranking's process lives a second or two).
        while p.poll() is None:
            child = child_pid(p.pid)
            if child:
                own[0] = max(own[0], vmhwm(child))
                duck = ranking_pid(child)
                if duck:
                    ranking[0] = max(ranking[0], vmhwm(duck))
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    stdout, stderr = p.communicate()
    t.join()
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"fleet failed ({p.returncode}): {stderr.strip()[-2000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    return wall, int(m.group(1)) * 1024 if m else 0, own[0], ranking[0], stdout.strip()


def memory_limit() -> str:
    """DuckDB's memory cap, as ranking.rs gives it to the ranking."""
    return re.search(r'MEMORY_LIMIT: &str = "([^"]+)"', (RANKING / "ranking.rs").read_text()).group(1)


def ranking_alone(fleet: Path, jobs: int, work: Path) -> tuple:
    """(wall s, peak RSS, jobs rows, findings rows) of the ranking over `fleet`'s tables
    copied until they hold `jobs` jobs."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    big = work / f"ranking-{jobs}"
    (big / "tmp").mkdir(parents=True)
    kept_inputs = pq.read_table(fleet / "jobs.parquet").column("input")
    n_jobs = len(kept_inputs)
    for table in ("jobs", "findings"):
        src = pq.read_table(fleet / f"{table}.parquet")
        i = src.schema.get_field_index("input")
        parts = []
        for k in range(-(-jobs // n_jobs)):
            rows = src
            if (k + 1) * n_jobs > jobs:
                # The last copy: only its first jobs, and their findings.
                kept = kept_inputs.slice(0, jobs - k * n_jobs)
                rows = rows.filter(pc.is_in(rows.column("input"), value_set=kept))
            renamed = pc.binary_join_element_wise(rows.column("input"), pa.scalar(f"#{k}"), "")
            parts.append(rows.set_column(i, src.schema.field(i), renamed))
        # Row groups as large as the fleet's own writer makes them (parquet-rs: 1 Mi rows).
        pq.write_table(pa.concat_tables(parts), big / f"{table}.parquet", row_group_size=1 << 20)
    rows = [pq.read_metadata(big / f"{t}.parquet").num_rows for t in ("jobs", "findings")]
    # Through GNU time, as the fleet: a child's own rusage would count this process's pages
    # too (Linux keeps a forked child's high-water mark across exec).
    cmd = [str(GNU_TIME), "-f", "%M", sys.executable, "-c", (RANKING / "ranking.py").read_text(),
           (RANKING / "ranking.sql").read_text(), str(big / "jobs.parquet"), str(big / "findings.parquet"),
           str(big / "tmp"), memory_limit()]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"the ranking failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    shutil.rmtree(big)
    return wall, int(p.stderr.split()[-1]) * 1024, rows[0], rows[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000", help="numbers of inputs, comma-separated")
    ap.add_argument("--jobs", default="2", help="values of -j, comma-separated (1,2 to see the speedup)")
    ap.add_argument("--trace-share", type=float, default=0.1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--baseline", type=Path, help="another pioscope binary to run interleaved")
    ap.add_argument("--ranking-jobs", default="",
                    help="numbers of jobs to rank alone over the last fleet's tables, comma-separated")
    args = ap.parse_args()
    binaries = {"this": PIOSCOPE}
    if args.baseline:
        binaries["baseline"] = args.baseline.resolve()
    subprocess.run([str(ROOT / "scripts" / "darshan-logs.sh"), str(LOGS)], check=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    jobs = [int(j) for j in args.jobs.split(",")]
    work = Path(tempfile.mkdtemp(prefix="pioscope-fleet-scale-"))
    try:
        dirs = {}
        for n in sizes:
            dirs[n] = work / f"inputs-{n}"
            dirs[n].mkdir()
            make_inputs(dirs[n], n, args.trace_share)
        results = {}
        for rep in range(args.repeat):
            for n in sizes:
                for j in jobs:
                    for name, binary in binaries.items():
                        wall, tree, own, duck, stdout = run_fleet(binary, dirs[n], work / "out", j)
                        results.setdefault((name, n, j), []).append((wall, tree, own, duck))
                        print(f"run {rep + 1} {name}: {n} inputs, -j {j}: {wall:.1f} s, {n / wall:.1f} jobs/s, "
                              f"peak RSS tree {tree / 2**20:.0f} MiB, pioscope {own / 2**20:.0f} MiB, "
                              f"DuckDB ranking {duck / 2**20:.0f} MiB [{stdout.splitlines()[0]}]", flush=True)
        print("\nmedians (machine shared with other builds: indicative)")
        for (name, n, j), runs in results.items():
            wall = statistics.median(r[0] for r in runs)
            print(f"{name:>8} {n:>6} inputs -j {j}: {wall:7.1f} s  {n / wall:6.1f} jobs/s  "
                  f"tree peak {max(r[1] for r in runs) / 2**20:6.0f} MiB  "
                  f"pioscope peak {max(r[2] for r in runs) / 2**20:6.0f} MiB  "
                  f"ranking peak {max(r[3] for r in runs) / 2**20:6.0f} MiB")
        for n in [int(s) for s in args.ranking_jobs.split(",") if s]:
            wall, peak, jobs_rows, findings_rows = ranking_alone(work / "out", n, work)
            print(f"ranking alone: {jobs_rows} jobs, {findings_rows} findings: {wall:.1f} s, "
                  f"peak RSS {peak / 2**20:.0f} MiB (DuckDB memory_limit {memory_limit()})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
