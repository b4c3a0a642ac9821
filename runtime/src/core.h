/* core.h: declarations shared by the runtime core's files (buffers, raw file, interning,
 * lifecycle, regions). Wrappers use tracer.h only. */
#ifndef PIOSCOPE_CORE_H
#define PIOSCOPE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "record.h"
#include "tracer.h"

#define PIOSCOPE_TRACER_VERSION "0.1.0"
#define PIOSCOPE_DEFAULT_BUFFER_BYTES (8u << 20)
#define PIOSCOPE_MIN_BUFFER_BYTES 4096u
#define PIOSCOPE_MAX_BUFFER_BYTES (1u << 30)

/* ---- per-thread buffers (buffer.c; the record path and the buffer's layout: record.h) ---- */

/* Sets the buffer size (bytes including the chunk header room) and the thread-exit key. */
int pioscope_buffers_init(size_t buffer_bytes);
size_t pioscope_buffer_bytes(void);
/* This thread's buffer, acquired (mmap'd or reused) on first use; NULL if impossible. */
struct pioscope_tbuf *pioscope_thread_buffer(void);
/* Appends one record (plus its ext record when needed) to this thread's buffer. */
void pioscope_append(uint64_t start, uint64_t duration, uint32_t depth,
                     const pioscope_event *event);
/* Tracer thread number of the calling thread (0 if it has no buffer yet). */
uint32_t pioscope_thread_number(void);
/* In a forked child: drop the records copied from the parent, free other threads' buffers. */
void pioscope_buffers_after_fork(void);

/* ---- the raw file (rawfile.c) ---- */

/* Creates the raw file in `dir` (absolute) and writes the file header and JOB chunk. */
int pioscope_raw_create(const char *dir);
/* Writes one chunk (header, parts, zero padding to 8) with one writev. Returns 0 or -errno; a
 * write error stops the tracer (PARTIAL chunk with the reason, if it can). */
int pioscope_raw_chunk(uint16_t kind, uint32_t thread, const struct iovec *parts, int nparts);
/* The same to a given descriptor, without the failure handling (a file being created). The
 * tracer holds no descriptor otherwise: every chunk opens the file, appends, closes. */
int pioscope_raw_chunk_to(int fd, uint16_t kind, uint32_t thread, const struct iovec *parts,
                          int nparts);
/* True once this process's raw file exists (a forked child creates it on its first chunk). */
int pioscope_raw_started(void);
/* Writes bytes that already form whole chunks: one EVENTS chunk cut in place, or a batch of
 * STRING chunks. When the disk fills mid-way, an EVENTS chunk keeps its whole records that fit
 * and anything else is removed (rawfile.c); a failure stops the tracer. */
int pioscope_raw_put(const struct iovec *iov, int n);
void pioscope_raw_fill_header(pioscope_raw_chunk_header *h, uint16_t kind, uint32_t thread,
                              uint32_t payload_bytes);
/* Writes the final chunk (END, or PARTIAL with `reason`); later writes are dropped. */
void pioscope_raw_final(const char *partial_reason);
/* Starts a new raw file, created on its first chunk (with the strings interned so far): in a
 * forked child (parent_pid = the parent), or after an exec that failed (parent_pid = 0). */
void pioscope_raw_reopen(uint32_t parent_pid);
/* True while chunks can still be written. */
int pioscope_raw_writable(void);
/* Path of the current raw file ("" if none). For tests. */
const char *pioscope_raw_path(void);
void pioscope_raw_lock_for_fork(void);
void pioscope_raw_unlock_after_fork(int child);

/* ---- interning (intern.c) ---- */

int pioscope_intern_init(void);
/* Writes the STRING chunks still waiting in the batch: before any EVENTS chunk and at the end. */
void pioscope_intern_flush(void);
/* Writes the STRING chunks of every string interned so far (a forked child's new file). */
/* Writes the STRING chunks of the strings with ids from `from` on to fd (a new file); returns
 * the id after the last one written. */
uint32_t pioscope_intern_replay(int fd, uint32_t from);
/* "8388608", "64K", "8M", "1G" (powers of 1024). 0 when unparsable. */
size_t pioscope_parse_bytes(const char *s);
/* Server mode: the raw file becomes segments of `segment_bytes`, the oldest deleted so that
 * they stay within `max_bytes` (rawfile.c, docs/SERVERS.md). */
void pioscope_raw_rotate_at(uint64_t segment_bytes, uint64_t max_bytes);
/* Text of a string id, or NULL. The text stays valid for the life of the process. */
const char *pioscope_intern_text(uint32_t id);
void pioscope_intern_lock_for_fork(void);
void pioscope_intern_unlock_after_fork(int child);

/* ---- lifecycle (lifecycle.c) ---- */

/* The pid whose raw file this process writes (differs from getpid() in a vfork child). */
extern uint32_t pioscope_pid PIOSCOPE_HIDDEN;

/* ---- small text helpers (no stdio on the tracer's paths) ---- */

typedef struct {
    char *p;
    size_t cap;
    size_t len;   /* may exceed cap - 1 when truncated; the text stays NUL-terminated */
} pioscope_text;

static inline void pioscope_text_put(pioscope_text *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, t->len++)
        if (t->len + 1 < t->cap) t->p[t->len] = s[i];
    if (t->cap) t->p[t->len < t->cap ? t->len : t->cap - 1] = 0;
}
static inline void pioscope_text_str(pioscope_text *t, const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    pioscope_text_put(t, s, n);
}
static inline void pioscope_text_u64(pioscope_text *t, uint64_t v)
{
    char d[24];
    int n = 0;
    do {
        d[sizeof d - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    pioscope_text_put(t, d + sizeof d - n, (size_t)n);
}
static inline void pioscope_text_i64(pioscope_text *t, int64_t v)
{
    if (v < 0) {
        pioscope_text_put(t, "-", 1);
        pioscope_text_u64(t, (uint64_t)0 - (uint64_t)v);
    } else {
        pioscope_text_u64(t, (uint64_t)v);
    }
}
static inline size_t pioscope_text_used(const pioscope_text *t)
{
    return t->len < t->cap ? t->len : (t->cap ? t->cap - 1 : 0);
}

/* Name of an errno value ("ENOSPC"), or NULL when unknown. */
const char *pioscope_errno_name(int err);

#endif
