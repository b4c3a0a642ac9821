"""One colour table (issue 11): the viewer, the HTML report and the Pajé export draw every layer
and function in the colour of pioscope's one table (crates/pioscope-trace/src/colours.rs), here
as `pioscope view` serves it in /api/rows. Before, the report drew MPI-IO purple, the exports
had their own table and the viewer a third one. Checked on the drawn result: the viewer's
legend swatches and canvas pixels, the report's bars, the Pajé file's entity values."""
import re

import pytest

from browser import open_page
from conftest import pioscope
from test_viewer import Server, copy_trace, load, view

# `4 <alias> <type> "<function>" "<r> <g> <b>"`: a Pajé entity value (a function's colour).
ENTITY_VALUE = re.compile(r'^4 \S+ \S+ "([^"]*)" "([\d.]+) ([\d.]+) ([\d.]+)"$')
# The layers whose bytes and request sizes the report draws.
FILE_LAYERS = ("posix", "stdio", "mpiio", "hdf5", "pnetcdf")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(server, trace, the /api/rows answer) for a copy of the HPIO collective trace."""
    trace = copy_trace("hpio-collective", tmp_path_factory.mktemp("colours"))
    server = Server([trace])
    yield server, trace, server.api("api/rows?trace=0")
    server.stop()


def rgb(page, css):
    """A CSS colour as the browser resolves it: (r, g, b) in 0..255."""
    text = page.page.evaluate(
        "c => { const d = document.createElement('div'); d.style.color = c; document.body.append(d);"
        " const v = getComputedStyle(d).color; d.remove(); return v; }", css)
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def near(a, b, tol=1):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def test_the_server_sends_one_colour_per_layer_and_function(served):
    _, _, rows = served
    assert set(rows["layer_colours"]) == set(rows["layers"])
    assert all(f["colour"].startswith("hsl(") for f in rows["functions"])
    # Functions of one layer are shades of its hue.
    hue = {layer: int(re.findall(r"-?\d+", c)[0]) for layer, c in rows["layer_colours"].items()}
    for f in rows["functions"]:
        assert abs(int(re.findall(r"-?\d+", f["colour"])[0]) - hue[f["layer"]]) <= 8, f


def test_viewer_draws_the_served_colours(served):
    server, _, rows = served
    colours = {f["name"]: f["colour"] for f in rows["functions"]}
    with open_page() as page:
        load(page, server.url)
        p = page.page
        swatches = p.eval_on_selector_all(
            "#legend .legend-layer", "els => els.map(e => [e.querySelector('b').textContent,"
            " getComputedStyle(e.querySelector('.swatch')).backgroundColor])")
        assert {layer for layer, _ in swatches} == {f["layer"] for f in rows["functions"]}
        for layer, drawn in swatches:
            assert rgb(page, drawn) == rgb(page, rows["layer_colours"][layer]), layer
        funcs = p.eval_on_selector_all(
            "#legend .legend-func", "els => els.map(e => [e.textContent,"
            " getComputedStyle(e.querySelector('.swatch')).backgroundColor])")
        assert len(funcs) == len(rows["functions"])
        for name, drawn in funcs:
            assert rgb(page, drawn) == rgb(page, colours[name]), name
        # The timeline: pixels across the widest drawn state of each function (most of them:
        # message arrows cross some).
        widest = {}
        for s in view(page, "drawnStates(0)"):
            if s["w"] >= 8 and s["w"] > widest.get(s["func"], {"w": 0})["w"]:
                widest[s["func"]] = s
        assert "MPI_File_write_all" in widest, sorted(widest)
        for name, s in widest.items():
            pixels = p.evaluate(
                "([xs, y]) => { const c = document.querySelector('canvas.plot'); const r = c.getBoundingClientRect();"
                " const k = c.width / r.width, ctx = c.getContext('2d');"
                " return xs.map(x => [...ctx.getImageData(Math.floor((x - r.left) * k), Math.floor((y - r.top) * k), 1, 1).data]); }",
                [[s["x"] + s["w"] * i / 10 for i in range(1, 10)], s["y"] + s["h"] / 2])
            want = rgb(page, colours[name])
            assert sum(near(px[:3], want) for px in pixels) >= 6, (name, pixels, colours[name])
        assert page.errors == []


def test_report_draws_the_served_layer_colours(served, tmp_path):
    _, trace, rows = served
    html = tmp_path / "report.html"
    pioscope("report", trace, "--html", html)
    with open_page() as page:
        page.page.goto(html.as_uri(), wait_until="load")
        page.page.wait_for_selector("body[data-ready='true']")
        fills = page.page.eval_on_selector_all(
            "svg[data-chart='histogram'][data-kind='layer'], svg[data-chart^='rank-bytes-']",
            "els => els.map(e => [e.dataset.layer || e.dataset.chart.replace('rank-bytes-', ''),"
            " [...new Set([...e.querySelectorAll('.bar rect')].map(r => r.getAttribute('fill')))]])")
        assert {layer for layer, _ in fills} >= {"posix", "mpiio"}, fills
        for layer, drawn in fills:
            assert layer in FILE_LAYERS
            assert [rgb(page, c) for c in drawn] == [rgb(page, rows["layer_colours"][layer])], layer
        assert page.errors == []


def test_paje_export_uses_the_served_function_colours(served, tmp_path):
    _, trace, rows = served
    out = tmp_path / "t.paje"
    pioscope("export", trace, "--to", "paje", "-o", out)
    exported = {}
    for line in out.read_text().splitlines():
        m = ENTITY_VALUE.match(line)
        if m:
            exported[m.group(1)] = tuple(float(x) * 255 for x in m.group(2, 3, 4))
    assert {f["name"] for f in rows["functions"]} <= set(exported)
    with open_page() as page:
        for f in rows["functions"]:
            # Pajé writes two decimals: within 0.005 of 255, plus rounding.
            assert near(exported[f["name"]], rgb(page, f["colour"]), tol=2), f
