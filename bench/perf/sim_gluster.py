#!/usr/bin/env python3
"""Accuracy of the simulator against a real file system, the GlusterFS lab (issue 15 item 9;
a benchmark that reports a figure, not a test).

Brings the lab up (scripts/gluster-lab.sh: one brick, its server daemons traced), calibrates a
model of the volume (`pioscope calibrate --quick --dir LAB/mnt`, unless --system), then per
configuration traces the real run with its servers (`pioscope bench NAME --trace --servers`)
and simulates it on the model:
  - HPIO, independent and collective, 32 B and 1 KiB regions, cb_buffer_size 1 and 16 MiB,
    2 and 4 ranks: the `hpio` workload, and the trace replayed (`simulate --trace`);
  - mpi-io-test (1 MiB blocks, independent and collective): the `ior` workload of the same
    pattern (block k of rank r at (k x ranks + r) x block), and the trace replayed. This branch
    has no `mpi-io-test` workload, so mpi-io-test itself is simulated by trace replay.
Throughput is the bytes of the MPI-IO write calls over the write phase (per call index the
slowest rank, summed: sim_accuracy's phase time), the same measure on the observed and the
simulated trace; the observed one is the median of --runs traced runs (3), since on a shared
machine one run's throughput changes by several times from run to run. Per configuration it
prints observed and simulated throughput with the error, and the server tables (`pioscope
stats --by server --json`) side by side: storage accesses and bytes per access on the brick
daemon against the simulated server's disk; then
the median and worst error over all configurations (goal: median under 15%).

    PIOSCOPE_BIN_DIR=build/bin python3 bench/perf/sim_gluster.py [--system FILE] [--runs 3]
                                    [--keep DIR] [--set KEY=VALUE]

Needs root (GlusterFS). The lab is taken down at the end, also after a failure.
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

from sim_accuracy import PIOSCOPE, ROOT, phase_time, rel, run, write_calls

LAB = ROOT / "scripts" / "gluster-lab.sh"
MIB = 1 << 20
REGIONS = 4096
BLOCKS = 16
WRITE_AT = ["MPI_File_write_at", "MPI_File_write_at_all"]
HPIO_WRITES = ["MPI_File_write", "MPI_File_write_all"]


def configurations():
    """(label, bench name, bench arguments, ranks, workload spec or None, --set options)."""
    for size in (32, 1024):
        for ranks in (2, 4):
            yield (f"hpio independent {size:>4} B x{ranks}", "hpio",
                   ["--region-size", size, "--mode", "independent"], ranks,
                   f"hpio:ranks={ranks},region_size={size},mode=independent", [])
        for ranks, cb in ((2, 16 * MIB), (4, MIB), (4, 16 * MIB)):
            yield (f"hpio collective  {size:>4} B x{ranks} cb={cb // MIB}M", "hpio",
                   ["--region-size", size, "--mode", "collective",
                    "--hint", f"cb_buffer_size={cb}"], ranks,
                   f"hpio:ranks={ranks},region_size={size},mode=collective",
                   ["--set", f"cb_buffer_size={cb}"])
    for collective in (False, True):
        mode = "collective" if collective else "independent"
        args = ["--blocks", BLOCKS, "--block-size", MIB, "--iterations", 1, "--no-verify"]
        ior = (f"ior:ranks=4,block={MIB},transfer={MIB},segments={BLOCKS},fsync=true,"
               f"collective={'true' if collective else 'false'}")
        yield (f"mpi-io-test {mode} 1 MiB x4 (ior)", "mpi-io-test",
               args + (["--collective"] if collective else []), 4, ior, [])


def lab(*args):
    subprocess.run([str(LAB), *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def throughput(trace: Path, funcs) -> float:
    """Bytes written by the top-level calls of `funcs` over their write phase, bytes/s."""
    t = pq.read_table(trace / "events.parquet", columns=["func", "depth", "size"])
    t = t.filter(pc.and_(pc.is_in(pc.cast(t["func"], "string"), value_set=pa.array(funcs)),
                         pc.equal(t["depth"], 0)))
    written = sum(x for x in t["size"].to_pylist() if x and x > 0)
    return written / (phase_time(write_calls(trace, funcs)) / 1e9)


def server_row(trace: Path):
    """(storage accesses, bytes per access) of the server that stored the most bytes, from
    `pioscope stats --by server --json`; (0, 0) without servers."""
    stats = json.loads(run(PIOSCOPE, "stats", trace, "--by", "server", "--json"))
    rows = [r for r in (stats.get("servers") or {}).get("servers", []) if r["storage_bytes"]]
    if not rows:
        return (0, 0.0)
    r = max(rows, key=lambda r: r["storage_bytes"])
    return (r["storage_accesses"], r["bytes_per_access"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", help="model file (default: calibrate on the lab's volume)")
    ap.add_argument("--keep", help="keep the lab, traces and model in this directory")
    ap.add_argument("--runs", type=int, default=3, help="traced runs per configuration")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="model override for every simulation (as `simulate --set`)")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="pioscope-sim-gluster-"))
    work.mkdir(parents=True, exist_ok=True)
    lab_dir = work / "lab"
    lab("up", "--dir", lab_dir)
    rows = []
    try:
        system = args.system
        if system is None:
            system = work / "gluster.toml"
            print("calibrating on the volume...", flush=True)
            # --quick: the full runs take many minutes through FUSE (O_DIRECT 4 KiB requests).
            table = run(PIOSCOPE, "calibrate", "--quick", "-o", system, "--force", "--dir",
                        lab_dir / "mnt", "--save-runs", work / "gluster-runs.json")
            print(table.strip().splitlines()[-2], flush=True)
        for i, (name, bench, bargs, ranks, spec, sets) in enumerate(configurations()):
            if bench == "hpio":
                bargs = bargs + ["--region-count", REGIONS, "--iterations", 1]
                spec += f",region_count={REGIONS},region_space=128,iterations=1"
            overrides = [x for kv in args.set for x in ("--set", kv)]
            funcs = HPIO_WRITES if bench == "hpio" else WRITE_AT
            # The machine is shared: a run's throughput changes by several times from run to
            # run, so the reference is the median over --runs traced runs (and their replays).
            observed, replayed = [], []
            for n in range(args.runs):
                obs, rep = work / f"observed-{i}-{n}", work / f"replay-{i}-{n}"
                run(PIOSCOPE, "bench", bench, "-n", ranks, "--trace", obs, "--force",
                    "--servers", lab_dir / "servers", "--", *bargs, "--path",
                    lab_dir / "mnt" / f"{bench}-{i}.dat")
                run(PIOSCOPE, "simulate", "--trace", obs, "--system", system, *overrides,
                    "-o", rep, "--force")
                observed.append(throughput(obs, funcs))
                replayed.append(throughput(rep, funcs))
            wl = work / f"workload-{i}"
            run(PIOSCOPE, "simulate", "--workload", spec, "--system", system, *overrides, *sets,
                "-o", wl, "--force")
            o, r = statistics.median(observed), statistics.median(replayed)
            w = throughput(wl, funcs)
            so, sw = server_row(work / f"observed-{i}-0"), server_row(wl)
            rows.append({"config": name, "observed": o, "observed_runs": observed,
                         "replay": r, "workload": w,
                         "error_workload": rel(w, o), "error_replay": rel(r, o),
                         "server_observed": so, "server_simulated": sw})
            print(f"{name:<36} observed {o / MIB:8.2f} MiB/s ({min(observed) / MIB:.2f}-"
                  f"{max(observed) / MIB:.2f})  workload {w / MIB:8.2f} "
                  f"({rel(w, o):6.1%})  replay {r / MIB:8.2f} ({rel(r, o):6.1%})  server "
                  f"accesses {so[0]} of {so[1]:.0f} B vs {sw[0]} of {sw[1]:.0f} B", flush=True)
    finally:
        lab("down", "--dir", lab_dir)
    for key in ("error_workload", "error_replay"):
        errs = [x[key] for x in rows]
        print(f"{key[6:]}: median error {statistics.median(errs):.1%}, worst {max(errs):.1%} "
              f"over {len(errs)} configurations")
    (work / "sim_gluster.json").write_text(json.dumps(rows, indent=1))
    print(f"details: {work / 'sim_gluster.json'}")


if __name__ == "__main__":
    sys.exit(main())
