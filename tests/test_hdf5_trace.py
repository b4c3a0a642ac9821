"""Parallel HDF5 under the tracer (issue 16): every HDF5 call of tests/programs/h5_trace.c is
recorded once per rank with its dataset's name, the selection's bytes and place and the
transfer mode; the MPI-IO calls of HDF5's MPI-IO driver and ROMIO's POSIX calls nest beneath
(H5Dwrite -> MPI_File_write_at_all -> pwrite); file and dataset properties are settings; stats
and dump show the dataset names; h5py without MPI is traced by the POSIX runtime."""
from pathlib import Path

import pytest

from conftest import PROGRAMS, pioscope, run_traced

# Debian's python3-h5py is installed for the system's Python (scripts/install-deps.sh).
SYSTEM_PYTHON = "/usr/bin/python3"

RANKS = 4
ROWS, COLUMNS = 16, 256
BLOCK = ROWS * COLUMNS * 8  # one rank's block of doubles, bytes

# What h5_trace calls, per rank (H5Aclose, H5Gclose, H5P*, H5S* are not traced).
EXPECTED_CALLS = {
    "H5Pset_fapl_mpio": 1, "H5Fcreate": 1, "H5Fopen": 1, "H5Fflush": 1, "H5Fclose": 2,
    "H5Gcreate2": 1, "H5Dcreate2": 2, "H5Dopen2": 1, "H5Dwrite": 2, "H5Dread": 1,
    "H5Dclose": 5, "H5Acreate2": 1, "H5Awrite": 2, "H5Dcreate1": 1, "H5Dopen1": 1,
    "H5Acreate_by_name": 1, "H5Oopen": 2, "H5Aread": 1,
}


@pytest.fixture(scope="module")
def h5(tmp_path_factory, programs):
    work = tmp_path_factory.mktemp("h5")
    target = work / "fields.h5"
    _, trace = run_traced(work / "trace", programs["h5_trace"], target, ranks=RANKS)
    trace.target = str(target)
    return trace


def hdf5(trace):
    return trace.events[trace.events.layer == "hdf5"]


def objects(trace, func):
    calls = trace.calls(func)
    return {trace.path_of(f) for f in calls.file_id}


def test_every_hdf5_call_is_recorded_once_per_rank(h5):
    counts = hdf5(h5).groupby(["rank", "func"]).size()
    for rank in range(RANKS):
        assert counts[rank].to_dict() == EXPECTED_CALLS, rank
    assert (hdf5(h5).error == 0).all()


def test_objects_are_the_file_and_its_datasets_groups_and_attributes(h5):
    f = h5.target
    for func in ["H5Fcreate", "H5Fopen", "H5Fflush", "H5Fclose"]:
        assert objects(h5, func) == {f}, func
    assert objects(h5, "H5Gcreate2") == {f + ":/fields"}
    assert objects(h5, "H5Dcreate2") == {f + ":/fields/temperature", f + ":/fields/pressure"}
    assert objects(h5, "H5Dopen2") == {f + ":/fields/temperature"}
    assert objects(h5, "H5Dclose") == {f + ":/fields/temperature", f + ":/fields/pressure",
                                       f + ":/fields/humidity"}
    assert objects(h5, "H5Acreate2") == objects(h5, "H5Aread") == {
        f + ":/fields/temperature@step"}
    assert objects(h5, "H5Acreate_by_name") == {f + ":/fields/pressure@units"}
    assert objects(h5, "H5Awrite") == {f + ":/fields/temperature@step",
                                       f + ":/fields/pressure@units"}
    for func in ["H5Awrite", "H5Aread", "H5Acreate2", "H5Acreate_by_name"]:
        assert (h5.calls(func)["size"] == 4).all(), func  # one int
    assert objects(h5, "H5Dcreate1") == objects(h5, "H5Dopen1") == {f + ":/fields/humidity"}
    assert objects(h5, "H5Oopen") == {f + ":/fields/pressure", f + ":/fields"}
    assert h5.calls("H5Pset_fapl_mpio").file_id.isna().all()


def test_transfers_record_bytes_place_and_transfer_mode(h5):
    f = h5.target
    for func, dataset, collective in [("H5Dwrite", "temperature", True),
                                      ("H5Dwrite", "pressure", False),
                                      ("H5Dread", "temperature", True)]:
        calls = h5.calls(func)
        calls = calls[calls.file_id.map(h5.path_of) == f"{f}:/fields/{dataset}"]
        assert len(calls) == RANKS, (func, dataset)
        assert (calls["size"] == BLOCK).all() and (calls.result == BLOCK).all()
        # Each rank's block of rows starts at rank x ROWS rows in the dataset's row order.
        assert sorted(zip(calls["rank"], calls.offset)) == [
            (r, r * BLOCK) for r in range(RANKS)]
        assert (calls.collective == collective).all(), (func, dataset)


def test_collective_write_nests_mpiio_and_posix_beneath(h5):
    """H5Dwrite -> MPI_File_write_at_all -> pwrite, on the aggregators."""
    temperature = h5.target + ":/fields/temperature"
    writes = h5.calls("H5Dwrite")
    writes = writes[writes.file_id.map(h5.path_of) == temperature]
    events = h5.events
    mpiio = events[events.parent.isin(writes.id) & (events.func == "MPI_File_write_at_all")]
    assert sorted(mpiio["rank"]) == list(range(RANKS))  # once per rank, a collective call
    assert mpiio.collective.all() and mpiio.instance.nunique() == 1
    assert (mpiio.file_id.map(h5.path_of) == h5.target).all()
    assert (mpiio.depth == writes.depth.iloc[0] + 1).all()
    pwrites = events[events.parent.isin(mpiio.id) & events.func.isin(["pwrite", "pwrite64"])]
    assert len(pwrites) >= 1
    assert (pwrites.file_id.map(h5.path_of) == h5.target).all()
    assert (pwrites.depth == writes.depth.iloc[0] + 2).all()
    # Every block reaches the file: the aggregators write all of it.
    assert pwrites["size"].sum() >= RANKS * BLOCK


def test_settings_hold_file_and_dataset_properties(h5):
    s = h5.settings
    s = s.assign(path=s.file_id.map(h5.path_of))

    def values(path, func):
        rows = s[(s.path == path) & (s.func == func) & (s["rank"] == 0)]
        return dict(zip(rows.key, rows.value))

    f = h5.target
    created = values(f, "H5Fcreate")
    assert created["h5.driver"] == "mpio"
    assert (created["h5.alignment_threshold"], created["h5.alignment"]) == ("1", "4096")
    assert created["h5.coll_metadata_write"] == "0"
    assert int(created["h5.mdc_max_size"]) > 0
    assert values(f, "H5Fopen")["h5.driver"] == "mpio"
    temperature = values(f + ":/fields/temperature", "H5Dcreate2")
    assert temperature == {"h5.dims": f"{ROWS * RANKS}x{COLUMNS}", "h5.type_size": "8",
                           "h5.layout": "contiguous"}
    pressure = values(f + ":/fields/pressure", "H5Dcreate2")
    assert (pressure["h5.layout"], pressure["h5.chunk"]) == ("chunked", f"{ROWS}x64")
    # Opened by H5Oopen or the 1.6 API, a dataset's settings are written as at H5Dopen2; a
    # group H5Oopen opens has none.
    assert values(f + ":/fields/pressure", "H5Oopen") == pressure
    assert values(f + ":/fields", "H5Oopen") == {}
    assert values(f + ":/fields/humidity", "H5Dopen1") == {
        "h5.dims": f"{ROWS * RANKS}x{COLUMNS}", "h5.type_size": "4", "h5.layout": "contiguous"}
    selection = values(f + ":/fields/pressure", "H5Dwrite")
    assert selection == {"h5.selection": f"{ROWS}x{COLUMNS}",
                         "h5.selection_type": "hyperslabs",
                         "h5.selection_points": str(ROWS * COLUMNS)}


def test_stats_and_dump_show_dataset_names(h5):
    rows = pioscope("stats", h5.path, "--by", "file").stdout.splitlines()
    temperature = [r.split() for r in rows if r.startswith(h5.target + ":/fields/temperature ")]
    assert len(temperature) == 1
    # file, layer, ops, bytes: create+write+close+open+read+close per rank, a block written
    # and read back per rank.
    assert temperature[0][1:5] == ["hdf5", str(6 * RANKS), f"{2 * RANKS * BLOCK // 1024}.0",
                                   "KiB"]
    layers = {r.split()[0] for r in pioscope("stats", h5.path).stdout.splitlines()[2:] if r}
    assert "hdf5" in layers
    dump = pioscope("dump", h5.path, "--layer", "hdf5", "--rank", "1").stdout
    assert f"H5Dwrite {h5.target}:/fields/temperature off={BLOCK} size={BLOCK} collective" \
        in dump
    assert f"H5Dwrite {h5.target}:/fields/pressure off={BLOCK} size={BLOCK}\n" in dump


def test_simulator_replays_the_mpiio_calls_beneath_hdf5(h5, tmp_path):
    sim = tmp_path / "sim"
    pioscope("simulate", "--trace", h5.path, "-o", sim)
    replayed = {}
    for line in pioscope("stats", sim, "--by", "func").stdout.splitlines():
        cols = line.split()
        if len(cols) > 2 and cols[1] in ("mpiio", "hdf5"):
            replayed[cols[0]] = int(cols[2])
    traced = h5.events[h5.events.layer == "mpiio"].groupby("func").size().to_dict()
    assert replayed["MPI_File_write_at_all"] == traced["MPI_File_write_at_all"] > 0
    assert not any(f.startswith("H5") for f in replayed)  # seen through, not replayed


def test_h5py_is_traced_by_the_posix_runtime(tmp_path):
    """h5py loads HDF5 as a dependency of a Python extension (dlopen RTLD_LOCAL): the wrappers
    find the real functions outside the global scope, and the program works as untraced."""
    target = tmp_path / "grid.h5"
    _, trace = run_traced(tmp_path / "trace", SYSTEM_PYTHON, PROGRAMS / "h5py_write.py", target,
                          extra=["--runtime", "posix"])
    calls = hdf5(trace).groupby("func").size().to_dict()
    # h5py closes the file by dropping its last reference (H5Idec_ref), not with H5Fclose,
    # and creates attributes by name.
    assert calls == {"H5Fcreate": 1, "H5Gcreate2": 1, "H5Dcreate2": 1, "H5Dwrite": 1,
                     "H5Acreate_by_name": 1, "H5Awrite": 1}
    write = trace.calls("H5Dwrite").iloc[0]
    assert trace.path_of(write.file_id) == f"{target}:/grid/values"
    assert (write["size"], write.offset, write.collective) == (2 * 128 * 8, 2 * 128 * 8, False)
    for func in ["H5Acreate_by_name", "H5Awrite"]:
        attribute = trace.calls(func).file_id.iloc[0]
        assert trace.path_of(attribute) == f"{target}:/grid/values@units", func
    create = trace.calls("H5Fcreate").iloc[0]
    opens = trace.events[(trace.events.parent == create.id) & (trace.events.func == "open")]
    assert set(opens.file_id.map(trace.path_of)) == {str(target)}
    assert Path(target).stat().st_size > 2 * 128 * 8
