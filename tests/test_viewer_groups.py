"""The timeline page at many ranks (issue 18) in headless Chromium: a 1,024-rank synthetic trace
opens as the overview (row group bands: a heat map with the worst rank marked), a zoom on the
rows (ctrl-wheel) goes through the grades of 8^g rows down to the rows one by one and back, a
click on a band expands its group, and messages between groups are drawn as one arrow per pair.
Screenshots go to build/test-output/screenshots/."""
import contextlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from browser import open_page
from conftest import pioscope
from test_viewer import Server, load, settle, view

RANKS = 1024
GROUP = 8  # rows of a grade-1 group (8^grade)


@pytest.fixture(scope="module")
def thousand(tmp_path_factory):
    """1,024 ranks on hosts of 4, every message between two ranks of one host."""
    trace = tmp_path_factory.mktemp("groups") / "thousand"
    pioscope("synth", "-o", trace, "--events", "200k", "--ranks", str(RANKS))
    return trace


@contextlib.contextmanager
def served(trace, height=900):
    """`pioscope view TRACE` and a page of `height` px on it, loaded and settled."""
    server = Server([trace])
    try:
        with open_page(height=height) as page:
            load(page, server.url)
            yield server, page
    finally:
        server.stop()


def grade_for(rows, capacity):
    """The grade the server picks: the smallest with at most `capacity` groups of 8^grade."""
    grade = 1
    while len({r // GROUP ** grade for r in rows}) > capacity:
        grade += 1
    return grade


def zoom_rows(page, x, y, delta):
    """A ctrl-wheel over the plot at (x, y): zooms the rows."""
    page.page.mouse.move(x, y)
    page.page.keyboard.down("Control")
    page.page.mouse.wheel(0, delta)
    page.page.keyboard.up("Control")
    settle(page)


def test_overview_zooms_through_grades_to_rows(thousand):
    """A short page (few bands) shows 1,024 ranks in groups of 64; zooming in on the rows
    steps down to groups of 8 and then to the rows themselves, around the row under the
    cursor; zooming out returns to groups, Home to the whole overview."""
    with served(thousand, height=420) as (server, page):
        o = view(page, "overview(0)")
        cap = o["capacity"]
        assert RANKS // GROUP > cap, "the page is meant to be short enough for groups of 64"
        assert (o["from"], o["to"]) == (0, RANKS)
        assert o["grade"] == grade_for(range(RANKS), cap) == 2
        assert o["groups"] == RANKS // GROUP ** 2
        assert view(page, "groupBandsDrawn") == o["groups"]
        assert view(page, "groupCellsDrawn") > 0
        assert view(page, "rowsDrawn") == 0 and view(page, "statesDrawn") == 0
        page.screenshot("viewer-groups-grade2")

        plot = view(page, "plotRect(0)")
        x = plot["left"] + plot["width"] * 0.5
        y = plot["top"] + plot["height"] * 0.4
        grades = []
        detail_row = None
        for _ in range(12):
            before = view(page, "overview(0)")
            # The row under the cursor, which the zoom keeps under it.
            anchor = before["from"] + (before["to"] - before["from"]) * 0.4
            zoom_rows(page, x, y, -300)
            o = view(page, "overview(0)")
            if o is None:
                detail_row = int(anchor)
                break
            n = o["to"] - o["from"]
            assert n < before["to"] - before["from"]
            assert o["from"] <= anchor <= o["to"]
            assert abs(o["from"] + n * 0.4 - anchor) <= 1.5
            assert o["grade"] == grade_for(range(o["from"], o["to"]), cap)
            assert view(page, "groupBandsDrawn") == o["groups"] == len({r // GROUP ** o["grade"] for r in range(o["from"], o["to"])})
            if o["grade"] == 1 and 1 not in grades:
                page.screenshot("viewer-groups-grade1")
            grades.append(o["grade"])
        assert grades == sorted(grades, reverse=True) and grades[-1] == 1
        assert detail_row is not None, "the zoom never reached the rows"

        # The rows one by one: the row under the cursor among those asked and drawn.
        asked = view(page, "rowsAsked(0)")
        assert detail_row in asked
        assert asked == sorted(asked) and len(asked) >= view(page, "rowsDrawn") > 0
        assert view(page, "groupBandsDrawn") == 0
        assert view(page, "statesDrawn") + view(page, "bucketsDrawn") > 0
        assert {s["row"] for s in view(page, "drawnStates(0)")} <= set(asked)
        page.screenshot("viewer-groups-rows")

        # Zooming out: back to groups around the same row.
        zoom_rows(page, x, y, 300)
        o = view(page, "overview(0)")
        assert o is not None and o["grade"] == 1
        assert o["from"] <= detail_row < o["to"]
        assert o["to"] - o["from"] > cap
        page.page.keyboard.press("Home")
        settle(page)
        o = view(page, "overview(0)")
        assert (o["from"], o["to"], o["grade"]) == (0, RANKS, 2)
        assert page.errors == []


def test_click_on_a_band_expands_its_group(thousand):
    """The default page holds 1,024 ranks as groups of 8, the worst rank marked; a click on a
    band shows that group's ranks one by one, from the top of the plot."""
    with served(thousand) as (server, page):
        o = view(page, "overview(0)")
        assert (o["from"], o["to"], o["grade"]) == (0, RANKS, 1)
        assert o["groups"] == view(page, "groupBandsDrawn") == RANKS // GROUP
        assert view(page, "worstMarksDrawn") > 0
        assert o["pairs"] == 0  # synth's messages stay inside a host, so inside a group
        assert view(page, "groupArrowsDrawn") == 0
        page.screenshot("viewer-groups-overview")
        # The same question the page asked, answered by the server: groups of 8 rows.
        a = server.api(f"api/window?trace=0&px=800&rows=0-{RANKS - 1}&height={o['capacity']}")
        assert [(g["first"], g["last"], g["mode"]) for g in a["rows"]] == [
            (k, k + GROUP - 1, "groups") for k in range(0, RANKS, GROUP)]

        plot = view(page, "plotRect(0)")
        k = 37  # the 38th group: ranks 296..303
        y = plot["top"] + plot["height"] * (k * GROUP + GROUP / 2) / RANKS
        page.page.mouse.move(plot["left"] + plot["width"] / 2, y)
        tip = page.page.inner_text("#tip")
        assert tip.startswith(f"rank {k * GROUP} – rank {k * GROUP + GROUP - 1} ({GROUP} rows)")
        page.page.mouse.click(plot["left"] + plot["width"] / 2, y)
        settle(page)
        assert view(page, "overview(0)") is None
        group = list(range(k * GROUP, k * GROUP + GROUP))
        asked = view(page, "rowsAsked(0)")
        assert set(group) <= set(asked)
        assert view(page, "rowsDrawn") >= GROUP
        drawn = {s["row"] for s in view(page, "drawnStates(0)")}
        assert set(group) & drawn
        page.screenshot("viewer-groups-expanded")
        assert page.errors == []


def test_messages_between_groups_are_summarised(tmp_path):
    """Messages sent to the next host (a rewritten synth trace: half of them cross a group
    boundary) are drawn in the overview as one arrow per pair of groups, and as single
    arrows once the rows show one by one."""
    trace = tmp_path / "next-host"
    pioscope("synth", "-o", trace, "--events", "200k", "--ranks", str(RANKS))
    (trace / "lod.parquet").unlink()  # rebuilt by the server
    (trace / "lod_spans.parquet").unlink()
    path = trace / "messages.parquet"
    t = pq.read_table(path)
    for col in ("recv_process", "to_rank"):
        i = t.schema.get_field_index(col)
        moved = pa.array([(v + 4) % RANKS for v in t.column(col).to_pylist()], type=t.schema.field(col).type)
        t = t.set_column(i, t.schema.field(col), moved)
    pq.write_table(t, path, compression="zstd")  # the store's codec (the reader has no snappy)
    pairs = {(f // GROUP, r // GROUP) for f, r in zip(t.column("from_rank").to_pylist(), t.column("to_rank").to_pylist())}
    crossing = {p for p in pairs if p[0] != p[1]}
    assert crossing
    with served(trace) as (server, page):
        o = view(page, "overview(0)")
        assert o["grade"] == 1
        assert o["pairs"] == len(crossing)
        assert view(page, "groupArrowsDrawn") == len(crossing)
        assert view(page, "arrowsDrawn") == 0
        # Each arrow carries its pair's messages and bytes, in its tooltip too.
        sent = t.to_pandas()
        sent["pair"] = list(zip(sent.from_rank // GROUP, sent.to_rank // GROUP))
        per_pair = sent.groupby("pair").agg(count=("bytes", "size"), bytes=("bytes", "sum"))
        arrows = view(page, "groupArrows(0)")
        assert {(a["from"] // GROUP, a["to"] // GROUP) for a in arrows} == crossing
        for a in arrows:
            want = per_pair.loc[[(a["from"] // GROUP, a["to"] // GROUP)]].iloc[0]
            assert (a["count"], a["bytes"]) == (want["count"], want["bytes"])
        a = arrows[len(arrows) // 2]
        page.page.mouse.move(a["x"], a["y"])
        assert page.page.inner_text("#tip").startswith(
            f"rank {a['from']} – rank {a['from'] + GROUP - 1} → rank {a['to']} – rank {a['to'] + GROUP - 1}: "
            f"{a['count']:,} messages")
        page.screenshot("viewer-groups-arrows")
        # Zoomed into the rows: the messages themselves.
        plot = view(page, "plotRect(0)")
        page.page.mouse.click(plot["left"] + plot["width"] / 2, plot["top"] + plot["height"] * 4.5 / RANKS * GROUP)
        settle(page)
        assert view(page, "overview(0)") is None
        assert view(page, "groupArrowsDrawn") == 0
        assert view(page, "arrowsDrawn") > 0
        page.screenshot("viewer-groups-arrows-rows")
        assert page.errors == []
