"""`pioscope import darshan`: real Darshan logs (the examples PyDarshan's source distribution
ships, scripts/darshan-logs.sh) become trace stores whose counts match PyDarshan's own reading
of the same logs; bad logs give one clear line."""
import contextlib
import io
import json
from pathlib import Path

import darshan
import pandas as pd
import pytest

from conftest import DARSHAN_LOG_NAMES, Trace, pioscope


@pytest.fixture(scope="session")
def logs(darshan_logs):
    return darshan_logs


def pydarshan(log: Path):
    """The log as PyDarshan reads it (its notes on stdout silenced)."""
    with contextlib.redirect_stdout(io.StringIO()):
        report = darshan.DarshanReport(str(log), read_all=True, dtype="numpy")
    return report


def imported(logs, name, tmp_path) -> Trace:
    out = tmp_path / name
    pioscope("import", "darshan", logs / f"{name}.darshan", "-o", out)
    return Trace(out)


def test_dxt_segments_become_events_nested_under_mpiio(logs, tmp_path):
    trace = imported(logs, "ior_hdf5_example", tmp_path)
    report = pydarshan(logs / "ior_hdf5_example.darshan")
    ev = trace.events
    for module, layer in (("DXT_POSIX", "posix"), ("DXT_MPIIO", "mpiio")):
        recs = report.records[module].to_numpy()
        writes = sum(len(r["write_segments"]) for r in recs)
        reads = sum(len(r["read_segments"]) for r in recs)
        written = sum(s["length"] for r in recs for s in r["write_segments"])
        mine = ev[ev.layer == layer]
        assert (mine.func.str.contains("write").sum(), mine.func.str.contains("read").sum()) == (writes, reads)
        assert mine[mine.func.str.contains("write")]["size"].sum() == written
    assert (writes, reads) == (23, 36)
    # Every POSIX segment of this IOR run lies inside an MPI-IO segment of its rank.
    posix = ev[ev.layer == "posix"]
    assert posix.parent.notna().all() and (posix.depth == 1).all()
    parents = ev.set_index("id").loc[posix.parent.astype(int)]
    assert (parents.layer == "mpiio").all()
    assert (parents["rank"].values == posix["rank"].values).all()
    assert trace.meta["job"]["ranks"] == 4
    assert trace.meta["job"]["hosts"] == ["nid00097"] * 4
    assert trace.meta["processes"][2]["facts"]["source"] == "darshan"
    assert trace.meta["tracer_version"].startswith("darshan ")


def test_counters_of_every_module_are_kept(logs, tmp_path):
    trace = imported(logs, "ior_hdf5_example", tmp_path)
    report = pydarshan(logs / "ior_hdf5_example.darshan")
    table = pd.read_parquet(trace.path / "darshan.parquet")
    for module in ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D"):
        names = report.counters[module]
        expected = len(report.records[module]) * (len(names["counters"]) + len(names["fcounters"]))
        assert (table.module == module).sum() == expected, module
    posix = report.records["POSIX"].to_numpy()
    idx = report.counters["POSIX"]["counters"].index("POSIX_BYTES_WRITTEN")
    assert table[table.counter == "POSIX_BYTES_WRITTEN"].value.sum() == sum(r["counters"][idx] for r in posix)
    # LUSTRE: one row per counter of each layout component.
    lustre = table[table.module == "LUSTRE"]
    assert set(lustre.counter) == set(report.counters["LUSTRE"]["counters"])
    assert trace.meta["counts"]["darshan_counters"] == len(table)




@pytest.mark.parametrize("name", DARSHAN_LOG_NAMES)
def test_every_real_log_matches_pydarshans_reading(logs, tmp_path, name):
    """Every module's records (one per rank and file, per layout component for LUSTRE), the
    bytes of the I/O modules and the DXT segments, against PyDarshan's reading of the log."""
    trace = imported(logs, name, tmp_path)
    report = pydarshan(logs / f"{name}.darshan")
    table = pd.read_parquet(trace.path / "darshan.parquet")
    assert sorted(set(table.module)) == sorted(m for m in report.records if not m.startswith("DXT_"))
    for module, records in report.records.items():
        recs = records.to_numpy()
        if module.startswith("DXT_"):
            layer = "mpiio" if module == "DXT_MPIIO" else "posix"
            mine = trace.events[trace.events.layer == layer]
            segments = [s for r in recs for s in r["read_segments"] + r["write_segments"]]
            assert (len(mine), mine["size"].sum()) == (len(segments), sum(s["length"] for s in segments))
            continue
        rows = table[table.module == module]
        expected = sum(len(r["components"]) for r in recs) if module == "LUSTRE" else len(recs)
        assert len(rows.groupby(["rank", "file_id", "component"])) == expected, module
        names = report.counters[module]["counters"]
        prefix = {"MPI-IO": "MPIIO"}.get(module, module)
        for counter in (f"{prefix}_BYTES_READ", f"{prefix}_BYTES_WRITTEN"):
            if counter in names:
                col = names.index(counter)
                assert rows[rows.counter == counter].value.sum() == sum(r["counters"][col] for r in recs)
    assert trace.meta["job"]["ranks"] == max(report.metadata["job"]["nprocs"], 1)


def test_counters_only_log_with_thousands_of_ranks(logs, tmp_path):
    trace = imported(logs, "sample-badost", tmp_path)
    report = pydarshan(logs / "sample-badost.darshan")
    assert trace.meta["job"]["ranks"] == report.metadata["job"]["nprocs"] == 2048
    assert len(trace.events) == 0
    names = set(report.name_records[r["id"]] for m in ("POSIX", "LUSTRE", "STDIO")
                for r in report.records[m].to_numpy())
    assert set(trace.files.path) == names
    # Darshan's mount table gives each file its file system.
    lustre_files = trace.files[trace.files.path.str.startswith("/scratch")]
    assert len(lustre_files) > 0 and (lustre_files.fs_type == "lustre").all()


def test_stats_and_report_work_on_an_imported_log(logs, tmp_path):
    trace = imported(logs, "dxt", tmp_path)
    recs = pydarshan(logs / "dxt.darshan").records["DXT_POSIX"].to_numpy()
    segments = [s for r in recs for s in r["read_segments"] + r["write_segments"]]
    stats = json.loads(pioscope("stats", trace.path, "--by", "layer", "--json").stdout)
    (posix,) = [r for r in stats["rows"] if r["group"] == "posix"]
    assert (posix["operations"], posix["bytes"]) == (len(segments), sum(s["length"] for s in segments))
    assert (posix["operations"], posix["bytes"]) == (7623, 35539507)
    text = pioscope("report", trace.path).stdout
    assert "pread" in text


def test_report_says_what_a_counters_only_log_cannot_support(logs, tmp_path):
    trace = imported(logs, "sample-badost", tmp_path)
    text = pioscope("report", trace.path).stdout
    assert "Findings (judged from the Darshan counters: see below): 1" in text
    assert "no DXT trace" in text
    report = json.loads(pioscope("report", trace.path, "--json").stdout)
    (posix,) = [m for m in report["darshan"]["modules"] if m["module"] == "POSIX"]
    recs = pydarshan(logs / "sample-badost.darshan").records["POSIX"].to_numpy()
    names = pydarshan(logs / "sample-badost.darshan").counters["POSIX"]["counters"]
    col = names.index("POSIX_BYTES_WRITTEN")
    assert posix["bytes_written"] == sum(r["counters"][col] for r in recs) == 512 * 2**30
    assert posix["records"] == 2048 and report["darshan"]["has_dxt_events"] is False


# The findings of the example logs, judged from their counters (no DXT) or from their DXT
# events, against the codes Drishti 0.8 reports on the same logs (docs/FINDINGS.md "Drishti's
# insights", where each code maps to a rule): small writes (P06, P16) -> small-requests, no
# nonblocking MPI-IO (M06, M07) -> mpiio-blocking where blocking time could overlap
# computation, misaligned file requests (P08) -> misaligned when the requests are a unit or
# more, stragglers (P19) -> load-imbalance, STDIO (S01) -> heavy-stdio. sample-badost's slow
# OST makes stragglers Drishti does not see (its P19 needs a shared file).
@pytest.mark.parametrize("name, ids", [
    ("example", ["mpiio-blocking", "load-imbalance", "misaligned"]),
    ("shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158",
     ["mpiio-blocking", "small-requests"]),
    ("noposix", ["load-imbalance", "heavy-stdio", "metadata-storm"]),
    ("sample-badost", ["load-imbalance"]),
    ("ior_hdf5_example", ["mpiio-blocking"]),
])
def test_findings_of_real_logs(logs, tmp_path, name, ids):
    trace = imported(logs, name, tmp_path)
    report = json.loads(pioscope("report", trace.path, "--json").stdout)
    assert [f["id"] for f in report["findings"]] == ids
    for f in report["findings"]:
        assert f["cost_ns"] > 0 and f["evidence"]["numbers"]["source"], f


@pytest.mark.parametrize("content, says", [
    (b"", "not a readable Darshan log"),
    (b"this is not a darshan log\n" * 10, "not a readable Darshan log"),
])
def test_bad_logs_are_one_line_errors(tmp_path, content, says):
    log = tmp_path / "bad.darshan"
    log.write_bytes(content)
    r = pioscope("import", "darshan", log, "-o", tmp_path / "t", check=False)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "bad.darshan" in lines[0], r.stderr
    assert not (tmp_path / "t").exists()


def test_truncated_log_is_an_error_or_a_partial_store(logs, tmp_path):
    data = (logs / "dxt.darshan").read_bytes()
    log = tmp_path / "cut.darshan"
    log.write_bytes(data[: len(data) // 2])
    r = pioscope("import", "darshan", log, "-o", tmp_path / "t", check=False)
    assert r.returncode in (0, 2), r.stderr
    if r.returncode == 2:
        assert len(r.stderr.strip().splitlines()) == 1 and "cut.darshan" in r.stderr
    else:
        assert Trace(tmp_path / "t").meta["partial"]


def test_missing_log_and_missing_python(tmp_path, logs):
    r = pioscope("import", "darshan", tmp_path / "none.darshan", "-o", tmp_path / "t", check=False)
    assert r.returncode == 2 and "none.darshan" in r.stderr
    r = pioscope("import", "darshan", logs / "dxt.darshan", "-o", tmp_path / "t",
                 "--python", "/nonexistent/python3", check=False)
    assert r.returncode == 2 and "PIOSCOPE_PYTHON" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_existing_output_is_not_overwritten(logs, tmp_path):
    out = tmp_path / "keep"
    out.mkdir()
    (out / "mine.txt").write_text("precious")
    r = pioscope("import", "darshan", logs / "dxt.darshan", "-o", out, check=False)
    assert r.returncode == 2 and (out / "mine.txt").read_text() == "precious"
