"""End-to-end tests of the timeline page (viewer/) in headless Chromium (issue 5): `pioscope view`
serves the checked-in HPIO traces, the page draws their rows and states, zooms with the wheel and
the keys, shows the details of a clicked state, finds a function, gives the statistics of a
selected range, collapses a host into a density row, jumps to a finding's evidence and shows two
traces side by side; never a console error. Screenshots go to build/test-output/screenshots/.

PIOSCOPE_VIEW_CMD="python3 /tmp/mock.py" runs the same tests against another server that follows
the API contract (docs/VIEWER.md), e.g. a mock while the real one is being built."""
import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import threading
import urllib.request

import pandas as pd
import pytest

from browser import open_page
from conftest import PIOSCOPE, ROOT

DATA = ROOT / "tests" / "data"
URL = re.compile(r"http://127\.0\.0\.1:\d+/?")


class Server:
    """`pioscope view TRACE... --port 0 --no-open` in a subprocess; `url` is what it printed."""

    def __init__(self, traces):
        cmd = shlex.split(os.environ.get("PIOSCOPE_VIEW_CMD", "")) or [str(PIOSCOPE), "view"]
        self.proc = subprocess.Popen([*cmd, *map(str, traces), "--port", "0", "--no-open"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = []
        found = threading.Event()

        def read():
            for line in self.proc.stdout:
                self.output.append(line)
                if URL.search(line):
                    found.set()
            found.set()  # the process ended

        threading.Thread(target=read, daemon=True).start()
        found.wait(120)
        printed = "".join(self.output)
        m = URL.search(printed)
        if not m:
            self.stop()
            if "not built yet" in printed:
                pytest.skip("`pioscope view` is not built yet")
            raise AssertionError(f"pioscope view printed no URL:\n{printed}")
        self.url = m.group(0).rstrip("/") + "/"

    def api(self, path):
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return json.load(r)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def copy_trace(name, tmp):
    """A copy of a checked-in trace: the server may add its level-of-detail index beside it."""
    dst = tmp / name
    shutil.copytree(DATA / name, dst)
    return dst


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    trace = copy_trace("hpio-collective", tmp_path_factory.mktemp("view"))
    server = Server([trace])
    yield server, trace
    server.stop()


@contextlib.contextmanager
def viewer(url):
    """A fresh page with the viewer at `url` loaded and settled."""
    with open_page() as page:
        load(page, url)
        yield page


def load(page, url):
    page.page.goto(url)
    page.page.wait_for_selector("body[data-ready='1']", timeout=30000)
    settle(page)


def settle(page):
    """Waits until no request is in flight or waiting for its debounce, and a frame followed."""
    page.page.wait_for_function("window.pioscopeView && window.pioscopeView.pending === 0", timeout=30000)
    page.page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def view(page, expr):
    return page.page.evaluate(f"window.pioscopeView.{expr}")


def events(trace):
    return pd.read_parquet(trace / "events.parquet")


def test_rows_and_states_render(one):
    server, trace = one
    ev = events(trace)
    with viewer(server.url) as page:
        rows = view(page, "rowList(0)")
        # One row per (process, thread) that has events: 4 ranks, each with a second thread.
        assert len(rows) == len(ev.groupby(["process", "thread"]))
        assert view(page, "rows") == len(rows)
        assert view(page, "rowsDrawn") == len(rows)
        assert {r["label"] for r in rows if "thread" not in r["label"]} == {f"rank {r}" for r in range(4)}
        assert view(page, "statesDrawn") > 0
        assert view(page, "t0") == 0
        assert view(page, "t1") == json.loads((trace / "meta.json").read_text())["job"]["duration_ns"]
        page.screenshot("viewer-whole-trace")
        assert page.errors == []


def test_zoom_with_wheel_and_keys(one):
    server, trace = one
    duration = json.loads((trace / "meta.json").read_text())["job"]["duration_ns"]
    with viewer(server.url) as page:
        plot = view(page, "plotRect(0)")
        x = plot["left"] + plot["width"] * 0.75
        y = plot["top"] + 40
        t0, t1 = view(page, "t0"), view(page, "t1")
        anchor = t0 + (t1 - t0) * 0.75
        page.page.mouse.move(x, y)
        page.page.mouse.wheel(0, -400)  # wheel up: zoom in around the cursor
        settle(page)
        z0, z1 = view(page, "t0"), view(page, "t1")
        assert z1 - z0 < (t1 - t0) * 0.7
        # The time under the cursor stays under it.
        assert abs(z0 + (z1 - z0) * 0.75 - anchor) < (t1 - t0) * 0.01
        page.screenshot("viewer-wheel-zoom")

        page.page.keyboard.press("Home")
        settle(page)
        assert (view(page, "t0"), view(page, "t1")) == (0, duration)
        page.page.keyboard.press("w")  # zoom in by 0.8 around the centre
        settle(page)
        k0, k1 = view(page, "t0"), view(page, "t1")
        assert abs((k1 - k0) - duration * 0.8) <= 2
        assert abs((k0 + k1) / 2 - duration / 2) <= 2
        page.page.keyboard.press("d")  # pan right by a tenth of the span
        settle(page)
        assert abs(view(page, "t0") - (k0 + (k1 - k0) * 0.1)) <= 2
        page.page.keyboard.press("ArrowDown")  # zoom out
        settle(page)
        assert view(page, "t1") - view(page, "t0") > k1 - k0
        assert view(page, "statesDrawn") > 0
        # The window is in the URL: a reload shows it again.
        w0, w1 = view(page, "t0"), view(page, "t1")
        assert page.page.url.endswith(f"#t0={w0}&t1={w1}")
        page.page.reload()
        page.page.wait_for_selector("body[data-ready='1']", timeout=30000)
        settle(page)
        assert (view(page, "t0"), view(page, "t1")) == (w0, w1)
        assert page.errors == []


def test_click_state_shows_details(one):
    server, trace = one
    ev = events(trace)
    with viewer(server.url) as page:
        drawn = [s for s in view(page, "drawnStates(0)") if s["func"] == "MPI_File_write_all" and s["w"] >= 4]
        assert drawn, "no MPI_File_write_all drawn wide enough to click"
        s = drawn[0]
        page.page.mouse.click(s["x"] + s["w"] / 2, s["y"] + s["h"] / 2)
        page.page.wait_for_selector("#details-func", timeout=10000)
        settle(page)
        assert page.page.inner_text("#details-func") == "MPI_File_write_all"
        assert view(page, "selected") == s["id"]
        row = ev[ev.id == s["id"]].iloc[0]
        assert row.func == "MPI_File_write_all"
        children = int((ev.parent == s["id"]).sum())
        assert int(page.page.get_attribute("#details-children", "data-total")) == children
        page.screenshot("viewer-details")
        # A child in the list selects that child.
        if children:
            page.page.click("#details a.child")
            page.page.wait_for_function(f"window.pioscopeView.selected !== {s['id']}")
            child = view(page, "selected")
            assert ev[ev.id == child].iloc[0].parent == s["id"]
        page.page.keyboard.press("Escape")
        settle(page)
        assert view(page, "selected") is None
        assert page.errors == []


def test_search_finds_function(one):
    server, trace = one
    ev = events(trace)
    with viewer(server.url) as page:
        page.page.fill("#search", "MPI_File_write_all")
        page.page.press("#search", "Enter")
        page.page.wait_for_selector(".search-results", timeout=10000)
        hits = page.page.locator("a.func-hit").all_inner_texts()
        assert "MPI_File_write_all" in hits
        res = page.page.locator(".search-results").first
        assert int(res.get_attribute("data-events")) == int((ev.func == "MPI_File_write_all").sum())
        page.page.click("a.event-hit >> nth=0")
        page.page.wait_for_selector("#details-func", timeout=10000)
        settle(page)
        assert page.page.inner_text("#details-func") == "MPI_File_write_all"
        first = ev[ev.func == "MPI_File_write_all"].sort_values("start_ns").iloc[0]
        assert view(page, "selected") == int(first.id)
        # Highlighting the function fades the others; the frame still draws the states.
        page.page.click("a.func-hit >> nth=0")
        settle(page)
        assert view(page, "statesDrawn") > 0
        page.screenshot("viewer-search")
        assert page.errors == []


def test_range_selection_shows_statistics(one):
    server, trace = one
    with viewer(server.url) as page:
        plot = view(page, "plotRect(0)")
        t0, t1 = view(page, "t0"), view(page, "t1")
        y = plot["top"] + 40
        xa, xb = plot["left"] + plot["width"] * 0.4, plot["left"] + plot["width"] * 0.6
        page.page.keyboard.down("Shift")
        page.page.mouse.move(xa, y)
        page.page.mouse.down()
        page.page.mouse.move((xa + xb) / 2, y, steps=3)
        page.page.mouse.move(xb, y, steps=3)
        page.page.mouse.up()
        page.page.keyboard.up("Shift")
        page.page.wait_for_selector("#range-span", timeout=10000)
        settle(page)
        r = view(page, "range")
        span = t1 - t0
        assert abs(r["t0"] - (t0 + span * 0.4)) < span * 0.005
        assert abs(r["t1"] - (t0 + span * 0.6)) < span * 0.005
        # The window did not move: shift-drag selects, it does not pan.
        assert (view(page, "t0"), view(page, "t1")) == (t0, t1)
        assert page.page.locator("#stats table.grid tr").count() > 1
        page.screenshot("viewer-range-stats")
        page.page.click("#stats button[data-act=zoom]")
        settle(page)
        assert (view(page, "t0"), view(page, "t1")) == (r["t0"], r["t1"])
        assert page.errors == []


def test_collapse_host_into_density_row(one):
    server, _ = one
    with viewer(server.url) as page:
        page.page.click("#collapse")
        settle(page)
        assert view(page, "rowsDrawn") == 0
        assert view(page, "densityRowsDrawn") == 1  # one host: "vm"
        assert view(page, "groupCellsDrawn") > 0  # its 8 rows as one row group
        page.screenshot("viewer-collapsed")
        # A click on the host's header expands it again.
        plot = view(page, "plotRect(0)")
        page.page.mouse.click(plot["left"] - 60, plot["top"] + 8)
        settle(page)
        assert view(page, "rowsDrawn") == len(view(page, "rowList(0)"))
        assert view(page, "densityRowsDrawn") == 0
        assert page.errors == []


def test_finding_jumps_to_evidence(one):
    server, trace = one
    findings = server.api("api/findings?trace=0")
    if not findings:
        pytest.skip("the trace has no finding")
    jump = findings[0]["jump"]
    with viewer(server.url) as page:
        page.page.click("a.finding >> nth=0")
        settle(page)
        t0, t1 = view(page, "t0"), view(page, "t1")
        assert t0 <= jump["t0"] and t1 >= jump["t1"]
        assert t1 - t0 <= (jump["t1"] - jump["t0"]) * 1.2 + 200
        assert view(page, "selected") == jump.get("event")
        page.screenshot("viewer-finding")
        assert page.errors == []


def test_two_traces_side_by_side(tmp_path):
    a = copy_trace("hpio-collective", tmp_path)
    b = copy_trace("hpio-independent", tmp_path)
    server = Server([a, b])
    try:
        with viewer(server.url) as page:
            assert view(page, "panes") == 2
            rows_a, rows_b = view(page, "rowList(0)"), view(page, "rowList(1)")
            assert view(page, "rows") == len(rows_a) + len(rows_b)
            assert view(page, "drawnStates(0)") and view(page, "drawnStates(1)")
            pa, pb = view(page, "plotRect(0)"), view(page, "plotRect(1)")
            # One time axis: the plots line up and the second pane lies below the first.
            assert (pa["left"], pa["width"]) == (pb["left"], pb["width"])
            assert pb["top"] > pa["top"] + pa["height"] / 2
            longest = max(json.loads((t / "meta.json").read_text())["job"]["duration_ns"] for t in (a, b))
            assert (view(page, "t0"), view(page, "t1")) == (0, longest)
            page.page.keyboard.press("w")
            settle(page)
            assert view(page, "t1") - view(page, "t0") < longest
            assert view(page, "drawnStates(1)")
            page.screenshot("viewer-two-traces")
            assert page.errors == []
    finally:
        server.stop()


def test_many_ranks_collapse_into_density_rows(tmp_path):
    """256 ranks open as the overview (tests/test_viewer_groups.py); *collapse hosts* shows the
    rows' layout with every host as one density row drawn from row groups; a click expands one
    host."""
    from conftest import pioscope
    trace = tmp_path / "wide"
    pioscope("synth", "-o", trace, "--events", "40k", "--ranks", "256")
    server = Server([trace])
    try:
        with viewer(server.url) as page:
            rows = view(page, "rowList(0)")
            assert len(rows) >= 256
            assert view(page, "overview(0)")["to"] == len(rows)
            page.page.click("#collapse")
            settle(page)
            assert view(page, "overview(0)") is None
            assert view(page, "rowsDrawn") == 0
            assert view(page, "densityRowsDrawn") > 0
            assert view(page, "groupCellsDrawn") > 0
            page.screenshot("viewer-many-ranks")
            plot = view(page, "plotRect(0)")
            page.page.mouse.click(plot["left"] - 60, plot["top"] + 8)  # the first host (4 ranks)
            settle(page)
            assert view(page, "rowsDrawn") == 4
            assert view(page, "statesDrawn") + view(page, "bucketsDrawn") > 0
            assert view(page, "densityRowsDrawn") > 0
            page.screenshot("viewer-many-ranks-expanded")
            assert page.errors == []
    finally:
        server.stop()
