#!/usr/bin/env python3
"""Accuracy of the simulator against a real file system, the GlusterFS lab (issue 15 item 9;
a benchmark that reports a figure, not a test).

Brings the lab up (scripts/gluster-lab.sh: one brick, its server daemons traced), then runs
--runs rounds (3), each a calibration of the volume (`pioscope calibrate --quick --dir
LAB/mnt --save-runs`, unless --system) followed by one traced run of every configuration with
its servers (`pioscope bench NAME --trace --servers`): calibrations and runs sample the lab
over the same minutes, as its speed moves by up to 2x between runs minutes apart on this host.
The model is the fit of every round's measurements, each the median of its rounds
(`calibrate --from-runs` of them all). Each configuration is simulated on it:
  - HPIO, independent and collective, 32 B and 1 KiB regions, cb_buffer_size 1 and 16 MiB,
    2 and 4 ranks, 10 iterations per run (as the studies timed it): the `hpio` workload, and
    the trace replayed (`simulate --trace`);
  - mpi-io-test (1 MiB blocks, independent and collective, 3 iterations): the `mpi-io-test` workload of the
    same arguments (a barrier before every block, the sync ending the write phase), and the
    trace replayed.
Throughput is the bytes of the MPI-IO write calls over the write phase (per call index the
slowest rank, summed: sim_accuracy's phase time), the same measure on the observed and the
simulated trace; the observed one is the median of its runs. Per configuration it
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
fitted again from its DIR/gluster-runs-*.json (older runs: gluster-runs.json; or on --system),
without the lab: to try a model or a fit offline, without root. --pioscope BIN simulates with
another build (another branch's binary against this one on the same traces).
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


# Iterations per traced run, as the studies timed HPIO (shared/BACKGROUND.md: 10) and as
# mpi-io-test runs by default (3): one HPIO call of 32 B regions lasts 5-20 ms, within the
# lab's run-to-run noise. Runs kept before 2026-11-28 made one (their sim_gluster.json says).
ITERATIONS = {"hpio": 10, "mpi-io-test": 3}


def configurations(iterations=None):
    """(label, bench name, bench arguments, ranks, workload spec, --set options), with
    `iterations` ({bench: count}, default ITERATIONS) per run."""
    n = iterations or ITERATIONS
    hpio = ["--region-count", REGIONS, "--iterations", n["hpio"]]
    hpio_spec = f"region_count={REGIONS},region_space=128,iterations={n['hpio']}"
    for size in (32, 1024):
        for ranks in (2, 4):
            yield (f"hpio independent {size:>4} B x{ranks}", "hpio",
                   ["--region-size", size, "--mode", "independent", *hpio], ranks,
                   f"hpio:ranks={ranks},region_size={size},mode=independent,{hpio_spec}", [])
        for ranks, cb in ((2, 16 * MIB), (4, MIB), (4, 16 * MIB)):
            yield (f"hpio collective  {size:>4} B x{ranks} cb={cb // MIB}M", "hpio",
                   ["--region-size", size, "--mode", "collective",
                    "--hint", f"cb_buffer_size={cb}", *hpio], ranks,
                   f"hpio:ranks={ranks},region_size={size},mode=collective,{hpio_spec}",
                   ["--set", f"cb_buffer_size={cb}"])
    for collective in (False, True):
        mode = "collective" if collective else "independent"
        args = ["--blocks", BLOCKS, "--block-size", MIB, "--iterations", n["mpi-io-test"],
                "--no-verify"]
        spec = (f"mpi-io-test:ranks=4,blocks={BLOCKS},block_size={MIB},"
                f"iterations={n['mpi-io-test']},verify=false,"
                f"collective={'true' if collective else 'false'}")
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


def observe(args, work: Path, lab_dir: Path):
    """--runs rounds, each a calibration of the volume (unless --system) and then one traced
    run of every configuration: the calibrations sample the lab's speed over the same minutes
    as the runs they model (on this host it moves by up to 2x between runs minutes apart).
    Per configuration, [(trace, daemon CPU)] of its runs."""
    traces = [[] for _ in configurations()]
    for rnd in range(args.runs):
        if args.system is None:
            print(f"round {rnd + 1}: calibrating on the volume...", flush=True)
            # --quick: the full runs take many minutes through FUSE (O_DIRECT 4 KiB requests).
            table = run(PIOSCOPE, "calibrate", "--quick", "-o", work / f"gluster-{rnd}.toml",
                        "--force", "--dir", lab_dir / "mnt", "--save-runs",
                        work / f"gluster-runs-{rnd}.json")
            print(f"round {rnd + 1}: {table.strip().splitlines()[-2]}", flush=True)
        for i, (_, bench, bargs, ranks, _, _) in enumerate(configurations()):
            obs = work / f"observed-{i}-{rnd}"
            before, began = daemon_cpu(), time.monotonic()
            run(PIOSCOPE, "bench", bench, "-n", ranks, "--trace", obs, "--force",
                "--servers", lab_dir / "servers", "--", *bargs, "--path",
                lab_dir / "mnt" / f"{bench}-{i}.dat")
            traces[i].append((obs, cpu_used(before, daemon_cpu(), time.monotonic() - began)))
    return traces


def kept_traces(work: Path):
    """The traces a --keep run left, per configuration (no CPU figures: those are kept in
    sim_gluster.json)."""
    return [[(obs, None) for obs in sorted(work.glob(f"observed-{i}-*"))]
            for i, _ in enumerate(configurations())]


def runs_files(work: Path):
    """The calibrations' runs files of a --keep directory (one per round; before rounds, one)."""
    return sorted(work.glob("gluster-runs-*.json")) or [work / "gluster-runs.json"]


def fit_models(args, work: Path):
    """{tag: model file}: --system, or the per-measurement medians of every round's calibration
    (`calibrate --from-runs` of them all) fitted twice, as calibrated and with the FUSE daemons'
    CPU on the node's cores (`--node-cpu`, docs/MODEL.md "Node CPU"), both errors side by side.
    --reuse fits them again, so a changed fit shows without the lab."""
    if args.system:
        return {"": Path(args.system)}
    models = {"": work / "gluster.toml", "node CPU": work / "gluster-node-cpu.toml"}
    for tag, extra in (("", []), ("node CPU", ["--node-cpu"])):
        table = run(PIOSCOPE, "calibrate", "--from-runs", *runs_files(work), *extra,
                    "-o", models[tag], "--force")
        print(f"{tag or 'calibration'} (median of the rounds): "
              f"{table.strip().splitlines()[-2]}", flush=True)
    return models


def main():
    global PIOSCOPE  # --pioscope: every command of this script runs that binary
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", help="model file (default: calibrate on the lab's volume)")
    ap.add_argument("--keep", help="keep the lab, traces and model in this directory")
    ap.add_argument("--reuse", help="simulate the traces and model a --keep run left in this "
                    "directory again, without the lab")
    ap.add_argument("--runs", type=int, default=3,
                    help="rounds: a calibration and one traced run of every configuration each")
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
    kept, iterations = [], ITERATIONS
    if args.reuse:
        # In configuration order (labels have changed between versions of this script).
        kept = json.loads((work / "sim_gluster.json").read_text())
        iterations = kept[0].get("iterations", {"hpio": 1, "mpi-io-test": 1})
    rows = []
    try:
        traces = observe(args, work, lab_dir) if not args.reuse else kept_traces(work)
        models = fit_models(args, work)
        overrides = [x for kv in args.set for x in ("--set", kv)]
        for i, (name, bench, bargs, ranks, spec, sets) in enumerate(configurations(iterations)):
            funcs = HPIO_WRITES if bench == "hpio" else WRITE_AT
            runs = traces[i]
            cpu = [c for _, c in runs] if not args.reuse else (
                kept[i].get("cpu", []) if i < len(kept) else [])
            observed = [throughput(obs, funcs) for obs, _ in runs]
            o = statistics.median(observed)
            row = {"config": name, "iterations": iterations, "observed": o,
                   "observed_runs": observed, "cpu": cpu,
                   "server_observed": server_row(runs[0][0])}
            line = (f"{name:<36} observed {o / MIB:8.2f} MiB/s ({min(observed) / MIB:.2f}-"
                    f"{max(observed) / MIB:.2f})")
            for tag, model in models.items():
                suffix = f"-{tag.replace(' ', '-')}" if tag else ""
                replayed = []
                for obs, _ in runs:
                    rep = work / f"replay-{obs.name.removeprefix('observed-')}{suffix}"
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
