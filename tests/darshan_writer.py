"""Writes Darshan logs with Darshan's own log writer, for the logs no registry serves: a DXT log
of a million segments (bench/perf/import_scale.py) and a log with the HEATMAP module
(tests/test_darshan_heatmap.py; no log on PyPI has one). libdarshan-util, shipped in PyPI's
`darshan` wheel (PyDarshan), exports darshan_log_create, darshan_log_put_job/_exe/_mounts/
_namehash/_mod and darshan_log_close (the functions darshan-convert writes logs with); they are
declared here for cffi (the wheel's own declarations cover only the reading side). The file
names go in as darshan_log_put_namehash walks them: a uthash list linked by its `next` pointers
(the only field HASH_ITER reads), each name record its id followed by the name
(darshan-log-format.h's `struct darshan_name_record`)."""
import sys

import cffi
from darshan.discover_darshan import find_utils

# darshan-log-format.h (Darshan 3.5, log format 3.41): module ids and record versions.
POSIX_MOD = 1
POSIX_VER = 4
DXT_POSIX_MOD = 10
DXT_POSIX_VER = 1
HEATMAP_MOD = 15
HEATMAP_VER = 1
DARSHAN_ZLIB_COMP = 0

# The record ids of the HEATMAP records: the hash of "heatmap:<API>" (as PyDarshan's
# report.py names them).
HEATMAP_IDS = {"POSIX": 16592106915301738621, "STDIO": 3989511027826779520,
               "MPIIO": 3668870418325792824}

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
struct darshan_heatmap_record {
    struct darshan_base_record base_rec; double bin_width_seconds; int64_t nbins;
    int64_t *write_bins; int64_t *read_bins;
};
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


class LogWriter:
    """One log being written: the job, exe, mount table and names first (the order the format
    needs), then modules' records in module order, then `close`."""

    def __init__(self, path, *, nprocs: int, duration_s: int, exe: bytes, mounts: list,
                 names: dict, jobid: int = 4242, metadata: bytes = b"lib_ver=3.5.0\n"):
        self.ffi = cffi.FFI()
        self.ffi.cdef(WRITER_DEFS)
        self.lib = find_utils(self.ffi, None)
        self.keep = []  # the name records must outlive the call that writes them
        self.fd = self.lib.darshan_log_create(str(path).encode(), DARSHAN_ZLIB_COMP, 0)
        if self.fd == self.ffi.NULL:
            sys.exit(f"darshan_log_create failed for {path}")
        job = self.ffi.new("struct darshan_job *")
        job.uid, job.nprocs, job.jobid = 1000, nprocs, jobid
        job.start_time_sec, job.end_time_sec = 1_700_000_000, 1_700_000_000 + duration_s
        self.ffi.memmove(job.metadata, metadata, len(metadata))
        mnt = self.ffi.new(f"struct darshan_mnt_info[{len(mounts)}]",
                           [{"mnt_type": t, "mnt_path": p} for p, t in mounts])
        checks = [self.lib.darshan_log_put_job(self.fd, job),
                  self.lib.darshan_log_put_exe(self.fd, self.ffi.new("char[]", exe)),
                  self.lib.darshan_log_put_mounts(self.fd, mnt, len(mounts)),
                  self.lib.darshan_log_put_namehash(self.fd, self._name_map(names))]
        if any(c < 0 for c in checks):
            sys.exit(f"writing the job, exe, mounts or name map failed: {checks}")

    def _name_map(self, names: dict):
        """The name hash as a uthash list of (id, name) records."""
        refs = self.ffi.new("struct darshan_name_record_ref[]", len(names))
        for i, (rid, name) in enumerate(names.items()):
            name = name + b"\0"
            rec = self.ffi.new("char[]", 8 + len(name))
            self.ffi.cast("uint64_t *", rec)[0] = rid
            self.ffi.memmove(rec + 8, name, len(name))
            self.keep.append(rec)
            refs[i].name_record = rec
            refs[i].hlink.next = self.ffi.addressof(refs[i + 1]) if i + 1 < len(names) else self.ffi.NULL
        self.keep.append(refs)
        return refs

    def put(self, module: int, buf, size: int, version: int) -> None:
        if self.lib.darshan_log_put_mod(self.fd, module, buf, size, version) < 0:
            sys.exit("darshan_log_put_mod failed")

    def put_counters(self, module: int, version: int, rank: int, rid: int, counters: list,
                     fcounters: list) -> None:
        """One record of a module of counters (POSIX, STDIO, ...): the base record, then its
        integer counters, then its float counters, all of them, in the module's order
        (darshan.backend.cffi_backend.counter_names and fcounter_names)."""
        size = 16 + 8 * (len(counters) + len(fcounters))
        buf = self.ffi.new("char[]", size)
        base = self.ffi.cast("struct darshan_base_record *", buf)
        base.id, base.rank = rid, rank
        ints = self.ffi.cast("int64_t *", buf + 16)
        floats = self.ffi.cast("double *", buf + 16 + 8 * len(counters))
        for i, v in enumerate(counters):
            ints[i] = v
        for i, v in enumerate(fcounters):
            floats[i] = v
        self.put(module, buf, size, version)

    def put_heatmap(self, api: str, rank: int, bin_width_s: float, read: list, write: list) -> None:
        """One HEATMAP record: the struct, then its write bins, then its read bins."""
        assert len(read) == len(write)
        head = self.ffi.sizeof("struct darshan_heatmap_record")
        buf = self.ffi.new("char[]", head + 16 * len(read))
        rec = self.ffi.cast("struct darshan_heatmap_record *", buf)
        rec.base_rec.id, rec.base_rec.rank = HEATMAP_IDS[api], rank
        rec.bin_width_seconds, rec.nbins = bin_width_s, len(read)
        bins = self.ffi.cast("int64_t *", buf + head)
        for i, (r, w) in enumerate(zip(read, write)):
            bins[i], bins[len(read) + i] = w, r
        self.put(HEATMAP_MOD, buf, head + 16 * len(read), HEATMAP_VER)

    def close(self) -> None:
        self.lib.darshan_log_close(self.fd)
