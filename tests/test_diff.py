"""`pioscope diff A B` (issue 17, run against run): the two HPIO traces checked in (independent
against collective, 4 ranks), two fresh traced HPIO runs, and two imported Darshan logs, diffed
with the facts each side's report states; the exit status of `--fail-above`; and the
comparison section `report B --html --against A` adds to the page, in headless Chromium."""
import json
import subprocess

import pytest

from browser import open_page
from conftest import ROOT, bench_binary, pioscope, run_traced

DATA = ROOT / "tests" / "data"
LOGS = ROOT / "build" / "third_party" / "darshan-logs"
# commands/diff.rs: the exit status of a regression above --fail-above.
EXIT_REGRESSION = 3


def diff(a, b, *args, status=0):
    result = pioscope("diff", a, b, "--json", *args, check=False)
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    return json.loads(result.stdout)


def report(trace):
    return json.loads(pioscope("report", trace, "--json").stdout)


def by_group(rows):
    return {(r["group"], r["layer"]): r for r in rows}


def statuses(d):
    return {(f["id"], f["status"]) for f in d["findings"]}


def unpaired(d):
    return {(u["side"], u["func"]): u["count"] for u in d["calls"]["unpaired"]}


def check_against_reports(d, ra, rb):
    """What the diff lines up is what the two reports say."""
    assert d["io_time"]["a_ns"] == ra["breakdown"]["total"]["io_ns"]
    assert d["io_time"]["b_ns"] == rb["breakdown"]["total"]["io_ns"]
    assert d["io_time"]["delta_ns"] == d["io_time"]["b_ns"] - d["io_time"]["a_ns"]
    assert (d["a"]["ranks"], d["b"]["ranks"]) == (ra["job"]["ranks"], rb["job"]["ranks"])
    for key, table in (("layers", "layer"), ("functions", "func"), ("files", "file"), ("ranks", "rank")):
        rows = by_group(d[key])
        assert len(rows) == len(d[key]), f"{key}: one row per (group, layer)"
        for side, r in (("a", ra), ("b", rb)):
            for row in r["tables"][table]:
                got = rows[(row["group"], row["layer"])][side]
                assert got == {"operations": row["operations"], "bytes": row["bytes"],
                               "time_ns": row["total_time_ns"]}, (key, row["group"])
        present = {(row["group"], row["layer"]) for r in (ra, rb) for row in r["tables"][table]}
        assert set(rows) == present, key
    ids_a = sorted(f["id"] for f in ra["findings"])
    ids_b = sorted(f["id"] for f in rb["findings"])
    assert sorted(f["id"] for f in d["findings"] if f["status"] != "appeared") == ids_a
    assert sorted(f["id"] for f in d["findings"] if f["status"] != "disappeared") == ids_b


def test_checked_in_independent_against_collective():
    a, b = DATA / "hpio-independent", DATA / "hpio-collective"
    d = diff(a, b)
    check_against_reports(d, report(a), report(b))
    # Collective I/O removes data sieving and the noncontiguous independent calls, and brings
    # the two-phase exchange; its blocking MPI_File_write_all now costs enough to be worth
    # overlapping (mpiio-blocking).
    assert statuses(d) == {("exchange-time", "appeared"),
                           ("mpiio-blocking", "appeared"),
                           ("noncontiguous-independent", "disappeared"),
                           ("data-sieving", "disappeared")}
    assert [f["status"] for f in d["findings"]] == ["appeared", "appeared", "disappeared",
                                                    "disappeared"]
    layers = by_group(d["layers"])
    # POSIX time fell (no read-modify-write), MPI-IO time grew (the exchange).
    assert layers[("posix", "posix")]["change"]["delta_ns"] < 0
    assert layers[("mpiio", "mpiio")]["change"]["delta_ns"] > 0
    assert d["io_time"]["delta_ns"] > 0
    # The independent writes have no collective counterpart, and the other way round.
    u = unpaired(d)
    assert u[("A", "MPI_File_write")] == 8 and u[("B", "MPI_File_write_all")] == 8
    assert ("A", "MPI_File_write_all") not in u and ("B", "MPI_File_write") not in u
    changed = d["calls"]["changed"]
    assert 0 < len(changed) <= 20
    deltas = [abs(c["delta_ns"]) for c in changed]
    assert deltas == sorted(deltas, reverse=True)
    assert all(c["delta_ns"] == c["b_ns"] - c["a_ns"] != 0 for c in changed)
    assert d["fail_above"] is None and d["regressions"] == []


def test_fail_above_gives_the_exit_status():
    a, b = DATA / "hpio-independent", DATA / "hpio-collective"
    d = diff(a, b, "--fail-above", "10%", status=EXIT_REGRESSION)
    io = d["io_time"]["percent"]
    mpiio = by_group(d["layers"])[("mpiio", "mpiio")]["change"]["percent"]
    assert 10 < io and 10 < mpiio
    assert [r["measure"] for r in d["regressions"]] == ["io time", "layer mpiio"]
    # Above both growths: no regression, exit 0.
    above = max(io, mpiio) + 1
    d = diff(a, b, "--fail-above", f"{above}")
    assert d["regressions"] == [] and d["fail_above"] == above
    # The text says so too, and exits the same way.
    text = pioscope("diff", a, b, "--fail-above", "10", check=False)
    assert text.returncode == EXIT_REGRESSION
    assert "Regressions above 10%" in text.stdout and "  layer mpiio: " in text.stdout
    # Backwards, the independent run's POSIX time (data sieving) is the regression.
    d = diff(b, a, "--fail-above", "10", status=EXIT_REGRESSION)
    assert [r["measure"] for r in d["regressions"]] == ["layer posix"]
    assert d["io_time"]["delta_ns"] < 0
    # A run against itself: nothing changed, even at 0 %.
    d = diff(a, a, "--fail-above", "0")
    assert d["regressions"] == [] and d["calls"]["changed"] == [] and d["calls"]["unpaired"] == []
    assert {f["status"] for f in d["findings"]} == {"unchanged"}
    assert all(r["change"]["delta_ns"] == 0 for r in d["layers"] + d["files"] + d["ranks"])


@pytest.mark.parametrize("args, says", [
    (["--fail-above=-5"], "percentage of 0 or more"),
    (["--fail-above", "ten"], "percentage of 0 or more"),
])
def test_bad_threshold_is_a_usage_error(args, says):
    r = pioscope("diff", DATA / "hpio-independent", DATA / "hpio-collective", *args, check=False)
    assert r.returncode == 2 and says in r.stderr and r.stdout == ""


def test_missing_trace_is_one_line(tmp_path):
    r = pioscope("diff", DATA / "hpio-independent", tmp_path / "nope", check=False)
    assert r.returncode == 2
    assert r.stderr.startswith("pioscope: error: trace B") and len(r.stderr.splitlines()) == 1


def test_two_traced_hpio_runs(tmp_path):
    """Fresh runs: what the diff pairs and leaves unpaired is what each store holds."""
    args = ["--region-size", "32", "--region-count", "1024", "--iterations", "2"]
    traces = {}
    for mode in ("independent", "collective"):
        _, traces[mode] = run_traced(tmp_path / mode, bench_binary("hpio"), *args, "--mode", mode,
                                     "--path", tmp_path / f"{mode}.dat", ranks=4)
    a, b = traces["independent"], traces["collective"]
    d = diff(a.path, b.path)
    check_against_reports(d, report(a.path), report(b.path))
    # Top-level MPI-IO writes: every independent one unpaired in A, every collective in B.
    top = lambda t, f: int(((t.events.func == f) & (t.events.depth == 0)).sum())
    u = unpaired(d)
    assert u[("A", "MPI_File_write")] == top(a, "MPI_File_write") == 8
    assert u[("B", "MPI_File_write_all")] == top(b, "MPI_File_write_all") == 8
    # Data sieving belongs to independent writes: it disappears.
    assert ("data-sieving", "disappeared") in statuses(d)
    assert all(s == "disappeared" for i, s in statuses(d) if i == "data-sieving")


def test_two_imported_darshan_logs(tmp_path):
    """Two imported Darshan logs with DXT segments, of different programs and rank counts (IOR
    through HDF5 on 4 ranks, a 1-rank POSIX job): rows, ranks and calls of one run only keep an
    empty side; the DXT segment counts are the calls without a counterpart."""
    subprocess.run([str(ROOT / "scripts" / "darshan-logs.sh"), str(LOGS)], check=True)
    a, b = tmp_path / "ior", tmp_path / "dxt"
    pioscope("import", "darshan", LOGS / "ior_hdf5_example.darshan", "-o", a)
    pioscope("import", "darshan", LOGS / "dxt.darshan", "-o", b)
    d = diff(a, b, "--fail-above", "5", status=EXIT_REGRESSION)
    check_against_reports(d, report(a), report(b))
    assert (d["a"]["ranks"], d["b"]["ranks"]) == (4, 1)
    # B's one rank has POSIX calls only: every other (rank, layer) row is A's alone.
    both = {(r["group"], r["layer"]) for r in d["ranks"] if r["b"] is not None}
    assert both == {("0", "posix")}
    assert {r["group"] for r in d["ranks"] if r["b"] is None} == {"0", "1", "2", "3"}
    assert not any(r["a"] is None for r in d["ranks"])
    # The files of two different jobs: every file row has one side only.
    assert all((r["a"] is None) != (r["b"] is None) for r in d["files"])
    # DXT: IOR's 36 MPI-IO reads and 23 writes, the POSIX job's 7623 segments.
    assert d["calls"]["paired"] == 0
    assert unpaired(d) == {("A", "MPI_File_read_at"): 36, ("A", "MPI_File_write_at"): 23,
                           ("B", "pread"): 6126, ("B", "pwrite"): 1497}

    def grown(rows, prefix):
        return [f"{prefix} {r['group']}" for r in rows
                if (r["change"]["percent"] is None and r["change"]["b_ns"] > 0)
                or (r["change"]["percent"] or 0) > 5]

    # B spends less time in traced I/O calls and has no MPI-IO; what regresses is the counters
    # of the modules the 1-rank job used more (the regressions are those modules, by name).
    assert d["io_time"]["delta_ns"] < 0 and grown(d["layers"], "layer") == []
    assert [r["measure"] for r in d["regressions"]] == grown(d["darshan"], "darshan") != []
    # The other way round, the I/O and POSIX time grew and the MPI-IO layer is new.
    d = diff(b, a, "--fail-above", "5", status=EXIT_REGRESSION)
    measures = [r["measure"] for r in d["regressions"]]
    assert measures[:3] == ["io time", "layer posix", "layer mpiio"]
    assert measures[3:] == grown(d["darshan"], "darshan")
    assert by_group(d["layers"])[("mpiio", "mpiio")]["change"]["percent"] is None


def test_two_counters_only_darshan_logs(tmp_path):
    """Two runs of one program imported from Darshan logs without DXT: no calls, so the
    counters per module are what is lined up and gated."""
    subprocess.run([str(ROOT / "scripts" / "darshan-logs.sh"), str(LOGS)], check=True)
    stores = []
    for run in ("71303", "71296"):
        out = tmp_path / run
        pioscope("import", "darshan",
                 LOGS / f"pq_app_write_id{run}_7-31-5657-2037904274838284930_55623.darshan", "-o", out)
        stores.append(out)
    a, b = stores
    ra, rb = report(a), report(b)
    d = diff(a, b)
    check_against_reports(d, ra, rb)
    assert d["layers"] == [] and d["calls"]["paired"] == 0 and d["calls"]["unpaired"] == []
    modules = {r["group"]: r for r in d["darshan"]}
    for side, r in (("a", ra), ("b", rb)):
        for m in r["darshan"]["modules"]:
            assert modules[m["module"]][side] == {
                "operations": m["reads"] + m["writes"],
                "bytes": m["bytes_read"] + m["bytes_written"],
                "time_ns": m["read_time_ns"] + m["write_time_ns"] + m["meta_time_ns"]}
    assert set(modules) == {"POSIX", "STDIO"} and all(r["layer"] is None for r in d["darshan"])
    # The second run's STDIO time grew by more than 10 %, its POSIX time by less.
    stdio, posix = modules["STDIO"]["change"]["percent"], modules["POSIX"]["change"]["percent"]
    assert stdio > 10 > posix
    d = diff(a, b, "--fail-above", "10", status=EXIT_REGRESSION)
    assert [r["measure"] for r in d["regressions"]] == ["darshan STDIO"]
    d = diff(a, b, "--fail-above", f"{stdio + 1}")
    assert d["regressions"] == []


def test_report_page_carries_the_comparison(tmp_path):
    """`report B --html --against A`: the page holds the diff `pioscope diff A B --json` prints
    and draws it: the findings with their status, every lined-up table, the changed calls."""
    a, b = DATA / "hpio-independent", DATA / "hpio-collective"
    html = tmp_path / "report.html"
    pioscope("report", b, "--html", html, "--against", a)
    d = diff(a, b)
    with open_page() as page:
        requests = []
        p = page.page
        p.on("request", lambda r: requests.append(r.url))
        p.goto(html.as_uri(), wait_until="load", timeout=120_000)
        p.wait_for_selector("body[data-ready='true']", timeout=120_000)
        page.screenshot("report-against")
        assert page.errors == [], page.errors
        assert requests == [html.as_uri()], "nothing but the page is loaded"
        assert p.locator(".banner").filter(has_text="could not be drawn").count() == 0
        assert p.evaluate("window.pioscopeDiff") == d
        section = p.locator("section#diff")
        drawn = section.locator("ul.diff-findings li").evaluate_all(
            "els => els.map(e => [e.dataset.id, e.dataset.status])")
        assert drawn == [[f["id"], f["status"]] for f in d["findings"]]
        for table, key in (("diff-layer", "layers"), ("diff-func", "functions"),
                           ("diff-file", "files"), ("diff-rank", "ranks")):
            t = section.locator(f"table[data-table='{table}']")
            assert int(t.get_attribute("data-rows")) == len(d[key]), table
            assert t.locator("tbody tr").count() == len(d[key]), table
        calls = section.locator("table[data-table='diff-calls'] tbody tr")
        assert calls.count() == len(d["calls"]["changed"])
        assert p.locator("nav.toc a[href='#diff']").count() == 1
    # Without --against the page has no such section, and --against needs --html.
    plain = tmp_path / "plain.html"
    pioscope("report", b, "--html", plain)
    assert "pioscope-diff" not in plain.read_text().split("<script type=\"module\">")[0]
    r = pioscope("report", b, "--against", a, check=False)
    assert r.returncode == 2 and "--html" in r.stderr
