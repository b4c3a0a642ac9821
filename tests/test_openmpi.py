"""MPI-IO under Open MPI (docs/RUNTIME.md, "MPI flavours"): `pioscope run` preloads the runtime
built for Open MPI (libpioscope-openmpi.so) into a program linking libmpi.so.40, and traces
HPIO under each of Open MPI's MPI-IO implementations, OMPIO (its default) and ROMIO
(`--mca io romio321`, here OMPI_MCA_io): the trace and the report name the one in force, and
the POSIX calls beneath show how each does the I/O."""
import os
import subprocess

import pytest

from conftest import BUILD, OMPI_ENV, ROOT, Trace, pioscope

RANKS = 4
ITERATIONS = 2
REGIONS = 4096
HPIO_SMALL = ["--region-size", "32", "--region-count", str(REGIONS), "--region-spacing", "128",
              "--iterations", str(ITERATIONS)]
# Open MPI's io components (ompi_info | grep 'MCA io') and the implementation each is.
IMPLEMENTATION = {"ompio": "OMPIO", "romio321": "ROMIO"}


def ompi_env(io: str) -> dict:
    return {**os.environ, **OMPI_ENV, "OMPI_MCA_io": io}


@pytest.fixture(scope="module")
def hpio_openmpi(tmp_path_factory):
    """HPIO built with Open MPI's compiler wrapper (bench/Makefile, its MPICC)."""
    out = tmp_path_factory.mktemp("hpio-openmpi")
    exe = out / "pioscope-hpio"
    subprocess.run(["make", "-s", "-C", ROOT / "bench", "MPICC=mpicc.openmpi", f"BINDIR={out}",
                    f"OBJDIR={out / 'obj'}", exe], check=True)
    return exe


@pytest.fixture(scope="module", params=sorted(IMPLEMENTATION))
def traces(request, hpio_openmpi, tmp_path_factory):
    """(io component, {mode: Trace}) of HPIO independent and collective under that component."""
    io = request.param
    tmp = tmp_path_factory.mktemp(io)
    traces = {}
    for mode in ("independent", "collective"):
        pioscope("run", "-o", tmp / mode, "-n", RANKS, "--launcher", "mpiexec.openmpi", "--",
                 hpio_openmpi, *HPIO_SMALL, "--mode", mode, "--path", tmp / f"{mode}.dat",
                 env=ompi_env(io))
        traces[mode] = Trace(tmp / mode)
    return io, traces


def children(trace, parents):
    return trace.events[trace.events.parent.isin(parents.id)]


def test_the_trace_names_open_mpi_and_the_implementation_in_force(traces):
    io, by_mode = traces
    for trace in by_mode.values():
        assert trace.meta["job"]["mpi_library"].startswith("Open MPI v4.1")
        facts = [p["facts"] for p in trace.meta["processes"]]
        assert len(facts) == RANKS
        assert {f["mpi_io"] for f in facts} == {IMPLEMENTATION[io]}
        assert {f["mpi_io_params"] for f in facts} == {f"OMPI_MCA_io={io}"}
    report = pioscope("report", by_mode["collective"].path).stdout
    assert f"MPI-IO   {IMPLEMENTATION[io]} (OMPI_MCA_io={io})\n" in report


def test_independent_and_collective_calls_line_up_across_ranks(traces):
    _, by_mode = traces
    writes = by_mode["independent"].calls("MPI_File_write")
    assert len(writes) == RANKS * ITERATIONS
    assert sorted(writes["rank"].unique()) == list(range(RANKS))
    assert not writes["collective"].any()
    collective = by_mode["collective"].calls("MPI_File_write_all")
    assert len(collective) == RANKS * ITERATIONS
    assert collective["collective"].all()
    per_instance = collective.groupby("instance")["rank"].apply(sorted)
    assert list(per_instance) == [list(range(RANKS))] * ITERATIONS


def test_each_implementation_writes_noncontiguous_regions_its_own_way(traces):
    """ROMIO sieves (reads the window around the regions, writes it back); OMPIO writes each
    region with its own pwritev and reads nothing."""
    io, by_mode = traces
    trace = by_mode["independent"]
    writes = trace.calls("MPI_File_write")
    kids = children(trace, writes)
    funcs = set(kids.func)
    if IMPLEMENTATION[io] == "ROMIO":
        assert {"pread", "pwrite"} <= funcs, funcs
        for _, write in writes.iterrows():
            mine = kids[(kids.parent == write.id) & (kids.func == "pwrite")]
            assert mine["size"].sum() > write["size"] > 0
    else:
        assert funcs == {"pwritev"}, funcs
        per_write = kids.groupby("parent").size()
        assert list(per_write) == [REGIONS] * len(writes)


def test_collective_writes_go_through_aggregators(traces):
    _, by_mode = traces
    trace = by_mode["collective"]
    writes = trace.calls("MPI_File_write_all")
    kids = children(trace, writes)
    posix_writes = kids[kids.func.isin(["pwrite", "pwritev", "write"])]
    # One node: both implementations pick one aggregator, rank 0.
    assert set(posix_writes["rank"]) == {0}
    assert (posix_writes.depth == writes.depth.iloc[0] + 1).all()


def test_a_missing_flavour_is_a_clear_error(hpio_openmpi, tmp_path):
    """A runtime directory without the Open MPI runtime: the program's libmpi.so.40 says which
    one is needed, and pioscope says it is not there instead of preloading another."""
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("libpioscope-mpich.so", "libpioscope-posix.so"):
        (lib / name).symlink_to(BUILD / "lib" / name)
    (lib / "libpioscope.so").symlink_to("libpioscope-mpich.so")
    result = pioscope("run", "-o", tmp_path / "t", "-n", 2, "--", hpio_openmpi, check=False,
                      env={**ompi_env("ompio"), "PIOSCOPE_LIB_DIR": str(lib)})
    assert result.returncode == 2, result
    assert f"{hpio_openmpi} links libmpi.so.40, but the runtime for Open MPI " \
           f"(libpioscope-openmpi.so) is not in {lib}" in result.stderr
    assert not (tmp_path / "t").exists()
