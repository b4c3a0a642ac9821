"""`pioscope fleet` (issue 17, many jobs at once): over the two real HPIO traces checked in,
three real Darshan logs (PyDarshan's examples, scripts/darshan-logs.sh: with DXT, with DXT and
HDF5, counters only) and a damaged log, the tables have one row per input with the bytes, I/O
time and findings `pioscope report --json` gives for each job, the damaged log is a row with
its error, summary.html (ranked by DuckDB with ranking.sql) shows in headless Chromium the
ranking pandas computes from the tables, and other files under the directories are skipped.
Over a fleet of tied copies (103 jobs, 101 failed inputs) the page's exact figures are pandas'
to the nanosecond, ties and cuts included; without duckdb the tables are still written (exit 4);
FORMAT.md's SQL is the shipped one. A garbage collection inside cffi's parser does not hang the
long-lived Darshan reader."""
import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pandas as pd
import pytest

from browser import open_page
from conftest import ROOT, pioscope

DATA = ROOT / "tests" / "data"
LOGS = ROOT / "build" / "third_party" / "darshan-logs"
TRACES = ["hpio-collective", "hpio-independent"]
DARSHAN = ["dxt", "ior_hdf5_example", "sample-badost"]
DAMAGED = "damaged"
# Darshan modules whose counters give a log without DXT its bytes (fleet/mod.rs).
FILE_MODULES = ("POSIX", "STDIO")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Builds the input tree, runs the fleet once; returns (inputs dir, output dir, stdout)."""
    subprocess.run([str(ROOT / "scripts" / "darshan-logs.sh"), str(LOGS)], check=True)
    root = tmp_path_factory.mktemp("fleet")
    inputs = root / "inputs"
    for name in TRACES:
        shutil.copytree(DATA / name, inputs / "traces" / name)
    (inputs / "logs" / "more").mkdir(parents=True)
    for name in DARSHAN:
        # Found by their first bytes, whatever their name: one goes in without its suffix.
        target = name if name == "dxt" else f"{name}.darshan"
        shutil.copy(LOGS / f"{name}.darshan", inputs / "logs" / "more" / target)
    # Darshan's header and nothing after it: sniffed as a log, refused by Darshan's reader.
    header = (LOGS / "dxt.darshan").read_bytes()[:100]
    (inputs / "logs" / f"{DAMAGED}.darshan").write_bytes(header)
    (inputs / "logs" / "README.txt").write_text("not an input\n")
    out = root / "out"
    result = pioscope("fleet", inputs, "-o", out, "-j", "2")
    return inputs, out, result.stdout


def report_of(inputs, job, tmp_path):
    """`pioscope report --json` of one input (a Darshan log imported first)."""
    trace = inputs / "traces" / job
    if job in DARSHAN:
        log = inputs / "logs" / "more" / (job if job == "dxt" else f"{job}.darshan")
        trace = tmp_path / job
        pioscope("import", "darshan", log, "-o", trace)
    return json.loads(pioscope("report", trace, "--json").stdout)


def test_one_row_per_input_with_the_report_figures(fleet, tmp_path):
    inputs, out, stdout = fleet
    jobs = pd.read_parquet(out / "jobs.parquet").sort_values("input")
    findings = pd.read_parquet(out / "findings.parquet")
    assert sorted(jobs.job) == sorted(TRACES + DARSHAN + [DAMAGED])
    assert len(jobs) == 6 and jobs.input.is_unique
    assert stdout.startswith(f"6 jobs (5 profiled, 1 failed), {len(findings)} findings\n")
    assert sorted(p.name for p in out.iterdir()) == ["findings.parquet", "jobs.parquet", "summary.html"]
    for job in TRACES + DARSHAN:
        row = jobs[jobs.job == job].iloc[0]
        assert row.kind == ("darshan" if job in DARSHAN else "trace")
        assert pd.isna(row.error)
        rep = report_of(inputs, job, tmp_path)
        files = rep["patterns"]["files"]
        read = sum(f["read_bytes"] for f in files)
        written = sum(f["written_bytes"] for f in files)
        if job == "sample-badost":  # counters only: Darshan's POSIX and STDIO counters
            modules = [m for m in rep["darshan"]["modules"] if m["module"] in FILE_MODULES]
            read = sum(m["bytes_read"] for m in modules)
            written = sum(m["bytes_written"] for m in modules)
            (posix,) = [m for m in modules if m["module"] == "POSIX"]
            assert posix["bytes_written"] == 512 * 2**30 and not row.findings_judged
        else:
            assert row.io_ns == rep["breakdown"]["total"]["io_ns"]
            assert row.io_share == pytest.approx(rep["breakdown"]["total"]["shares"]["io"])
            assert row.findings_judged
        assert (row.bytes_read, row.bytes_written) == (read, written), job
        assert (row.ranks, row.duration_ns, row.events) == (
            rep["job"]["ranks"], rep["job"]["duration_ns"], rep["job"]["events"])
        mine = findings[findings.input == row.input].sort_values("position")
        assert list(mine.finding) == [f["id"] for f in rep["findings"]], job
        assert list(mine.cost_ns) == [f["cost_ns"] for f in rep["findings"]]
        assert row.findings == len(rep["findings"])
        if rep["findings"]:
            top = rep["findings"][0]
            assert (row.top_finding, row.top_finding_cost_ns) == (top["id"], top["cost_ns"])
        else:
            assert pd.isna(row.top_finding)
    # Darshan's job id comes with the log.
    assert jobs[jobs.job == "sample-badost"].job_id.notna().all()
    assert jobs[jobs.kind == "trace"].job_id.isna().all()
    # The traces checked in have findings, so the ranking below has something to rank.
    assert len(findings) > 0


def test_a_damaged_log_is_a_row_with_its_error(fleet):
    _, out, _ = fleet
    jobs = pd.read_parquet(out / "jobs.parquet")
    (bad,) = jobs[jobs.job == DAMAGED].itertuples()
    assert bad.kind == "darshan"
    assert f"{DAMAGED}.darshan" in bad.error and "not a readable Darshan log" in bad.error
    assert pd.isna(bad.ranks) and pd.isna(bad.io_ns) and pd.isna(bad.bytes_read)
    findings = pd.read_parquet(out / "findings.parquet")
    assert (findings.job != DAMAGED).all()


def pandas_ranking(out):
    """The ranking summary.html should show, computed from the tables with pandas alone (not
    with the shipped SQL): (totals, jobs, rules, errors), exact integers."""
    jobs = pd.read_parquet(out / "jobs.parquet")
    findings = pd.read_parquet(out / "findings.parquet")
    ok = jobs[jobs.error.isna()]
    bad = jobs[jobs.error.notna()]
    totals = {"inputs": len(jobs), "failed": len(bad), "findings": len(findings),
              "bytes-read": int(ok.bytes_read.sum()), "bytes-written": int(ok.bytes_written.sum()),
              "io-ns": int(ok.io_ns.sum()), "wall-ns": int(ok.wall_ns.sum())}
    top = ok.sort_values(["io_ns", "input"], ascending=[False, True]).head(100)
    top_jobs = [(r.input, int(r.io_ns)) for r in top.itertuples()]
    rules = []
    for rule, f in findings.groupby("finding"):
        # The costliest finding; ties: the first input by name, then its first finding.
        worst = f.sort_values(["cost_ns", "input", "position"], ascending=[False, True, True]).iloc[0]
        severity = f.severity.value_counts()
        rules.append({"finding": rule, "jobs": f.input.nunique(), "findings": len(f),
                      "high": int(severity.get("high", 0)), "medium": int(severity.get("medium", 0)),
                      "low": int(severity.get("low", 0)), "cost-ns": int(f.cost_ns.sum()),
                      "worst-cost-ns": int(worst.cost_ns), "worst-input": worst.input})
    rules.sort(key=lambda r: (-r["cost-ns"], r["finding"]))
    errors = sorted(bad.input)[:100]
    return totals, top_jobs, rules, errors


def test_the_page_shows_the_ranking_of_the_tables(fleet):
    _, out, _ = fleet
    _, jobs, rules, errors = pandas_ranking(out)
    jobs = [input for input, _ in jobs]
    rules = [(r["finding"], r["jobs"], r["findings"], r["cost-ns"]) for r in rules]
    assert len(jobs) == 5 and len(errors) == 1 and len(rules) > 0
    with open_page() as page:
        page.page.goto((out / "summary.html").as_uri(), wait_until="load")
        page.screenshot("fleet-summary")
        assert page.errors == [], page.errors
        p = page.page
        shown = p.eval_on_selector_all("table[data-table='jobs'] tbody tr",
                                       "rows => rows.map(r => r.dataset.input)")
        assert shown == jobs
        shown_rules = p.eval_on_selector_all(
            "table[data-table='findings'] tbody tr",
            "rows => rows.map(r => [r.dataset.finding, +r.cells[3].textContent, +r.cells[4].textContent])")
        assert shown_rules == [[f, j, n] for f, j, n, _ in rules]
        failed = p.eval_on_selector_all("table[data-table='errors'] tbody tr",
                                        "rows => rows.map(r => r.dataset.input)")
        assert failed == errors
        assert "not a readable Darshan log" in p.inner_text("table[data-table='errors']")
        totals = p.locator("#totals")
        assert (totals.get_attribute("data-inputs"), totals.get_attribute("data-failed")) == ("6", "1")


def test_an_existing_output_needs_force_and_a_fleet(fleet, tmp_path):
    inputs, out, _ = fleet
    r = pioscope("fleet", inputs / "traces", "-o", out, check=False)
    assert r.returncode == 2 and "--force" in r.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("precious")
    r = pioscope("fleet", inputs / "traces", "-o", other, "--force", check=False)
    assert r.returncode == 2 and (other / "mine.txt").read_text() == "precious"
    again = tmp_path / "again"
    shutil.copytree(out, again)
    pioscope("fleet", inputs / "traces", "-o", again, "--force")
    assert sorted(pd.read_parquet(again / "jobs.parquet").job) == TRACES
    r = pioscope("fleet", tmp_path / "nothing-here", "-o", tmp_path / "x", check=False)
    assert r.returncode == 2 and "nothing-here" in r.stderr and not (tmp_path / "x").exists()
    (tmp_path / "empty").mkdir()
    r = pioscope("fleet", tmp_path / "empty", "-o", tmp_path / "x", check=False)
    assert r.returncode == 2 and "no trace store or Darshan log" in r.stderr
    assert not (tmp_path / "x").exists()


def test_a_file_given_that_is_no_input_is_a_row(fleet, tmp_path):
    inputs, _, _ = fleet
    out = tmp_path / "one"
    pioscope("fleet", inputs / "logs" / "README.txt", inputs / "traces" / TRACES[0], "-o", out)
    jobs = pd.read_parquet(out / "jobs.parquet").set_index("job")
    assert jobs.loc["README.txt", "kind"] == "unknown"
    assert jobs.loc["README.txt", "error"] == "not a trace store or a Darshan log"
    assert pd.isna(jobs.loc[TRACES[0], "error"])


class Page(HTMLParser):
    """summary.html's totals (data attributes) and each table's rows in order: (data
    attributes, cell texts)."""

    def __init__(self, text):
        super().__init__()
        self.totals, self.tables, self.table, self.in_cell = {}, {}, None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        data = {k[len("data-"):]: v for k, v in attrs if k.startswith("data-")}
        if tag == "table":
            self.table = self.tables.setdefault(data["table"], [])
        elif tag == "tr" and data:
            self.table.append((data, []))
        elif tag == "td":
            self.table[-1][1].append("")
            self.in_cell = True
        elif tag == "p" and dict(attrs).get("id") == "totals":
            self.totals = {k: int(v) for k, v in data.items()}

    def handle_endtag(self, tag):
        self.in_cell = self.in_cell and tag != "td"

    def handle_data(self, text):
        if self.in_cell:
            self.table[-1][1][-1] += text


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """A fleet made for ties and cuts: 102 copies of one trace (the same I/O time and finding
    costs in every copy) and one other trace, so the 100 jobs shown and each rule's worst job
    are chosen among equals by name; 101 files that are no input, named on the command line,
    so the failed inputs listed are the first 100 by name. Returns the output directory."""
    root = tmp_path_factory.mktemp("tied")
    inputs = root / "inputs"
    inputs.mkdir()
    for i in range(102):
        # Hard links: a copy's bytes cost nothing; the walk sees a store like any other.
        subprocess.run(["cp", "-al", str(DATA / TRACES[0]), str(inputs / f"copy-{i:03d}")], check=True)
    shutil.copytree(DATA / TRACES[1], inputs / TRACES[1])
    others = []
    for i in reversed(range(101)):
        others.append(root / f"note-{i:03d}.txt")
        others[-1].write_text("not an input\n")
    out = root / "out"
    pioscope("fleet", inputs, *others, "-o", out, "-j", "2")
    return out


def test_the_ranking_is_the_tables_to_the_nanosecond_ties_and_cuts_included(tied):
    totals, jobs, rules, errors = pandas_ranking(tied)
    page = Page((tied / "summary.html").read_text())
    assert page.totals == totals
    assert (totals["inputs"], totals["failed"]) == (204, 101)
    shown = [(r["input"], int(r["io-ns"])) for r, _ in page.tables["jobs"]]
    assert shown == jobs and len(shown) == 100
    # The copies tie: the first 100 by name are shown (the other trace has less I/O time).
    table = pd.read_parquet(tied / "jobs.parquet")
    assert table[table.job.str.startswith("copy-")].io_ns.nunique() == 1
    assert [i.rsplit("/", 1)[1] for i, _ in shown] == [f"copy-{i:03d}" for i in range(100)]
    shown_rules = [{k: (v if k in ("finding", "worst-input") else int(v)) for k, v in r.items()}
                   for r, _ in page.tables["findings"]]
    expected = [{k: v for k, v in r.items() if k in ("finding", "cost-ns", "worst-cost-ns", "worst-input")}
                for r in rules]
    assert shown_rules == expected and len(expected) > 0
    # Each rule's worst job is the first copy by name when the copies carry it.
    assert all(r["worst-input"].endswith("copy-000") for r in expected
               if r["worst-input"].rsplit("/", 1)[1] != TRACES[1])
    # Jobs, findings and severities are plain cells of the rule's row.
    counts = [cells[3:8] for _, cells in page.tables["findings"]]
    assert counts == [[str(r[k]) for k in ("jobs", "findings", "high", "medium", "low")] for r in rules]
    assert [r["input"] for r, _ in page.tables["errors"]] == errors
    assert errors == [str(tied.parent / f"note-{i:03d}.txt") for i in range(100)]
    assert "101 of them, the first 100 by name here" in (tied / "summary.html").read_text()


def test_the_documented_sql_is_the_shipped_sql():
    shipped = (ROOT / "crates/pioscope-analysis/src/fleet/ranking.sql").read_text()
    format_md = (ROOT / "docs" / "FORMAT.md").read_text()
    section = format_md[format_md.index("### The ranking, in SQL"):]
    documented = section[section.index("```sql\n") + len("```sql\n"):section.index("\n```\n")]
    assert documented + "\n" == shipped


def test_without_duckdb_the_tables_are_written_and_the_exit_says_why(tmp_path):
    # An interpreter that cannot import duckdb: Python without its site directory.
    python = tmp_path / "bare-python"
    python.write_text(f"#!/bin/sh\nexec {shutil.which('python3')} -S \"$@\"\n")
    python.chmod(0o755)
    out = tmp_path / "out"
    r = pioscope("fleet", DATA / TRACES[0], "-o", out, "--python", python, check=False)
    assert r.returncode == 4, r.stderr
    assert f"the Python interpreter {python} has no duckdb module" in r.stderr
    assert f"{python} -m pip install duckdb" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["findings.parquet", "jobs.parquet"]
    assert list(pd.read_parquet(out / "jobs.parquet").job) == [TRACES[0]]
    assert r.stdout.startswith("1 jobs (1 profiled, 0 failed)")


# Run by the interpreter before the reader (Python imports `sitecustomize` from its path): a
# full garbage collection each time cffi parses a C type, which it does holding its lock. That
# is where the reader hung for good in `fleet` over 1,000 logs, now and then (issue 17): a
# DarshanReport left in a reference cycle closed its log from __del__ through cffi, which
# waited on the lock its own thread held.
COLLECT_IN_CFFI = """
import gc, os
from pycparser import c_parser

parse = c_parser.CParser.parse

def collecting(self, *args, **kwargs):
    with open(os.environ["PIOSCOPE_TEST_COLLECTIONS"], "a") as out:
        out.write(f"{gc.collect()}\\n")
    return parse(self, *args, **kwargs)

c_parser.CParser.parse = collecting
"""


def test_a_collection_inside_cffi_does_not_hang_the_reader(darshan_logs, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(COLLECT_IN_CFFI)
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    collections = tmp_path / "collections"
    # One worker, so one reader reads both logs: the second one's records need C types the
    # first one's did not, parsed while the first one's report waits to be collected.
    inputs = tmp_path / "logs"
    inputs.mkdir()
    for name in ("example", "dxt"):
        shutil.copy(darshan_logs / f"{name}.darshan", inputs)
    out = tmp_path / "out"
    result = pioscope("fleet", inputs, "-o", out, "-j", "1", "--python", python, timeout=180,
                      env={**os.environ, "PIOSCOPE_TEST_COLLECTIONS": str(collections)})
    assert result.stdout.startswith("2 jobs (2 profiled, 0 failed)"), result.stdout
    assert pd.read_parquet(out / "jobs.parquet").error.isna().all()
    # The collections did run inside cffi's parser.
    assert len(collections.read_text().splitlines()) > 0
