"""Findings of the HDF5 layer (issue 16 item 3) on tests/programs/h5_findings.c: written one
row per independent H5Dwrite with the default file access properties, one attribute per
value and a flush every 8 rows, `pioscope report` finds the independent writes, the metadata
every rank reads and writes itself, the small attributes and the frequent flushes, and names
the HDF5 calls that fix them; the same program with a collective transfer, collective
metadata, one array attribute and one flush has none of these findings. On
tests/programs/h5_chunks.c (a 64 KiB striping_unit hint), one-row chunks after unaligned
metadata are found by h5-chunk-stripe with the chunk shape and H5Pset_alignment that fix them;
stripe-sized chunks aligned to the stripe are not."""
import json

import pytest

from conftest import pioscope, run_traced

RANKS = 4
ROWS, COLUMNS = 32, 512
ROW = COLUMNS * 8  # bytes of one row of doubles
STEPS, FLUSH_ROWS = 40, 8
H5_RULES = ["h5-independent-writes", "h5-independent-metadata", "h5-small-attributes",
            "h5-frequent-flush"]


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


def test_one_attribute_per_value_is_found_with_the_grouping_remedy(reports):
    target, found = reports["independent"]
    f = found["h5-small-attributes"]
    n = f["evidence"]["numbers"]
    assert n["attributes"] == n["writes"] == RANKS * STEPS
    assert n["bytes"] == RANKS * STEPS * 4 and n["mean_bytes"] == 4  # one int each
    assert n["objects"] == 1
    assert f["evidence"]["worst"][0].startswith(f"{target}:/grid: {RANKS * STEPS} H5Acreate2")
    assert f["remedy"].startswith(f"Group the small values of {target}:/grid into one attribute")


def test_a_flush_every_few_rows_is_found(reports):
    target, found = reports["independent"]
    f = found["h5-frequent-flush"]
    n = f["evidence"]["numbers"]
    assert n["flushes"] == RANKS * ROWS // FLUSH_ROWS
    assert n["flushes_per_rank"] == ROWS // FLUSH_ROWS and n["files"] == 1
    assert f["remedy"].startswith(f"Call H5Fflush on {target} only where")


def test_the_fast_way_has_none_of_these_findings(reports):
    _, found = reports["collective"]
    assert not set(H5_RULES) & set(found)


# h5-chunk-stripe on tests/programs/h5_chunks.c: a 64 KiB striping_unit hint, each rank's 16
# rows (64 KiB) written in one independent H5Dwrite.
BLOCK = 16 * ROW  # one rank's block: one stripe
STRIPE = 65536


@pytest.fixture(scope="module")
def chunk_reports(tmp_path_factory, programs):
    """{mode: (target file, findings by id)} for both modes of h5_chunks."""
    out = {}
    for mode in ["small", "striped"]:
        work = tmp_path_factory.mktemp(mode)
        target = work / "grid.h5"
        run_traced(work / "trace", programs["h5_chunks"], mode, target, ranks=RANKS)
        report = json.loads(pioscope("report", "--json", work / "trace").stdout)
        out[mode] = (str(target), {f["id"]: f for f in report["findings"]})
    return out


def test_row_chunks_off_the_stripe_are_found_with_chunk_and_alignment_remedies(chunk_reports):
    target, found = chunk_reports["small"]
    f = found["h5-chunk-stripe"]
    n = f["evidence"]["numbers"]
    # HDF5 writes each one-row chunk with its own MPI_File_write_at: one pwrite per row.
    assert n["requests"] == RANKS * 16 and n["bytes"] == RANKS * BLOCK
    assert (n["stripe_bytes"], n["stripe_from"]) == (STRIPE, "striping_unit hint")
    assert (n["chunk_bytes"], n["alignment"], n["datasets"]) == (ROW, 1, 1)
    # The chunks follow the metadata unaligned: no row starts on a stripe boundary, and each
    # rank's block straddles one, so its 16 rows touch 17 stripes where 1 would do.
    assert n["off_boundary_requests"] == RANKS * 16
    assert (n["stripes_touched"], n["stripes_needed"]) == (RANKS * 17, RANKS)
    assert 0 < f["cost_ns"] <= n["time_ns"]
    assert f["evidence"]["worst"][0].startswith(f"{target}:/grid: chunks of 4.0 KiB, alignment 1")
    assert "H5Pset_chunk(dcpl, 2, {16, 512}) instead of {1, 512}" in f["remedy"]
    assert f"H5Pset_alignment(fapl, {STRIPE}, {STRIPE})" in f["remedy"]


def test_stripe_sized_aligned_chunks_are_not_found(chunk_reports):
    _, found = chunk_reports["striped"]
    assert "h5-chunk-stripe" not in found
