/* buffer.c: owns the per-thread record buffers: the lock-free registry of buffers, the record
 * path's rare part (a thread's first buffer, a flushed buffer started again, a full one spilled
 * as one EVENTS chunk), the record path out of line for the wrappers that do not inline it, and
 * flushing every buffer. The record path itself (encoding, main + ext) is record.h's. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "core.h"
#include "sys.h"

enum { TBUF_FREE = 0, TBUF_OWNED = 1 };

__thread pioscope_thread_state pioscope_thread __attribute__((tls_model("initial-exec")))
    PIOSCOPE_HIDDEN;
int pioscope_recording PIOSCOPE_HIDDEN = 0;

static size_t buffer_bytes = PIOSCOPE_DEFAULT_BUFFER_BYTES;
static size_t record_room;        /* bytes of records per buffer, a multiple of 32 */
static size_t map_bytes;          /* one buffer's mapping */
static size_t meta_bytes;         /* the struct, rounded up */
static struct pioscope_tbuf *registry;  /* atomic head of the list */
static uint32_t next_thread;      /* atomic */
static pthread_key_t exit_key;
static int ready;

/* ---- the spin flag of one buffer (held only while a chunk is cut from it) ---- */

/* Who holds a buffer's flag: the holder's thread state, unique among live threads. */
static uintptr_t this_thread_token(void)
{
    return (uintptr_t)&pioscope_thread;
}

static int tbuf_try_lock(struct pioscope_tbuf *b)
{
    uintptr_t none = 0;
    return __atomic_compare_exchange_n(&b->holder, &none, this_thread_token(), 0,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void tbuf_lock(struct pioscope_tbuf *b)
{
    while (!tbuf_try_lock(b))
        while (__atomic_load_n(&b->holder, __ATOMIC_RELAXED)) pio_cpu_relax();
}

/* For flushes that may run in a signal handler that interrupted this very thread while it
 * held the flag: give up at once then, since waiting would hang. Another holder (the server
 * mode flusher) is waited for, within a bound, so the end does not skip the records it has
 * not cut yet. */
static int tbuf_lock_bounded(struct pioscope_tbuf *b)
{
    for (long spins = 0; spins < 20000000; spins++) {
        if (tbuf_try_lock(b)) return 1;
        if (__atomic_load_n(&b->holder, __ATOMIC_RELAXED) == this_thread_token()) return 0;
        pio_cpu_relax();
    }
    return 0;
}

static void tbuf_unlock(struct pioscope_tbuf *b)
{
    __atomic_store_n(&b->holder, 0, __ATOMIC_RELEASE);
}

/* Writes records [from, to) as one EVENTS chunk, after the strings they may use. When they
 * start the buffer, the header goes in the room before them and the chunk is one write().
 * Caller holds the flag. */
static int cut_chunk(struct pioscope_tbuf *b, char *from, char *to)
{
    if (from == to) return 0;
    pioscope_intern_flush();
    uint32_t payload = (uint32_t)(to - from);
    if (from == b->data) {
        pioscope_raw_fill_header((pioscope_raw_chunk_header *)b->base, PIOSCOPE_CHUNK_EVENTS,
                                 b->thread, payload);
        struct iovec one = {b->base, (size_t)(to - b->base)};
        return pioscope_raw_put(&one, 1);
    }
    pioscope_raw_chunk_header h;
    pioscope_raw_fill_header(&h, PIOSCOPE_CHUNK_EVENTS, b->thread, payload);
    struct iovec two[2] = {{&h, sizeof h}, {from, payload}};
    return pioscope_raw_put(two, 2);
}

/* ---- setup, acquisition and release ---- */

static void thread_exit(void *arg);

int pioscope_buffers_init(size_t bytes)
{
    if (bytes < PIOSCOPE_MIN_BUFFER_BYTES) bytes = PIOSCOPE_MIN_BUFFER_BYTES;
    if (bytes > PIOSCOPE_MAX_BUFFER_BYTES) bytes = PIOSCOPE_MAX_BUFFER_BYTES;
    buffer_bytes = bytes;
    record_room = (bytes - sizeof(pioscope_raw_chunk_header)) & ~(size_t)31;
    meta_bytes = (sizeof(struct pioscope_tbuf) + 63) & ~(size_t)63;
    map_bytes = (meta_bytes + sizeof(pioscope_raw_chunk_header) + record_room + 4095) &
                ~(size_t)4095;
    if (pthread_key_create(&exit_key, thread_exit) != 0) return -1;
    ready = 1;
    return 0;
}

size_t pioscope_buffer_bytes(void)
{
    return buffer_bytes;
}

static void tbuf_reset(struct pioscope_tbuf *b)
{
    b->cur = b->flushed = b->data;
    b->region_top = b->region_overflow = 0;
}

struct pioscope_tbuf *pioscope_thread_buffer(void)
{
    pioscope_thread_state *t = &pioscope_thread;
    if (t->buf) return t->buf;
    if (!ready) return NULL;
    struct pioscope_tbuf *b;
    for (b = __atomic_load_n(&registry, __ATOMIC_ACQUIRE); b; b = b->next) {
        int expect = TBUF_FREE;
        if (__atomic_load_n(&b->state, __ATOMIC_RELAXED) == TBUF_FREE &&
            __atomic_compare_exchange_n(&b->state, &expect, TBUF_OWNED, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            break;
    }
    if (!b) {
        char *area = pio_mmap_anon(map_bytes);
        if (!area) return NULL;
        b = (struct pioscope_tbuf *)area;
        b->state = TBUF_OWNED;
        b->base = area + meta_bytes;
        b->data = b->base + sizeof(pioscope_raw_chunk_header);
        b->end = b->data + record_room;
        tbuf_reset(b);
        struct pioscope_tbuf *head = __atomic_load_n(&registry, __ATOMIC_RELAXED);
        do b->next = head;
        while (!__atomic_compare_exchange_n(&registry, &head, b, 1, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED));
    }
    tbuf_lock(b);
    tbuf_reset(b);
    tbuf_unlock(b);
    b->thread = __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
    t->buf = b;
    pthread_setspecific(exit_key, b);
    return b;
}

uint32_t pioscope_thread_number(void)
{
    struct pioscope_tbuf *b = pioscope_thread.buf;
    return b ? b->thread : 0;
}

/* pthread key destructor: the thread is ending; its records go out and the buffer is free for
 * the next thread. A traced call made after this (another destructor) takes a buffer again. */
static void thread_exit(void *arg)
{
    struct pioscope_tbuf *b = arg;
    if (!b || pioscope_thread.buf != b) return;
    tbuf_lock(b);
    cut_chunk(b, b->flushed, b->cur);
    tbuf_reset(b);
    tbuf_unlock(b);
    pioscope_thread.buf = NULL;
    __atomic_store_n(&b->state, TBUF_FREE, __ATOMIC_RELEASE);
}

void pioscope_buffers_after_fork(void)
{
    struct pioscope_tbuf *mine = pioscope_thread.buf;
    for (struct pioscope_tbuf *b = registry; b; b = b->next) {
        b->holder = 0;
        b->cur = b->flushed = b->data;
        if (b != mine) {
            b->region_top = b->region_overflow = 0;
            b->state = TBUF_FREE;
        }
    }
}

/* ---- recording (the fast path is record.h's) ---- */

/* The owner's buffer is full: its records go out as one chunk and it starts again. Returns
 * where the next record goes, or NULL when the tracer has stopped. Records the file could not
 * be opened for stay in the buffer: the end writes them, when descriptors may be free again. */
static char *spill(struct pioscope_tbuf *b)
{
    tbuf_lock(b);
    int kept = cut_chunk(b, b->flushed, b->cur) != 0 && pioscope_raw_writable();
    if (!kept) {
        b->flushed = b->data;
        __atomic_store_n(&b->cur, b->data, __ATOMIC_RELEASE);
    }
    tbuf_unlock(b);
    return !kept && __atomic_load_n(&pioscope_recording, __ATOMIC_RELAXED) ? b->data : NULL;
}

/* Every record of the owner's buffer has gone out (a periodic flush, server mode): it starts
 * again at the buffer's start. Without this a thread's records walk the whole buffer (8 MiB
 * by default), each one on a line, often a page, not touched since the last spill: in a
 * daemon of dozens of threads that cache miss or page fault was most of the record's cost. */
static char *rewind_flushed(struct pioscope_tbuf *b)
{
    tbuf_lock(b);
    if (b->flushed == b->cur) {
        b->flushed = b->data;
        __atomic_store_n(&b->cur, b->data, __ATOMIC_RELEASE);
    }
    tbuf_unlock(b);
    return b->cur;
}

__attribute__((noinline)) char *pioscope_record_room(void)
{
    int saved = errno;  /* the slow path's calls (pthread_setspecific) may set it */
    struct pioscope_tbuf *b = pioscope_thread_buffer();
    char *p = b ? b->cur : NULL;
    if (p && p != b->data && p == __atomic_load_n(&b->flushed, __ATOMIC_RELAXED))
        p = rewind_flushed(b);
    if (p && p + 2 * sizeof(pioscope_raw_event) > b->end) p = spill(b);
    errno = saved;
    return p;
}

void pioscope_append(uint64_t start, uint64_t duration, uint32_t depth,
                     const pioscope_event *event)
{
    pioscope_append_inline(start, duration, depth, event);
}

void pioscope_leave(const pioscope_call *call, const pioscope_event *event)
{
    pioscope_leave_inline(call, event);
}

void pioscope_record_instant(const pioscope_event *event)
{
    if (pioscope_thread.internal) return;
    pioscope_append_inline(pioscope_ticks(), 0, pioscope_thread.depth, event);
}

void pioscope_internal_begin(void)
{
    pioscope_thread.internal++;
}

void pioscope_internal_end(void)
{
    if (pioscope_thread.internal) pioscope_thread.internal--;
}

/* The strings, then every buffer's published records go out. Other threads keep recording
 * meanwhile: their new records stay for their next spill. */
void pioscope_flush_all(void)
{
    pioscope_intern_flush();
    for (struct pioscope_tbuf *b = __atomic_load_n(&registry, __ATOMIC_ACQUIRE); b;
         b = b->next) {
        if (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) != TBUF_OWNED) continue;
        if (!tbuf_lock_bounded(b)) continue;
        char *cur = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
        if (cur > b->flushed) {
            cut_chunk(b, b->flushed, cur);
            __atomic_store_n(&b->flushed, cur, __ATOMIC_RELAXED);  /* the owner reads it */
        }
        tbuf_unlock(b);
    }
}
