"""`pioscope fleet` (issue 17, many jobs at once): over the two real HPIO traces checked in,
three real Darshan logs (PyDarshan's examples, scripts/darshan-logs.sh: with DXT, with DXT and
HDF5, counters only) and a damaged log, the tables have one row per input with the bytes, I/O
time and findings `pioscope report --json` gives for each job, the damaged log is a row with
its error, the ranking of FORMAT.md's SQL (run with DuckDB) is the one summary.html shows in
headless Chromium, and other files under the directories are skipped."""
import json
import shutil
import subprocess

import duckdb
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


def sql_ranking(out):
    """FORMAT.md's ranking queries, run with DuckDB over the tables."""
    con = duckdb.connect()
    con.execute(f"CREATE VIEW jobs AS SELECT * FROM '{out / 'jobs.parquet'}'")
    con.execute(f"CREATE VIEW findings AS SELECT * FROM '{out / 'findings.parquet'}'")
    jobs = [r[0] for r in con.execute(
        "SELECT input FROM jobs WHERE error IS NULL ORDER BY io_ns DESC, input LIMIT 100").fetchall()]
    rules = con.execute(
        "SELECT finding, count(DISTINCT input), count(*), sum(cost_ns) FROM findings "
        "GROUP BY finding ORDER BY sum(cost_ns) DESC, finding").fetchall()
    errors = [r[0] for r in con.execute(
        "SELECT input FROM jobs WHERE error IS NOT NULL ORDER BY input").fetchall()]
    return jobs, rules, errors


def test_the_page_shows_the_sql_ranking(fleet):
    _, out, _ = fleet
    jobs, rules, errors = sql_ranking(out)
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
