#!/usr/bin/env python3
"""The studies of shared/BACKGROUND.md set up as workloads on the presets, at their own scale,
and the direction each mechanism shows (issue 15; a benchmark that reports figures, not a test).

Every row is one `pioscope simulate` (deterministic: the same build gives the same figures),
printed with the command that makes it, so each mechanism's effect can be seen by hand:
  - PIOviz (PVFS2, `pvfs2-2009`): HPIO 32 B and 1 KiB regions, 32768 per process, 128 B apart,
    4 processes; independent against collective, and collective with buffers of 0.5, 4, 16
    and 64 MiB: throughput, the two-phase cycles per call, and the servers' storage accesses
    (a PVFS2 server issues accesses of at most 256 KiB);
  - PIOsimHD: an append of 64 KiB per call that the MPI-IO layer splits into 512 B pieces,
    without and with `romio_pvfs2_listio_write`; a GigE ping-pong with occasional 0.2 s stalls
    (`[variance]`), whose iterations differ and whose `--seed` reproduces a run;
  - TAS: mpi-io-test on real and on null storage (`storage.null`), mpi-md-test's creates
    against their bound, and small blocks striped 64 KiB over five servers touching only some;
  - OLAM: one file per process per output step with compute between steps and a client cache,
    each file closed at once or when the next one opens (`close=deferred`);
  - Lustre (`lustre-fdr`): the aggregators of one node in the same striping round, placed
    blocked or round-robin (`hint.aggregator_placement` with `hint.cb_config_list=*:4`).

    python3 bench/perf/studies.py [--study NAME] [--keep DIR]
"""
import argparse
import json
import re
import shlex
import sys
import tempfile
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from sim_accuracy import PIOSCOPE, run

UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
SIZE = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


class Sim:
    """Runs simulations into a work directory and reads back their figures."""

    def __init__(self, work: Path):
        self.work, self.count = work, 0

    def __call__(self, system: str, workload: str, *sets: str, seed: int = 1):
        """(figures, the command) of one simulation: job seconds, write bytes/s over the job
        (0 without writes), and the trace directory."""
        self.count += 1
        out = self.work / f"sim-{self.count}"
        args = ["simulate", "--system", system, *(x for s in sets for x in ("--set", s)),
                "--workload", workload, "--seed", str(seed)]
        text = run(PIOSCOPE, *args, "-o", out, "--force")
        job = re.search(r"simulated time ([\d.]+) (\S+),", text)
        write = re.search(r"^write: ([\d.]+) (\S+) in ", text, re.M)
        job_s = float(job.group(1)) * UNITS[job.group(2)]
        written = float(write.group(1)) * SIZE[write.group(2)] if write else 0.0
        command = "pioscope " + shlex.join(args) + " -o sim"
        return {"job_s": job_s, "write_bps": written / job_s, "trace": out}, command


def servers(trace: Path):
    """Per server (`stats --by server`): {server: {layer: row}} of the server and disk layers."""
    stats = json.loads(run(PIOSCOPE, "stats", trace, "--by", "server", "--json"))
    out = {}
    for row in stats["rows"]:
        out.setdefault(row["group"], {})[row["layer"]] = row
    return out


def timings(trace: Path):
    """A trace's calls: function name (a string), start and duration, from events.parquet."""
    t = pq.read_table(trace / "events.parquet", columns=["func", "start_ns", "duration_ns"])
    return t.set_column(0, "func", pc.cast(t["func"], "string"))


def calls(trace: Path, func: str):
    """Durations (s) of the calls of `func` in a trace, in start order."""
    t = timings(trace)
    t = t.filter(pc.equal(t["func"], func)).sort_by("start_ns")
    return [d / 1e9 for d in t["duration_ns"].to_pylist()]


def span_ns(first, last) -> int:
    """From the first start among the calls `first` to the last end among the calls `last`."""
    start = pc.min(first["start_ns"]).as_py()
    return pc.max(pc.add(last["start_ns"], last["duration_ns"])).as_py() - start


def write_phase_rate(trace: Path, written: int) -> float:
    """mpi-io-test's write phase, bytes/s: `written` bytes from the first MPI_File_write_at
    to the end of the last MPI_File_sync (the benchmark's write time includes the sync)."""
    t = timings(trace)
    writes = t.filter(pc.starts_with(t["func"], "MPI_File_write_at"))
    return written / (span_ns(writes, t.filter(pc.equal(t["func"], "MPI_File_sync"))) / 1e9)


def per_second(trace: Path, func: str) -> float:
    """Calls of `func` per second over the span from the first one's start to the last one's
    end."""
    t = timings(trace)
    t = t.filter(pc.equal(t["func"], func))
    return t.num_rows / (span_ns(t, t) / 1e9)


def mib(bps: float) -> str:
    return f"{bps / SIZE['MiB']:9.1f} MiB/s"


def show(label: str, value: str, command: str):
    print(f"  {label:<44} {value}\n      {command}")


def direction(text: str, shown: bool):
    print(f"  -> {text}: {'shown' if shown else 'NOT shown'}\n")
    return shown


def pioviz(sim: Sim):
    print("PIOviz: HPIO on pvfs2-2009, 4 processes on 4 nodes, 32768 regions 128 B apart")
    results = []
    for size in (32, 1024):
        hpio = f"hpio:ranks=4,region_size={size},region_count=32768,region_space=128"
        for mode in ("independent", "collective"):
            r, c = sim("pvfs2-2009", f"{hpio},mode={mode}", "ppn=1")
            show(f"{size} B {mode}", mib(r["write_bps"]), c)
        # One process and one aggregator per node: each holds a quarter of the file's extent.
        domain = 32768 * 4 * (size + 128) // 4
        cycles, expected, largest = [], [], 0
        for cb in (512 << 10, 4 << 20, 16 << 20, 64 << 20):
            r, c = sim("pvfs2-2009", f"{hpio},mode=collective,hint.cb_buffer_size={cb}",
                       "ppn=1")
            n = two_phase_cycles(r["trace"])
            srv = servers(r["trace"])
            largest = max([largest] + [s["server"]["size_max"] or 0 for s in srv.values()])
            accesses = sum(s["disk"]["data_operations"] for s in srv.values() if "disk" in s)
            show(f"{size} B collective, cb {cb >> 10} KiB",
                 f"{mib(r['write_bps'])}, {n} two-phase cycles, {accesses} disk accesses", c)
            cycles.append(n)
            expected.append(-(-domain // cb))
        results.append(direction(
            f"{size} B: two-phase cycles per call = ceil(a process's domain / cb) "
            f"({cycles}, expected {expected}: twice or more while the buffer is smaller "
            "than a process's data, once when it holds it)", cycles == expected))
        results.append(direction(f"{size} B: a server access is at most 256 KiB "
                                 f"(largest {largest} B)", 0 < largest <= 256 << 10))
    return results


def two_phase_cycles(trace: Path) -> int:
    """Cycles of the collective write per aggregator: the file writes of the aggregators
    inside MPI_File_write_all (one pwrite per cycle) over the aggregators."""
    t = pq.read_table(trace / "events.parquet", columns=["func", "rank", "depth"])
    t = t.filter(pc.and_(pc.equal(pc.cast(t["func"], "string"), "pwrite"),
                         pc.greater(t["depth"], 0)))
    ranks = set(t["rank"].to_pylist())
    return t.num_rows // max(len(ranks), 1)


def piosimhd(sim: Sim):
    print("PIOsimHD: 64 KiB appends of 512 B pieces (pvfs2-2009, 4 processes)")
    append = "hpio:ranks=4,region_size=512,region_count=128,region_space=0,iterations=10"
    figures = {}
    for hint in ("romio_pvfs2_posix_write", "romio_pvfs2_listio_write"):
        r, c = sim("pvfs2-2009", f"{append},hint.{hint}=enable")
        requests = sum(s["server"]["data_operations"] for s in servers(r["trace"]).values()
                       if "server" in s)
        show(f"{hint}=enable", f"{mib(r['write_bps'])}, {requests} server requests", c)
        figures[hint] = (r["write_bps"], requests)
    split, listio = figures["romio_pvfs2_posix_write"], figures["romio_pvfs2_listio_write"]
    results = [direction("list I/O sends a request per 64 pieces, not per piece, and is faster",
                         listio[1] < split[1] and listio[0] > split[0])]
    ping = "comm:ranks=2,pattern=ping-pong,size=1M,iterations=200"
    stalls = ("variance.stall_probability=0.01", "variance.stall_ns=200ms",
              "variance.network_jitter=0.05", "nodes=2", "ppn=1")
    exact, c = sim("pvfs2-2009", ping, "nodes=2", "ppn=1")
    show("ping-pong 1 MiB x200 across GigE, no variance", f"{exact['job_s']:9.3f} s", c)
    jobs = []
    for seed in (1, 2, 1):
        r, c = sim("pvfs2-2009", ping, *stalls, seed=seed)
        waits = calls(r["trace"], "MPI_Waitall")
        show(f"with stalls, --seed {seed}", f"{r['job_s']:9.3f} s, slowest wait "
             f"{max(waits) * 1e3:.1f} ms, median {sorted(waits)[len(waits) // 2] * 1e3:.1f} ms", c)
        jobs.append(r["job_s"])
    results.append(direction("stalls slow some iterations; --seed reproduces a run, another "
                             "seed differs", jobs[0] == jobs[2] != jobs[1]
                             and min(jobs) > exact["job_s"]))
    return results


def tas(sim: Sim):
    print("TAS: removing the disk (pvfs2-2009)")
    test = "mpi-io-test:ranks=4,blocks=64,block_size=1M,iterations=1"
    rates, limits = {}, {}
    for null in ("false", "true"):
        r, c = sim("pvfs2-2009", test, f"storage.null={null}")
        rate = write_phase_rate(r["trace"], 4 * 64 << 20)
        bound = json.loads(run(PIOSCOPE, "bounds", "--system", "pvfs2-2009", "--set",
                               f"storage.null={null}", "--clients", "4", "--request-size", "1M",
                               "--json"))["write"]
        show(f"mpi-io-test 1 MiB blocks, storage.null={null}",
             f"{mib(rate)} (writes and sync), bound {mib(bound['bytes_per_s']).strip()} "
             f"limited by {bound['limited_by']}", c)
        rates[null], limits[null] = rate, bound["limited_by"]
    # TAS's method: with the disk gone, what still keeps the run under the network's bound
    # is the software (here the barrier before every block and each request's round trips).
    results = [direction("without the disk the bound is the network, the write phase is no "
                         "slower, and its gap to that bound is the software's",
                         limits["false"] == "disks" and limits["true"] == "client NICs"
                         and rates["false"] <= rates["true"] < bound["bytes_per_s"])]
    md, c = sim("pvfs2-2009", "mdtest:ranks=4,files=100")
    bound = json.loads(run(PIOSCOPE, "bounds", "--system", "pvfs2-2009", "--clients", "4",
                           "--json"))["metadata"]["creates"]["per_s"]
    rate = per_second(md["trace"], "server_create")
    show("mpi-md-test creates (the metadata server)", f"{rate:9.1f} /s, bound {bound:.1f} /s", c)
    results.append(direction("creates stay under their bound of serialized, synced metadata "
                             "operations", 0 < rate <= bound * 1.0001))
    touched = {}
    for block in ("4K", "64K"):
        r, c = sim("pvfs2-2009", f"mpi-io-test:ranks=4,blocks=4,block_size={block},iterations=1",
                   "storage.data_servers=5", "layout.stripe_size=64K")
        n = sum(1 for s in servers(r["trace"]).values() if s.get("server", {}).get("bytes"))
        show(f"blocks of {block} striped 64 KiB over 5 servers", f"{n} servers touched", c)
        touched[block] = n
    results.append(direction("small blocks touch only some of the servers",
                             touched["4K"] < 5 == touched["64K"]))
    return results


def olam(sim: Sim):
    print("OLAM: one file per process per output step, 2 s of compute between steps")
    steps = ("ior:ranks=8,block=64M,transfer=4M,iterations=4,compute=2s,file=per-process,"
             "files=new-per-iteration")
    jobs = {}
    for close in ("immediate", "deferred"):
        r, c = sim("pvfs2-2009", f"{steps},close={close}", "client_cache.size=1G")
        show(f"close={close}, client cache 1 GiB", f"{r['job_s']:9.3f} s", c)
        jobs[close] = r["job_s"]
    return [direction("closing the previous file when the next opens overlaps its flush "
                      "with the compute", jobs["deferred"] < jobs["immediate"])]


def lustre(sim: Sim):
    print("Lustre: aggregator placement, 4 nodes x 4 processes, HPIO 5744 B regions (lustre-fdr)")
    hpio = ("hpio:ranks=16,region_size=5744,region_space=256,region_count=48000,"
            "mode=collective,hint.cb_config_list=*:4")
    rates = {}
    for placement in ("blocked", "round-robin"):
        r, c = sim("lustre-fdr", f"{hpio},hint.aggregator_placement={placement}",
                   "nodes=4", "ppn=4")
        show(f"{placement}", mib(r["write_bps"]), c)
        rates[placement] = r["write_bps"]
    return [direction("round-robin placement faster than blocked",
                      rates["round-robin"] > rates["blocked"])]


STUDIES = {"pioviz": pioviz, "piosimhd": piosimhd, "tas": tas, "olam": olam, "lustre": lustre}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", choices=STUDIES, action="append",
                    help="only this study (repeatable; default: all)")
    ap.add_argument("--keep", type=Path, help="keep the simulated traces in this directory")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pioscope-studies-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        sim = Sim(work)
        shown = [ok for name in (args.study or STUDIES) for ok in STUDIES[name](sim)]
    print(f"{sum(shown)} of {len(shown)} directions shown")
    return 0 if all(shown) else 1


if __name__ == "__main__":
    sys.exit(main())
