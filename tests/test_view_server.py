"""`pioscope view` as a process (issue 5): it rebuilds the level-of-detail index of a trace that
lost it, listens on loopback only unless --bind says otherwise, prints its URL, answers the
JSON API (404 with a JSON error outside the trace) and stops cleanly on Ctrl-C. The API
itself is tested without a socket in crates/pioscope-view/tests/api.rs; the page in
tests/test_viewer.py."""
import json
import re
import shutil
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from conftest import PIOSCOPE, ROOT

DATA = ROOT / "tests" / "data"
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


def start(*args):
    proc = subprocess.Popen([str(PIOSCOPE), "view", *map(str, args), "--port", "0", "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = URL.search(line)
    assert m, f"no URL in {line!r}: {proc.stderr.read() if proc.poll() is not None else ''}"
    return proc, m.group(0)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_view_builds_the_index_serves_and_stops(tmp_path):
    trace = tmp_path / "hpio-collective"
    shutil.copytree(DATA / "hpio-collective", trace)
    # Every store is written with its index; a store that lost it gets it rebuilt on open.
    (trace / "lod.parquet").unlink()
    (trace / "lod_spans.parquet").unlink()
    proc, url = start(trace)
    try:
        assert (trace / "lod.parquet").is_file() and (trace / "lod_spans.parquet").is_file()
        status, traces = get(url + "api/traces")
        assert status == 200 and traces[0]["events"] == 4982 and traces[0]["ranks"] == 4
        status, win = get(url + "api/window?trace=0&px=600")
        assert status == 200
        n = sum(len(r["states"]["id"]) for r in win["rows"] if r["mode"] == "states")
        assert n == 4982
        status, err = get(url + "api/event?trace=0&id=4982")
        assert status == 404 and "error" in err
        status, err = get(url + "api/window?trace=1")
        assert status == 404 and "error" in err
    finally:
        proc.send_signal(signal.SIGINT)
        out, errtext = proc.communicate(timeout=20)
    assert proc.returncode == 0, errtext
    assert "building the level-of-detail index" in errtext

    # The index, read as plain Parquet: every level and every grade of row groups counts
    # every call once (issue 18).
    lod = pd.read_parquet(trace / "lod.parquet")
    assert (lod.groupby(["level", "grade"])["count"].sum() == 4982).all()
    assert sorted(set(lod.grade)) == [0, 1], "8 rows: the rows, then one group of 8"
    assert list(lod.columns[:4]) == ["level", "grade", "row", "start_ns"]
    keys = list(zip(lod.level, lod.grade, lod.row, lod.start_ns))
    assert keys == sorted(keys), "sorted (level, grade, row, start_ns)"
    assert lod[lod.grade == 0].worst_row.isna().all()
    groups = lod[lod.grade == 1]
    assert (groups.worst_busy_ns <= groups.busy0_ns).all()
    meta = json.loads(pq.ParquetFile(trace / "lod.parquet").metadata.metadata[b"pioscope.lod"])
    assert meta["events"] == 4982 and len(meta["rows"]) == 8 and meta["grades"] == 2


def test_synth_writes_the_index_and_two_traces_serve(tmp_path):
    trace = tmp_path / "synth"
    subprocess.run([str(PIOSCOPE), "synth", "-o", str(trace), "--events", "20k", "--ranks", "4"],
                   check=True, capture_output=True)
    lod = pd.read_parquet(trace / "lod.parquet")
    top = lod[(lod.level == lod.level.max()) & (lod.grade == 0)]
    assert len(top) == 4, "one bucket per row at the last level"
    assert top["count"].sum() == 20000
    # A second trace side by side: both answer, each with its own rows.
    proc, url = start(trace, trace)
    try:
        status, traces = get(url + "api/traces")
        assert status == 200 and [t["index"] for t in traces] == [0, 1]
        status, rows = get(url + "api/rows?trace=1")
        assert status == 200 and sum(len(g["rows"]) for g in rows["groups"]) == 4
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
