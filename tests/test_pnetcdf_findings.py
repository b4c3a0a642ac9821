"""Findings of the PnetCDF layer (issue 16) on tests/programs/pnc_findings.c: written one row
per blocking ncmpi_put_vara_double_all with no header space reserved, `pioscope report` finds
the blocking calls (remedy: ncmpi_iput_vara + ncmpi_wait_all) and the data the enddef after
ncmpi_redef moved for the larger header (remedy: ncmpi__enddef h_minfree); the same program
with ncmpi_iput_vara_double, one ncmpi_wait_all and ncmpi__enddef reserving the header space
has neither finding."""
import json

import pytest

from conftest import pioscope, pnetcdf_program, run_traced

RANKS = 4
ROWS, COLUMNS = 16, 512
ROW = COLUMNS * 8  # bytes of one row of doubles


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """{mode: (target file, trace, findings by id)} for both modes of pnc_findings."""
    exe = pnetcdf_program("pnc_findings", tmp_path_factory.mktemp("pnc_findings"))
    out = {}
    for mode in ["blocking", "nonblocking"]:
        work = tmp_path_factory.mktemp(mode)
        target = work / "rows.nc"
        _, trace = run_traced(work / "trace", exe, mode, target, ranks=RANKS)
        report = json.loads(pioscope("report", "--json", work / "trace").stdout)
        out[mode] = (str(target), trace, {f["id"]: f for f in report["findings"]})
    return out


def test_row_by_row_blocking_puts_are_found_with_the_nonblocking_remedy(reports):
    target, _, found = reports["blocking"]
    f = found["pnetcdf-blocking"]
    n = f["evidence"]["numbers"]
    assert (n["calls"], n["put_calls"], n["get_calls"]) == (RANKS * ROWS, RANKS * ROWS, 0)
    assert n["calls_per_rank"] == ROWS
    assert n["bytes"] == RANKS * ROWS * ROW and n["mean_bytes"] == ROW
    assert f["evidence"]["worst"][0].startswith(f"{target}:temperature: {RANKS * ROWS} blocking")
    assert 0 <= f["cost_ns"] <= n["time_ns"]
    assert "ncmpi_iput_vara (ncmpi_iput_vara_<type>) instead of ncmpi_put_vara" in f["remedy"]
    assert "ncmpi_wait_all" in f["remedy"]


def test_the_data_moved_for_a_larger_header_is_found(reports):
    target, _, found = reports["blocking"]
    f = found["pnetcdf-redef-moves"]
    n = f["evidence"]["numbers"]
    # Every rank's enddef after the redef; the data written before it (all of temperature)
    # is read back and written further down.
    assert (n["enddefs"], n["files"]) == (RANKS, 1)
    assert n["moved_bytes"] == RANKS * ROWS * ROW
    assert n["move_reads"] >= 1 and n["move_writes"] >= 2  # the data, and the new header
    assert f["evidence"]["worst"][0].startswith(f"{target}: {RANKS} ncmpi_enddef after")
    assert "ncmpi__enddef(ncid, h_minfree" in f["remedy"]


def test_queued_puts_are_recorded_nonblocking(reports):
    _, trace, _ = reports["nonblocking"]
    queued = trace.calls("ncmpi_iput_vara")
    assert len(queued) == RANKS * ROWS
    assert (queued["flags"] & 0x04 != 0).all() and queued.request.isna().all()
    assert len(trace.calls("ncmpi__enddef")) == RANKS


def test_the_fast_way_has_neither_finding(reports):
    _, _, found = reports["nonblocking"]
    assert not {"pnetcdf-blocking", "pnetcdf-redef-moves"} & set(found)
