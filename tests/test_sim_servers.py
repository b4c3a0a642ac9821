"""Issue 15 item 7: the server table of a simulated trace has the columns of a real one (the
servers' CPU sampled by the simulator into counters.parquet), and `pioscope compare` lines up
the server tables of the two runs it compares."""
import json

import pandas as pd
import pytest

from conftest import ROOT, pioscope

WORKLOAD = "hpio:ranks=4,mode=collective,op=write"
# pvfs2-2009 (docs/MODEL.md): 4 data servers and a metadata server, 30 us of CPU per request.
DATA_SERVERS, SERVERS, CPU_PER_REQUEST_NS = 4, 5, 30_000
COLUMNS = ["network_ops_per_sec", "storage_ops_per_sec", "storage_accesses", "bytes_per_access",
           "cpu_percent", "throughput", "busy_fraction"]


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim") / "t"
    pioscope("simulate", "--system", "pvfs2-2009", "--workload", WORKLOAD, "-o", out)
    return out


def server_table(trace):
    return json.loads(pioscope("stats", trace, "--by", "server", "--json").stdout)["servers"]


def test_every_column_of_a_simulated_server_table_is_filled(sim):
    table = server_table(sim)
    rows = table["servers"]
    assert [r["server"] for r in rows] == [f"server-{i}" for i in range(SERVERS)]
    data = [r for r in rows if r["role"] == "data"]
    assert len(data) == DATA_SERVERS
    for r in data:
        assert all(r[c] is not None and r[c] > 0 for c in COLUMNS), r
    meta = json.loads((sim / "meta.json").read_text())
    duration = meta["job"]["duration_ns"]
    events = pd.read_parquet(sim / "events.parquet")
    c = pd.read_parquet(sim / "counters.parquet")
    process = {p["host"]: p["process"] for p in meta["processes"] if p["kind"] == "server"}
    for r in rows:
        mine = c[c.process == process[r["server"]]]
        # The samples cover the job: per counter, intervals summing to its duration.
        assert set(mine.counter) == {"cpu_user_pct", "cpu_system_pct"}
        for _, per in mine.groupby("counter"):
            assert per.interval_ns.sum() == duration
        # User CPU: every request the server received, 30 us each.
        requests = events[(events.process == process[r["server"]])
                          & events.func.isin(["server_read", "server_write"])]
        user = mine[mine.counter == "cpu_user_pct"]
        assert (user.value * user.interval_ns / 100).sum() == pytest.approx(
            len(requests) * CPU_PER_REQUEST_NS, rel=1e-9)
        # CPU % is the server's CPU time over the job's.
        busy = (mine.value * mine.interval_ns / 100).sum()
        assert r["cpu_percent"] == pytest.approx(busy / duration * 100, rel=1e-9)


def test_compare_of_a_simulation_with_itself_has_no_error(sim):
    c = json.loads(pioscope("compare", sim, sim, "--json").stdout)["servers"]
    assert (c["observed_servers"], c["simulated_servers"]) == (SERVERS, SERVERS)
    assert [(p["observed"], p["simulated"], p["paired_by"]) for p in c["servers"]] == \
        [(f"server-{i}", f"server-{i}", "name") for i in range(SERVERS)]
    for p in c["servers"]:
        assert [v["column"] for v in p["columns"]] == COLUMNS
        for v in p["columns"]:
            assert v["observed"] == v["expected"]
            # The metadata server moves no data: no bytes per access on either side.
            assert v["error"] == (None if v["observed"] is None else 0.0), (p["observed"], v)
    assert [(s["column"], s["worst_error"]) for s in c["columns"]] == [(k, 0.0) for k in COLUMNS]
    text = pioscope("compare", sim, sim).stdout
    assert f"storage servers: {SERVERS} observed, {SERVERS} simulated" in text
    assert "per column over the paired servers" in text


def test_compare_uses_each_runs_server_table(sim, tmp_path):
    """Twice the server CPU per request: the CPU column differs, each side as its own
    `stats --by server` says, with error (expected - observed) / observed."""
    slow = tmp_path / "slow"
    pioscope("simulate", "--system", "pvfs2-2009", "--workload", WORKLOAD, "--set",
             "storage.cpu_per_request_ns=60us", "-o", slow)
    c = json.loads(pioscope("compare", sim, slow, "--json").stdout)["servers"]
    observed, expected = server_table(sim)["servers"], server_table(slow)["servers"]
    for p, o, e in zip(c["servers"], observed, expected):
        cpu = p["columns"][COLUMNS.index("cpu_percent")]
        assert (cpu["observed"], cpu["expected"]) == (o["cpu_percent"], e["cpu_percent"])
        if o["cpu_percent"] > 0:
            assert cpu["error"] == pytest.approx(
                (e["cpu_percent"] - o["cpu_percent"]) / o["cpu_percent"], rel=1e-12)
            assert cpu["error"] > 0


def test_compare_with_a_trace_without_servers(sim):
    """A traced run without servers against a simulation: every simulated server alone."""
    observed = ROOT / "tests" / "data" / "hpio-collective"
    c = json.loads(pioscope("compare", observed, sim, "--json").stdout)["servers"]
    assert (c["observed_servers"], c["simulated_servers"]) == (0, SERVERS)
    assert {p["paired_by"] for p in c["servers"]} == {"unpaired"}
    assert all(p["observed"] is None for p in c["servers"])
    both = json.loads(pioscope("compare", observed, observed, "--json").stdout)
    assert both["servers"] is None, "neither trace has servers"
