/* test_core.c: unit tests of the runtime core, linked with the core objects (no POSIX/STDIO
 * interception): record encoding, nesting, interning, the fd table, buffer spills, fork,
 * tracer failure. Each mode records through the API, then decodes its own raw file.
 * usage: test_core unit|spill|fork|fail|clock   (PIOSCOPE_RAW_DIR set by the runner) */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core.h"
#include "fd_table.h"
#include "rawread.h"

#define TMPFS_MAGIC 0x01021994u
#define PROC_MAGIC 0x9fa0u

/* One call with a chosen duration (end fixed by hand) and event. */
static void record_call(uint64_t duration, pioscope_event ev)
{
    pioscope_call call;
    pioscope_enter(&call);
    call.end = call.start + duration;
    pioscope_leave(&call, &ev);
}

static pioscope_event ev_of(uint16_t func, uint64_t offset, uint64_t size, int64_t result)
{
    pioscope_event ev = {func, 0, 0, offset, size, result, 0, 0};
    return ev;
}

static const rr_event *find_offset(const rr_file *f, uint64_t offset)
{
    for (size_t i = 0; i < f->nevents; i++)
        if (f->events[i].ev.offset == offset) return &f->events[i];
    return NULL;
}

static int load_self(rr_file *f)
{
    pioscope_flush_all();
    int r = rr_load(pioscope_raw_path(), f);
    if (r) fprintf(stderr, "  decode %s: %s\n", pioscope_raw_path(), f->error);
    return r;
}

/* ---- unit ---- */

static void unit(void)
{
    check_begin("core: tracer started, main thread is thread 0");
    CHECK(pioscope_recording == 1);
    CHECK(pioscope_raw_path()[0] == '/');
    CHECK(pioscope_thread_number() == 0);
    check_end();

    /* Offsets tag the cases. */
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 1, 100, 100));           /* plain */
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 2, 100, 50));            /* short */
    pioscope_event err = ev_of(PIOSCOPE_FN_open, 3, 0, -1);
    err.error = ENOENT;
    record_call(10, err);                                              /* failed */
    pioscope_event link = ev_of(PIOSCOPE_FN_MPI_File_write_all, 4, 8, 8);
    link.link = (7ull << 32) | 3;
    link.flags = PIOSCOPE_F_COLLECTIVE;
    record_call(10, link);                                             /* linked */
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 5, (5ull << 32) | 7, (int64_t)((5ull << 32) | 7)));
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 6, UINT32_MAX, UINT32_MAX));  /* largest plain */
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 7, 1ull << 32, 1ll << 32));   /* first too big */
    record_call(UINT32_MAX - 1, ev_of(PIOSCOPE_FN_pwrite, 8, 1, 1));   /* longest plain */
    record_call(UINT32_MAX, ev_of(PIOSCOPE_FN_pwrite, 9, 1, 1));       /* saturates */
    record_call(1ull << 40, ev_of(PIOSCOPE_FN_pwrite, 10, 1, 1));

    /* Nesting: outer(11) { inner(12) { instant(13) } } */
    pioscope_call outer, inner;
    pioscope_enter(&outer);
    pioscope_enter(&inner);
    pioscope_event instant = ev_of(PIOSCOPE_FN_tracer_complete, 13, 0, 0);
    instant.flags = PIOSCOPE_F_COMPLETION;
    instant.link = 99;
    pioscope_record_instant(&instant);
    pioscope_event e12 = ev_of(PIOSCOPE_FN_read, 12, 4, 4);
    pioscope_leave(&inner, &e12);
    pioscope_event e11 = ev_of(PIOSCOPE_FN_MPI_File_read_all, 11, 4, 4);
    pioscope_leave(&outer, &e11);

    /* The tracer's own calls are not recorded, and do not disturb the nesting. */
    pioscope_internal_begin();
    pioscope_internal_begin();
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 14, 1, 1));
    pioscope_internal_end();
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 15, 1, 1));
    pioscope_internal_end();
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 16, 1, 1));

    /* errno is never touched by recording. */
    errno = 1234;
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 17, 1, 2));
    int errno_after = errno;

    rr_file f;
    if (load_self(&f)) {
        check_begin("core: own raw file decodes");
        CHECK(0);
        check_end();
        return;
    }
    check_begin("encoding: plain call is one 32-byte record");
    const rr_event *e = find_offset(&f, 1);
    CHECK(e && !(e->ev.flags & PIOSCOPE_F_EXT));
    CHECK(e && e->ev.size == 100 && e->ev.duration == 10 && e->ev.func == PIOSCOPE_FN_pwrite);
    CHECK(e && e->ev.depth == 0 && rr_result(e) == 100);
    check_end();

    check_begin("encoding: ext when result != size, error, link");
    e = find_offset(&f, 2);
    CHECK(e && (e->ev.flags & PIOSCOPE_F_EXT) && e->ext.result == 50 && e->ext.duration == 10);
    CHECK(e && e->ext.error == 0 && e->ext.link == 0 && e->ext.size_hi == 0);
    e = find_offset(&f, 3);
    CHECK(e && (e->ev.flags & PIOSCOPE_F_EXT) && e->ext.result == -1 && e->ext.error == ENOENT);
    e = find_offset(&f, 4);
    CHECK(e && (e->ev.flags & PIOSCOPE_F_EXT) && e->ext.link == ((7ull << 32) | 3));
    CHECK(e && (e->ev.flags & PIOSCOPE_F_COLLECTIVE) && e->ext.result == 8);
    check_end();

    check_begin("encoding: sizes of 2^32 and more use ext.size_hi");
    e = find_offset(&f, 5);
    CHECK(e && (e->ev.flags & PIOSCOPE_F_EXT) && e->ev.size == 7 && e->ext.size_hi == 5);
    CHECK(e && rr_size(e) == ((5ull << 32) | 7) && e->ext.result == (int64_t)((5ull << 32) | 7));
    e = find_offset(&f, 6);
    CHECK(e && !(e->ev.flags & PIOSCOPE_F_EXT) && e->ev.size == UINT32_MAX);
    e = find_offset(&f, 7);
    CHECK(e && (e->ev.flags & PIOSCOPE_F_EXT) && e->ev.size == 0 && e->ext.size_hi == 1);
    check_end();

    check_begin("encoding: durations of 2^32-1 ticks and more saturate into ext");
    e = find_offset(&f, 8);
    CHECK(e && !(e->ev.flags & PIOSCOPE_F_EXT) && e->ev.duration == UINT32_MAX - 1);
    e = find_offset(&f, 9);
    CHECK(e && (e->ev.flags & PIOSCOPE_F_EXT) && e->ev.duration == UINT32_MAX);
    CHECK(e && e->ext.duration == UINT32_MAX && e->ext.result == 1);
    e = find_offset(&f, 10);
    CHECK(e && (e->ev.flags & PIOSCOPE_F_EXT) && e->ev.duration == UINT32_MAX);
    CHECK(e && e->ext.duration == 1ull << 40);
    check_end();

    check_begin("nesting: depth counts enclosing traced calls; instants at current depth");
    const rr_event *o = find_offset(&f, 11), *i = find_offset(&f, 12), *c = find_offset(&f, 13);
    CHECK(o && i && c);
    if (o && i && c) {
        CHECK(o->ev.depth == 0 && i->ev.depth == 1 && c->ev.depth == 2);
        CHECK(c->ev.duration == 0 && (c->ev.flags & PIOSCOPE_F_COMPLETION) && c->ext.link == 99);
        CHECK(i->ev.start >= o->ev.start && i->ev.start + i->ev.duration <= o->ev.start + o->ev.duration);
        CHECK(c->ev.start >= i->ev.start && c->ev.start <= i->ev.start + i->ev.duration);
        CHECK(c < i && i < o, "records are written when calls return");
    }
    check_end();

    check_begin("internal: calls inside internal_begin/end are not recorded");
    CHECK(!find_offset(&f, 14) && !find_offset(&f, 15));
    e = find_offset(&f, 16);
    CHECK(e && e->ev.depth == 0);
    check_end();

    check_begin("errno: recording leaves errno alone");
    CHECK(errno_after == 1234, "errno %d", errno_after);
    check_end();

    check_begin("chunks: header pairs (ticks, mono ns) and thread numbers");
    CHECK(f.chunks[PIOSCOPE_CHUNK_EVENTS] >= 1 && f.chunks[PIOSCOPE_CHUNK_JOB] >= 1);
    CHECK(f.hdr.pid == (uint32_t)getpid() && f.hdr.ppid == (uint32_t)getppid());
    CHECK(f.hdr.start_mono_ns > 0 && f.hdr.start_unix_ns > 1600000000ull * 1000000000ull);
    for (size_t k = 0; k < f.nevents; k++) CHECK(f.events[k].thread == 0);
    char v[4096];
    CHECK(rr_job(&f, "tracer_version", v, sizeof v) && !strcmp(v, "0.1.0"));
    CHECK(rr_job(&f, "pid", v, sizeof v) && atoi(v) == getpid());
    CHECK(rr_job(&f, "clock_kind", v, sizeof v) &&
          !strcmp(v, f.hdr.clock_kind == PIOSCOPE_CLOCK_TSC ? "tsc" : "monotonic"));
    CHECK(rr_job(&f, "buffer_bytes", v, sizeof v) && atoi(v) == 8 << 20);
    CHECK(rr_job(&f, "exe", v, sizeof v) && strstr(v, "test_core"));
    CHECK(rr_job(&f, "cmdline", v, sizeof v) && strstr(v, "test_core unit"), "%s", v);
    check_end();
    rr_free(&f);

    /* ---- interning ---- */
    check_begin("intern: same path, same id; made absolute; ids unique across kinds");
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    /* A file that does not exist (yet) gets the file system of its directory. */
    uint32_t a = pioscope_intern_path("/dev/shm/pioscope-x/..//./no-such-file.bin", -1);
    uint32_t b = pioscope_intern_path("/dev/shm/no-such-file.bin", -1);
    uint32_t r1 = pioscope_intern_path("rel.txt", -1);
    uint32_t r2 = pioscope_intern_path("./sub/../rel.txt", -1);
    uint32_t g = pioscope_intern_string(PIOSCOPE_STRING_REGION, "rel.txt");
    uint32_t g2 = pioscope_intern_string(PIOSCOPE_STRING_REGION, "rel.txt");
    uint32_t w = pioscope_intern_string(PIOSCOPE_STRING_COMMUNICATOR, "world");
    int pfd = open("/proc/self/status", O_RDONLY);
    uint32_t p = pioscope_intern_path("/proc/self/status", pfd);
    close(pfd);
    uint32_t missing = pioscope_intern_path("/nonexistent-pioscope/x", -1);
    int dfd = open("/dev", O_RDONLY | O_DIRECTORY);
    uint32_t at = pioscope_intern_path_at(dfd, "shm/./no-such-file.bin", -1);
    close(dfd);
    CHECK(a != 0 && a == b && at == a, "%u %u %u", a, b, at);
    CHECK(r1 != 0 && r1 == r2);
    CHECK(g != 0 && g == g2 && g != r1 && w != g && w != r1 && p != a && missing != 0);
    CHECK(pioscope_intern_text(a) && !strcmp(pioscope_intern_text(a), "/dev/shm/no-such-file.bin"));
    char rel[4200];
    snprintf(rel, sizeof rel, "%s/rel.txt", strcmp(cwd, "/") ? cwd : "");
    CHECK(pioscope_intern_text(r1) && !strcmp(pioscope_intern_text(r1), rel));
    if (load_self(&f) == 0) {
        const rr_string *s = rr_string_by_id(&f, a);
        CHECK(s && s->kind == PIOSCOPE_STRING_FILE && !strcmp(s->text, "/dev/shm/no-such-file.bin"));
        CHECK(s && s->fs_magic == TMPFS_MAGIC, "%llx", s ? (unsigned long long)s->fs_magic : 0ull);
        s = rr_string_by_id(&f, r1);
        CHECK(s && !strcmp(s->text, rel));
        s = rr_string_by_id(&f, g);
        CHECK(s && s->kind == PIOSCOPE_STRING_REGION && !strcmp(s->text, "rel.txt"));
        s = rr_string_by_id(&f, w);
        CHECK(s && s->kind == PIOSCOPE_STRING_COMMUNICATOR && !strcmp(s->text, "world"));
        s = rr_string_by_id(&f, p);
        CHECK(s && s->fs_magic == PROC_MAGIC);
        s = rr_string_by_id(&f, missing);
        CHECK(s && s->fs_magic == 0);
        int count_a = 0;
        for (size_t k = 0; k < f.nstrings; k++) count_a += f.strings[k].id == a;
        CHECK(count_a == 1, "one STRING chunk per string");
        rr_free(&f);
    } else {
        CHECK(0, "decode");
    }
    check_end();

    /* ---- fd table ---- */
    check_begin("fd table: offsets advance, seek sets, append and unknown fds");
    uint8_t fl = 0;
    pioscope_fd_open(500, 42, 0);
    CHECK(pioscope_fd_file(500) == 42);
    CHECK(pioscope_fd_advance(500, 100, 1, &fl) == 0 && fl == 0);
    CHECK(pioscope_fd_advance(500, 50, 0, &fl) == 100 && fl == 0);
    CHECK(pioscope_fd_advance(500, -1, 0, &fl) == 150 && fl == 0, "a failed call moves nothing");
    CHECK(pioscope_fd_advance(500, 0, 0, &fl) == 150 && fl == 0);
    pioscope_fd_seek(500, 4096);
    CHECK(pioscope_fd_advance(500, 10, 1, &fl) == 4096 && fl == 0);
    uint64_t pos = 0;
    CHECK(pioscope_fd_pos(500, &pos) && pos == 4106);
    pioscope_fd_open(501, 43, 1);
    fl = 0;
    pioscope_fd_advance(501, 10, 1, &fl);
    CHECK(fl & PIOSCOPE_F_OFFSET_UNKNOWN, "O_APPEND writes: offset unknown");
    pioscope_fd_seek(501, 7);
    fl = 0;
    CHECK(pioscope_fd_advance(501, 3, 0, &fl) == 7 && fl == 0, "reads on an append fd are known");
    pioscope_fd_close(500);
    fl = 0;
    CHECK(pioscope_fd_file(500) == 0);
    pioscope_fd_advance(500, 10, 1, &fl);
    CHECK(fl & PIOSCOPE_F_OFFSET_UNKNOWN);
    fl = 0;
    CHECK(pioscope_fd_file(PIOSCOPE_FD_MAX + 5) == 0);
    pioscope_fd_open(PIOSCOPE_FD_MAX + 5, 9, 0);
    pioscope_fd_advance(PIOSCOPE_FD_MAX + 5, 10, 1, &fl);
    CHECK((fl & PIOSCOPE_F_OFFSET_UNKNOWN) && pioscope_fd_file(PIOSCOPE_FD_MAX + 5) == 0);
    fl = 0;
    pioscope_fd_advance(-1, 10, 0, &fl);
    CHECK(fl & PIOSCOPE_F_OFFSET_UNKNOWN);
    check_end();

    pioscope_finish(NULL);
    check_begin("end: END chunk last, nothing recorded after it");
    record_call(10, ev_of(PIOSCOPE_FN_pwrite, 18, 1, 1));
    pioscope_flush_all();
    if (rr_load(pioscope_raw_path(), &f) == 0) {
        CHECK(f.ended && f.chunks[PIOSCOPE_CHUNK_PARTIAL] == 0);
        CHECK(!find_offset(&f, 18));
        rr_free(&f);
    } else {
        CHECK(0, "%s", f.error);
    }
    check_end();
}

/* ---- spill: run with PIOSCOPE_BUFFER_BYTES=4096 ---- */

static void spill(void)
{
    enum { N = 1000 };
    for (uint64_t k = 0; k < N; k++) {
        /* Every 7th record has an ext record, so main+ext pairs straddle chunk ends. */
        record_call(5, ev_of(PIOSCOPE_FN_pwrite, k, 10, k % 7 ? 10 : 3));
    }
    pioscope_finish(NULL);
    rr_file f;
    check_begin("spill: a tiny buffer goes out as several EVENTS chunks, nothing lost");
    if (rr_load(pioscope_raw_path(), &f) != 0) {
        CHECK(0, "%s", f.error);
        check_end();
        return;
    }
    char v[64];
    CHECK(rr_job(&f, "buffer_bytes", v, sizeof v) && atoi(v) == 4096);
    /* (4096 - 32) / 32 = 127 record slots per chunk, a pair never split: >= 9 chunks. */
    CHECK(f.chunks[PIOSCOPE_CHUNK_EVENTS] >= 9, "%d chunks", f.chunks[PIOSCOPE_CHUNK_EVENTS]);
    CHECK(f.nevents == N, "%zu events", f.nevents);
    int in_order = 1, ext_ok = 1;
    for (size_t k = 0; k < f.nevents && k < N; k++) {
        if (f.events[k].ev.offset != k) in_order = 0;
        int want_ext = k % 7 == 0;
        if (!!(f.events[k].ev.flags & PIOSCOPE_F_EXT) != want_ext) ext_ok = 0;
        if (want_ext && f.events[k].ext.result != 3) ext_ok = 0;
    }
    CHECK(in_order && ext_ok);
    CHECK(f.ended);
    rr_free(&f);
    check_end();
}

/* ---- fork: the child writes its own file, keeps the rank, drops the parent's records ---- */

static void fork_test(void)
{
    pioscope_set_rank(3, 8);
    record_call(5, ev_of(PIOSCOPE_FN_pwrite, 1, 1, 1));  /* unflushed at fork */
    char parent_path[4096];
    snprintf(parent_path, sizeof parent_path, "%s", pioscope_raw_path());
    pid_t child = fork();
    if (child == 0) {
        record_call(5, ev_of(PIOSCOPE_FN_pwrite, 2, 1, 1));
        exit(0);
    }
    int st = 0;
    waitpid(child, &st, 0);
    record_call(5, ev_of(PIOSCOPE_FN_pwrite, 3, 1, 1));
    pioscope_finish(NULL);

    check_begin("fork: parent file keeps its records, child file has its own");
    rr_file f;
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (rr_load(parent_path, &f) == 0) {
        CHECK(f.nevents == 2 && find_offset(&f, 1) && find_offset(&f, 3) && f.ended);
        rr_free(&f);
    } else {
        CHECK(0, "parent: %s", f.error);
    }
    char child_path[4096];
    snprintf(child_path, sizeof child_path, "%s", parent_path);
    char *dash = strrchr(child_path, '/');
    char host[256];
    gethostname(host, sizeof host);
    snprintf(dash + 1, sizeof child_path - (size_t)(dash + 1 - child_path), "%s-%d-0.praw", host,
             (int)child);
    if (rr_load(child_path, &f) == 0) {
        char v[64];
        CHECK(f.nevents == 1 && find_offset(&f, 2) && f.ended, "%zu events", f.nevents);
        CHECK(f.hdr.pid == (uint32_t)child && f.hdr.ppid == (uint32_t)getpid());
        CHECK(rr_job(&f, "forked_from", v, sizeof v) && atoi(v) == getpid());
        CHECK(rr_job(&f, "pid", v, sizeof v) && atoi(v) == child);
        CHECK(rr_job(&f, "rank", v, sizeof v) && atoi(v) == 3);
        CHECK(rr_job(&f, "size", v, sizeof v) && atoi(v) == 8);
        rr_free(&f);
    } else {
        CHECK(0, "child %s: %s", child_path, f.error);
    }
    check_end();
}

/* ---- clock: run with PIOSCOPE_CLOCK=monotonic: ticks are CLOCK_MONOTONIC ns ---- */

static void clock_test(void)
{
    check_begin("clock: PIOSCOPE_CLOCK=monotonic records CLOCK_MONOTONIC ns");
    uint64_t before = pioscope_mono_ns();
    record_call(5, ev_of(PIOSCOPE_FN_pwrite, 1, 1, 1));
    uint64_t after = pioscope_mono_ns();
    pioscope_finish(NULL);
    rr_file f;
    if (rr_load(pioscope_raw_path(), &f) == 0) {
        char v[64];
        CHECK(f.hdr.clock_kind == PIOSCOPE_CLOCK_MONOTONIC);
        CHECK(rr_job(&f, "clock_kind", v, sizeof v) && !strcmp(v, "monotonic"));
        CHECK(f.hdr.start_ticks == f.hdr.start_mono_ns || f.hdr.start_mono_ns - f.hdr.start_ticks < 1000000);
        const rr_event *e = find_offset(&f, 1);
        CHECK(e && e->ev.start >= before && e->ev.start <= after);
        rr_free(&f);
    } else {
        CHECK(0, "%s", f.error);
    }
    check_end();
}

/* ---- fail: a write error stops the tracer; the program does not notice ---- */

static void fail_test(void)
{
    check_begin("failure: a failing raw file write stops recording, program unaffected");
    /* The raw file becomes /dev/full: every write now fails with ENOSPC. */
    const char *raw = pioscope_raw_path();
    CHECK(pioscope_raw_started() && unlink(raw) == 0 && symlink("/dev/full", raw) == 0);
    errno = 77;
    for (int k = 0; k < 300000 && pioscope_recording; k++)
        record_call(5, ev_of(PIOSCOPE_FN_pwrite, (uint64_t)k, 1, 1));
    CHECK(errno == 77);
    CHECK(pioscope_recording == 0);
    pioscope_finish(NULL);      /* no crash, nothing written */
    record_call(5, ev_of(PIOSCOPE_FN_pwrite, 1, 1, 1));
    CHECK(errno == 77);
    check_end();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "unit";
    if (!strcmp(mode, "unit"))
        unit();
    else if (!strcmp(mode, "spill"))
        spill();
    else if (!strcmp(mode, "fork"))
        fork_test();
    else if (!strcmp(mode, "fail"))
        fail_test();
    else if (!strcmp(mode, "clock"))
        clock_test();
    else
        return 2;
    return check_failed ? 1 : 0;
}
