#!/usr/bin/env python3
"""Accuracy of the simulator against a real file system, the GlusterFS lab (issue 15 item 9;
a benchmark that reports a figure, not a test).

Brings the lab up (scripts/gluster-lab.sh: one brick, its server daemons traced), calibrates a
model of the volume (`pioscope calibrate --quick --dir LAB/mnt`, unless --system), then per
configuration traces the real run with its servers (`pioscope bench NAME --trace --servers`)
and simulates it on the model:
  - HPIO, independent and collective, 32 B and 1 KiB regions, cb_buffer_size 1 and 16 MiB,
    2 and 4 ranks: the `hpio` workload, and the trace replayed (`simulate --trace`);
  - mpi-io-test (1 MiB blocks, independent and collective): the `mpi-io-test` workload of the
    same arguments (a barrier before every block, the sync ending the write phase), and the
    trace replayed.
Throughput is the bytes of the MPI-IO write calls over the write phase (per call index the
slowest rank, summed: sim_accuracy's phase time), the same measure on the observed and the
simulated trace; the observed one is the median of --runs traced runs (3), since on a shared
machine one run's throughput changes by several times from run to run. Per configuration it
prints observed and simulated throughput with the error, and the server tables (`pioscope
stats --by server --json`) side by side: storage accesses and bytes per access on the brick
daemon against the simulated server's disk; then
the median and worst error over all configurations (goal: median under 15%). Every simulation
runs twice, on the calibrated model and on the same runs fitted with `calibrate --node-cpu` (the
FUSE daemons' CPU on the node's cores, docs/MODEL.md "Node CPU"), both errors side by side
(unless --system names one model). Around every
observed run it reads the CPU time of the GlusterFS daemons from /proc (the FUSE client
`glusterfs`, the brick `glusterfsd`) and the host's busy fraction, and prints them per
configuration: what the client side's CPU costs (docs/MODEL.md, "Validation").

    PIOSCOPE_BIN_DIR=build/bin python3 bench/perf/sim_gluster.py [--system FILE] [--runs 3]
                                    [--keep DIR] [--set KEY=VALUE]
    python3 bench/perf/sim_gluster.py --reuse DIR [--system FILE] [--set KEY=VALUE]
                                    [--pioscope BIN]

--reuse DIR simulates again the observed traces a `--keep DIR` run left there, on both models
fitted again from its DIR/gluster-runs.json (or on --system), without the lab: to try a model
or a fit offline, without root. --pioscope BIN simulates with another build (another branch's
binary against this one on the same traces).
Needs root otherwise (GlusterFS). The lab is taken down at the end, also after a failure.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
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
        spec = (f"mpi-io-test:ranks=4,blocks={BLOCKS},block_size={MIB},iterations=1,"
                f"verify=false,collective={'true' if collective else 'false'}")
        yield (f"mpi-io-test {mode} 1 MiB x4", "mpi-io-test",
               args + (["--collective"] if collective else []), 4, spec, [])


def daemon_cpu():
    """CPU seconds (user + system) so far of the GlusterFS FUSE client and brick daemons,
    {"glusterfs": s, "glusterfsd": s}, and the host's (busy, total) jiffies from /proc/stat."""
    hz = os.sysconf("SC_CLK_TCK")
    cpu = {"glusterfs": 0.0, "glusterfsd": 0.0}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        if comm in cpu:
            cpu[comm] += (int(fields[11]) + int(fields[12])) / hz
    jiffies = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = jiffies[3] + jiffies[4]
    return cpu, (sum(jiffies) - idle, sum(jiffies))


def cpu_used(before, after, seconds):
    """The daemons' CPU seconds over a command of `seconds`, the host's busy fraction."""
    (c0, (b0, t0)), (c1, (b1, t1)) = before, after
    used = {k: c1[k] - c0[k] for k in c0}
    used.update(host=(b1 - b0) / max(t1 - t0, 1), seconds=seconds)
    return used


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
    global PIOSCOPE  # --pioscope: every command of this script runs that binary
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", help="model file (default: calibrate on the lab's volume)")
    ap.add_argument("--keep", help="keep the lab, traces and model in this directory")
    ap.add_argument("--reuse", help="simulate the traces and model a --keep run left in this "
                    "directory again, without the lab")
    ap.add_argument("--runs", type=int, default=3, help="traced runs per configuration")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="model override for every simulation (as `simulate --set`)")
    ap.add_argument("--pioscope", type=Path, default=PIOSCOPE,
                    help=f"the pioscope binary that calibrates and simulates (default {PIOSCOPE})")
    args = ap.parse_args()
    PIOSCOPE = args.pioscope
    if args.reuse and args.keep:
        ap.error("--reuse and --keep exclude each other")
    work = Path(args.reuse or args.keep or tempfile.mkdtemp(prefix="pioscope-sim-gluster-"))
    work.mkdir(parents=True, exist_ok=True)
    lab_dir = work / "lab"
    if not args.reuse:
        lab("up", "--dir", lab_dir)
    kept = []
    if args.reuse:
        # In configuration order (labels have changed between versions of this script).
        kept = json.loads((work / "sim_gluster.json").read_text())
    rows = []
    try:
        system = args.system
        if system is None and not args.reuse:
            system = work / "gluster.toml"
            print("calibrating on the volume...", flush=True)
            # --quick: the full runs take many minutes through FUSE (O_DIRECT 4 KiB requests).
            table = run(PIOSCOPE, "calibrate", "--quick", "-o", system, "--force", "--dir",
                        lab_dir / "mnt", "--save-runs", work / "gluster-runs.json")
            print(table.strip().splitlines()[-2], flush=True)
        models = {"": Path(system or work / "gluster.toml")}
        if args.system is None:
            # The same runs fitted with the FUSE daemons' CPU on the node's cores
            # (`calibrate --node-cpu`): both models' errors, side by side. --reuse fits both
            # again, so a changed fit shows without the lab.
            models["node CPU"] = work / "gluster-node-cpu.toml"
            for tag, extra in (("", []), ("node CPU", ["--node-cpu"])):
                if tag or args.reuse:
                    table = run(PIOSCOPE, "calibrate", "--from-runs", work / "gluster-runs.json",
                                *extra, "-o", models[tag], "--force")
                    print(f"{tag or 'calibration'}: {table.strip().splitlines()[-2]}", flush=True)
        overrides = [x for kv in args.set for x in ("--set", kv)]
        for i, (name, bench, bargs, ranks, spec, sets) in enumerate(configurations()):
            if bench == "hpio":
                bargs = bargs + ["--region-count", REGIONS, "--iterations", 1]
                spec += f",region_count={REGIONS},region_space=128,iterations=1"
            funcs = HPIO_WRITES if bench == "hpio" else WRITE_AT
            # The machine is shared: a run's throughput changes by several times from run to
            # run, so the reference is the median over --runs traced runs (and their replays).
            observed, cpu = [], []
            runs = (len(list(work.glob(f"observed-{i}-*"))) if args.reuse else args.runs)
            traces = [work / f"observed-{i}-{n}" for n in range(runs)]
            for obs in traces:
                if not args.reuse:
                    before, began = daemon_cpu(), time.monotonic()
                    run(PIOSCOPE, "bench", bench, "-n", ranks, "--trace", obs, "--force",
                        "--servers", lab_dir / "servers", "--", *bargs, "--path",
                        lab_dir / "mnt" / f"{bench}-{i}.dat")
                    cpu.append(cpu_used(before, daemon_cpu(), time.monotonic() - began))
                observed.append(throughput(obs, funcs))
            if args.reuse:
                cpu = kept[i].get("cpu", []) if i < len(kept) else []
            o = statistics.median(observed)
            row = {"config": name, "observed": o, "observed_runs": observed, "cpu": cpu,
                   "server_observed": server_row(traces[0])}
            line = (f"{name:<36} observed {o / MIB:8.2f} MiB/s ({min(observed) / MIB:.2f}-"
                    f"{max(observed) / MIB:.2f})")
            for tag, model in models.items():
                suffix = f"-{tag.replace(' ', '-')}" if tag else ""
                replayed = []
                for n, obs in enumerate(traces):
                    rep = work / f"replay-{i}-{n}{suffix}"
                    run(PIOSCOPE, "simulate", "--trace", obs, "--system", model, *overrides,
                        "-o", rep, "--force")
                    replayed.append(throughput(rep, funcs))
                wl = work / f"workload-{i}{suffix}"
                run(PIOSCOPE, "simulate", "--workload", spec, "--system", model, *overrides,
                    *sets, "-o", wl, "--force")
                r, w = statistics.median(replayed), throughput(wl, funcs)
                key = f" {tag}" if tag else ""
                row.update({f"workload{key}": w, f"replay{key}": r,
                            f"error_workload{key}": rel(w, o), f"error_replay{key}": rel(r, o)})
                line += (f"  {tag + ': ' if tag else ''}workload {w / MIB:8.2f} ({rel(w, o):6.1%})"
                         f" replay {r / MIB:8.2f} ({rel(r, o):6.1%})")
                if not tag:
                    row["server_simulated"] = server_row(wl)
            so, sw = row["server_observed"], row["server_simulated"]
            print(f"{line}  server accesses {so[0]} of {so[1]:.0f} B vs {sw[0]} of {sw[1]:.0f} B",
                  flush=True)
            if cpu:
                med = {k: statistics.median(c[k] for c in cpu) for k in cpu[0]}
                print(f"{'':<36} CPU over the command ({med['seconds']:.2f} s): FUSE client "
                      f"{med['glusterfs'] * 1e3:.0f} ms, brick {med['glusterfsd'] * 1e3:.0f} ms,"
                      f" host {med['host']:.0%} busy", flush=True)
            rows.append(row)
    finally:
        if not args.reuse:
            lab("down", "--dir", lab_dir)
    for key in (k for k in rows[0] if k.startswith("error_")) if rows else ():
        errs = [x[key] for x in rows]
        print(f"{key[6:]}: median error {statistics.median(errs):.1%}, worst {max(errs):.1%} "
              f"over {len(errs)} configurations")
    (work / "sim_gluster.json").write_text(json.dumps(rows, indent=1))
    print(f"details: {work / 'sim_gluster.json'}")


if __name__ == "__main__":
    sys.exit(main())
