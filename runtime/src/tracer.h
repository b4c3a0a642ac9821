/* tracer.h: the recording API every wrapper uses (implemented in the runtime core) and the macro
 * that declares a wrapper. A wrapper resolves the real function once and enters the call
 * (pioscope_begin does both), calls the real function, saves errno, calls pioscope_leave,
 * restores errno and returns the real result. */
#ifndef PIOSCOPE_TRACER_H
#define PIOSCOPE_TRACER_H

#include <stddef.h>
#include <stdint.h>
#include "raw_format.h"

/* Symbols the application may reach (intercepted functions, the public API) are marked
 * PIOSCOPE_EXPORT; everything else is hidden by -fvisibility=hidden. PIOSCOPE_HIDDEN on the
 * shared internal data below lets the compiler address it without the GOT. */
#define PIOSCOPE_EXPORT __attribute__((visibility("default")))
#define PIOSCOPE_HIDDEN __attribute__((visibility("hidden")))
/* On the helpers a wrapper's hot path shares with other wrappers (recording the call after the
 * real one returns), so that sharing them costs no call. */
#define PIOSCOPE_ALWAYS_INLINE __attribute__((always_inline))

/* The function ids of functions.def as PIOSCOPE_FN_<name>. */
enum pioscope_func {
#define PIOSCOPE_FUNC(id, layer, name) PIOSCOPE_FN_##name = id,
#include "functions.def"
#undef PIOSCOPE_FUNC
};

/* One call in flight, on the caller's stack. */
typedef struct {
    uint64_t start;   /* clock ticks at entry */
    uint64_t end;     /* clock ticks at exit if pioscope_stop ran, else 0 (leave reads it) */
    int recording;    /* 0 when the tracer is off or this call was made by the tracer itself */
} pioscope_call;

/* What a finished call recorded. Fields that do not apply are 0. */
typedef struct {
    uint16_t func;    /* PIOSCOPE_FN_* */
    uint8_t flags;    /* PIOSCOPE_F_COLLECTIVE | _NONBLOCKING | _OFFSET_UNKNOWN | _COMPLETION */
    uint32_t object;  /* string id (file, region, communicator) */
    uint64_t offset;
    uint64_t size;    /* bytes requested */
    int64_t result;   /* return value; equal to size for a full transfer */
    int32_t error;    /* errno or MPI error class on failure */
    uint64_t link;    /* see pioscope_raw_event_ext.link */
} pioscope_event;

/* Returns the address of the next definition of `name` after this library (dlsym RTLD_NEXT),
 * or NULL. Wrappers cache the result in a static pointer. Returns NULL when called again on a
 * thread that is already resolving (dlsym reaching an intercepted function). */
void *pioscope_real(const char *name);
/* The real function cached in *slot, resolved on first use. */
static inline void *pioscope_resolve(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (__builtin_expect(!p, 0)) {
        p = pioscope_real(name);
        __atomic_store_n(slot, p, __ATOMIC_RELAXED);
    }
    return p;
}

/* Per-thread tracer state. Kept small: it lives in the static TLS block (initial-exec model,
 * no __tls_get_addr call on the hot path); the buffer itself is mmap'd (buffer.c). */
struct pioscope_tbuf;
typedef struct {
    uint32_t depth;              /* traced calls (and regions) in flight on this thread */
    uint32_t internal;           /* pioscope_internal_begin nesting */
    struct pioscope_tbuf *buf;   /* this thread's buffer, NULL until its first record */
} pioscope_thread_state;

extern __thread pioscope_thread_state pioscope_thread
    __attribute__((tls_model("initial-exec"))) PIOSCOPE_HIDDEN;
/* 1 while the process records (set at init, cleared at the end or when the tracer fails). */
extern int pioscope_recording PIOSCOPE_HIDDEN;
/* 1 when the record clock is rdtsc, 0 when it is CLOCK_MONOTONIC ns (clock.c). */
extern int pioscope_clock_tsc PIOSCOPE_HIDDEN;

/* Clocks. */
uint64_t pioscope_mono_ns(void); /* CLOCK_MONOTONIC in ns */
/* This host's CLOCK_MONOTONIC in ns, as the chunk headers' (ticks, ns) pairs and the clock sync
 * record it: pioscope_mono_ns, unless the test-only PIOSCOPE_TEST_CLOCK_SKEW skews it (clock.h). */
uint64_t pioscope_host_ns(void);
static inline uint64_t pioscope_ticks(void) /* the record clock */
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(pioscope_clock_tsc, 1)) return __builtin_ia32_rdtsc();
#endif
    return pioscope_mono_ns();
}

/* Begins a traced call: reads the clock and deepens this thread's nesting. */
static inline void pioscope_enter(pioscope_call *call)
{
    pioscope_thread_state *t = &pioscope_thread;
    call->recording = __atomic_load_n(&pioscope_recording, __ATOMIC_RELAXED) && !t->internal;
    call->end = 0;
    t->depth++;
    call->start = call->recording ? pioscope_ticks() : 0;
}
/* Optional: freezes the call's end time right after the real call, so work the wrapper does
 * before pioscope_leave (interning a path) is not counted in the call's duration. */
static inline void pioscope_stop(pioscope_call *call)
{
    if (call->recording) call->end = pioscope_ticks();
}

/* What a wrapper knows of the function it stands in for: the real one (resolved on first use),
 * the symbol that finds it, and the functions.def id its calls are recorded under. One static
 * target per wrapper, declared with the wrapper by PIOSCOPE_WRAPPER (or PIOSCOPE_MPI_WRAPPER),
 * so each name is spelled once. */
typedef struct {
    void *real;
    const char *symbol;
    uint16_t func;
} pioscope_target;

/* The real function of a target (NULL when no library defines it). */
static inline void *pioscope_target_real(pioscope_target *target)
{
    return pioscope_resolve(&target->real, target->symbol);
}

/* Resolves the target's real function and, when there is one, begins the traced call (reads
 * the clock). NULL: no library defines it, nothing was begun; the wrapper fails as a call to
 * the missing function would. */
static inline void *pioscope_begin(pioscope_call *call, pioscope_target *target)
{
    void *real = pioscope_target_real(target);
    if (real) pioscope_enter(call);
    return real;
}

/* Declares the exported wrapper `symbol` (returning `ret`, taking `params`, a parenthesised
 * parameter list) and its target, target_<symbol>, recorded as function `func` of
 * functions.def. The wrapper's body follows the macro; it is written out, not generated:
 *     PIOSCOPE_WRAPPER(fsync, int, fsync, (int fd)) { return do_fd_call(&target_fsync, fd); }
 * `func` differs from `symbol` only for other entry points to the same function (glibc's
 * _FORTIFY_SOURCE __read_chk is recorded as read). */
#define PIOSCOPE_WRAPPER(func, ret, symbol, params)                                           \
    static pioscope_target target_##symbol = {NULL, #symbol, PIOSCOPE_FN_##func};             \
    PIOSCOPE_EXPORT ret symbol params

/* Ends it: restores the nesting and appends the record (and its ext record when needed). Never
 * changes errno. The POSIX, STDIO, aio and PnetCDF wrappers inline it (pioscope_record,
 * record.h). */
void pioscope_leave(const pioscope_call *call, const pioscope_event *event);
/* Records a zero-length event at the current depth (used for request completions). */
void pioscope_record_instant(const pioscope_event *event);
/* A new nonblocking request id (the link of its start and of its completion), unique in this
 * process and never 0: MPI requests and POSIX aio requests share the numbering. */
uint64_t pioscope_request_id(void);

/* Calls made by the tracer itself (its own MPI calls, its own I/O) are bracketed by these so
 * that wrappers they reach record nothing. They nest. */
void pioscope_internal_begin(void);
void pioscope_internal_end(void);

/* Interning: returns a stable id for a path or name, writing its STRING chunk the first time.
 * Paths are made absolute; `fd` >= 0 lets the file system type come from fstatfs. */
uint32_t pioscope_intern_path(const char *path, int fd);
uint32_t pioscope_intern_string(uint16_t kind, const char *text);
/* A file name that is no path, kept as written (a socket's `socket:<peer>`, server_mode.c). */
uint32_t pioscope_intern_pseudo_file(const char *text);
/* Like pioscope_intern_path for a path relative to directory fd `dirfd` (openat family). */
uint32_t pioscope_intern_path_at(int dirfd, const char *path, int fd);
/* A named object inside file `file` (a FILE string id): interned as "<path>:<member>", a FILE
 * string with the file's file system type (HDF5 datasets, groups, attributes). */
uint32_t pioscope_intern_member(uint32_t file, const char *member);

/* Side chunks, written at once (not on a hot path). */
void pioscope_write_job_fact(const char *key, const char *value);
void pioscope_write_settings(uint32_t object, uint16_t func, uint64_t ticks,
                             const char *text, size_t length);
void pioscope_write_clock_sync(uint32_t phase, int64_t offset_ns, uint64_t rtt_ns,
                               uint64_t local_mono_ns);
/* Flushes every thread's buffer (MPI_Finalize, exit, fatal signals). */
void pioscope_flush_all(void);
/* Flushes everything and writes the final chunk once (END, or PARTIAL with the reason): the
 * process ends (exit hooks, fatal signals) or is about to end without them (MPI_Abort). */
void pioscope_finish(const char *partial_reason);

/* Rank of this process once MPI_Init has run, -1 before (and in programs without MPI). */
void pioscope_set_rank(int rank, int size);
int pioscope_rank(void);

#endif
