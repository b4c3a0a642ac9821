"""`pioscope report --html FILE` (issue 3): the page opens from disk (file://) in headless
Chromium with no console error and no network request, shows the findings as --json has them,
and draws its charts: the time breakdown, per-rank bytes and time, size histograms with one bar
per power-of-two bin, and the rank-by-time heat map with the grid of the report JSON. Run on
the two HPIO traces checked in (4 ranks) and on a synthetic 10,000-rank trace, whose per-rank
charts must be aggregated (at most CAP bars); and (issue 14) the storage servers' and the
counters' sections of a simulated trace and of a traced run with counters. Screenshots:
build/test-output/screenshots/."""
import json
import subprocess
import math

import pytest

from browser import open_page
from conftest import ROOT, pioscope, run_traced

DATA = ROOT / "tests" / "data"
# report.js: per-rank charts draw at most this many bars; more ranks are bucketed.
CAP = 64
# report.js: rows a table draws before "show more".
TABLE_ROWS = 200
# crates/pioscope-analysis/src/heatmap.rs: the grid's bounds.
MAX_ROWS, MAX_COLUMNS = 200, 400
# Charts that draw one bar per rank (or per rank bucket).
PER_RANK = "svg[data-chart='time-ranks'], svg[data-chart^='rank-'], svg[data-chart='time-io-share']"


def make_page(trace, out_dir):
    """Writes the page of `trace` and returns (page path, the report JSON of the same run)."""
    html = out_dir / "report.html"
    result = pioscope("report", trace, "--json", "--html", html)
    return html, json.loads(result.stdout)


def bin_index(bin_min):
    return 0 if bin_min == 0 else int(math.log2(bin_min)) + 1


def expected_bins(row):
    """report.js draws every bin from the smallest to the largest non-empty one."""
    idx = [bin_index(b["bin_min"]) for b in row["size_histogram"]]
    return max(idx) - min(idx) + 1


def load(page, html):
    """Opens the page from disk; returns the URLs it requested."""
    requests = []
    page.page.on("request", lambda r: requests.append(r.url))
    page.page.goto(html.as_uri(), wait_until="load", timeout=120_000)
    page.page.wait_for_selector("body[data-ready='true']", timeout=120_000)
    return requests


def check_page(page, html, data, name):
    """The checks every page passes; returns nothing, asserts."""
    requests = load(page, html)
    p = page.page
    page.screenshot(name)
    assert page.errors == [], page.errors
    assert requests == [html.as_uri()], f"only the page itself is loaded: {requests}"
    # No section failed to draw.
    assert p.locator(".banner").filter(has_text="could not be drawn").count() == 0

    # Findings: every one, most costly first, with the titles, severities and remedies of --json.
    titles = p.locator("article.finding .finding-title").all_text_contents()
    assert titles == [f["title"] for f in data["findings"]]
    severities = p.eval_on_selector_all("article.finding", "els => els.map(e => e.dataset.severity)")
    assert severities == [f["severity"] for f in data["findings"]]
    assert p.locator("article.finding .remedy").count() == sum(1 for f in data["findings"] if f["remedy"])

    # Charts exist and hold data: every chart has bars, every bar a shape.
    charts = p.eval_on_selector_all(
        "svg.chart",
        "els => els.map(e => [e.dataset.chart, e.querySelectorAll('.bar').length,"
        " e.querySelectorAll('.bar rect, .bar line').length])")
    names = {c[0] for c in charts}
    assert {"time-total", "time-ranks", "rank-io-time", "histogram"} <= names, names
    for chart, bars, shapes in charts:
        assert bars > 0 and shapes > 0, (chart, bars, shapes)

    # Size histograms: one per file layer and per data function, one bar per power-of-two bin.
    file_layers = {"posix", "stdio", "mpiio"}
    for kind, rows in (("layer", data["tables"]["layer"]), ("func", data["tables"]["func"])):
        rows = [r for r in rows if r["layer"] in file_layers and r["size_histogram"]]
        assert rows, kind
        for r in rows:
            sel = (f"svg[data-chart='histogram'][data-kind='{kind}']"
                   f"[data-layer='{r['layer']}'][data-group='{r['group']}']")
            svg = p.locator(sel)
            assert svg.count() == 1, sel
            assert int(svg.get_attribute("data-bins")) == expected_bins(r), sel
            assert svg.locator(".bar").count() == expected_bins(r), sel
            # The bar heights follow the counts: the tallest bar is the largest count's bin.
            heights = svg.locator(".bar").evaluate_all(
                "bars => bars.map(b => [...b.querySelectorAll('rect')]"
                ".reduce((a, r) => a + r.height.baseVal.value, 0))")
            top = max(r["size_histogram"], key=lambda b: b["count"])
            lo = min(bin_index(b["bin_min"]) for b in r["size_histogram"])
            assert heights.index(max(heights)) == bin_index(top["bin_min"]) - lo, sel

    # Heat map: the JSON's grid, drawn one pixel per cell, not blank where there was I/O.
    h = data["heatmap"]
    assert 1 <= h["rows"] <= MAX_ROWS and 1 <= h["columns"] <= MAX_COLUMNS
    canvas = p.locator("canvas[data-chart='heatmap']")
    assert canvas.count() == 1
    assert int(canvas.get_attribute("data-rows")) == h["rows"] == len(h["busy_ns"])
    assert int(canvas.get_attribute("data-columns")) == h["columns"] == len(h["busy_ns"][0])
    painted = canvas.evaluate(
        "c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 250) n++; return n; }")
    busy_cells = sum(1 for row in h["busy_ns"] for v in row if v > 0)
    assert h["max_busy_ns"] > 0 and painted > 0 and painted <= busy_cells
    # Each row holds exactly the I/O time of its ranks (the breakdown's outermost I/O calls).
    io = {r["rank"]: r["io_ns"] for r in data["breakdown"]["ranks"]}
    for i, row in enumerate(h["busy_ns"]):
        ranks = range(i * h["per_row"], min(h["units"], (i + 1) * h["per_row"]))
        assert sum(row) == sum(io.get(r, 0) for r in ranks), i

    # Tables: sortable, all rows counted, at most TABLE_ROWS drawn.
    layer = p.locator("table[data-table='layer']")
    assert int(layer.get_attribute("data-rows")) == len(data["tables"]["layer"])
    assert layer.locator("tbody tr").count() == len(data["tables"]["layer"])
    layer.locator("th", has_text="bytes").first.click()
    first = layer.locator("tbody tr").first.locator("td").first.text_content()
    assert first == max(data["tables"]["layer"], key=lambda r: r["bytes"])["group"]
    p.locator("button[data-tab='rank']").click()
    ranks = p.locator("table[data-table='rank']")
    assert int(ranks.get_attribute("data-rows")) == len(data["tables"]["rank"])
    assert ranks.locator("tbody tr").count() == min(TABLE_ROWS, len(data["tables"]["rank"]))


@pytest.mark.parametrize("name", ["hpio-collective", "hpio-independent"])
def test_hpio_page(name, tmp_path):
    html, data = make_page(DATA / name, tmp_path)
    assert data["job"]["ranks"] == 4
    with open_page() as page:
        check_page(page, html, data, f"report-{name}")
        p = page.page
        # 4 ranks: one bar per rank, nothing aggregated.
        bars = p.eval_on_selector_all(PER_RANK, "els => els.map(e => [e.dataset.chart,"
                                      " e.dataset.aggregated, e.querySelectorAll('.bar').length])")
        assert bars and all(b[1] == "false" and b[2] == 4 for b in bars), bars
        assert p.locator("svg[data-chart='time-io-share']").count() == 0
        h = data["heatmap"]
        assert (h["rows"], h["per_row"]) == (4, 1)


def test_hpio_findings_have_evidence(tmp_path):
    """The independent run has findings; each shows its evidence lines and its cost."""
    html, data = make_page(DATA / "hpio-independent", tmp_path)
    assert data["findings"], "the independent HPIO run has findings"
    with open_page() as page:
        load(page, html)
        assert page.errors == []
        for i, f in enumerate(data["findings"]):
            card = page.page.locator("article.finding").nth(i)
            assert card.get_attribute("data-id") == f["id"]
            worst = card.locator("ul.worst li").all_text_contents()
            assert worst == f["evidence"]["worst"]
            assert f["evidence"]["summary"] in card.text_content()


def test_10000_ranks_aggregated(tmp_path):
    trace = tmp_path / "synth"
    # The smallest trace synth accepts for 10,000 ranks (one step per rank).
    pioscope("synth", "-o", trace, "--events", "500k", "--ranks", "10000")
    html, data = make_page(trace, tmp_path)
    assert data["job"]["ranks"] == 10_000
    assert len(data["breakdown"]["ranks"]) == 10_000
    h = data["heatmap"]
    assert (h["rows"], h["per_row"], h["columns"]) == (MAX_ROWS, 50, MAX_COLUMNS)
    with open_page() as page:
        check_page(page, html, data, "report-synth-10000-ranks")
        p = page.page
        bars = p.eval_on_selector_all(PER_RANK, "els => els.map(e => [e.dataset.chart,"
                                      " e.dataset.aggregated, e.querySelectorAll('.bar').length])")
        names = {b[0] for b in bars}
        assert {"time-ranks", "time-io-share", "rank-io-time"} <= names, names
        for chart, aggregated, n in bars:
            assert aggregated == "true", chart
            # 10,000 ranks in buckets of ceil(10000 / 64) = 157: 64 bars.
            assert n == math.ceil(10_000 / math.ceil(10_000 / CAP)) <= CAP, (chart, n)
        # Nothing in the page draws one element per rank.
        assert p.locator("svg.chart .bar").count() < 2_000


# crates/pioscope-analysis/src/findings/mod.rs SERVER_RULE_IDS: the page lists their findings
# beside the server table too.
SERVER_RULES = {"server-imbalance", "small-storage-accesses", "servers-idle", "server-cpu"}


def test_servers_and_counters_sections_of_a_simulation(tmp_path):
    """Issue 14: a simulated trace has storage servers and their sampled CPU; the page shows the
    server table, what the client calls became on the servers, the server findings and the
    counters summary, each row as the report JSON has it."""
    sim = tmp_path / "sim"
    # One access per 32-byte region (ad_pvfs2's posix hint), written through to the disks:
    # the storage gets small accesses (a page cache would merge them).
    pioscope("simulate", "--workload", "hpio:ranks=4,region_count=256", "--system",
             "pvfs2-2009", "--set", "romio_pvfs2_posix_write=enable", "--set", "write_back=0",
             "--set", "dirty_limit=0", "-o", sim)
    html, data = make_page(sim, tmp_path)
    servers = data["servers"]["servers"]
    assert len(servers) == 5, "pvfs2-2009: 4 data servers and a metadata server"
    server_findings = [f for f in data["findings"] if f["id"] in SERVER_RULES]
    assert server_findings, "small independent writes: small storage accesses"
    with open_page() as page:
        check_page(page, html, data, "report-simulated-servers")
        p = page.page
        table = p.locator("table[data-table='servers']")
        assert int(table.get_attribute("data-rows")) == len(servers)
        rows = table.locator("tbody tr")
        assert rows.count() == len(servers)
        first = rows.first.locator("td").all_text_contents()
        assert first[:2] == [servers[0]["server"], "data"]
        assert "-" not in first, f"every column of a data server is filled: {first}"
        calls = p.locator("ul.server-calls li").all_text_contents()
        assert calls[:len(data["servers"]["calls"])] == [c["summary"] for c in data["servers"]["calls"]]
        listed = p.locator("ul.server-findings")
        assert int(listed.get_attribute("data-server-findings")) == len(server_findings)
        for f in server_findings:
            assert f["title"] in listed.text_content()
        counters = p.locator("table[data-table='counters']")
        assert int(counters.get_attribute("data-rows")) == len(data["counters"]) == len(servers)
        assert p.locator("nav.toc a[href='#servers']").count() == 1
        assert p.locator("nav.toc a[href='#counters']").count() == 1


def test_counters_section_of_a_traced_run(programs, workdir, tmp_path):
    """A traced run samples its node and every rank: one counters row each; no servers."""
    trace = tmp_path / "t"
    run_traced(trace, programs["mpi_sleep"], workdir, "1", ranks=2)
    html, data = make_page(trace, tmp_path)
    summaries = data["counters"]
    assert [c["process"] for c in summaries if c["process"] < 0] == [-1], "one node"
    assert len(summaries) == 3, "the node and 2 ranks"
    assert data.get("servers") is None
    with open_page() as page:
        check_page(page, html, data, "report-counters")
        p = page.page
        counters = p.locator("table[data-table='counters']")
        assert int(counters.get_attribute("data-rows")) == len(summaries)
        processes = counters.locator("tbody tr td:nth-child(2)").all_text_contents()
        assert sorted(processes) == sorted(
            "node" if c["process"] < 0 else f"process {c['process']}" for c in summaries)
        assert p.locator("section#servers").count() == 0


def test_darshan_section_of_an_imported_log(tmp_path):
    """Issue 17: a store imported from a Darshan log (with DXT) shows what the log cannot
    support and Darshan's counters per module, as the report JSON has them."""
    logs = ROOT / "build" / "third_party" / "darshan-logs"
    subprocess.run([str(ROOT / "scripts" / "darshan-logs.sh"), str(logs)], check=True)
    trace = tmp_path / "imported"
    pioscope("import", "darshan", logs / "ior_hdf5_example.darshan", "-o", trace)
    html, data = make_page(trace, tmp_path)
    modules = data["darshan"]["modules"]
    assert [m["module"] for m in modules] == ["POSIX", "MPI-IO", "STDIO", "H5D"]
    with open_page() as page:
        check_page(page, html, data, "report-darshan")
        p = page.page
        table = p.locator("table[data-table='darshan']")
        assert int(table.get_attribute("data-rows")) == len(modules)
        first = table.locator("tbody tr").first.locator("td").all_text_contents()
        assert first[0] == "H5D", "sorted by module name"
        limits = p.locator("ul.darshan-limits li").all_text_contents()
        assert limits == data["darshan"]["cannot_support"]
        assert p.locator("nav.toc a[href='#darshan']").count() == 1
