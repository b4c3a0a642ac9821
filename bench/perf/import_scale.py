#!/usr/bin/env python3
"""How fast `pioscope import darshan` takes a large DXT log (issue 17): records (DXT segments)
per second and peak RSS of the import of a log of at least a million segments.

No Darshan runtime is built here, so the log is synthesized with Darshan's own log writer:
libdarshan-util, shipped in PyPI's `darshan` wheel (PyDarshan), exports darshan_log_create,
darshan_log_put_job/_exe/_mounts/_namehash/_mod and darshan_log_close (the functions
darshan-convert writes logs with). They are declared here for cffi (the wheel's own
declarations cover only the reading side) and called with a job, a mount table and DXT_POSIX
records of RANKS x FILES files, each with its write and read segments (32 bytes each: offset,
length, start, end), strided like an N-to-1 checkpoint. The file names go in as
darshan_log_put_namehash walks them: a uthash list linked by its `next` pointers (the only
field HASH_ITER reads), each name record its id followed by the name (darshan-log-format.h's
`struct darshan_name_record`). The log is read back by PyDarshan (segments counted) before it
is timed. A benchmark that reports figures; no assertion.

Build first: make -C <repo> cli
usage: bench/perf/import_scale.py [--segments 1M] [--ranks 16] [--files 4] [--repeat 3] [--dir DIR]"""
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

import cffi
import darshan
from darshan.discover_darshan import find_utils

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
GNU_TIME = Path("/usr/bin/time")

# darshan-log-format.h (Darshan 3.5, log format 3.41): module ids and DXT's record version.
DXT_POSIX_MOD = 10
DXT_POSIX_VER = 1
DARSHAN_ZLIB_COMP = 0
SEGMENT_BYTES = 4096

# The writing side of darshan-logutils.h, and the structs it takes (as in the wheel's
# darshan/backend/api_def_c.py, which declares the reading side only).
WRITER_DEFS = """
struct darshan_job {
    int64_t uid; int64_t start_time_sec; int64_t start_time_nsec; int64_t end_time_sec;
    int64_t end_time_nsec; int64_t nprocs; int64_t jobid; char metadata[1024];
};
struct darshan_mnt_info { char mnt_type[3015]; char mnt_path[3015]; };
struct darshan_base_record { uint64_t id; int64_t rank; };
struct dxt_file_record {
    struct darshan_base_record base_rec; int64_t shared_record; char hostname[64];
    int64_t write_count; int64_t read_count;
};
typedef struct segment_info { int64_t offset; int64_t length; double start_time; double end_time; } segment_info;
void *darshan_log_create(const char *name, int comp_type, int partial_flag);
int darshan_log_put_job(void *fd, struct darshan_job *job);
int darshan_log_put_exe(void *fd, char *buf);
int darshan_log_put_mounts(void *fd, struct darshan_mnt_info *mnt_data_array, int count);
typedef struct UT_hash_handle {
    void *tbl; void *prev; void *next; void *hh_prev; void *hh_next; void *key;
    unsigned keylen; unsigned hashv;
} UT_hash_handle;
struct darshan_name_record_ref { void *name_record; UT_hash_handle hlink; };
int darshan_log_put_namehash(void *fd, struct darshan_name_record_ref *hash);
int darshan_log_put_mod(void *fd, int mod_id, void *mod_buf, int mod_buf_sz, int ver);
void darshan_log_close(void *fd);
"""


def parse_count(s: str) -> int:
    s = s.strip().replace("_", "").replace(",", "")
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(s[-1:].lower(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def name_map(ffi, files: int, keep: list):
    """The name hash of the files 0x1000 + f, as a uthash list."""
    refs = ffi.new("struct darshan_name_record_ref[]", files)
    for f in range(files):
        name = b"/scratch/checkpoint/part-%d.dat\0" % f
        rec = ffi.new("char[]", 8 + len(name))
        ffi.cast("uint64_t *", rec)[0] = 0x1000 + f
        ffi.memmove(rec + 8, name, len(name))
        keep.append(rec)
        refs[f].name_record = rec
        refs[f].hlink.next = ffi.addressof(refs[f + 1]) if f + 1 < files else ffi.NULL
    keep.append(refs)
    return refs


def write_log(path: Path, segments: int, ranks: int, files: int) -> int:
    """Writes a DXT_POSIX log of about `segments` segments; returns the exact count."""
    ffi = cffi.FFI()
    ffi.cdef(WRITER_DEFS)
    lib = find_utils(ffi, None)
    keep = []  # the name records must outlive the call that writes them
    fd = lib.darshan_log_create(str(path).encode(), DARSHAN_ZLIB_COMP, 0)
    if fd == ffi.NULL:
        sys.exit(f"darshan_log_create failed for {path}")
    records = ranks * files
    per_record = max(2, segments // records)
    duration = 60.0
    job = ffi.new("struct darshan_job *")
    job.uid, job.nprocs, job.jobid = 1000, ranks, 4242
    job.start_time_sec, job.end_time_sec = 1_700_000_000, 1_700_000_000 + int(duration)
    meta = b"lib_ver=3.5.0\nh=romio_no_indep_rw=true;cb_nodes=4\n"
    ffi.memmove(job.metadata, meta, len(meta))
    checks = [lib.darshan_log_put_job(fd, job),
              lib.darshan_log_put_exe(fd, ffi.new("char[]", b"/apps/checkpoint --steps 1000")),
              lib.darshan_log_put_mounts(fd, ffi.new("struct darshan_mnt_info[1]",
                                                      [{"mnt_type": b"lustre", "mnt_path": b"/scratch"}]), 1),
              lib.darshan_log_put_namehash(fd, name_map(ffi, files, keep))]
    if any(c < 0 for c in checks):
        sys.exit(f"writing the job, exe, mounts or name map failed: {checks}")
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
            if lib.darshan_log_put_mod(fd, DXT_POSIX_MOD, buf, head + per_record * seg, DXT_POSIX_VER) < 0:
                sys.exit("darshan_log_put_mod failed")
    lib.darshan_log_close(fd)
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
    args = ap.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="pioscope-import-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "dxt-large.darshan"
    t0 = time.perf_counter()
    written = write_log(log, parse_count(args.segments), args.ranks, args.files)
    print(f"log: {log} ({log.stat().st_size / 2**20:.1f} MiB, {written} segments, "
          f"written in {time.perf_counter() - t0:.1f} s)")
    read = count_segments(log)
    if read != written:
        sys.exit(f"PyDarshan reads {read} segments back, {written} were written")
    print(f"PyDarshan reads the {read} segments back")
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
