#!/usr/bin/env python3
"""How fast the viewer's page shows a big trace (issue 5: first paint <= 2 s, viewer memory in
the browser <= 500 MB, on 100,000,000 events). Writes a synthetic trace with `pioscope synth`
(or takes --trace), starts `pioscope view TRACE --port 0 --no-open`, and in headless Chromium
(Playwright) measures, per fresh page load: the time from navigation start to the first
complete paint (body[data-ready], set by viewer/main.js), and the page's JS heap (CDP
Runtime.getHeapUsage, after a garbage collection) right after it and after 40 zoom and pan
steps. Prints medians over --repeats. A benchmark that reports figures; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/view_paint.py [--events 10M] [--ranks 16] [--repeats 5] [--trace DIR] [--keep]
PIOSCOPE_VIEW_CMD="..." measures another server that follows the API (docs/VIEWER.md)."""
import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
sys.path.insert(0, str(ROOT / "tests"))
from browser import chromium_path  # noqa: E402  (tests/browser.py: the system's Chromium)
from playwright.sync_api import sync_playwright  # noqa: E402

URL = re.compile(r"http://127\.0\.0\.1:\d+/?")


def parse_count(s: str) -> int:
    s = s.strip().replace("_", "").replace(",", "")
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(s[-1:].lower(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def start_server(trace: Path):
    """(process, url, seconds until the URL was printed: includes building lod.parquet)."""
    cmd = shlex.split(os.environ.get("PIOSCOPE_VIEW_CMD", "")) or [str(PIOSCOPE), "view"]
    t0 = time.perf_counter()
    proc = subprocess.Popen([*cmd, str(trace), "--port", "0", "--no-open"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines, found = [], threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if URL.search(line):
                found.set()
        found.set()

    threading.Thread(target=read, daemon=True).start()
    found.wait(3600)
    m = URL.search("".join(lines))
    if not m:
        proc.kill()
        sys.exit("pioscope view printed no URL:\n" + "".join(lines))
    return proc, m.group(0).rstrip("/") + "/", time.perf_counter() - t0


def heap(cdp) -> int:
    cdp.send("HeapProfiler.collectGarbage")
    return int(cdp.send("Runtime.getHeapUsage")["usedSize"])


def settle(page):
    page.wait_for_function("window.pioscopeView && window.pioscopeView.pending === 0", timeout=600000)
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def one_load(browser, url):
    """(first paint ms, heap after it, heap after zooming and panning, states+buckets+group
    cells drawn (many ranks open as the overview of row groups),
    median ms to paint one frame)."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']", timeout=600000)
        ready_ms = page.evaluate("window.pioscopeView.readyMs")
        drawn = page.evaluate("pioscopeView.statesDrawn + pioscopeView.bucketsDrawn + pioscopeView.groupCellsDrawn")
        settle(page)
        # The cost of one frame of the full window: repaint it a few times (a 1-pixel pan and back).
        frames = []
        for key in ["d", "a"] * 3:
            page.keyboard.press(key)
            page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            frames.append(page.evaluate("window.pioscopeView.frameMs"))
        h0 = heap(cdp)
        for key in ["w"] * 12 + ["d"] * 8 + ["s"] * 6 + ["a"] * 8 + ["w"] * 6:
            page.keyboard.press(key)
            page.wait_for_timeout(30)
        settle(page)
        h1 = heap(cdp)
        return ready_ms, h0, h1, drawn, statistics.median(frames)
    finally:
        context.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", default="10M", help="events to generate (100M for the closing figure)")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trace", type=Path, help="measure this trace instead of a synthetic one")
    ap.add_argument("--keep", action="store_true", help="keep the synthetic trace afterwards")
    args = ap.parse_args()
    tmp = None
    if args.trace:
        trace = args.trace
    else:
        if not PIOSCOPE.exists():
            sys.exit(f"{PIOSCOPE} is missing: run `make -C {ROOT} cli` first")
        tmp = Path(tempfile.mkdtemp(prefix="pioscope-view-"))
        trace = tmp / "trace"
        t0 = time.perf_counter()
        subprocess.run([str(PIOSCOPE), "synth", "-o", str(trace), "--events",
                        str(parse_count(args.events)), "--ranks", str(args.ranks), "--seed",
                        str(args.seed), "--force"], check=True, stdout=subprocess.DEVNULL)
        print(f"synth             {time.perf_counter() - t0:.1f} s")
    proc = None
    try:
        proc, url, startup = start_server(trace)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(),
                                        args=["--no-sandbox", "--disable-gpu"])
            try:
                runs = [one_load(browser, url) for _ in range(args.repeats)]
            finally:
                browser.close()
        med = lambda i: statistics.median(r[i] for r in runs)  # noqa: E731
        what = "" if args.trace else f" ({args.events} events, {args.ranks} ranks)"
        print(f"trace             {trace}{what}")
        print(f"server start      {startup:.2f} s (until the URL is printed)")
        print(f"first paint       {med(0):.0f} ms median of {len(runs)} "
              f"(min {min(r[0] for r in runs):.0f}, max {max(r[0] for r in runs):.0f})")
        print(f"JS heap           {med(1) / 2**20:.1f} MiB after first paint, "
              f"{med(2) / 2**20:.1f} MiB after 40 zoom/pan steps")
        print(f"drawn             {int(med(3))} states + buckets + row group cells in the first frame, "
              f"{med(4):.1f} ms to paint a frame")
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp:
            print(f"kept {trace}")


if __name__ == "__main__":
    main()
