#!/usr/bin/env python3
"""How fast `pioscope import darshan` takes a large DXT log (issue 17): records (DXT segments)
per second and peak RSS of the import of a log of at least a million segments.

By default the log is synthesized with Darshan's own log writer (tests/darshan_writer.py,
libdarshan-util from PyPI's `darshan` wheel): a job, a mount table
and DXT_POSIX records of RANKS x FILES files, each with its write and read segments (32 bytes
each: offset, length, start, end), strided like an N-to-1 checkpoint. The log is read back by
PyDarshan (segments counted) before it is timed. `--log LOG` times a log written elsewhere
instead, e.g. by a real Darshan runtime (its DXT_POSIX segments counted the same way). A
benchmark that reports figures; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/import_scale.py [--segments 1M] [--ranks 16] [--files 4] [--repeat 3] [--dir DIR]
       bench/perf/import_scale.py --log LOG [--repeat 3] [--dir DIR]"""
import argparse
import contextlib
import io
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import darshan

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from darshan_writer import DXT_POSIX_MOD, DXT_POSIX_VER, LogWriter  # noqa: E402

PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
GNU_TIME = Path("/usr/bin/time")

SEGMENT_BYTES = 4096


def parse_count(s: str) -> int:
    s = s.strip().replace("_", "").replace(",", "")
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(s[-1:].lower(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def write_log(path: Path, segments: int, ranks: int, files: int) -> int:
    """Writes a DXT_POSIX log of about `segments` segments; returns the exact count."""
    records = ranks * files
    per_record = max(2, segments // records)
    duration = 60.0
    writer = LogWriter(path, nprocs=ranks, duration_s=int(duration),
                       exe=b"/apps/checkpoint --steps 1000", mounts=[(b"/scratch", b"lustre")],
                       names={0x1000 + f: b"/scratch/checkpoint/part-%d.dat" % f for f in range(files)},
                       metadata=b"lib_ver=3.5.0\nh=romio_no_indep_rw=true;cb_nodes=4\n")
    ffi = writer.ffi
    head = ffi.sizeof("struct dxt_file_record")
    seg = ffi.sizeof("segment_info")
    buf = ffi.new("char[]", head + per_record * seg)
    rec = ffi.cast("struct dxt_file_record *", buf)
    segs = ffi.cast("segment_info *", buf + head)
    step = duration / per_record
    for r in range(ranks):
        for f in range(files):
            rec.base_rec.id = 0x1000 + f
            rec.base_rec.rank = r
            rec.shared_record = 0
            ffi.memmove(rec.hostname, b"nid%05d\0" % (r // 4), 9)
            rec.write_count = per_record // 2
            rec.read_count = per_record - per_record // 2
            for i in range(per_record):
                # Writes then reads back: rank r's blocks strided by `ranks` blocks.
                block = i if i < rec.write_count else i - rec.write_count
                segs[i].offset = (block * ranks + r) * SEGMENT_BYTES
                segs[i].length = SEGMENT_BYTES
                segs[i].start_time = i * step + f * step / files
                segs[i].end_time = segs[i].start_time + step / (2 * files)
            writer.put(DXT_POSIX_MOD, buf, head + per_record * seg, DXT_POSIX_VER)
    writer.close()
    return records * per_record


def count_segments(path: Path) -> int:
    """The segments PyDarshan reads back from the log."""
    with contextlib.redirect_stdout(io.StringIO()):
        report = darshan.DarshanReport(str(path), read_all=False)
        report.mod_read_all_dxt_records("DXT_POSIX", dtype="numpy")
    return sum(len(r["write_segments"]) + len(r["read_segments"])
               for r in report.records["DXT_POSIX"].to_numpy())


def run_import(log: Path, out: Path) -> tuple:
    """(wall seconds, peak RSS bytes) of `pioscope import darshan LOG -o OUT`, the Python
    reader it runs included (GNU time's maximum RSS is the largest of the process tree's
    members)."""
    cmd = [str(GNU_TIME), "-v", str(PIOSCOPE), "import", "darshan", str(log), "-o", str(out), "--force"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"import failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return wall, int(m.group(1)) * 1024 if m else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", default="1M", help="DXT segments to write (1M, 2M, ...)")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--files", type=int, default=4, help="files per rank (records per rank)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", type=Path, help="where to write the log and the store")
    ap.add_argument("--log", type=Path, help="time this DXT log instead of writing one")
    args = ap.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="pioscope-import-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.log:
        log = args.log
        written = None
        print(f"log: {log} ({log.stat().st_size / 2**20:.1f} MiB)")
    else:
        log = work / "dxt-large.darshan"
        t0 = time.perf_counter()
        written = write_log(log, parse_count(args.segments), args.ranks, args.files)
        print(f"log: {log} ({log.stat().st_size / 2**20:.1f} MiB, {written} segments, "
              f"written in {time.perf_counter() - t0:.1f} s)")
    read = count_segments(log)
    if written is not None and read != written:
        sys.exit(f"PyDarshan reads {read} segments back, {written} were written")
    print(f"PyDarshan reads the {read} segments back")
    written = read
    walls, rsss = [], []
    for i in range(args.repeat):
        wall, rss = run_import(log, work / "store")
        walls.append(wall)
        rsss.append(rss)
        print(f"run {i + 1}: {wall:.1f} s, {written / wall:,.0f} segments/s, peak RSS {rss / 2**20:.0f} MiB")
    wall = statistics.median(walls)
    print(f"median: {wall:.1f} s, {written / wall:,.0f} segments/s; peak RSS max {max(rsss) / 2**20:.0f} MiB "
          f"(machine shared with other builds: indicative)")


if __name__ == "__main__":
    main()
