#!/usr/bin/env python3
"""Stored bytes per event of the HPIO demo traces, counting every file of the store (issue 19:
at most 4). Runs the job of `make demo` (HPIO, 4 ranks, 32-byte regions, independent and
collective) under `pioscope run --keep-raw`, or measures the stores or raw directories given,
and prints each file's bytes and bytes per event, then events.parquet column by column (its
compressed column chunks and its footer) when pyarrow is installed. A raw directory (TRACE.raw,
kept by --keep-raw) is merged again with build/bin/pioscope first, so a change of the writer
can be measured on the very same calls before and after. A benchmark that reports figures; no
assertion.

Build first: make -C <repo> runtime bench cli
usage: bench/perf/store_bytes.py [--demo DIR] [--json] [STORE_OR_RAW ...]
  bench/perf/store_bytes.py --demo /tmp/sb           # run the demo jobs, keep DIR/hpio-*.raw
  bench/perf/store_bytes.py /tmp/sb/hpio-*.raw       # merge those raw files again, measure"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
HPIO = ROOT / "build" / "bin" / "pioscope-hpio"
MODES = ("independent", "collective")


def run_demo(work: Path) -> list:
    """The two traces of scripts/demo.sh, raw files kept beside them (TRACE.raw)."""
    work.mkdir(parents=True, exist_ok=True)
    traces = []
    for mode in MODES:
        trace = work / f"hpio-{mode}"
        subprocess.run([str(PIOSCOPE), "run", "--keep-raw", "--force", "-n", "4", "-o", str(trace),
                        "--", str(HPIO), "--region-size", "32", "--mode", mode,
                        "--path", str(work / f"hpio-{mode}.dat")],
                       check=True, stdout=subprocess.DEVNULL)
        (work / f"hpio-{mode}.dat").unlink(missing_ok=True)
        traces.append(trace)
    return traces


def merge(raw: Path, work: Path) -> Path:
    """`pioscope merge RAW` into a fresh store under `work`."""
    trace = work / raw.name.removesuffix(".raw")
    subprocess.run([str(PIOSCOPE), "merge", str(raw), "-o", str(trace)],
                   check=True, stdout=subprocess.DEVNULL)
    return trace


def event_columns(events: Path) -> dict:
    """Compressed bytes of each column of events.parquet (summed over row groups) and of its
    footer; empty without pyarrow."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return {}
    meta = pq.ParquetFile(events).metadata
    sizes = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            sizes[chunk.path_in_schema] = sizes.get(chunk.path_in_schema, 0) + chunk.total_compressed_size
    sizes["(footer)"] = meta.serialized_size
    return sizes


def measure(trace: Path, label: Path) -> dict:
    """The figures of the store `trace`, under the name of what it was made from."""
    events = json.loads((trace / "meta.json").read_text())["counts"]["events"]
    files = {p.name: p.stat().st_size for p in sorted(trace.iterdir()) if p.is_file()}
    return {"trace": str(label), "events": events, "bytes": sum(files.values()), "files": files,
            "events_columns": event_columns(trace / "events.parquet")}


def show(m: dict) -> None:
    n = max(m["events"], 1)
    print(f"{m['trace']}: {m['events']} events, {m['bytes']} bytes, "
          f"{m['bytes'] / n:.2f} bytes/event")
    for name, size in m["files"].items():
        print(f"  {name:<20} {size:>9} B {size / n:>7.2f} B/event {100 * size / m['bytes']:>5.1f} %")
    cols = m["events_columns"]
    if cols:
        print("  events.parquet by column (compressed bytes, bytes/event):")
        for name, size in sorted(cols.items(), key=lambda kv: -kv[1]):
            print(f"    {name:<14} {size:>8} {size / n:>6.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", type=Path,
                    help="stores to measure, or raw directories to merge then measure")
    ap.add_argument("--demo", type=Path, metavar="DIR",
                    help="run the demo's two HPIO jobs into DIR (raw files kept) and measure them")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    if not args.paths and not args.demo:
        ap.error("give --demo DIR or stores / raw directories to measure")
    with tempfile.TemporaryDirectory(prefix="store-bytes-") as tmp:
        inputs = [(t, t) for t in run_demo(args.demo)] if args.demo else []
        for p in args.paths:
            inputs.append((p if (p / "meta.json").is_file() else merge(p, Path(tmp)), p))
        figures = [measure(trace, label) for trace, label in inputs]
    if args.json:
        json.dump(figures, sys.stdout, indent=1)
        print()
        return
    for m in figures:
        show(m)


if __name__ == "__main__":
    main()
