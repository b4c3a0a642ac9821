"""Issue 13: what counts by default on real MPI programs. The records the MPI library makes
inside MPI_Init and MPI_Finalize and the POSIX calls ROMIO makes on its hidden shared-pointer
file are in the store but out of the default scope of report, stats and dump (--all shows
them)."""
import json

import pandas as pd
import pytest

from conftest import pioscope, run_traced


@pytest.fixture
def shared_trace(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["mpi_write_shared"], workdir, ranks=2)
    return tmp_path / "trace", trace


def test_write_shared_is_no_noncontiguous_access(shared_trace):
    """MPI_File_write_shared with a contiguous view: ROMIO's POSIX calls on
    .shared.dat.shfp.<n> are not the application's requests."""
    path, trace = shared_trace
    helper = trace.files[trace.files.path.str.contains(r"/\.shared\.dat\.shfp\.")]
    assert len(helper) == 1, list(trace.files.path)
    on_helper = trace.events[trace.events.file_id.isin(helper.file_id)]
    writes = trace.calls("MPI_File_write_shared")
    assert len(writes) == 32
    inside = on_helper[on_helper.parent.isin(writes.id)]
    assert len(inside) > 0, "ROMIO reads and writes the shared pointer inside the call"

    report = json.loads(pioscope("report", path, "--json").stdout)
    ids = [f["id"] for f in report["findings"]]
    assert "noncontiguous-independent" not in ids, report["findings"]
    assert "split-requests" not in ids, report["findings"]
    files = [r["group"] for r in report["tables"]["file"]]
    assert not any(".shfp." in f for f in files), files
    everything = json.loads(pioscope("stats", path, "--by", "file", "--json", "--all").stdout)
    assert any(".shfp." in r["group"] for r in everything["rows"])


def dump_lines(path, *extra):
    out = pioscope("dump", path, "--rank", "0", *extra).stdout.splitlines()
    return out[1:]


def test_dump_leaves_out_init_and_finalize(shared_trace):
    """`pioscope dump` has the default scope of `stats`: nothing the MPI library does inside
    MPI_Init/MPI_Finalize, no system file; `--all` shows every record."""
    path, trace = shared_trace
    ev = trace.events[trace.events["rank"] == 0]
    lifecycle = ev[ev.func.isin(["MPI_Init", "MPI_Init_thread", "MPI_Finalize"])]
    assert len(lifecycle) == 2
    inside = pd.concat([
        ev[(ev.start_ns >= call.start_ns) & (ev.start_ns < call.start_ns + call.duration_ns)
           & (ev.id != call.id)]
        for _, call in lifecycle.iterrows()])
    assert len(inside) > 0, "MPICH makes traced calls inside MPI_Init"

    default = dump_lines(path)
    everything = dump_lines(path, "--all")
    assert len(everything) == len(ev)
    starts = {int(line.split()[0].replace(".", "")) for line in default}
    assert not starts & set(inside.start_ns), "a record inside MPI_Init/Finalize is shown"
    funcs = [line.split()[6] for line in default]
    assert funcs[:4] == ["fopen", "fclose", "MPI_Init", "MPI_File_open"], default[:5]
    assert funcs.count("MPI_File_write_shared") == 16
    assert not any("/sys/" in line or ".shfp." in line for line in default)
    assert any(".shfp." in line for line in everything)
    assert "config.txt" in default[0], "the program's own I/O before MPI_Init counts"
