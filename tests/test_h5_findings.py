"""Findings of the HDF5 layer (issue 16 item 3) on tests/programs/h5_findings.c: written one
row per independent H5Dwrite with the default file access properties, `pioscope report`
finds the independent writes and the metadata every rank reads and writes itself, and names
the HDF5 calls that fix them; the same program with a collective transfer and collective
metadata has neither finding."""
import json

import pytest

from conftest import pioscope, run_traced

RANKS = 4
ROWS, COLUMNS = 32, 512
ROW = COLUMNS * 8  # bytes of one row of doubles


@pytest.fixture(scope="module")
def reports(tmp_path_factory, programs):
    """{mode: (target file, findings by id)} for both modes of h5_findings."""
    out = {}
    for mode in ["independent", "collective"]:
        work = tmp_path_factory.mktemp(mode)
        target = work / "grid.h5"
        run_traced(work / "trace", programs["h5_findings"], mode, target, ranks=RANKS)
        report = json.loads(pioscope("report", "--json", work / "trace").stdout)
        out[mode] = (str(target), {f["id"]: f for f in report["findings"]})
    return out


def test_independent_row_writes_are_found_with_the_collective_remedy(reports):
    target, found = reports["independent"]
    f = found["h5-independent-writes"]
    n = f["evidence"]["numbers"]
    assert n["calls"] == RANKS * ROWS
    assert (n["ranks"], n["datasets"]) == (RANKS, 1)
    assert n["bytes"] == RANKS * ROWS * ROW and n["mean_bytes"] == ROW
    # Every H5Dwrite reached the storage through ROMIO: one pwrite per row.
    assert n["posix_requests"] == RANKS * ROWS
    assert f["evidence"]["worst"][0].startswith(f"{target}:/grid: {RANKS * ROWS} independent")
    assert 0 <= f["cost_ns"] <= n["time_ns"]
    assert "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE)" in f["remedy"]


def test_metadata_accessed_by_every_rank_is_found_with_both_settings(reports):
    target, found = reports["independent"]
    f = found["h5-independent-metadata"]
    n = f["evidence"]["numbers"]
    assert (n["ranks"], n["files"]) == (RANKS, 1)
    # Every rank reads the superblock and the dataset's header itself at H5Fopen/H5Dopen2.
    assert n["reads"] >= RANKS and n["writes"] >= 1
    assert n["requests"] == n["reads"] + n["writes"]
    assert f["evidence"]["worst"][0].startswith(f"{target}: {RANKS} ranks, ")
    assert "H5Pset_all_coll_metadata_ops(fapl, 1)" in f["remedy"]
    assert "H5Pset_coll_metadata_write(fapl, 1)" in f["remedy"]


def test_collective_transfers_and_metadata_have_neither_finding(reports):
    _, found = reports["collective"]
    assert "h5-independent-writes" not in found
    assert "h5-independent-metadata" not in found
