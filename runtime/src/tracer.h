/* tracer.h: the recording API every wrapper uses (implemented in the runtime core). A wrapper
 * resolves the real function once, calls pioscope_enter, calls the real function, saves errno,
 * calls pioscope_leave, restores errno and returns the real result. */
#ifndef PIOSCOPE_TRACER_H
#define PIOSCOPE_TRACER_H

#include <stddef.h>
#include <stdint.h>
#include "raw_format.h"

/* The function ids of functions.def as PIOSCOPE_FN_<name>. */
enum pioscope_func {
#define PIOSCOPE_FUNC(id, layer, name) PIOSCOPE_FN_##name = id,
#include "functions.def"
#undef PIOSCOPE_FUNC
};

/* One call in flight, on the caller's stack. */
typedef struct {
    uint64_t start;   /* clock ticks at entry */
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
 * or NULL. Wrappers cache the result in a static pointer. */
void *pioscope_real(const char *name);

/* Begins a traced call: reads the clock and deepens this thread's nesting. */
void pioscope_enter(pioscope_call *call);
/* Ends it: restores the nesting and appends the record (and its ext record when needed). Never
 * changes errno. */
void pioscope_leave(const pioscope_call *call, const pioscope_event *event);
/* Records a zero-length event at the current depth (used for request completions). */
void pioscope_record_instant(const pioscope_event *event);

/* Calls made by the tracer itself (its own MPI calls, its own I/O) are bracketed by these so
 * that wrappers they reach record nothing. They nest. */
void pioscope_internal_begin(void);
void pioscope_internal_end(void);

/* Interning: returns a stable id for a path or name, writing its STRING chunk the first time.
 * Paths are made absolute; `fd` >= 0 lets the file system type come from fstatfs. */
uint32_t pioscope_intern_path(const char *path, int fd);
uint32_t pioscope_intern_string(uint16_t kind, const char *text);

/* Side chunks, written at once (not on a hot path). */
void pioscope_write_job_fact(const char *key, const char *value);
void pioscope_write_settings(uint32_t object, uint16_t func, uint64_t ticks,
                             const char *text, size_t length);
void pioscope_write_clock_sync(uint32_t phase, int64_t offset_ns, uint64_t rtt_ns,
                               uint64_t local_mono_ns);
/* Flushes every thread's buffer (MPI_Finalize, exit, fatal signals). */
void pioscope_flush_all(void);

/* Clocks. */
uint64_t pioscope_ticks(void);   /* the record clock */
uint64_t pioscope_mono_ns(void); /* CLOCK_MONOTONIC in ns */

/* Rank of this process once MPI_Init has run, -1 before (and in programs without MPI). */
void pioscope_set_rank(int rank, int size);
int pioscope_rank(void);

#endif
