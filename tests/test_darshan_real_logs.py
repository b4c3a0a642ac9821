"""Darshan logs made here (tests/data/darshan/, README there: a real Darshan 3.5.0 runtime
preloaded into pioscope's benchmarks and test programs, with and without DXT). Each log is
imported with `pioscope import darshan` and checked (a) against PyDarshan's reading of the same
log, counter for counter, segment for segment and bin for bin, and (b) against the same program
run now under `pioscope run`: the calls and bytes on the application's data file that both
tools see, with the exact relation where Darshan counts differently. Each log is imported once
and each program run once for the whole module, whichever tests read them."""
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, Trace, bench_binary, pioscope, pnetcdf_program, run_traced
from test_drishti import INFORMATIONAL, drishti_codes
from test_import_darshan import pydarshan

DATA = ROOT / "tests" / "data" / "darshan"
# A log of Darshan's development tree after 3.5.0: its DXT modules are a version newer than
# PyDarshan 3.5.0 reads (README.md there).
NEWER_FORMAT = "posix-basic-dxt-newer-format"
LOGS = sorted(p.stem for p in DATA.glob("*.darshan") if p.stem != NEWER_FORMAT)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """imported(name): the log tests/data/darshan/NAME.darshan imported with `pioscope import
    darshan`, once for the module; each call reads the store afresh."""
    root = tmp_path_factory.mktemp("imported")

    def store(name: str) -> Trace:
        out = root / name
        if not out.exists():
            pioscope("import", "darshan", DATA / f"{name}.darshan", "-o", out)
        return Trace(out)

    return store


def darshan_table(trace: Trace) -> pd.DataFrame:
    """The imported counters with each record's file path."""
    table = pd.read_parquet(trace.path / "darshan.parquet")
    table["module"] = table["module"].astype(str)
    table["counter"] = table["counter"].astype(str)
    return table.merge(trace.files[["file_id", "path"]], on="file_id")


def test_the_fixtures_are_the_logs_the_readme_lists():
    readme = (DATA / "README.md").read_text()
    assert len(LOGS) == 17
    for name in LOGS:
        assert f"`{name.removesuffix('-dxt')}`" in readme, name
    assert sum((DATA / f"{n}.darshan").stat().st_size for n in LOGS) < 100_000


@pytest.mark.parametrize("name", LOGS)
def test_every_counter_segment_and_bin_equals_pydarshans(imported, name):
    trace = imported(name)
    report = pydarshan(DATA / f"{name}.darshan")
    table = darshan_table(trace)
    # Counters: every record of every module, every integer and floating-point counter.
    expected = []
    for module, records in report.records.items():
        if module.startswith("DXT_"):
            continue
        names = report.counters[module]
        for rec in records.to_numpy():
            path = report.name_records[rec["id"]]
            for kind in ("counters", "fcounters"):
                expected += [(module, int(rec["rank"]), path, counter, float(value))
                             for counter, value in zip(names[kind], rec[kind])]
    mine = table[["module", "rank", "path", "counter", "value"]].itertuples(index=False, name=None)
    assert sorted(mine) == sorted(expected)
    # DXT: every segment, with its rank, layer, direction, offset and length.
    segments = sorted(
        (int(rec["rank"]), "mpiio" if module == "DXT_MPIIO" else "posix", kind, int(s["offset"]),
         int(s["length"]))
        for module in ("DXT_POSIX", "DXT_MPIIO") if module in report.records
        for rec in report.records[module].to_numpy()
        for kind in ("read", "write") for s in rec[f"{kind}_segments"])
    ev = trace.events
    kinds = ev.func.str.contains("write").map({True: "write", False: "read"})
    assert sorted(zip(ev["rank"], ev.layer, kinds, ev.offset, ev["size"])) == segments
    # HEATMAP: bytes per module, rank and bin.
    heat = pd.read_parquet(trace.path / "darshan_heatmap.parquet")
    for module, heatmap in report.heatmaps.items():
        for op in ("read", "write"):
            bins = heatmap.to_df(ops=[op])  # a row per rank, a column per time bin
            theirs = {(int(rank), b): int(v) for rank, row in zip(bins.index, bins.to_numpy())
                      for b, v in enumerate(row) if v}
            rows = heat[(heat.module == module) & (heat[f"{op}_bytes"] > 0)]
            assert dict(zip(zip(rows["rank"], rows["bin"]), rows[f"{op}_bytes"])) == theirs
    # Darshan's partial flag, module by module.
    flagged = sorted(m for m, facts in report.modules.items() if facts.get("partial_flag"))
    assert trace.meta["partial"] == bool(flagged)
    assert [r.split(" (")[0].removeprefix("darshan module ") for r in trace.meta["partial_reasons"]] \
        == sorted(flagged)
    assert trace.meta["job"]["ranks"] == report.metadata["job"]["nprocs"]


def test_a_log_that_ran_out_of_record_memory_is_partial(imported):
    """md-test-partial: each rank opened 4 files, Darshan kept 2 POSIX and 2 MPI-IO records per
    rank (MAX_RECORDS 2) and flagged both modules; the import says so and keeps what there is."""
    trace = imported("md-test-partial")
    table = darshan_table(trace)
    assert trace.meta["partial"] is True
    assert len(trace.meta["partial_reasons"]) == 2
    for module in ("POSIX", "MPI-IO"):
        records = table[table.module == module].groupby(["rank", "path"])
        assert sorted(r for r, _ in records.groups) == sorted([0, 1, 2, 3] * 2)


def test_a_newer_dxt_format_gives_a_partial_store_with_the_counters(tmp_path):
    out = tmp_path / "newer"
    result = pioscope("import", "darshan", DATA / f"{NEWER_FORMAT}.darshan", "-o", out)
    assert "Invalid DXT POSIX module version number (got 2)" in result.stderr
    trace = Trace(out)
    assert trace.meta["partial"] is True and len(trace.events) == 0
    counters = counters_on(trace, "data.bin")
    assert (counters["POSIX_WRITES"], counters["POSIX_BYTES_WRITTEN"]) == (5, 674)


# --- Against pioscope's own trace of the same program ---------------------------------------

# Darshan's counter -> the calls pioscope records that Darshan counts under it (Darshan 3.5's
# wrappers: darshan-runtime/lib/darshan-{posix,stdio,mpiio}.c). Bytes are what the calls
# returned (pioscope's `result`; its `size` is what was asked), MPI-IO bytes what was asked.
CALLS = {
    "POSIX_OPENS": ["open"], "POSIX_READS": ["read", "pread"], "POSIX_WRITES": ["write", "pwrite"],
    "POSIX_SEEKS": ["lseek"], "POSIX_FSYNCS": ["fsync"],
    "STDIO_OPENS": ["fopen"], "STDIO_WRITES": ["fwrite", "fprintf", "fputs", "fputc"],
    "STDIO_READS": ["fread", "fgets", "fscanf", "fgetc"],
    "MPIIO_COLL_OPENS": ["MPI_File_open"], "MPIIO_SYNCS": ["MPI_File_sync"],
    "MPIIO_INDEP_WRITES": ["MPI_File_write", "MPI_File_write_at"],
    "MPIIO_COLL_WRITES": ["MPI_File_write_all", "MPI_File_write_at_all"],
    "MPIIO_INDEP_READS": ["MPI_File_read", "MPI_File_read_at"],
    "MPIIO_COLL_READS": ["MPI_File_read_all", "MPI_File_read_at_all"],
}
BYTES = {
    "POSIX_BYTES_READ": ("POSIX_READS", "result"), "POSIX_BYTES_WRITTEN": ("POSIX_WRITES", "result"),
    "STDIO_BYTES_READ": ("STDIO_READS", "result"), "STDIO_BYTES_WRITTEN": ("STDIO_WRITES", "result"),
    "MPIIO_BYTES_READ": (("MPIIO_INDEP_READS", "MPIIO_COLL_READS"), "size"),
    "MPIIO_BYTES_WRITTEN": (("MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES"), "size"),
}


def counters_on(trace: Trace, name: str) -> dict:
    """Darshan's counters of the file whose path ends with `name`, summed over its records."""
    table = darshan_table(trace)
    mine = table[table.path.str.endswith("/" + name)]
    return {c: int(v) for c, v in mine.groupby("counter").value.sum().items()}


def pioscope_counts(trace: Trace, name: str, counters) -> dict:
    """The same counters computed from pioscope's events on the file."""
    ev = trace.on_file(name)
    out = {c: int(ev.func.isin(CALLS[c]).sum()) for c in counters if c in CALLS}
    for counter, (calls, column) in BYTES.items():
        if counter in counters:
            funcs = [f for c in ([calls] if isinstance(calls, str) else calls) for f in CALLS[c]]
            out[counter] = int(ev[ev.func.isin(funcs)][column].sum())
    return out


# program -> (data file, command line with WORK for the run directory, counters compared,
# counters Darshan and pioscope legitimately see differently with Darshan's value).
HPIO = ["--region-count", "64", "--iterations", "1", "--path", "WORK/hpio.dat"]
POSIX_ALL = ["POSIX_OPENS", "POSIX_READS", "POSIX_WRITES", "POSIX_FSYNCS", "POSIX_BYTES_READ",
             "POSIX_BYTES_WRITTEN"]
MPIIO_ALL = ["MPIIO_COLL_OPENS", "MPIIO_SYNCS", "MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES",
             "MPIIO_INDEP_READS", "MPIIO_COLL_READS", "MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN"]
RUNS = {
    # ROMIO's data sieving reads the extent under a lock before each write; how much of the
    # file exists then (and so whether a short read is followed by a second one) depends on
    # the order the ranks take the lock: the reads are not compared, the writes are.
    "hpio-independent-32": ("hpio.dat", ["bench:hpio", *HPIO],
                            [c for c in POSIX_ALL if "READ" not in c] + MPIIO_ALL),
    "hpio-collective-32": ("hpio.dat", ["bench:hpio", "--mode", "collective", *HPIO],
                           POSIX_ALL + MPIIO_ALL),
    "hpio-collective-1k": ("hpio.dat", ["bench:hpio", "--mode", "collective", "--region-size", "1024",
                                        "--region-count", "16", "--op", "both", "--iterations", "1",
                                        "--path", "WORK/hpio.dat"], POSIX_ALL + MPIIO_ALL),
    "mpi-io-test": ("mpi-io-test.dat", ["bench:mpi-io-test", "--blocks", "4", "--block-size", "4096",
                                        "--iterations", "1", "--path", "WORK/mpi-io-test.dat"],
                    POSIX_ALL + MPIIO_ALL),
    "posix-basic": ("data.bin", ["prog:posix_basic", "WORK"], POSIX_ALL + ["POSIX_SEEKS"]),
    "stdio-formatted": ("text.txt", ["prog:stdio_formatted", "WORK"],
                        ["STDIO_OPENS", "STDIO_WRITES", "STDIO_READS", "STDIO_BYTES_READ",
                         "STDIO_BYTES_WRITTEN"]),
    # HDF5's independent write of the chunked dataset goes through the same data sieving, so
    # the POSIX reads under it vary from run to run too; the MPI-IO reads do not.
    "h5-trace": ("h5_trace.h5", ["prog:h5_trace", "WORK/h5_trace.h5"],
                 [c for c in POSIX_ALL if "READ" not in c] + MPIIO_ALL),
}
MPI = {"hpio-independent-32", "hpio-collective-32", "hpio-collective-1k", "mpi-io-test", "h5-trace"}
# The exact numbers of the logs (so a wrong relation cannot pass on both sides at once).
KNOWN = {
    "hpio-independent-32": {"POSIX_WRITES": 4, "POSIX_BYTES_WRITTEN": 161408, "MPIIO_INDEP_WRITES": 4,
                            "MPIIO_BYTES_WRITTEN": 8192, "POSIX_OPENS": 5},
    "hpio-collective-32": {"POSIX_WRITES": 1, "POSIX_BYTES_WRITTEN": 40832, "POSIX_READS": 1,
                           "POSIX_BYTES_READ": 0, "MPIIO_COLL_WRITES": 4, "MPIIO_BYTES_WRITTEN": 8192},
    "hpio-collective-1k": {"POSIX_READS": 2, "POSIX_BYTES_READ": 73600, "MPIIO_COLL_READS": 4,
                           "MPIIO_COLL_OPENS": 8, "MPIIO_BYTES_READ": 65536},
    "mpi-io-test": {"POSIX_WRITES": 16, "POSIX_READS": 16, "MPIIO_INDEP_WRITES": 16,
                    "MPIIO_INDEP_READS": 16, "MPIIO_BYTES_WRITTEN": 65536},
    "posix-basic": {"POSIX_WRITES": 5, "POSIX_BYTES_WRITTEN": 674, "POSIX_READS": 2,
                    "POSIX_BYTES_READ": 1024, "POSIX_SEEKS": 1},
    "stdio-formatted": {"STDIO_WRITES": 1002, "STDIO_BYTES_WRITTEN": 10004, "STDIO_READS": 3,
                        "STDIO_BYTES_READ": 21},
    "h5-trace": {"POSIX_WRITES": 278, "POSIX_BYTES_WRITTEN": 398904, "MPIIO_INDEP_WRITES": 270,
                 "MPIIO_COLL_WRITES": 8, "MPIIO_BYTES_READ": 150952},
}


def command(spec: list, work: Path, programs) -> list:
    kind, name = spec[0].split(":")
    exe = bench_binary(name) if kind == "bench" else programs[name]
    return [exe, *(a.replace("WORK", str(work)) for a in spec[1:])]


@pytest.fixture(scope="module")
def traced(tmp_path_factory, programs):
    """traced(name): the program of RUNS[name] run under `pioscope run`, once for the module
    (in a work directory removed after the run); each call reads the trace afresh."""
    root = tmp_path_factory.mktemp("traced")

    def trace(name: str) -> Trace:
        out = root / name
        if not out.exists():
            work = root / f"{name}-work"
            work.mkdir()
            run_traced(out, *command(RUNS[name][1], work, programs), ranks=4 if name in MPI else None)
            shutil.rmtree(work)
        return Trace(out)

    return trace


@pytest.mark.parametrize("name", sorted(RUNS))
def test_imported_counts_match_pioscopes_trace_of_the_same_program(imported, traced, name):
    data, _, compared = RUNS[name]
    ours = traced(name)
    for log in (name, f"{name}-dxt"):
        darshan = counters_on(imported(log), data)
        theirs = {c: darshan.get(c, 0) for c in compared}
        assert theirs == pioscope_counts(ours, data, compared), log
        assert {c: theirs[c] for c in KNOWN[name]} == KNOWN[name], log


def test_darshan_misses_calls_its_wrappers_do_not_catch(imported, traced):
    """Where the two legitimately differ, the exact relation. Darshan 3.5 wraps `__xstat`, not
    the `stat` glibc 2.33+ programs call, nor STDIO's `putc` and `getline`: posix_basic's stat
    and stdio_formatted's putc (1 byte) and 1000 getlines (9984 bytes) are pioscope's only."""
    basic = traced("posix-basic")
    assert counters_on(imported("posix-basic"), "data.bin").get("POSIX_STATS", 0) == 0
    assert len(basic.on_file("data.bin").pipe(lambda e: e[e.func == "stat"])) == 1
    text = traced("stdio-formatted")
    ev = text.on_file("text.txt")
    darshan = counters_on(imported("stdio-formatted"), "text.txt")
    writes, reads = ev[ev.func.str.startswith(("fw", "fp", "fputs", "putc"))], \
        ev[ev.func.isin(["fgets", "fscanf", "fgetc", "getline"])]
    assert darshan["STDIO_WRITES"] == len(writes) - (writes.func == "putc").sum() == 1002
    assert darshan["STDIO_BYTES_WRITTEN"] == writes.result.sum() - 1 == 10004
    getline = reads[reads.func == "getline"]
    assert darshan["STDIO_READS"] == len(reads) - len(getline) == 3
    assert darshan["STDIO_BYTES_READ"] == reads.result.sum() - getline.result.sum() == 21
    assert (len(getline), getline.result.sum()) == (1000, 9984)


def test_hdf5_dataset_counters_match_pioscopes_hdf5_calls(imported, traced):
    """H5D: opens are H5Dcreate1/2, H5Dopen1/2 and the H5Oopen of a dataset (pressure, not the
    group /fields); reads and writes are H5Dread / H5Dwrite with their bytes."""
    ours = traced("h5-trace")
    table = darshan_table(imported("h5-trace"))
    h5d = table[table.module == "H5D"].groupby("counter").value.sum()
    ev = ours.events[ours.events.layer == "hdf5"]
    count = ev.func.value_counts()
    opens = sum(count[f] for f in ("H5Dcreate1", "H5Dcreate2", "H5Dopen1", "H5Dopen2"))
    assert h5d["H5D_OPENS"] == opens + count["H5Oopen"] // 2 == 24
    assert (h5d["H5D_WRITES"], h5d["H5D_READS"]) == (count["H5Dwrite"], count["H5Dread"]) == (8, 4)
    assert h5d["H5D_BYTES_WRITTEN"] == ev[ev.func == "H5Dwrite"]["size"].sum() == 262144
    assert h5d["H5D_BYTES_READ"] == ev[ev.func == "H5Dread"]["size"].sum() == 131072
    h5f = table[table.module == "H5F"].groupby("counter").value.sum()
    assert h5f["H5F_OPENS"] == count["H5Fcreate"] + count["H5Fopen"] == 8
    assert h5f["H5F_FLUSHES"] == count["H5Fflush"] == 4


# PnetCDF: Darshan's counter -> (pioscope's calls, which of them: all, collective, independent).
PNETCDF_CALLS = {
    "PNETCDF_FILE_CREATES": (["ncmpi_create"], None), "PNETCDF_FILE_OPENS": (["ncmpi_open"], None),
    "PNETCDF_FILE_REDEFS": (["ncmpi_redef"], None), "PNETCDF_FILE_COLL_WAITS": (["ncmpi_wait_all"], None),
    "PNETCDF_VAR_PUT_VARA": (["ncmpi_put_vara", "ncmpi_put_vara_all"], None),
    "PNETCDF_VAR_IPUT_VARA": (["ncmpi_iput_vara"], None), "PNETCDF_VAR_NB_WRITES": (["ncmpi_iput_vara"], None),
    "PNETCDF_VAR_GET_VARA": (["ncmpi_get_vara", "ncmpi_get_vara_all"], None),
    "PNETCDF_VAR_GET_VAR": (["ncmpi_get_var", "ncmpi_get_var_all"], None),
    "PNETCDF_VAR_GET_VARS": (["ncmpi_get_vars", "ncmpi_get_vars_all"], None),
    "PNETCDF_VAR_GET_VARN": (["ncmpi_get_varn", "ncmpi_get_varn_all"], None),
    "PNETCDF_VAR_COLL_WRITES": (["ncmpi_put_vara_all"], True),
    "PNETCDF_VAR_INDEP_WRITES": (["ncmpi_put_vara"], False),
    "PNETCDF_VAR_COLL_READS": (["ncmpi_get_vara_all", "ncmpi_get_var_all", "ncmpi_get_vars_all"], True),
    "PNETCDF_VAR_INDEP_READS": (["ncmpi_get_varn"], False),
}


def test_pnetcdf_counters_match_pioscopes_pnetcdf_calls(imported, tmp_path, workdir):
    """Per variable (Darshan and pioscope both name it FILE:VARIABLE) and for the file: the
    calls of each kind and the bytes put and got, the nonblocking put counted apart."""
    exe = pnetcdf_program("pnc_trace", tmp_path)
    _, traced = run_traced(tmp_path / "pnc", exe, workdir / "pnc_trace.nc", ranks=4)
    for log in ("pnc-trace", "pnc-trace-dxt"):
        trace = imported(log)
        for name in ("pnc_trace.nc", "pnc_trace.nc:temperature", "pnc_trace.nc:pressure",
                     "pnc_trace.nc:humidity"):
            darshan = counters_on(trace, name)
            ev = traced.on_file(name)
            kind = "FILE" if ":" not in name else "VAR"
            for counter, (funcs, collective) in PNETCDF_CALLS.items():
                if f"_{kind}_" not in counter:
                    continue
                calls = ev[ev.func.isin(funcs)]
                if collective is not None:
                    calls = calls[calls.collective == collective]
                assert darshan.get(counter, 0) == len(calls), (log, name, counter)
            if kind == "VAR":
                puts = ev[ev.func.str.contains("put_")]["size"].sum()
                gets = ev[ev.func.str.contains("get_")]["size"].sum()
                assert (darshan.get("PNETCDF_VAR_BYTES_WRITTEN", 0),
                        darshan.get("PNETCDF_VAR_BYTES_READ", 0)) == (puts, gets), (log, name)
        per_var = darshan_table(trace)
        per_var = per_var[per_var.module == "PNETCDF_VAR"].groupby("counter").value.sum()
        assert (per_var["PNETCDF_VAR_BYTES_WRITTEN"], per_var["PNETCDF_VAR_BYTES_READ"]) == (2560, 3840)


def test_dxt_segments_are_the_counted_reads_and_writes(imported):
    """In each -dxt log, DXT holds one segment per read and write the counters count."""
    for name in sorted(n for n in LOGS if n.endswith("-dxt")):
        trace = imported(name)
        table = darshan_table(trace)
        ev = trace.events
        for layer, module, prefix in (("posix", "POSIX", "POSIX"), ("mpiio", "MPI-IO", "MPIIO")):
            counted = table[(table.module == module) & table.counter.isin(
                [f"{prefix}_READS", f"{prefix}_WRITES", f"{prefix}_INDEP_READS",
                 f"{prefix}_INDEP_WRITES", f"{prefix}_COLL_READS", f"{prefix}_COLL_WRITES"])]
            assert (ev.layer == layer).sum() == counted.value.sum(), (name, layer)


def test_stats_report_and_export_work_on_a_real_dxt_log(imported, tmp_path):
    trace = imported("mpi-io-test-dxt")
    stats = json.loads(pioscope("stats", trace.path, "--by", "layer", "--json").stdout)
    rows = {r["group"]: r for r in stats["rows"]}
    # 16 writes and 16 reads of 4 KiB per layer, as the counters say.
    assert (rows["posix"]["operations"], rows["posix"]["bytes"]) == (32, 131072)
    assert (rows["mpiio"]["operations"], rows["mpiio"]["bytes"]) == (32, 131072)
    report = json.loads(pioscope("report", trace.path, "--json").stdout)
    assert report["darshan"]["has_dxt_events"] is True
    assert "pwrite" in pioscope("report", trace.path).stdout
    out = tmp_path / "events.csv"
    pioscope("export", trace.path, "--to", "csv", "-o", out)
    exported = pd.read_csv(out)
    assert len(exported) == len(trace.events) == 64


# docs/FINDINGS.md "On real logs made here": Drishti 0.8's codes and pioscope's findings on the
# same real logs (the reasons they differ are written there).
SIDE_BY_SIDE = {
    "hpio-independent-32-dxt": (["P08", "P19", "M06", "M07"], ["data-sieving"]),
    "hpio-collective-32-dxt": (["P18", "P19", "M06", "M07"], ["mpiio-blocking"]),
    "h5-trace-dxt": (["P08", "P09", "P19", "M06", "M07"], ["mpiio-blocking"]),
    "stdio-formatted-dxt": (["S01", "M01"], ["heavy-stdio"]),
}


@pytest.mark.parametrize("name", sorted(SIDE_BY_SIDE))
def test_drishti_and_pioscope_on_real_logs(imported, tmp_path, name):
    codes = drishti_codes(DATA / f"{name}.darshan", tmp_path)
    trace = imported(name)
    findings = json.loads(pioscope("report", trace.path, "--json").stdout)["findings"]
    assert ([c for c in codes if c not in INFORMATIONAL], [f["id"] for f in findings]) \
        == SIDE_BY_SIDE[name]
