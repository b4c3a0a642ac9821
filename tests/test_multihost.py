"""Ranks on several hosts with different clocks (issue 19, part 3): a real MPICH run on this
machine whose ranks sit on pretend hosts (tests/multihost_launch.sh: a UTS namespace per rank,
so each has its own host name, and the runtime's test-only PIOSCOPE_TEST_CLOCK_SKEW, so each
host's CLOCK_MONOTONIC has its own offset and drift). After `pioscope run` (the launcher chosen
with --launcher, as srun would be) and its merge:
- the offsets measured at MPI_Init and MPI_Finalize are the injected ones, within half the
  round trip of the ping-pong that measured them (its error bound), and ranks on rank 0's host
  share its clock;
- causally ordered events are in order after the merge, within the sum of the two processes'
  sync error bounds: every send starts before its receive ends, every barrier's last entry
  comes before its first exit;
- `stats --by host` has one row per host, `report --json` one aggregator per host (ROMIO's
  default), and the viewer's /api/rows groups the ranks by host.
Needs root (unshare) and MPICH's hydra."""
import json
import os
import shutil

import pandas as pd
import pytest

from conftest import ROOT, pioscope, run_traced
from test_view_server import get, start

RANKS = 4
LAUNCHER = ROOT / "tests" / "multihost_launch.sh"
# Host and clock of each rank: HOST=OFFSET_NS,DRIFT_PPM. Rank 0's host is skewed as well, so
# the reference clock is not the machine's. The drifts (0.03 % to 0.1 %) are far above a real
# crystal's, so that over the program's 0.4 s pause they move the offsets by up to 0.4 ms.
HOSTS = [("node0", 7_000_000_000, 300), ("node0", 7_000_000_000, 300),
         ("node1", -2_500_000_000, -800), ("node2", 4_000_000_000, 1000)]
ROUNDS = 5  # tests/programs/mpi_multihost.c
BLOCK = 65536


def skewed(host_index: int, mono: float) -> float:
    """What rank `host_index`'s clock reads at machine CLOCK_MONOTONIC `mono` (clock.c)."""
    _, offset, ppm = HOSTS[host_index]
    return mono + offset + mono * ppm / 1e6


def unskewed(host_index: int, local: float) -> float:
    _, offset, ppm = HOSTS[host_index]
    return (local - offset) / (1 + ppm / 1e6)


# Both record clocks: with the TSC the skew reaches the records through the fit of ticks to the
# skewed CLOCK_MONOTONIC; with CLOCK_MONOTONIC the ticks are the machine's own ns, and the fit
# learns the skewed host's offset and rate from the pairs just the same.
@pytest.fixture(scope="module", params=["tsc", "monotonic"])
def traced(request, programs, tmp_path_factory):
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.fail("the multi-host test needs root and unshare (UTS namespaces)")
    tmp = tmp_path_factory.mktemp("multihost")
    env = {"PIOSCOPE_TEST_HOSTS": " ".join(f"{h}={o},{p}" for h, o, p in HOSTS),
           "PIOSCOPE_CLOCK": request.param}
    os.environ.update(env)
    try:
        result, trace = run_traced(tmp / "trace", programs["mpi_multihost"], tmp / "out.dat",
                                   ranks=RANKS, extra=("--launcher", LAUNCHER, "--no-counters"))
    finally:
        for key in env:
            del os.environ[key]
    for rank, (host, _, _) in enumerate(HOSTS):
        assert f"rank {rank} on {host} done" in result.stdout
    assert {p["clock"]["kind"] for p in trace.meta["processes"]} == {request.param}
    return trace


def ranks_of(trace):
    return {p["rank"]: p for p in trace.meta["processes"] if p["rank"] >= 0}


def error_bound(process) -> float:
    """Half the largest round trip of the sync points a process's offsets come from (0 on the
    reference's host: the very same clock)."""
    clock = process["clock"]
    if clock["offset_source"] == "shared_clock":
        return 0.0
    return max(clock[p]["rtt_ns"] for p in ("init", "finalize")) / 2


def test_every_rank_is_on_its_host(traced):
    procs = ranks_of(traced)
    assert sorted(procs) == list(range(RANKS))
    assert [procs[r]["host"] for r in range(RANKS)] == [h for h, _, _ in HOSTS]
    assert sorted(f.split("-")[0] for f in traced.meta["raw_files"]) == \
        sorted(h for h, _, _ in HOSTS)


def test_offsets_are_the_injected_ones_within_the_sync_error(traced):
    procs = ranks_of(traced)
    assert procs[0]["clock"]["offset_source"] == "shared_clock"
    assert procs[1]["clock"]["offset_source"] == "shared_clock"
    for rank in (2, 3):
        clock = procs[rank]["clock"]
        assert clock["offset_source"] == "init_finalize"
        for phase in ("init", "finalize"):
            point = clock[phase]
            mono = unskewed(rank, point["local_mono_ns"])
            expected = skewed(0, mono) - point["local_mono_ns"]
            # Half the round trip bounds the error; the ns roundings add at most 2 ns.
            assert abs(point["offset_ns"] - expected) <= point["rtt_ns"] / 2 + 2, (rank, phase)
        # The drift moved the offset between the two measurements as much as it should.
        span = unskewed(rank, clock["finalize"]["local_mono_ns"]) - \
            unskewed(rank, clock["init"]["local_mono_ns"])
        drift_ns = span * (HOSTS[0][2] - HOSTS[rank][2]) / 1e6
        measured = clock["finalize"]["offset_ns"] - clock["init"]["offset_ns"]
        assert abs(measured - drift_ns) <= clock["init"]["rtt_ns"] / 2 + \
            clock["finalize"]["rtt_ns"] / 2 + 4, rank


def test_every_message_is_received_after_it_was_sent(traced):
    procs = ranks_of(traced)
    m = pd.read_parquet(traced.path / "messages.parquet")
    ring = m[(m.comm == "world") & (m.tag == 1)]
    assert len(ring) == ROUNDS * RANKS
    assert set(ring.send_func) == {"MPI_Send"} and set(ring.recv_func) == {"MPI_Recv"}
    assert traced.meta["counts"]["unmatched_sends"] == 0
    assert traced.meta["counts"]["unmatched_receives"] == 0
    # Every message, ROMIO's own exchanges of the collective write too.
    ev = traced.events.set_index("id")
    recv_end = (ev.loc[m.recv_id, "start_ns"] + ev.loc[m.recv_id, "duration_ns"]).to_numpy()
    for send_ns, end, src, dst in zip(m.send_ns, recv_end, m.from_rank, m.to_rank):
        slack = error_bound(procs[src]) + error_bound(procs[dst])
        assert send_ns <= end + slack, (src, dst, send_ns, end, slack)


def assert_all_enter_before_any_leaves(calls, slack):
    assert sorted(calls["rank"]) == list(range(RANKS))
    last_entry = calls.start_ns.max()
    first_exit = (calls.start_ns + calls.duration_ns).min()
    assert last_entry <= first_exit + slack, (last_entry, first_exit, slack)


def test_every_synchronising_collective_is_entered_by_all_before_anyone_leaves(traced):
    procs = ranks_of(traced)
    slack = 2 * max(error_bound(p) for p in procs.values())
    # MPI_Barrier on MPI_COMM_WORLD: the k-th call of every rank is one barrier.
    barriers = traced.calls("MPI_Barrier")
    barriers = barriers[barriers.comm == "world"].sort_values("start_ns")
    barriers = barriers.assign(k=barriers.groupby("rank").cumcount())
    assert len(barriers) == (ROUNDS + 2) * RANKS
    for _, b in barriers.groupby("k"):
        assert_all_enter_before_any_leaves(b, slack)
    # The MPI-IO collective instances that exchange with every rank (ROMIO's open agrees on
    # the access mode, two-phase exchanges the requests).
    for func in ("MPI_File_open", "MPI_File_write_at_all"):
        calls = traced.calls(func)
        assert calls.instance.nunique() == 1
        assert_all_enter_before_any_leaves(calls, slack)


def test_stats_by_host_has_one_row_per_host(traced):
    stats = json.loads(pioscope("stats", traced.path, "--by", "host", "--json").stdout)
    mpiio = {r["group"]: r for r in stats["rows"] if r["layer"] == "mpiio"}
    # Each host wrote its ranks' blocks through MPI_File_write_at_all.
    assert {h: r["bytes"] for h, r in mpiio.items()} == \
        {"node0": 2 * BLOCK, "node1": BLOCK, "node2": BLOCK}


def test_one_aggregator_per_host(traced):
    report = json.loads(pioscope("report", traced.path, "--json").stdout)
    agg = report["aggregation"]
    assert [(h["host"], h["ranks"], h["aggregators"]) for h in agg["hosts"]] == \
        [("node0", 2, 1), ("node1", 1, 1), ("node2", 1, 1)]
    assert agg["hosts_without_aggregator"] == []


def test_viewer_groups_rows_by_host(traced):
    proc, url = start(traced.path)
    try:
        status, rows = get(url + "api/rows?trace=0")
    finally:
        proc.terminate()
        proc.wait()
    assert status == 200
    # A row per thread (MPICH starts one beside main): the ranks of each host, in order.
    groups = [(g["host"], sorted({r["rank"] for r in g["rows"]})) for g in rows["groups"]]
    assert groups == [("node0", [0, 1]), ("node1", [2]), ("node2", [3])]
    assert [r["label"] for r in rows["groups"][1]["rows"]][0] == "rank 2"
