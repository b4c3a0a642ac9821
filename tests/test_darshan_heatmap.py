"""Darshan's HEATMAP module through `pioscope import darshan`: bytes per rank and time bin in
darshan_heatmap.parquet, bin for bin as PyDarshan reads them. No log on PyPI has the module
(scripts/darshan-logs.sh), so the log is written with Darshan's own writer
(tests/darshan_writer.py): four ranks, each writing its own file with POSIX and heat map bins
of one second, rank 0 reading a little through STDIO too, as Darshan 3.5 records such a job.
Then `pioscope view` of the store in headless Chromium: with no DXT trace there are no calls to
draw, so the page shows the Darshan panel: the heat map, the ranks and the files."""
import contextlib
import io
from pathlib import Path

import darshan
import pandas as pd
import pytest
from darshan.backend.cffi_backend import counter_names, fcounter_names

from conftest import Trace, pioscope
from darshan_writer import HEATMAP_IDS, POSIX_MOD, POSIX_VER, LogWriter
from test_viewer import Server, view, viewer

RANKS = 4
BINS = 8
FILE_IDS = {rank: 0x2000 + rank for rank in range(RANKS)}


def write_bins(rank: int) -> list:
    """Rank r writes in bins r..r+3: 1 MiB times (r + 1) in each."""
    return [(rank + 1) << 20 if rank <= b < rank + 4 else 0 for b in range(BINS)]


def write_heatmap_log(path: Path) -> None:
    names = {rid: b"/scratch/out.%d" % rank for rank, rid in FILE_IDS.items()}
    names[HEATMAP_IDS["POSIX"]] = b"heatmap:POSIX"
    names[HEATMAP_IDS["STDIO"]] = b"heatmap:STDIO"
    writer = LogWriter(path, nprocs=RANKS, duration_s=BINS, exe=b"/apps/sim --steps 8",
                       mounts=[(b"/scratch", b"lustre")], names=names)
    ints, floats = counter_names("POSIX"), fcounter_names("POSIX")
    for rank, rid in FILE_IDS.items():
        counters = dict.fromkeys(ints, 0)
        counters.update(POSIX_OPENS=1, POSIX_WRITES=4, POSIX_BYTES_WRITTEN=sum(write_bins(rank)),
                        POSIX_MAX_BYTE_WRITTEN=sum(write_bins(rank)) - 1, POSIX_CONSEC_WRITES=3,
                        POSIX_SEQ_WRITES=3, POSIX_SIZE_WRITE_1M_4M=4)
        fcounters = dict.fromkeys(floats, 0.0)
        fcounters.update(POSIX_F_OPEN_START_TIMESTAMP=float(rank), POSIX_F_WRITE_TIME=0.5 * (rank + 1),
                         POSIX_F_WRITE_START_TIMESTAMP=float(rank),
                         POSIX_F_WRITE_END_TIMESTAMP=float(rank + 4),
                         POSIX_F_CLOSE_END_TIMESTAMP=float(rank + 4))
        writer.put_counters(POSIX_MOD, POSIX_VER, rank, rid, [counters[n] for n in ints],
                            [fcounters[n] for n in floats])
    for rank in range(RANKS):
        writer.put_heatmap("POSIX", rank, 1.0, [0] * BINS, write_bins(rank))
    writer.put_heatmap("STDIO", 0, 1.0, [0, 4096] + [0] * (BINS - 2), [0] * BINS)
    writer.close()


@pytest.fixture(scope="module")
def heatmap_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("logs") / "heatmap.darshan"
    write_heatmap_log(path)
    return path


@pytest.fixture(scope="module")
def heatmap_trace(heatmap_log, tmp_path_factory) -> Trace:
    out = tmp_path_factory.mktemp("stores") / "heatmap"
    pioscope("import", "darshan", heatmap_log, "-o", out)
    return Trace(out)


def test_heatmap_bins_are_kept_as_pydarshan_reads_them(heatmap_log, heatmap_trace):
    with contextlib.redirect_stdout(io.StringIO()):
        report = darshan.DarshanReport(str(heatmap_log), read_all=True)
    table = pd.read_parquet(heatmap_trace.path / "darshan_heatmap.parquet")
    assert sorted(set(table.module)) == sorted(report.heatmaps) == ["POSIX", "STDIO"]
    for module, heatmap in report.heatmaps.items():
        for op in ("read", "write"):
            theirs = heatmap.to_df(ops=[op], interval_index=False)
            mine = table[table.module == module].pivot_table(
                index="rank", columns="bin", values=f"{op}_bytes", aggfunc="sum", fill_value=0)
            mine = mine.reindex(index=theirs.index, columns=theirs.columns, fill_value=0)
            assert (mine.values == theirs.values).all(), (module, op)
    # Only bins with I/O have rows: four per POSIX rank, one of STDIO.
    assert len(table) == RANKS * 4 + 1 == heatmap_trace.meta["counts"]["darshan_heatmap"]
    assert (table.width_ns == 1_000_000_000).all()
    assert (table.start_ns == table.bin * table.width_ns).all()
    posix = table[table.module == "POSIX"]
    assert posix.write_bytes.sum() == sum(sum(write_bins(r)) for r in range(RANKS)) == 40 << 20
    # HEATMAP is imported, not skipped, and its name records make no files.
    assert not heatmap_trace.meta["partial"]
    assert sorted(heatmap_trace.files.path) == [f"/scratch/out.{r}" for r in range(RANKS)]


def test_a_log_without_heatmap_has_no_table(darshan_logs, tmp_path):
    pioscope("import", "darshan", darshan_logs / "dxt.darshan", "-o", tmp_path / "t")
    assert not (tmp_path / "t" / "darshan_heatmap.parquet").exists()
    assert "darshan_heatmap" not in Trace(tmp_path / "t").meta["counts"]


def canvas_pixels(page, module):
    """The heat map canvas of `module` as [row][column] -> (r, g, b)."""
    return page.page.evaluate("""(module) => {
        const c = document.querySelector(`#darshan canvas[data-module="${module}"]`);
        const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        const rows = [];
        for (let i = 0; i < c.height; i++) {
          const row = [];
          for (let j = 0; j < c.width; j++) row.push([d[4 * (i * c.width + j)], d[4 * (i * c.width + j) + 1], d[4 * (i * c.width + j) + 2]]);
          rows.push(row);
        }
        return rows;
    }""", module)


def test_the_view_of_a_counters_only_log_shows_its_heat_map_and_summaries(heatmap_trace):
    server = Server([heatmap_trace.path])
    try:
        answer = server.api("api/darshan?trace=0")
        assert answer["imported"] and not answer["has_dxt_events"]
        (posix, stdio) = answer["heatmaps"]
        assert (posix["module"], posix["rows"], posix["columns"], posix["per_row"]) == ("POSIX", RANKS, BINS, 1)
        assert posix["bytes"][3][3] == posix["max_bytes"] == 4 << 20 and posix["bytes"][0][5] == 0
        assert (stdio["module"], stdio["read_bytes"]) == ("STDIO", 4096)
        with viewer(server.url) as page:
            page.page.wait_for_function("window.pioscopeView.darshan !== null", timeout=30000)
            assert view(page, "darshan") == [{"heatmaps": 2, "ranks": RANKS, "files": RANKS}]
            cells = "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
            ranks = page.page.eval_on_selector_all("#darshan table.ranks tbody tr", cells)
            # The most I/O time first: rank r wrote (r + 1) x 4 MiB in (r + 1) x 0.5 s.
            assert [r[0] for r in ranks] == ["rank 3", "rank 2", "rank 1", "rank 0"]
            assert ranks[0][1:] == ["2.000 s", "16.0 MiB", "1"], ranks[0]
            files = page.page.eval_on_selector_all("#darshan table.files tbody tr", cells)
            assert [f[0] for f in files] == [f"/scratch/out.{r}" for r in (3, 2, 1, 0)]
            pixels = canvas_pixels(page, "POSIX")
            assert len(pixels) == RANKS and len(pixels[0]) == BINS
            assert pixels[3][3] == [8, 48, 107]  # the largest cell: the ramp's darkest
            assert pixels[0][5] == [255, 255, 255]  # no I/O: white
            assert pixels[0][0] not in ([255, 255, 255], [8, 48, 107])
            assert page.page.is_visible("#darshan")
            page.screenshot("viewer-darshan-counters-only")
            assert page.errors == []
    finally:
        server.stop()


def test_the_darshan_panel_stays_hidden_for_a_log_with_dxt(darshan_logs, tmp_path):
    pioscope("import", "darshan", darshan_logs / "ior_hdf5_example.darshan", "-o", tmp_path / "t")
    server = Server([tmp_path / "t"])
    try:
        with viewer(server.url) as page:
            page.page.wait_for_function("window.pioscopeView.darshan !== null", timeout=30000)
            assert view(page, "darshan") == [None]
            assert not page.page.is_visible("#darshan")
            assert page.errors == []
    finally:
        server.stop()
