"""`pioscope export` (issue 5): the checked-in HPIO traces and a traced MPI message program,
exported to every format and read back by the real tools: pajeng's pj_dump, otf2-print, a JSON
parser (Chrome trace events) and a CSV reader."""
import collections
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, pioscope, run_traced

DATA = ROOT / "tests" / "data"
TRACES = ["hpio-collective", "hpio-independent", "messages"]


@pytest.fixture(scope="module")
def traces(programs, tmp_path_factory):
    """name → trace directory: the checked-in HPIO traces and a fresh mpi_messages run."""
    tmp = tmp_path_factory.mktemp("export-traces")
    run_traced(tmp / "messages", programs["mpi_messages"], ranks=4)
    out = {name: DATA / name for name in TRACES if (DATA / name).is_dir()}
    out["messages"] = tmp / "messages"
    return out


def events(trace: Path) -> pd.DataFrame:
    return pd.read_parquet(trace / "events.parquet")


def expected_messages(trace: Path) -> int:
    path = trace / "messages.parquet"
    return len(pd.read_parquet(path)) if path.exists() else None


def export(trace, fmt, out, *extra):
    result = pioscope("export", trace, "--to", fmt, "-o", out, *extra)
    return result.stdout


def tool(*cmd):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    return result


@pytest.mark.parametrize("name", TRACES)
def test_paje_loads_in_pj_dump(traces, name, tmp_path):
    trace = traces[name]
    out = tmp_path / f"{name}.paje"
    export(trace, "paje", out)
    result = tool(shutil.which("pj_dump") or "/usr/bin/pj_dump", out)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    kinds = collections.Counter(line.split(",")[0] for line in result.stdout.splitlines())
    assert kinds["State"] == len(events(trace))
    n = expected_messages(trace)
    if n is not None:
        assert kinds["Link"] == n
    assert kinds["Variable"] > 0
    # containers: hosts, ranks and their threads
    meta = json.loads((trace / "meta.json").read_text())
    assert kinds["Container"] >= len(set(meta["job"]["hosts"])) + 2 * meta["job"]["ranks"]
    # nesting: POSIX calls inside MPI-IO calls have an imbrication level above 0
    states = [line.split(", ") for line in result.stdout.splitlines() if line.startswith("State")]
    if name.startswith("hpio"):
        assert any(float(s[6]) > 0 and s[7] in ("pwrite", "pwrite64", "pread", "pread64")
                   for s in states)


@pytest.mark.parametrize("name", TRACES)
def test_otf2_reads_back_in_otf2_print(traces, name, tmp_path):
    trace = traces[name]
    out = tmp_path / f"{name}.otf2"
    export(trace, "otf2", out)
    anchor = out / "traces.otf2"
    assert anchor.is_file()
    result = tool("otf2-print", anchor)
    assert result.returncode == 0, result.stderr
    records = collections.Counter(line.split()[0] for line in result.stdout.splitlines()
                                  if line[:1].isupper() and " " in line)
    n = len(events(trace))
    assert records["ENTER"] == n
    assert records["LEAVE"] == n
    m = expected_messages(trace)
    if m is not None:
        assert records["MPI_SEND"] == records["MPI_RECV"] == m
    defs = tool("otf2-print", "-G", anchor)
    assert defs.returncode == 0, defs.stderr
    assert "CLOCK_PROPERTIES" in defs.stdout
    assert "MPI_Init" in defs.stdout


def check_chrome(doc, ev: pd.DataFrame, messages):
    items = doc["traceEvents"]
    by_ph = collections.defaultdict(list)
    for e in items:
        by_ph[e["ph"]].append(e)
    assert len(by_ph["X"]) == len(ev)
    # async begin/end pair by (cat, id)
    begins = collections.Counter((e["cat"], e["id"]) for e in by_ph["b"])
    ends = collections.Counter((e["cat"], e["id"]) for e in by_ph["e"])
    assert begins == ends
    # flows pair by id, start before or at... anything; both ends present once
    assert collections.Counter(e["id"] for e in by_ph["s"]) == \
        collections.Counter(e["id"] for e in by_ph["f"])
    if messages is not None:
        assert len(by_ph["s"]) == messages
    # names for every process and thread that has slices
    named = {e["pid"] for e in by_ph["M"] if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]) for e in by_ph["M"] if e["name"] == "thread_name"}
    for e in by_ph["X"]:
        assert e["pid"] in named and (e["pid"], e["tid"]) in threads
    # nesting holds on each thread: a slice that starts inside another ends inside it
    per_thread = collections.defaultdict(list)
    for e in by_ph["X"]:
        per_thread[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round(e["dur"] * 1000),
                                                 e["args"]["depth"]))
    for slices in per_thread.values():
        slices.sort(key=lambda s: (s[0], s[2]))
        stack = []
        for start, dur, depth in slices:
            while stack and stack[-1][1] <= start and not (stack[-1][1] == start and
                                                             depth > stack[-1][2]):
                stack.pop()
            while stack and stack[-1][2] >= depth:
                stack.pop()
            if stack:
                assert start + dur <= stack[-1][1], (start, dur, stack[-1])
            stack.append((start, start + dur, depth))
    # slices are the events: same names and times
    xs = sorted((e["args"]["id"], e["name"], round(e["ts"] * 1000)) for e in by_ph["X"])
    assert xs == sorted(zip(ev["id"], ev["func"], ev["start_ns"]))
    assert by_ph["C"], "no counter"


@pytest.mark.parametrize("name", TRACES)
def test_chrome_json_parses_and_pairs(traces, name, tmp_path):
    trace = traces[name]
    out = tmp_path / f"{name}.json"
    export(trace, "chrome", out)
    doc = json.loads(out.read_text())
    check_chrome(doc, events(trace), expected_messages(trace))


@pytest.mark.parametrize("name", TRACES)
def test_csv_has_a_row_per_event_with_paths(traces, name, tmp_path):
    trace = traces[name]
    out = tmp_path / f"{name}.csv"
    export(trace, "csv", out)
    csv = pd.read_csv(out)
    ev = events(trace)
    assert len(csv) == len(ev)
    assert list(csv.columns) == list(ev.columns) + ["path", "fs_type"]
    assert list(csv["id"]) == list(ev["id"])
    files = pd.read_parquet(trace / "files.parquet").set_index("file_id")["path"]
    with_file = csv[csv.file_id.notna()]
    assert list(with_file.path) == [files[int(f)] for f in with_file.file_id]


def test_rank_and_time_filters(traces, tmp_path):
    trace = traces["hpio-collective"]
    ev = events(trace)
    t0, t1 = int(ev.start_ns.quantile(0.3)), int(ev.start_ns.quantile(0.6))
    out = tmp_path / "r1.csv"
    export(trace, "csv", out, "--rank", "1", "--from", f"{t0}ns", "--to-time", str(t1))
    csv = pd.read_csv(out)
    end = ev.start_ns + ev.duration_ns
    want = ev[(ev["rank"] == 1) & (end >= t0) & (ev.start_ns <= t1)]
    assert len(csv) == len(want) > 0
    assert set(csv["rank"]) == {1}
    # the same selection is valid Pajé with exactly those states
    paje = tmp_path / "r1.paje"
    export(trace, "paje", paje, "--rank", "1", "--from", f"{t0}ns", "--to-time", str(t1))
    result = tool("pj_dump", paje)
    assert result.returncode == 0 and result.stderr == ""
    assert sum(1 for line in result.stdout.splitlines() if line.startswith("State")) == len(want)
    otf2 = tmp_path / "r1.otf2"
    export(trace, "otf2", otf2, "--rank", "1", "--from", f"{t0}ns", "--to-time", str(t1))
    printed = tool("otf2-print", otf2 / "traces.otf2").stdout
    assert sum(1 for line in printed.splitlines() if line.startswith("ENTER")) == len(want)


def test_existing_output_needs_force(traces, tmp_path):
    out = tmp_path / "x.csv"
    out.write_text("keep")
    result = pioscope("export", traces["hpio-collective"], "--to", "csv", "-o", out,
                      check=False)
    assert result.returncode != 0 and "already exists" in result.stderr
    assert out.read_text() == "keep"
    export(traces["hpio-collective"], "csv", out, "--force")
    assert out.read_text().startswith("id,rank,")
    # --force never removes a directory that is not an OTF2 archive
    d = tmp_path / "dir"
    d.mkdir()
    (d / "precious").write_text("x")
    result = pioscope("export", traces["hpio-collective"], "--to", "otf2", "-o", d, "--force",
                      check=False)
    assert result.returncode != 0 and (d / "precious").exists()


def test_synthetic_trace_with_many_messages_exports_everywhere(tmp_path):
    """Regression (issue 5): a link end due at the same time as a later link's start made the
    Pajé merge loop forever. The synthetic trace (no messages.parquet: matched on the fly) has
    thousands of messages on a shared timeline."""
    trace = tmp_path / "synth"
    pioscope("synth", "-o", trace, "--events", "20000", "--ranks", "8")
    n = len(events(trace))
    paje = tmp_path / "s.paje"
    out = pioscope("export", trace, "--to", "paje", "-o", paje, timeout=120).stdout
    messages = int(out.split(" messages")[0].split(", ")[-1])
    assert messages > 100
    result = tool("pj_dump", paje)
    assert result.returncode == 0 and result.stderr == ""
    kinds = collections.Counter(line.split(",")[0] for line in result.stdout.splitlines())
    assert kinds["State"] == n and kinds["Link"] == messages
    otf2 = tmp_path / "s.otf2"
    export(trace, "otf2", otf2)
    printed = tool("otf2-print", otf2 / "traces.otf2").stdout
    records = collections.Counter(line.split()[0] for line in printed.splitlines() if line[:1].isupper())
    assert records["ENTER"] == n and records["MPI_SEND"] == records["MPI_RECV"] == messages
    chrome = tmp_path / "s.json"
    export(trace, "chrome", chrome)
    check_chrome(json.loads(chrome.read_text()), events(trace), messages)


def test_no_output_replaces_a_device_and_an_empty_run_reports(tmp_path):
    """Regression (issue 12): `export --force -o /dev/full` replaced the device node with a
    regular file, and `report` panicked (exit 101) on the trace of `pioscope run -- /bin/true`."""
    trace = tmp_path / "true"
    pioscope("run", "-o", trace, "--", "/bin/true")
    for args in (["export", trace, "--to", "csv", "--force", "-o", "/dev/full"],
                 ["report", trace, "--html", "/dev/full"]):
        result = pioscope(*args, check=False)
        assert result.returncode == 2, result
        assert result.stderr.startswith("pioscope: error: refusing to replace /dev/full")
        assert len(result.stderr.strip().splitlines()) == 1
    assert Path("/dev/full").is_char_device()
    report = pioscope("report", trace, "--json", "--html", tmp_path / "true.html")
    assert json.loads(report.stdout)["job"]["events"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["true", "true.html"]
