"""The Python API (python/, docs/PYTHON.md; issue 19, part 4): `import pioscope` on the checked-in
HPIO traces and an imported Darshan log gives the tables meta.json counts, the names and
parents `pioscope dump` prints, the profile `pioscope report --json` prints, the viewer's
colours and plots of the expected artists; `pip install ./python` in a fresh virtual
environment runs the quickstart example."""
import json
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import PIOSCOPE, ROOT, pioscope
from test_import_darshan import logs  # noqa: F401 (the fixture)

sys.path.insert(0, str(ROOT / "python"))
import pioscope as api  # noqa: E402 (the source tree; the pip test installs it)
from pioscope import schema  # noqa: E402

DATA = ROOT / "tests" / "data"
HPIO = ("hpio-collective", "hpio-independent")


@pytest.fixture(autouse=True, scope="module")
def binary():
    """The API runs the worktree's build/bin/pioscope."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PIOSCOPE_BIN", str(PIOSCOPE))
        yield


def rust_constants(text: str) -> dict:
    """`pub const NAME: &str = "value";` and `: u32 = N;` of a Rust source, by name."""
    return {m[1]: m[2].strip('"') for m in
            re.finditer(r'pub const (\w+): (?:&str|u32) = ("[^"]*"|\d+);', text)}


def rust_module(text: str, name: str) -> dict:
    body = re.search(r"pub mod " + name + r" \{(.*?)\n\}", text, re.S)[1]
    return rust_constants(body)


def python_constants(holder) -> dict:
    return {k: str(v) for k, v in vars(holder).items() if k.isupper() and isinstance(v, (str, int))}


def test_schema_mirrors_the_rust_owner():
    store = ROOT / "crates" / "pioscope-trace" / "src" / "store"
    rust_schema = (store / "schema.rs").read_text()
    for module in (schema.events, schema.files, schema.counters):
        mine = python_constants(module)
        theirs = rust_module(rust_schema, module.__name__)
        assert mine.items() <= theirs.items(), module.__name__
    assert list(schema.counters.ALL) == list(rust_module(rust_schema, "counters").values())
    functions = (ROOT / "crates" / "pioscope-trace" / "src" / "functions.rs").read_text()
    names = dict(re.findall(r'Layer::(\w+) => "(\w+)"', functions))
    file_layers = re.search(r"fn is_file_layer\(self\) -> bool \{(.*?)\n    \}", functions, re.S)[1]
    assert schema.FILE_LAYERS == tuple(names[v] for v in re.findall(r"Layer::(\w+)", file_layers))
    rust_top = {}
    for source in store.glob("*.rs"):
        rust_top.update(rust_constants(source.read_text()))
    for name, value in python_constants(schema).items():
        assert rust_top.get(name) == value, name


@pytest.mark.parametrize("name", HPIO)
def test_tables_have_the_rows_meta_json_counts(name):
    trace = api.open(DATA / name)
    counts = trace.meta["counts"]
    assert len(trace.events()) == counts["events"]
    assert len(trace.files()) == counts["files"]
    assert len(trace.settings()) == counts["settings"]
    assert len(trace.messages()) == counts["messages"]
    # A store older than counters.parquet has an empty table of its columns.
    assert list(trace.counters().columns) == list(schema.counters.ALL)
    assert trace.ranks == 4 and len(trace.counters()) == 0
    with pytest.raises(ValueError, match="not imported from a Darshan log"):
        trace.darshan()


def dump_lines(trace_dir: Path, limit: int):
    """(depth, function, rest) of the first `limit` records `pioscope dump --all` prints."""
    out = pioscope("dump", trace_dir, "--all", "--limit", limit).stdout.splitlines()[1:]
    rows = []
    for line in out:
        # time (15), duration (9), where (12), each followed by two spaces, then the call.
        call = line[42:]
        indent = len(call) - len(call.lstrip(" "))
        func, _, rest = call.strip().partition(" ")
        rows.append((indent // 2, func, rest))
    return rows


@pytest.mark.parametrize("name", HPIO)
def test_names_and_paths_are_those_dump_prints(name):
    trace = api.open(DATA / name)
    ev = trace.events().head(300)
    printed = dump_lines(DATA / name, 300)
    assert len(printed) == 300
    for (depth, func, rest), (_, e) in zip(printed, ev.iterrows()):
        assert (depth, func) == (e.depth, e.func)
        if not pd.isna(e.path):
            assert rest.startswith(e.path), (rest, e.path)


def test_parents_resolved_posix_beneath_mpiio():
    for name, expected in (
            ("hpio-independent", {("pread", "MPI_File_write"): 19,
                                  ("pwrite", "MPI_File_write"): 16}),
            ("hpio-collective", {("pread", "MPI_File_write_all"): 2,
                                 ("pwrite", "MPI_File_write_all"): 2})):
        trace = api.open(DATA / name)
        # A layer filter leaves the parents out of the result: they are read by id.
        posix = trace.events(layers="posix", funcs=["pwrite", "pread"])
        pairs = posix.groupby(["func", "parent_func"], observed=True).size().to_dict()
        assert pairs == expected, name
        assert (posix.parent_layer == "mpiio").all()
        # The same parents as the whole table's own ids give.
        ev = trace.events().set_index("id")
        assert list(ev.loc[posix.parent.astype(int), "func"]) == list(posix.parent_func)
    top = trace.events(columns=["id", "parent", "func", "layer"], funcs="MPI_Init")
    assert top.parent.isna().all() and top.parent_func.isna().all()


def test_filters_select_what_pandas_would():
    trace = api.open(DATA / "hpio-collective")
    ev = trace.events()
    t0, t1 = 300_000_000, 310_000_000
    picked = trace.events(ranks=range(1, 3), time=(t0, t1), layers=["mpiio", "posix"])
    end = ev.start_ns + ev.duration_ns
    expected = ev[ev["rank"].isin([1, 2]) & (ev.start_ns < t1) & (end > t0)
                  & ev.layer.isin(["mpiio", "posix"])]
    assert list(picked.id) == list(expected.id) and len(picked) > 0
    assert list(trace.events(ranks=[3]).id) == list(ev[ev["rank"] == 3].id)
    cols = trace.events(columns=["rank", "func"], ranks=0)
    assert list(cols.columns) == ["rank", "func"] and (cols["rank"] == 0).all()


def test_polars_and_arrow_backends_hold_the_same_rows():
    trace = api.open(DATA / "hpio-independent")
    ev = trace.events(layers="posix")
    pl = trace.events(layers="posix", backend="polars")
    arrow = api.open(DATA / "hpio-independent", backend="arrow").events(layers="posix")
    assert pl.shape == ev.shape == (arrow.num_rows, arrow.num_columns)
    assert pl["parent_func"].cast(str).to_list() == ev.parent_func.astype(object).where(
        ev.parent_func.notna(), None).tolist()
    with pytest.raises(ValueError, match="backend must be one of"):
        api.open(DATA / "hpio-independent", backend="excel")


def test_profile_is_the_reports_json():
    trace = api.open(DATA / "hpio-collective")
    report = json.loads(pioscope("report", DATA / "hpio-collective", "--json").stdout)
    profile = trace.profile()
    assert profile.data == report
    assert profile.job["ranks"] == 4 and profile.job["events"] == trace.meta["counts"]["events"]
    assert list(profile.findings.id) == [f["id"] for f in report["findings"]]
    assert list(profile.ranks["rank"]) == [0, 1, 2, 3]
    assert profile.ranks.io_ns.sum() == report["breakdown"]["total"]["io_ns"]
    layers = profile.table("layer")
    for layer, bins in profile.size_histograms().items():
        (row,) = layers[layers.group == layer].itertuples()
        assert sum(bins.values()) == row.data_operations, layer
    grid = report["heatmap"]
    assert profile.heatmap.shape == (grid["rows"], grid["columns"])
    assert profile.heatmap.max() == grid["max_busy_ns"]
    assert trace.profile() is profile  # computed once


def test_colours_are_the_viewers():
    colours = api.open(DATA / "hpio-collective").colours()
    # hsl(28, 62%, 52%) is rgb(208, 128, 57) (crates/pioscope-trace/src/colours.rs).
    assert [round(x * 255) for x in colours.layers["mpiio"]] == [208, 128, 57]
    assert np.allclose(colours.layers["tracer"], (0.52, 0.52, 0.52))
    # functions.def shades, as the colours.rs tests pin them.
    assert colours.functions["MPI_File_write_all"] == api.colours.css_to_rgb("hsl(36, 50%, 52%)")
    assert colours.functions["pwrite"] == api.colours.css_to_rgb("hsl(212, 65%, 44%)")


def test_plots_draw_one_artist_per_function_layer_and_grid():
    trace = api.open(DATA / "hpio-collective")
    fig = trace.plot_timeline(ranks=range(0, 2))
    ax = fig.axes[0]
    shown = trace.events(ranks=range(0, 2))
    assert len(ax.collections) == len(shown.groupby(["func", "depth"], observed=True))
    assert sum(len(c.get_paths()) for c in ax.collections) == len(shown)
    # One lane per thread: two on each rank (MPICH's progress thread makes calls too).
    threads = sum(p["threads"] for p in trace.meta["processes"] if p["rank"] in (0, 1))
    assert len(ax.get_yticklabels()) == threads == 4
    assert {t.get_text() for t in ax.get_legend().get_texts()} == set(shown.layer)

    fig = trace.plot_sizes()
    ax = fig.axes[0]
    # The file layers' request sizes (MPI's message sizes left out).
    histograms = {layer: h for layer, h in trace.profile().size_histograms().items()
                  if layer in schema.FILE_LAYERS}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(histograms) == [
        "posix", "mpiio"]
    assert len(ax.containers) == len(histograms)
    bins = {b for h in histograms.values() for b in h}
    assert all(len(c) == len(bins) for c in ax.containers)
    assert sum(p.get_height() for c in ax.containers for p in c) == sum(
        sum(h.values()) for h in histograms.values())

    fig = trace.plot_heatmap()
    (image,) = fig.axes[0].images
    assert image.get_array().shape == trace.profile().heatmap.shape
    assert len(fig.axes) == 2  # the heat map and its colour bar


def test_a_darshan_log_opens_through_a_cached_import(logs, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("PIOSCOPE_CACHE", str(tmp_path / "cache"))
    trace = api.open(logs / "ior_hdf5_example.darshan")
    assert trace.path.parent == tmp_path / "cache"
    counts = trace.meta["counts"]
    ev = trace.events()
    assert len(ev) == counts["events"]
    assert ev.layer.isin(["posix", "mpiio"]).sum() == 118  # the log's DXT segments (CLI.md)
    assert len(trace.darshan()) == counts["darshan_counters"]
    posix = ev[ev.layer == "posix"]
    assert len(posix) > 0 and (posix.parent_layer == "mpiio").all()
    assert trace.profile().job["ranks"] == 4
    # Opened again: the same store, not imported again.
    stamp = (trace.path / schema.META_FILE).stat().st_mtime_ns
    again = api.open(logs / "ior_hdf5_example.darshan")
    assert again.path == trace.path
    assert (again.path / schema.META_FILE).stat().st_mtime_ns == stamp
    # Or where the caller says.
    mine = api.open(logs / "ior_hdf5_example.darshan", store=tmp_path / "ior")
    assert mine.path == tmp_path / "ior" and len(mine.events()) == len(ev)


def test_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="no such trace store or Darshan log"):
        api.open(tmp_path / "nothing")
    with pytest.raises(ValueError, match="not a trace store"):
        api.open(tmp_path)
    monkeypatch.delenv("PIOSCOPE_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(api.PioscopeError, match="pioscope binary was not found"):
        api.open(DATA / "hpio-collective").profile()
    monkeypatch.setenv("PIOSCOPE_BIN", str(tmp_path / "nope"))
    with pytest.raises(api.PioscopeError, match="not an executable file"):
        api.open(DATA / "hpio-collective").profile()


def test_pip_install_runs_the_quickstart(tmp_path):
    """`pip install ./python` into a virtual environment (the system's site packages give the
    dependencies; setuptools builds it without a download), then the example, with the binary
    found on PATH."""
    source = tmp_path / "python"
    shutil.copytree(ROOT / "python", source)  # pip builds in place: keep the checkout clean
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-build-isolation", source],
                   check=True)
    where = subprocess.run([python, "-c", "import pioscope; print(pioscope.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout.strip()
    assert Path(where).is_relative_to(env_dir), where
    figures = tmp_path / "figures"
    figures.mkdir()
    path = f"{PIOSCOPE.parent}:/usr/bin:/bin"
    done = subprocess.run([python, source / "examples" / "quickstart.py",
                           DATA / "hpio-independent", figures],
                          capture_output=True, text=True, cwd=tmp_path,
                          env={"PATH": path, "HOME": str(tmp_path), "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "events: 4895" in out and "events read: 4895" in out
    assert "pwrite beneath MPI_File_write: 16" in out
    assert "pread beneath MPI_File_write: 19" in out
    for name in ("timeline", "sizes", "heatmap"):
        assert (figures / f"{name}.png").stat().st_size > 0
