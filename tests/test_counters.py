"""Issue 14 items 4 and 5: the counters sampler of `pioscope run` and `pioscope sample`,
counters.parquet, and the server table of `stats --by server` on a simulated trace (issue 15
item 7: every column filled, the servers' CPU sampled by the simulator)."""
import json
import signal
import subprocess
import time

import pandas as pd

from conftest import PIOSCOPE, pioscope, run_traced
from test_view_server import get, start

RANKS = 4


def counters(trace):
    return pd.read_parquet(trace / "counters.parquet")


def test_run_samples_the_node_and_every_traced_process(programs, workdir, tmp_path):
    trace = tmp_path / "t"
    _, t = run_traced(trace, programs["mpi_sleep"], workdir, "1", ranks=RANKS)
    c = counters(trace)
    meta = json.loads((trace / "meta.json").read_text())
    assert meta["counts"]["counters"] == len(c)
    ranks = {p["process"]: p["rank"] for p in meta["processes"]}
    cpu = c[c.counter == "cpu_user_pct"]
    node = cpu[cpu.process == -1]
    # 1 s at 10 Hz: about 10 node samples; at least one is a fact, more a matter of timing.
    assert len(node) >= 1
    assert set(c[c.process == -1].counter) == {
        "cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "disk_read_ops", "disk_write_ops",
        "disk_read_bytes", "disk_write_bytes", "net_rx_bytes", "net_tx_bytes", "mem_used_bytes"}
    traced = cpu[cpu.process >= 0]
    assert {ranks[p] for p in traced.process.unique()} == set(range(RANKS)), \
        "every rank sampled; the launcher and its proxies are not traced, so not kept"
    assert (c.time_ns >= 0).all() and (c.interval_ns > 0).all()
    assert (c.time_ns - c.interval_ns <= meta["job"]["duration_ns"]).all()
    hosts = {p["host"] for p in meta["processes"]}
    assert set(c.host) <= hosts
    report = pioscope("report", trace).stdout
    assert "Counters (CPU" in report

    # The viewer draws them as counter tracks after the I/O throughput.
    t1 = meta["job"]["duration_ns"]
    proc, url = start(trace)
    try:
        status, v = get(url + f"api/counters?trace=0&t0=0&t1={t1}&px=400")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    assert status == 200
    names = [t["name"] for t in v["tracks"]]
    assert names[0] == "I/O throughput"
    host = c.host.iloc[0]
    assert [f"{host} CPU", f"{host} disk", f"{host} net", f"{host} memory"] == names[1:5]
    assert names[5:] == [f"rank {r} CPU" for r in range(RANKS)]
    node_cpu = v["tracks"][1]
    assert node_cpu["unit"] == "%" and node_cpu["sampled"]
    assert len(node_cpu["points"]) == (node.time_ns < t1).sum()


def test_no_counters_samples_nothing(programs, workdir, tmp_path):
    trace = tmp_path / "t"
    run_traced(trace, programs["mpi_sleep"], workdir, "0", ranks=2, extra=("--no-counters",))
    assert len(counters(trace)) == 0
    meta = json.loads((trace / "meta.json").read_text())
    assert meta["counts"]["counters"] == 0


def test_sample_command_writes_a_counter_file_until_stopped(tmp_path):
    out = tmp_path / "srv.raw"
    target = subprocess.Popen(["sleep", "30"])
    try:
        sampler = subprocess.Popen([str(PIOSCOPE), "sample", "--out", str(out), "--interval",
                                    "20ms", "--pid", str(target.pid)])
        deadline = time.monotonic() + 20
        files = []
        while time.monotonic() < deadline:
            files = list(out.glob("*.pcnt"))
            # Two rounds written: the baseline and one sample with the target's counters.
            if files and f" {target.pid} cpu_user_pct " in files[0].read_text():
                break
            time.sleep(0.05)
        sampler.send_signal(signal.SIGTERM)
        assert sampler.wait(timeout=20) == 0
    finally:
        target.kill()
        target.wait()
    lines = files[0].read_text().splitlines()
    assert lines[0] == "pioscope-counters 1" and lines[1].startswith("host ")
    pids = {int(line.split()[2]) for line in lines[2:]}
    assert pids == {-1, target.pid}


def test_sample_needs_processes(tmp_path):
    r = pioscope("sample", "--out", tmp_path / "d", check=False)
    assert r.returncode == 2
    assert r.stderr.startswith("pioscope: error: ")


def test_server_table_of_a_simulated_trace(tmp_path):
    sim = tmp_path / "sim"
    # One access per 32-byte region (ad_pvfs2's posix hint), written through to the disks:
    # the storage gets small accesses (a page cache would merge them).
    pioscope("simulate", "--workload", "hpio:ranks=4,region_count=256", "--system",
             "pvfs2-2009", "--set", "romio_pvfs2_posix_write=enable", "--set", "write_back=0",
             "--set", "dirty_limit=0", "-o", sim)
    s = json.loads(pioscope("stats", sim, "--by", "server", "--json").stdout)
    servers = s["servers"]["servers"]
    data = [r for r in servers if r["role"] == "data"]
    assert len(data) == 4, "pvfs2-2009: 4 data servers (and a metadata server)"
    used = [r for r in data if r["storage_accesses"] > 0]
    assert used and all(r["network_ops"] > 0 and 0 < r["busy_fraction"] <= 1 for r in used)
    assert all(r["bytes_per_access"] == r["storage_bytes"] / r["storage_accesses"] for r in used)
    # The simulated servers' CPU is sampled as a real server's (issue 15 item 7).
    assert all(r["cpu_percent"] > 0 for r in used)
    calls = s["servers"]["calls"]
    assert calls, "the clients' MPI-IO calls are tied to server requests"
    c = calls[0]
    assert (c["func"], c["direction"], c["ranks"]) == ("MPI_File_write", "write", 4)
    assert c["servers"] == len(used)
    assert c["server_bytes"] == c["bytes"], "every byte written reached a server"
    assert c["summary"].startswith("MPI_File_write: ")
    report = pioscope("report", sim, "--json").stdout
    assert "small-storage-accesses" in {f["id"] for f in json.loads(report)["findings"]}
    text = pioscope("stats", sim, "--by", "server").stdout
    assert "net ops/s" in text and "client calls on the servers:" in text
