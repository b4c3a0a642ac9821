"""MPI-IO under the tracer: ROMIO's data sieving and two-phase I/O show as POSIX children of the
MPI-IO calls, collective instances line up across ranks, hints are the values MPI really uses,
and the program behaves the same with and without the tracer."""
import subprocess

import pytest

from conftest import Trace, bench_binary, pioscope, run_traced

RANKS = 4
HPIO_SMALL = ["--region-size", "32", "--region-count", "4096", "--region-spacing", "128",
              "--iterations", "2"]


def hpio(tmp_path, mode, *extra):
    target = tmp_path / f"hpio-{mode}.dat"
    return run_traced(tmp_path / f"trace-{mode}", bench_binary("hpio"), *HPIO_SMALL,
                      "--mode", mode, "--path", target, *extra, ranks=RANKS)[1]


def children(trace, parents):
    return trace.events[trace.events.parent.isin(parents.id)]


@pytest.fixture(scope="module")
def independent(tmp_path_factory):
    return hpio(tmp_path_factory.mktemp("independent"), "independent")


@pytest.fixture(scope="module")
def collective(tmp_path_factory):
    return hpio(tmp_path_factory.mktemp("collective"), "collective")


def test_data_sieving_shows_as_posix_children_of_independent_writes(independent):
    writes = independent.calls("MPI_File_write")
    assert len(writes) == RANKS * 2
    assert sorted(writes["rank"].unique()) == list(range(RANKS))
    kids = children(independent, writes)
    assert set(kids.layer) >= {"posix"}
    funcs = set(kids.func)
    # ROMIO's read-modify-write: it reads the window around the regions, then writes it back.
    assert funcs & {"pread", "pread64"}, funcs
    assert funcs & {"pwrite", "pwrite64"}, funcs
    for _, write in writes.iterrows():
        mine = kids[kids.parent == write.id]
        written = mine[mine.func.isin(["pwrite", "pwrite64"])]["size"].sum()
        # The sieving writes cover the holes between regions too: more than was asked.
        assert written > write["size"] > 0


def test_two_phase_writes_happen_only_on_aggregators(collective):
    writes = collective.calls("MPI_File_write_all")
    assert len(writes) == RANKS * 2
    kids = children(collective, writes)
    posix_writes = kids[kids.func.isin(["pwrite", "pwrite64", "write"])]
    aggregators = set(posix_writes["rank"])
    hints = collective.settings[(collective.settings.key == "cb_nodes")]
    cb_nodes = int(hints["value"].iloc[0])
    assert len(aggregators) == cb_nodes >= 1
    assert aggregators < set(range(RANKS))
    assert (posix_writes.depth == writes.depth.iloc[0] + 1).all()


def test_the_report_names_romio_and_its_collective_buffering(collective):
    s = collective.settings
    first_file = s[s.key == "cb_nodes"].file_id.min()
    on_file = s[s.file_id == first_file]
    # The lowest rank's first value of each key, as the report takes it.
    hints = on_file[on_file["rank"] == on_file["rank"].min()].sort_values("time_ns")
    value = dict(zip(hints.key[::-1], hints.value[::-1]))
    report = pioscope("report", collective.path).stdout
    line = next(l for l in report.splitlines() if l.startswith("MPI-IO"))
    assert line == (f"MPI-IO   ROMIO; {collective.path_of(first_file)}: "
                    f"cb_nodes={value['cb_nodes']}, cb_buffer_size={value['cb_buffer_size']}")


def test_collective_instance_is_shared_by_all_ranks(collective):
    writes = collective.calls("MPI_File_write_all")
    assert writes.instance.notna().all()
    per_instance = writes.groupby("instance")["rank"].apply(sorted)
    assert len(per_instance) == 2
    for ranks in per_instance:
        assert ranks == list(range(RANKS))
    assert writes["collective"].all()


def test_independent_calls_are_not_collective(independent):
    writes = independent.calls("MPI_File_write")
    assert not writes["collective"].any()
    assert writes.instance.isna().all()


def test_recorded_hints_equal_what_mpi_reports(programs, tmp_path):
    target = tmp_path / "hints.dat"
    result, trace = run_traced(tmp_path / "trace", programs["mpi_hints"], target, ranks=RANKS)
    reported = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    assert reported["cb_buffer_size"] == "1048576"
    file_id = trace.files[trace.files.path == str(target)].file_id.iloc[0]
    s = trace.settings
    at_open = s[(s["rank"] == 0) & (s.file_id == file_id) & (s.func == "MPI_File_open")]
    # view.* and open.* are the tracer's own keys; every other key is a hint.
    recorded = {k: v for k, v in zip(at_open.key, at_open.value)
                if not k.startswith(("view.", "open."))}
    assert recorded == reported


def test_same_output_with_and_without_tracer(programs, tmp_path):
    plain = subprocess.run(["mpiexec", "-n", str(RANKS), programs["mpi_checksum"],
                            tmp_path / "plain.dat"], capture_output=True, text=True)
    traced, trace = run_traced(tmp_path / "trace", programs["mpi_checksum"],
                               tmp_path / "traced.dat", ranks=RANKS)
    assert plain.returncode == 0 and "mismatches=0" in plain.stdout
    checksum = [l for l in traced.stdout.splitlines() if l.startswith("ranks=")]
    assert checksum == plain.stdout.splitlines()
    assert (tmp_path / "plain.dat").read_bytes() == (tmp_path / "traced.dat").read_bytes()
    calls = trace.events
    assert (calls.func == "MPI_File_write_at_all").sum() == RANKS
    assert (calls.func == "MPI_File_write_at").sum() == RANKS


def test_rank_facts_and_clock_sync(programs, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["mpi_checksum"], tmp_path / "c.dat",
                          ranks=RANKS)
    ranks = sorted(p["rank"] for p in trace.meta["processes"])
    assert ranks == list(range(RANKS))
    assert set(trace.events["rank"]) == set(range(RANKS))
    assert "MPICH" in trace.meta["job"]["mpi_library"]
    # MPICH's MPI-IO is ROMIO; no ROMIO_HINTS file tunes it here.
    assert {(p["facts"]["mpi_io"], p["facts"]["mpi_io_params"])
            for p in trace.meta["processes"]} == {("ROMIO", "")}
    # One host: every rank reads rank 0's own CLOCK_MONOTONIC, no offset is applied.
    assert {p["clock"]["offset_source"] for p in trace.meta["processes"]} == {"shared_clock"}


def test_a_file_opened_on_comm_self_replays(programs, workdir, tmp_path):
    """Issue 13: `simulate --trace` deadlocked when one rank opened a file on MPI_COMM_SELF
    (it waited at a barrier for ranks that never came)."""
    _, trace = run_traced(tmp_path / "trace", programs["mpi_comm_self"], workdir, ranks=2)
    opens = trace.calls("MPI_File_open")
    self_opens = opens[opens.file_id == trace.on_file("self.dat").file_id.iloc[0]]
    assert list(self_opens["rank"]) == [0]
    sim = tmp_path / "sim"
    pioscope("simulate", "--trace", tmp_path / "trace", "-o", sim)
    replayed = Trace(sim)
    ev = replayed.events
    top = ev[(ev.depth == 0) & ev.func.str.startswith("MPI_File_")]
    per_rank = {r: sorted(top[top["rank"] == r].func) for r in (0, 1)}
    assert per_rank[1] == ["MPI_File_close", "MPI_File_open", "MPI_File_write_at_all"]
    assert per_rank[0] == sorted(per_rank[1] + ["MPI_File_close", "MPI_File_open",
                                                "MPI_File_write_at"])
