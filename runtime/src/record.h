/* record.h: owns the record path, the few instructions every traced call pays: a thread's
 * buffer (struct pioscope_tbuf) and the inline append of one record to it. The POSIX, STDIO,
 * aio and PnetCDF wrappers inline it through pioscope_record, so the event's fields stay in
 * registers and no call is made; every other caller goes through pioscope_leave
 * (buffer.c), which is the same code out of line. What is rare (a thread's first record, a
 * buffer to start again or to spill) is pioscope_record_room, out of line in buffer.c. */
#ifndef PIOSCOPE_RECORD_H
#define PIOSCOPE_RECORD_H

#include <stdint.h>

#include "tracer.h"

#define PIOSCOPE_REGION_MAX 64              /* nesting depth of user regions per thread */

struct pioscope_region_frame {
    uint64_t start;   /* ticks at pioscope_region_begin */
    uint32_t name;    /* region string id */
    uint32_t depth;   /* depth of the region record */
};

/* One thread's buffer: this header, then room for a chunk header, then records. Lives in one
 * mmap'd area; never unmapped (a thread that ends gives it back for the next thread). */
struct pioscope_tbuf {
    struct pioscope_tbuf *next;  /* process-wide list (lock-free push) */
    int state;                   /* atomic: TBUF_FREE or TBUF_OWNED */
    uintptr_t holder;            /* atomic: the thread cutting a chunk from it, 0 when none */
    uint32_t thread;             /* tracer thread number of the owner */
    uint32_t region_top;         /* region frames in use */
    uint32_t region_overflow;    /* begins past PIOSCOPE_REGION_MAX (not recorded) */
    char *base;                  /* chunk header room */
    char *data;                  /* first record (base + chunk header) */
    char *end;                   /* end of record room */
    char *cur;                   /* atomic: end of published records (owner stores) */
    char *flushed;               /* records before this are in the file (set under lock) */
    struct pioscope_region_frame regions[PIOSCOPE_REGION_MAX];
};

/* Where this thread's next record goes when the fast path cannot say: the thread has no
 * buffer yet, its records have all been flushed (it starts again at the buffer's start), or
 * its buffer is full (spilled as one chunk). NULL when nothing can be recorded. Never changes
 * errno, so the wrappers need not guard it. */
char *pioscope_record_room(void);

/* Appends one record (plus its ext record when needed) to this thread's buffer: no lock, no
 * allocation, no formatting. */
PIOSCOPE_ALWAYS_INLINE
static inline void pioscope_append_inline(uint64_t start, uint64_t duration, uint32_t depth,
                                          const pioscope_event *ev)
{
    if (!__atomic_load_n(&pioscope_recording, __ATOMIC_RELAXED)) return;
    struct pioscope_tbuf *b = pioscope_thread.buf;
    char *p;
    /* A buffer whose records were all flushed restarts (server mode: its records stay in a few
     * cache-hot pages instead of walking the whole buffer, a cold line per record). */
    if (__builtin_expect(!b || ((p = b->cur) != b->data &&
                                p == __atomic_load_n(&b->flushed, __ATOMIC_RELAXED)) ||
                             p + 2 * sizeof(pioscope_raw_event) > b->end,
                         0)) {
        if (!(p = pioscope_record_room())) return;
        b = pioscope_thread.buf;
    }
    int ext = ev->result != (int64_t)ev->size || ev->error != 0 || ev->link != 0 ||
              (ev->size >> 32) != 0 || duration >= UINT32_MAX;
    pioscope_raw_event *e = (pioscope_raw_event *)p;
    e->start = start;
    e->duration = duration >= UINT32_MAX ? UINT32_MAX : (uint32_t)duration;
    e->func = ev->func;
    e->depth = depth > 255 ? 255 : (uint8_t)depth;
    e->flags = (uint8_t)((ev->flags & ~PIOSCOPE_F_EXT) | (ext ? PIOSCOPE_F_EXT : 0));
    e->object = ev->object;
    e->size = (uint32_t)ev->size;
    e->offset = ev->offset;
    p += sizeof *e;
    if (ext) {
        pioscope_raw_event_ext *x = (pioscope_raw_event_ext *)p;
        x->result = ev->result;
        x->duration = duration;
        x->error = ev->error;
        x->size_hi = (uint32_t)(ev->size >> 32);
        x->link = ev->link;
        p += sizeof *x;
    }
    __atomic_store_n(&b->cur, p, __ATOMIC_RELEASE);
}

/* pioscope_leave inlined: restores the nesting, reads the end time (unless pioscope_stop
 * froze it) and appends the record. */
PIOSCOPE_ALWAYS_INLINE
static inline void pioscope_leave_inline(const pioscope_call *call, const pioscope_event *event)
{
    uint32_t depth = --pioscope_thread.depth;
    if (!call->recording) return;
    uint64_t end = call->end ? call->end : pioscope_ticks();
    pioscope_append_inline(call->start, end - call->start, depth, event);
}

/* pioscope_leave for a call whose record has no link, its fields given one by one: what the
 * POSIX, STDIO, aio and PnetCDF wrappers record (error = err when the call failed). */
PIOSCOPE_ALWAYS_INLINE
static inline void pioscope_record(const pioscope_call *call, uint16_t func, uint32_t object,
                                   uint64_t offset, uint64_t size, int64_t result, int failed,
                                   int err, uint8_t flags)
{
    pioscope_event ev = {func, flags, object, offset, size, result, failed ? err : 0, 0};
    pioscope_leave_inline(call, &ev);
}

#endif
