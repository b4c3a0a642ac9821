"""A POSIX/STDIO program under the tracer: exact counts, sizes, offsets, results and errno."""
import errno
import json

from conftest import pioscope, run_traced


def test_posix_calls_are_recorded_exactly(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["posix_basic"], workdir)
    data = trace.on_file("data.bin")

    pwrites = data[data.func == "pwrite"].sort_values("start_ns")
    assert list(pwrites["offset"]) == [0, 100, 300]
    assert list(pwrites["size"]) == [100, 200, 300]
    assert list(pwrites["result"]) == [100, 200, 300]

    writes = data[data.func == "write"].sort_values("start_ns")
    assert list(writes["offset"]) == [0, 1000]
    assert list(writes["size"]) == [50, 24]

    seeks = data[data.func == "lseek"]
    assert list(seeks["result"]) == [1000]

    reads = data[data.func == "read"].sort_values("start_ns")
    assert list(reads["size"]) == [4096, 4096]
    assert list(reads["result"]) == [1024, 0]
    assert list(reads["offset"]) == [0, 1024]

    assert (data.func == "open").sum() == 2
    assert (data.func == "close").sum() == 2
    assert (data.func == "stat").sum() == 1
    assert set(data.layer) == {"posix"}
    assert (data.depth == 0).all() and data.parent.isna().all()


def test_failing_call_keeps_its_errno(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["posix_basic"], workdir)
    failed = trace.on_file("file")
    failed = failed[failed.func == "open"]
    assert len(failed) == 1
    assert failed.iloc[0]["result"] == -1
    assert failed.iloc[0]["error"] == errno.ENOENT
    ok = trace.on_file("data.bin")
    assert (ok.error.fillna(0) == 0).all()


def test_stdio_calls_are_recorded(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["posix_basic"], workdir)
    text = trace.on_file("text.txt")
    counts = text.func.value_counts().to_dict()
    assert counts["fopen"] == 1
    assert counts["fwrite"] == 3
    assert counts["fclose"] == 1
    assert counts["unlink"] == 1
    fwrites = text[text.func == "fwrite"].sort_values("start_ns")
    assert list(fwrites["size"]) == [10, 10, 10]
    assert list(fwrites["offset"]) == [0, 10, 20]
    assert set(text[text.func.str.startswith("f")].layer) == {"stdio"}


def test_file_table_and_meta(programs, workdir, tmp_path):
    _, trace = run_traced(tmp_path / "trace", programs["posix_basic"], workdir)
    paths = set(trace.files.path)
    assert str(workdir / "data.bin") in paths
    assert str(workdir / "text.txt") in paths
    assert trace.meta["partial"] is False
    assert len(trace.meta["processes"]) == 1
    # Times are nanoseconds since the job's start, sorted within the rank.
    starts = trace.events.start_ns
    assert starts.min() >= 0 and starts.is_monotonic_increasing


def test_formatted_stdio_records_its_bytes(programs, workdir, tmp_path):
    """Issue 13: fprintf, fputs, fputc, putc, fgets, fscanf, getline and fgetc are traced with
    the bytes they move (16 MB through fprintf showed as "0 B moved")."""
    _, trace = run_traced(tmp_path / "trace", programs["stdio_formatted"], workdir)
    text = trace.on_file("text.txt")
    assert set(text.layer) == {"stdio"}
    calls = text.sort_values("start_ns")

    def of(func):
        return calls[calls.func == func]

    fprintf = of("fprintf")
    assert len(fprintf) == 1000
    assert (fprintf["size"] == 10).all() and (fprintf["result"] == 10).all()
    assert list(fprintf["offset"][:3]) == [0, 10, 20]
    assert list(of("fputs")[["offset", "size", "result"]].iloc[0]) == [10000, 3, 3]
    assert list(of("fputc")[["offset", "size", "result"]].iloc[0]) == [10003, 1, 1]
    assert list(of("putc")[["offset", "size", "result"]].iloc[0]) == [10004, 1, 1]
    written = calls[calls.func.isin(["fprintf", "fputs", "fputc", "putc"])]
    assert written["result"].sum() == 10005 == (workdir / "text.txt").stat().st_size

    fgets = of("fgets").iloc[0]
    assert (fgets["offset"], fgets["size"], fgets["result"]) == (0, 63, 10)
    fscanf = of("fscanf").iloc[0]
    assert (fscanf["offset"], fscanf["result"]) == (10, 10)
    getline = of("getline")
    assert len(getline) == 1000
    assert list(getline["offset"][:2]) == [20, 31], "fgetc read one byte in between"
    assert getline["result"].iloc[-1] == 0, "end of file moves nothing"
    assert (getline.error.fillna(0) == 0).all(), "end of file is no error"
    assert list(of("fgetc")[["offset", "result"]].iloc[0]) == [30, 1]
    read = calls[calls.func.isin(["fgets", "fscanf", "getline", "fgetc"])]
    assert read["result"].sum() == 10005

    stats = json.loads(pioscope("stats", tmp_path / "trace", "--by", "layer", "--json").stdout)
    stdio = next(r for r in stats["rows"] if r["layer"] == "stdio")
    assert stdio["bytes"] == 2 * 10005, stdio
