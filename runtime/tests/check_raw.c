/* check_raw: decodes the raw files a test program left under the tracer and asserts exact
 * facts (counts, sizes, offsets, depth, errno, chunks), one scenario per test program.
 * usage: check_raw SCENARIO DIR RAWDIR STATUS
 *   SCENARIO: posix | aio | fortify | threads | running | regions | fortran | fork | forkexec |
 *             exec | execfail | closerange | fd768 | fdlimit | diskfull | end:HOW:STATUS |
 *             signal:NAME | none:LABEL
 *   STATUS: the program's exit status as the shell reports it (128 + signal when killed) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "raw_format.h"
#include "rawread.h"
#include "tracer.h"

#define MAXFILES 16

static const char *dir;
static char paths[MAXFILES][4096];
static int nfiles;

/* Loads the only raw file of the scenario. */
static int load_one(rr_file *f)
{
    CHECK(nfiles == 1, "%d raw files", nfiles);
    if (nfiles < 1) return -1;
    int r = rr_load(paths[0], f);
    CHECK(r == 0, "%s: %s", paths[0], f->error);
    return r;
}

/* Events on DIR/name, in file order. */
static size_t on_file(const rr_file *f, const char *name, const rr_event **out, size_t max)
{
    char want[4200];
    snprintf(want, sizeof want, "%s/%s", dir, name);
    size_t n = 0;
    for (size_t i = 0; i < f->nevents; i++) {
        const rr_string *s = rr_string_by_id(f, f->events[i].ev.object);
        if (s && s->kind == PIOSCOPE_STRING_FILE && !strcmp(s->text, want) && n < max)
            out[n++] = &f->events[i];
    }
    return n;
}

static size_t count_func(const rr_event **ev, size_t n, uint16_t func)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ev[i]->ev.func == func;
    return c;
}

/* ---- posix ---- */

enum { FD = -1000 };  /* result: any descriptor (>= 3) */

struct expected {
    uint16_t func;
    const char *object;  /* relative to DIR; absolute when it starts with '/'; "" = DIR */
    uint64_t offset;
    uint64_t size;
    int64_t result;
    int error;
    int unknown_offset;
};

static const struct expected posix_calls[] = {
    {PIOSCOPE_FN_open, "data.bin", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_pwrite, "data.bin", 0, 100, 100, 0, 0},
    {PIOSCOPE_FN_pwrite, "data.bin", 100, 200, 200, 0, 0},
    {PIOSCOPE_FN_pwrite, "data.bin", 300, 300, 300, 0, 0},
    {PIOSCOPE_FN_lseek, "data.bin", 50, 0, 50, 0, 0},
    {PIOSCOPE_FN_read, "data.bin", 50, 100, 100, 0, 0},
    {PIOSCOPE_FN_write, "data.bin", 150, 10, 10, 0, 0},
    {PIOSCOPE_FN_readv, "data.bin", 160, 30, 30, 0, 0},
    {PIOSCOPE_FN_writev, "data.bin", 190, 10, 10, 0, 0},
    {PIOSCOPE_FN_preadv, "data.bin", 8, 8, 8, 0, 0},
    {PIOSCOPE_FN_pwritev, "data.bin", 1000, 3, 3, 0, 0},
    {PIOSCOPE_FN_fsync, "data.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_fdatasync, "data.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_ftruncate, "data.bin", 2000, 0, 0, 0, 0},
    {PIOSCOPE_FN_fstat, "data.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_close, "data.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_stat, "data.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_lstat, "data.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_open, "/nonexistent-pioscope/file", 0, 0, -1, ENOENT, 0},
    {PIOSCOPE_FN_fopen, "text.txt", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_fwrite, "text.txt", 0, 10, 10, 0, 0},
    {PIOSCOPE_FN_fwrite, "text.txt", 10, 10, 10, 0, 0},
    {PIOSCOPE_FN_fwrite, "text.txt", 20, 10, 10, 0, 0},
    {PIOSCOPE_FN_fflush, "text.txt", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_fclose, "text.txt", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_fopen, "text.txt", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_fread, "text.txt", 0, 8, 8, 0, 0},
    {PIOSCOPE_FN_fread, "text.txt", 8, 8, 8, 0, 0},
    {PIOSCOPE_FN_fseek, "text.txt", 4, 0, 0, 0, 0},
    {PIOSCOPE_FN_ftell, "text.txt", 4, 0, 4, 0, 0},
    {PIOSCOPE_FN_fread, "text.txt", 4, 100, 26, 0, 0},
    {PIOSCOPE_FN_fclose, "text.txt", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_open, "app.log", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_write, "app.log", 0, 5, 5, 0, 1},
    {PIOSCOPE_FN_close, "app.log", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_open, "rel.bin", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_close, "rel.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_open, "", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_openat, "at.bin", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_close, "at.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_close, "", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_mkdir, "sub", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_rename, "rel.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_unlink, "sub/moved.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_rmdir, "sub", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_creat, "c.bin", 0, 0, FD, 0, 0},
    {PIOSCOPE_FN_close, "c.bin", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_unlink, "text.txt", 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_unlink, "text.txt", 0, 0, -1, ENOENT, 0},
};

static void object_path(const char *object, char *out, size_t cap)
{
    if (object[0] == '/')
        snprintf(out, cap, "%s", object);
    else if (object[0])
        snprintf(out, cap, "%s/%s", dir, object);
    else
        snprintf(out, cap, "%s", dir);
}

static void posix(int status)
{
    rr_file f;
    check_begin("posix: program ran unchanged under the tracer");
    CHECK(status == 0, "exit status %d", status);
    check_end();

    check_begin("posix: raw file well formed, ended cleanly");
    if (load_one(&f) != 0) {
        check_end();
        return;
    }
    CHECK(f.ended && f.chunks[PIOSCOPE_CHUNK_PARTIAL] == 0);
    char v[4096];
    CHECK(rr_job(&f, "exe", v, sizeof v) && strstr(v, "prog_posix"));
    CHECK(rr_job(&f, "cmdline", v, sizeof v) && strstr(v, "prog_posix"));
    CHECK(rr_job(&f, "host", v, sizeof v) && v[0]);
    CHECK(rr_job(&f, "cwd", v, sizeof v) && v[0] == '/');
    CHECK(rr_job(&f, "pid", v, sizeof v) && (uint32_t)atoi(v) == f.hdr.pid);
    CHECK(rr_job(&f, "ppid", v, sizeof v) && (uint32_t)atoi(v) == f.hdr.ppid);
    CHECK(rr_job(&f, "start_unix_ns", v, sizeof v) && strtoull(v, NULL, 10) == f.hdr.start_unix_ns);
    check_end();

    /* The program's records: those on its directory and on the missing file, in order. */
    const rr_event *mine[256];
    size_t n = 0;
    size_t dlen = strlen(dir);
    for (size_t i = 0; i < f.nevents && n < 256; i++) {
        const rr_string *s = rr_string_by_id(&f, f.events[i].ev.object);
        if (!s) continue;
        if ((!strncmp(s->text, dir, dlen) && (s->text[dlen] == '/' || !s->text[dlen])) ||
            !strncmp(s->text, "/nonexistent-pioscope/", 22))
            mine[n++] = &f.events[i];
    }
    size_t want = sizeof posix_calls / sizeof posix_calls[0];
    check_begin("posix: every call recorded once, in order, with exact fields");
    CHECK(n == want, "%zu records, want %zu", n, want);
    for (size_t i = 0; i < n && i < want; i++) {
        const struct expected *x = &posix_calls[i];
        const rr_event *e = mine[i];
        char path[4200];
        object_path(x->object, path, sizeof path);
        const rr_string *s = rr_string_by_id(&f, e->ev.object);
        int64_t result = rr_result(e);
        int err = (e->ev.flags & PIOSCOPE_F_EXT) ? e->ext.error : 0;
        CHECK(e->ev.func == x->func, "call %zu: func %u, want %u", i + 1, e->ev.func, x->func);
        CHECK(s && !strcmp(s->text, path), "call %zu: object %s, want %s", i + 1,
              s ? s->text : "?", path);
        CHECK(rr_size(e) == x->size, "call %zu: size %llu", i + 1, (unsigned long long)rr_size(e));
        if (x->result == FD)
            CHECK(result >= 3, "call %zu: result %lld", i + 1, (long long)result);
        else
            CHECK(result == x->result, "call %zu: result %lld, want %lld", i + 1,
                  (long long)result, (long long)x->result);
        CHECK(err == x->error, "call %zu: error %d, want %d", i + 1, err, x->error);
        int unknown = !!(e->ev.flags & PIOSCOPE_F_OFFSET_UNKNOWN);
        CHECK(unknown == x->unknown_offset, "call %zu: offset unknown %d", i + 1, unknown);
        if (!x->unknown_offset)
            CHECK(e->ev.offset == x->offset, "call %zu: offset %llu, want %llu", i + 1,
                  (unsigned long long)e->ev.offset, (unsigned long long)x->offset);
        CHECK(e->ev.depth == 0 && e->thread == 0, "call %zu: depth %u thread %u", i + 1,
              e->ev.depth, e->thread);
        int ext_needed = result != (int64_t)x->size || err != 0;
        CHECK(!!(e->ev.flags & PIOSCOPE_F_EXT) == ext_needed, "call %zu: ext flag", i + 1);
        if (i > 0) CHECK(e->ev.start >= mine[i - 1]->ev.start, "call %zu: start order", i + 1);
    }
    check_end();

    check_begin("posix: file strings carry the file system type");
    char path[4200];
    object_path("data.bin", path, sizeof path);
    int found = 0;
    for (size_t i = 0; i < f.nstrings; i++) {
        if (!strcmp(f.strings[i].text, path)) {
            found++;
            CHECK(f.strings[i].fs_magic != 0 && f.strings[i].kind == PIOSCOPE_STRING_FILE);
        }
        if (!strcmp(f.strings[i].text, "/nonexistent-pioscope/file"))
            CHECK(f.strings[i].fs_magic == 0);
    }
    CHECK(found == 1, "data.bin interned %d times", found);
    check_end();
    rr_free(&f);
}

/* ---- aio (prog_aio.c) ---- */

struct expected_aio {
    uint16_t func;
    uint32_t depth;
    uint64_t size, offset;
    int64_t result;
    int request; /* 0: no link; n: the n-th request (starts and completions share it) */
};

#define AIO_DONE(size, offset, request) \
    {PIOSCOPE_FN_tracer_complete, 1, size, offset, size, request}
static const struct expected_aio aio_calls[] = {
    {PIOSCOPE_FN_open, 0, 0, 0, FD, 0},
    {PIOSCOPE_FN_aio_write, 0, 100, 0, 100, 1},
    {PIOSCOPE_FN_aio_suspend, 0, 1, 0, 0, 0},
    {PIOSCOPE_FN_aio_error, 0, 0, 0, 0, 0}, /* the EINPROGRESS polls are not recorded */
    {PIOSCOPE_FN_aio_error, 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_aio_return, 0, 0, 0, 100, 0},
    AIO_DONE(100, 0, 1),
    {PIOSCOPE_FN_lio_listio, 0, 70, 0, 0, 0},
    {PIOSCOPE_FN_aio_write, 1, 50, 100, 50, 2}, /* one child per queued read or write */
    {PIOSCOPE_FN_aio_read, 1, 20, 0, 20, 3},
    {PIOSCOPE_FN_aio_return, 0, 0, 0, 50, 0},
    AIO_DONE(50, 100, 2),
    {PIOSCOPE_FN_aio_return, 0, 0, 0, 20, 0},
    AIO_DONE(20, 0, 3),
    {PIOSCOPE_FN_aio_fsync, 0, 0, 0, 0, 4},
    {PIOSCOPE_FN_aio_suspend, 0, 1, 0, 0, 0},
    {PIOSCOPE_FN_aio_error, 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_aio_error, 0, 0, 0, 0, 0},
    {PIOSCOPE_FN_aio_return, 0, 0, 0, 0, 0},
    AIO_DONE(0, 0, 4),
    {PIOSCOPE_FN_aio_cancel, 0, 0, 0, 2, 0}, /* AIO_ALLDONE */
    {PIOSCOPE_FN_close, 0, 0, 0, 0, 0},
};

static int by_start(const void *a, const void *b)
{
    const rr_event *x = *(const rr_event *const *)a, *y = *(const rr_event *const *)b;
    if (x->ev.start != y->ev.start) return x->ev.start < y->ev.start ? -1 : 1;
    return (int)x->ev.depth - (int)y->ev.depth;
}

static void aio(int status)
{
    rr_file f;
    check_begin("aio: program ran unchanged under the tracer");
    CHECK(status == 0, "exit status %d", status);
    check_end();
    if (load_one(&f) != 0) return;
    const rr_event *mine[64];
    size_t n = on_file(&f, "aio.bin", mine, 64);
    qsort(mine, n, sizeof mine[0], by_start);
    size_t want = sizeof aio_calls / sizeof aio_calls[0];
    uint64_t links[8] = {0};
    check_begin("aio: requests, their waits and completions recorded in order, nested");
    CHECK(n == want, "%zu records, want %zu", n, want);
    for (size_t i = 0; i < n && i < want; i++) {
        const struct expected_aio *x = &aio_calls[i];
        const rr_event *e = mine[i];
        uint64_t link = (e->ev.flags & PIOSCOPE_F_EXT) ? e->ext.link : 0;
        int64_t result = rr_result(e);
        CHECK(e->ev.func == x->func, "record %zu: func %u, want %u", i + 1, e->ev.func, x->func);
        CHECK(e->ev.depth == x->depth, "record %zu: depth %u", i + 1, e->ev.depth);
        CHECK(rr_size(e) == x->size, "record %zu: size %llu", i + 1,
              (unsigned long long)rr_size(e));
        CHECK(e->ev.offset == x->offset, "record %zu: offset %llu", i + 1,
              (unsigned long long)e->ev.offset);
        if (x->result == FD)
            CHECK(result >= 3, "record %zu: result %lld", i + 1, (long long)result);
        else
            CHECK(result == x->result, "record %zu: result %lld, want %lld", i + 1,
                  (long long)result, (long long)x->result);
        if (!x->request) {
            CHECK(link == 0, "record %zu: link %llu", i + 1, (unsigned long long)link);
            continue;
        }
        int completion = x->func == PIOSCOPE_FN_tracer_complete;
        uint8_t flag = completion ? PIOSCOPE_F_COMPLETION : PIOSCOPE_F_NONBLOCKING;
        CHECK(e->ev.flags & flag, "record %zu: flags %#x", i + 1, e->ev.flags);
        if (!completion) {
            for (int k = 1; k < x->request; k++)
                CHECK(links[k] != link, "record %zu: request id reused", i + 1);
            links[x->request] = link;
        }
        CHECK(link && link == links[x->request], "record %zu: link %llu, want %llu", i + 1,
              (unsigned long long)link, (unsigned long long)links[x->request]);
    }
    check_end();
    rr_free(&f);
}

/* ---- threads ---- */

static void threads(int status)
{
    rr_file f;
    check_begin("threads: each thread's records complete, in order, on its own thread number");
    CHECK(status == 0, "exit status %d", status);
    if (load_one(&f) != 0) {
        check_end();
        return;
    }
    CHECK(f.ended);
    CHECK(f.chunks[PIOSCOPE_CHUNK_EVENTS] >= 8, "%d EVENTS chunks (small buffer: spills)",
          f.chunks[PIOSCOPE_CHUNK_EVENTS]);
    uint32_t seen[4];
    static const rr_event *ev[4096];
    for (int t = 0; t < 4; t++) {
        char name[64];
        snprintf(name, sizeof name, "thread-%d.bin", t);
        size_t n = on_file(&f, name, ev, 4096);
        size_t writes = 0, in_order = 1;
        for (size_t i = 0; i < n; i++) {
            if (ev[i]->ev.func != PIOSCOPE_FN_pwrite) continue;
            if (ev[i]->ev.offset != writes || ev[i]->ev.size != 1) in_order = 0;
            writes++;
        }
        CHECK(writes == 1000 && in_order, "%s: %zu pwrites", name, writes);
        CHECK(count_func(ev, n, PIOSCOPE_FN_open) == 1 && count_func(ev, n, PIOSCOPE_FN_close) == 1);
        seen[t] = n ? ev[0]->thread : 0;
        for (size_t i = 0; i < n; i++) CHECK(ev[i]->thread == seen[t]);
        CHECK(seen[t] != 0, "worker threads are not thread 0");
    }
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) CHECK(seen[a] != seen[b]);
    rr_free(&f);
    check_end();
}

/* ---- regions ---- */

static const rr_event *region_named(const rr_file *f, const char *name, size_t nth)
{
    for (size_t i = 0; i < f->nevents; i++) {
        if (f->events[i].ev.func != PIOSCOPE_FN_region) continue;
        const rr_string *s = rr_string_by_id(f, f->events[i].ev.object);
        if (s && s->kind == PIOSCOPE_STRING_REGION && !strcmp(s->text, name) && nth-- == 0)
            return &f->events[i];
    }
    return NULL;
}

static int inside(const rr_event *child, const rr_event *parent)
{
    return child->ev.start >= parent->ev.start &&
           child->ev.start + rr_duration(child) <= parent->ev.start + rr_duration(parent);
}

static void regions(int status)
{
    rr_file f;
    check_begin("regions: nested regions enclose their calls");
    CHECK(status == 0, "exit status %d", status);
    if (load_one(&f) != 0) {
        check_end();
        return;
    }
    const rr_event *ev[64];
    size_t n = on_file(&f, "regions.bin", ev, 64);
    const rr_event *outer = region_named(&f, "outer", 0), *inner = region_named(&f, "inner", 0);
    CHECK(outer && inner);
    CHECK(n == 7, "%zu records on regions.bin", n);  /* open, 5 pwrite, close */
    if (outer && inner && n == 7) {
        CHECK(outer->ev.depth == 0 && inner->ev.depth == 1);
        CHECK(inside(inner, outer));
        CHECK(ev[1]->ev.offset == 0 && ev[1]->ev.depth == 1 && inside(ev[1], outer));
        CHECK(ev[2]->ev.offset == 1 && ev[2]->ev.depth == 2 && inside(ev[2], inner));
        CHECK(ev[3]->ev.offset == 2 && ev[3]->ev.depth == 2 && inside(ev[3], inner));
        CHECK(!inside(ev[1], inner));
        CHECK(ev[4]->ev.offset == 100 && ev[4]->ev.depth == 70, "depth %u", ev[4]->ev.depth);
        CHECK(ev[5]->ev.offset == 200 && ev[5]->ev.depth == 0);
        CHECK(ev[0]->ev.depth == 0 && ev[6]->ev.depth == 0);
    }
    check_end();

    check_begin("regions: nesting past the region stack is counted, not recorded");
    size_t deep = 0;
    int depths_ok = 1;
    for (const rr_event *r; (r = region_named(&f, "deep", deep)); deep++)
        if (r->ev.depth != 63 - deep) depths_ok = 0;  /* innermost ends first */
    CHECK(deep == 64, "%zu deep regions", deep);
    CHECK(depths_ok);
    size_t all = 0;
    for (size_t i = 0; i < f.nevents; i++) all += f.events[i].ev.func == PIOSCOPE_FN_region;
    CHECK(all == 66, "%zu region records", all);
    rr_free(&f);
    check_end();
}

static void fortran(int status)
{
    rr_file f;
    check_begin("fortran: the module's region encloses the Fortran I/O");
    CHECK(status == 0, "exit status %d", status);
    if (load_one(&f) != 0) {
        check_end();
        return;
    }
    const rr_event *r = region_named(&f, "fortran phase", 0);
    const rr_event *ev[64];
    size_t n = on_file(&f, "fortran.txt", ev, 64);
    CHECK(r && r->ev.depth == 0);
    CHECK(n >= 2, "%zu records on fortran.txt", n);
    for (size_t i = 0; r && i < n; i++) CHECK(ev[i]->ev.depth >= 1 && inside(ev[i], r));
    rr_free(&f);
    check_end();
}

/* ---- lifecycle ---- */

static size_t pwrites_on(const rr_file *f, const char *name)
{
    static const rr_event *ev[4096];
    size_t n = on_file(f, name, ev, 4096);
    return count_func(ev, n, PIOSCOPE_FN_pwrite);
}

static void ended(const char *how, int status, int want_status)
{
    rr_file f;
    char name[128];
    snprintf(name, sizeof name, "lifecycle %s: exit status kept, 100 records, END", how);
    check_begin(name);
    CHECK(status == want_status, "status %d, want %d", status, want_status);
    if (load_one(&f) == 0) {
        CHECK(pwrites_on(&f, "main.bin") == 100, "%zu", pwrites_on(&f, "main.bin"));
        CHECK(f.ended && f.chunks[PIOSCOPE_CHUNK_PARTIAL] == 0);
        rr_free(&f);
    }
    check_end();
}

static void killed(const char *sig, const char *how, int status, int want_status)
{
    rr_file f;
    char name[128], reason[64];
    snprintf(name, sizeof name, "lifecycle %s: dies by %s, 100 records, PARTIAL", how, sig);
    snprintf(reason, sizeof reason, "killed by signal %s", sig);
    check_begin(name);
    CHECK(status == want_status, "status %d, want %d", status, want_status);
    if (load_one(&f) == 0) {
        CHECK(pwrites_on(&f, "main.bin") == 100, "%zu", pwrites_on(&f, "main.bin"));
        CHECK(!f.ended && f.chunks[PIOSCOPE_CHUNK_PARTIAL] == 1);
        CHECK(strstr(f.partial, reason), "reason '%s'", f.partial);
        rr_free(&f);
    }
    check_end();
}

static void fork_scenario(int status)
{
    check_begin("fork: the child traces into its own file, without the parent's records");
    CHECK(status == 0, "status %d", status);
    CHECK(nfiles == 2, "%d raw files", nfiles);
    rr_file a, b;
    if (nfiles == 2 && rr_load(paths[0], &a) == 0 && rr_load(paths[1], &b) == 0) {
        char v[64];
        rr_file *parent = rr_job(&a, "forked_from", v, sizeof v) ? &b : &a;
        rr_file *child = parent == &a ? &b : &a;
        CHECK(rr_job(child, "forked_from", v, sizeof v) && (uint32_t)atoi(v) == parent->hdr.pid);
        CHECK(!rr_job(parent, "forked_from", v, sizeof v));
        CHECK(child->hdr.ppid == parent->hdr.pid);
        CHECK(pwrites_on(parent, "main.bin") == 100 && pwrites_on(parent, "parent.bin") == 10);
        CHECK(pwrites_on(parent, "child.bin") == 0);
        CHECK(pwrites_on(child, "child.bin") == 20, "%zu", pwrites_on(child, "child.bin"));
        CHECK(pwrites_on(child, "main.bin") == 0, "parent's records copied into the child");
        CHECK(parent->ended && child->ended);
        rr_free(&a);
        rr_free(&b);
    } else {
        CHECK(0, "decode");
    }
    check_end();
}

static void exec_scenario(int status, int forked)
{
    check_begin(forked ? "forkexec: a child that only execs leaves no file of its own"
                       : "exec: the trace ends cleanly at exec, the new image has its own file");
    CHECK(status == 0, "status %d", status);
    CHECK(nfiles == 2, "%d raw files", nfiles);
    rr_file a, b;
    if (nfiles == 2 && rr_load(paths[0], &a) == 0 && rr_load(paths[1], &b) == 0) {
        char v[4096], w[4096];
        rr_file *first = rr_job(&a, "exe", v, sizeof v) && strstr(v, "prog_lifecycle") ? &a : &b;
        rr_file *image = first == &a ? &b : &a;
        CHECK(rr_job(first, "exe", v, sizeof v) && strstr(v, "prog_lifecycle"));
        CHECK(rr_job(image, "exe", w, sizeof w) && strstr(w, "true"), "exe %s", w);
        CHECK(pwrites_on(first, "main.bin") == 100);
        CHECK(first->ended && image->ended);
        if (forked) {
            CHECK(image->hdr.ppid == first->hdr.pid);
            CHECK(!rr_job(image, "forked_from", v, sizeof v));
            CHECK(pwrites_on(first, "parent.bin") == 10);
        } else {
            CHECK(image->hdr.pid == first->hdr.pid, "exec keeps the pid");
            CHECK(rr_job(first, "exec", v, sizeof v) && !strcmp(v, "/bin/true"));
        }
        rr_free(&a);
        rr_free(&b);
    } else {
        CHECK(0, "decode");
    }
    check_end();
}

static void fortify(int status)
{
    rr_file f;
    check_begin("fortify: _chk and _2 entry points are recorded as the plain calls");
    CHECK(status == 0, "status %d", status);
    if (load_one(&f) == 0) {
        const rr_event *ev[64];
        size_t n = on_file(&f, "fortify.bin", ev, 64);
        static const uint16_t want[] = {PIOSCOPE_FN_fopen, PIOSCOPE_FN_fwrite, PIOSCOPE_FN_fclose,
                                        PIOSCOPE_FN_open, PIOSCOPE_FN_read, PIOSCOPE_FN_pread,
                                        PIOSCOPE_FN_close, PIOSCOPE_FN_fopen, PIOSCOPE_FN_fread,
                                        PIOSCOPE_FN_fclose};
        static const uint64_t offset[] = {0, 0, 0, 0, 0, 4, 0, 0, 0, 0};
        static const uint64_t size[] = {0, 16, 0, 0, 8, 8, 0, 0, 8, 0};
        CHECK(n == 10, "%zu records", n);
        for (size_t i = 0; i < n && i < 10; i++) {
            CHECK(ev[i]->ev.func == want[i], "call %zu: func %u", i + 1, ev[i]->ev.func);
            CHECK(ev[i]->ev.offset == offset[i] && rr_size(ev[i]) == size[i], "call %zu", i + 1);
        }
        rr_free(&f);
    }
    check_end();
}

static void running_scenario(int status)
{
    rr_file f;
    check_begin("running: exit() while threads record leaves a well-formed file, END last");
    CHECK(status == 0, "status %d", status);
    if (load_one(&f) == 0) {
        CHECK(f.ended && f.chunks[PIOSCOPE_CHUNK_PARTIAL] == 0);
        for (int t = 0; t < 4; t++) {
            char name[64];
            snprintf(name, sizeof name, "thread-%d.bin", t);
            CHECK(pwrites_on(&f, name) > 100, "%s: %zu", name, pwrites_on(&f, name));
        }
        rr_free(&f);
    }
    check_end();
}

static void execfail_scenario(int status)
{
    check_begin("execfail: a failed exec ends the file cleanly, tracing goes on in a new one");
    CHECK(status == 0, "status %d", status);
    CHECK(nfiles == 2, "%d raw files", nfiles);
    rr_file a, b;
    if (nfiles == 2 && rr_load(paths[0], &a) == 0 && rr_load(paths[1], &b) == 0) {
        char v[4096];
        rr_file *first = strstr(paths[0], "-0.praw") ? &a : &b, *next = first == &a ? &b : &a;
        CHECK(first->hdr.pid == next->hdr.pid);
        CHECK(rr_job(first, "exec", v, sizeof v) && strstr(v, "/nonexistent-pioscope/prog"));
        CHECK(pwrites_on(first, "main.bin") == 100 && pwrites_on(first, "after.bin") == 0);
        CHECK(pwrites_on(next, "after.bin") == 10 && pwrites_on(next, "main.bin") == 0);
        CHECK(first->ended && next->ended);
        rr_free(&a);
        rr_free(&b);
    } else {
        CHECK(0, "decode");
    }
    check_end();
}

static void closerange_scenario(int status)
{
    rr_file f;
    check_begin("closerange: after the program's close_range(3, ~0) the trace goes on");
    CHECK(status == 0, "status %d", status);
    if (load_one(&f) == 0) {
        CHECK(pwrites_on(&f, "main.bin") == 100 && pwrites_on(&f, "after.bin") == 10);
        CHECK(f.ended && f.chunks[PIOSCOPE_CHUNK_PARTIAL] == 0);
        rr_free(&f);
    }
    check_end();
}

/* ---- issue 12: the traced program never notices the tracer ---- */

static void fd768_scenario(int status)
{
    rr_file f;
    check_begin("fd768 (issue 12): the program's descriptor 768 is its own, the trace is whole");
    CHECK(status == 0, "status %d", status);
    char path[4200], text[64] = "";
    snprintf(path, sizeof path, "%s/out768.txt", dir);
    FILE *out = fopen(path, "r");
    size_t n = out ? fread(text, 1, sizeof text - 1, out) : 0;
    if (out) fclose(out);
    text[n] = 0;
    CHECK(!strcmp(text, "hi\n"), "out768.txt holds %zu bytes", n);
    if (load_one(&f) == 0) {
        CHECK(pwrites_on(&f, "main.bin") == 100 && pwrites_on(&f, "after.bin") == 10);
        CHECK(f.ended && f.chunks[PIOSCOPE_CHUNK_PARTIAL] == 0);
        rr_free(&f);
    }
    check_end();
}

static void fdlimit_scenario(int status)
{
    rr_file f;
    check_begin("fdlimit (issue 12): a spill at the descriptor limit stops the tracer, which "
                "keeps its records and says EMFILE");
    CHECK(status == 0, "status %d", status);
    if (load_one(&f) == 0) {
        CHECK(pwrites_on(&f, "main.bin") == 100);
        CHECK(strstr(f.partial, "EMFILE"), "reason '%s'", f.partial);
        rr_free(&f);
    }
    check_end();
}

static void diskfull_scenario(int status)
{
    static const rr_event *ev[32768];
    rr_file f;
    check_begin("diskfull (issue 12): the chunk cut by a full disk keeps its whole records");
    CHECK(status == 0, "status %d", status);
    if (load_one(&f) == 0) {
        size_t bulk = count_func(ev, on_file(&f, "bulk.bin", ev, 32768), PIOSCOPE_FN_pwrite);
        CHECK(pwrites_on(&f, "main.bin") == 100);
        CHECK(bulk > 0 && bulk < 20000, "%zu bulk records", bulk);
        CHECK(strstr(f.partial, "ENOSPC"), "reason '%s'", f.partial);
        rr_free(&f);
    }
    check_end();
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: check_raw SCENARIO DIR RAWDIR STATUS\n");
        return 2;
    }
    const char *scenario = argv[1];
    dir = argv[2];
    nfiles = rr_list(argv[3], paths, MAXFILES);
    int status = atoi(argv[4]);
    if (!strcmp(scenario, "posix")) {
        posix(status);
    } else if (!strcmp(scenario, "aio")) {
        aio(status);
    } else if (!strcmp(scenario, "threads")) {
        threads(status);
    } else if (!strcmp(scenario, "regions")) {
        regions(status);
    } else if (!strcmp(scenario, "fortran")) {
        fortran(status);
    } else if (!strcmp(scenario, "fork")) {
        fork_scenario(status);
    } else if (!strcmp(scenario, "exec")) {
        exec_scenario(status, 0);
    } else if (!strcmp(scenario, "forkexec")) {
        exec_scenario(status, 1);
    } else if (!strcmp(scenario, "fortify")) {
        fortify(status);
    } else if (!strcmp(scenario, "running")) {
        running_scenario(status);
    } else if (!strcmp(scenario, "execfail")) {
        execfail_scenario(status);
    } else if (!strcmp(scenario, "closerange")) {
        closerange_scenario(status);
    } else if (!strcmp(scenario, "fd768")) {
        fd768_scenario(status);
    } else if (!strcmp(scenario, "fdlimit")) {
        fdlimit_scenario(status);
    } else if (!strcmp(scenario, "diskfull")) {
        diskfull_scenario(status);
    } else if (!strncmp(scenario, "end:", 4)) {
        char how[64];
        snprintf(how, sizeof how, "%s", scenario + 4);  /* end:HOW:STATUS */
        char *colon = strchr(how, ':');
        int want = colon ? atoi(colon + 1) : 0;
        if (colon) *colon = 0;
        ended(how, status, want);
    } else if (!strncmp(scenario, "signal:", 7)) {  /* signal:NAME[:how] */
        char name[64];
        snprintf(name, sizeof name, "%s", scenario + 7);
        char *how = strchr(name, ':');
        if (how) *how++ = 0;
        int sig = !strcmp(name, "SIGTERM") ? 15 : !strcmp(name, "SIGINT") ? 2
                : !strcmp(name, "SIGABRT") ? 6 : !strcmp(name, "SIGSEGV") ? 11 : 7;
        killed(name, how ? how : name, status, 128 + sig);
    } else if (!strncmp(scenario, "none:", 5)) {  /* none:LABEL: no trace at all */
        char name[256];
        snprintf(name, sizeof name, "no trace: %s", scenario + 5);
        check_begin(name);
        CHECK(status == 0, "status %d", status);
        CHECK(nfiles == 0, "%d raw files", nfiles);
        check_end();
    } else {
        return 2;
    }
    return check_failed ? 1 : 0;
}
