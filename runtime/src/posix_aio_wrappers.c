/* posix_aio_wrappers.c: owns the interception of POSIX asynchronous I/O (aio_read, aio_write,
 * lio_listio, aio_suspend, aio_error, aio_return, aio_fsync, aio_cancel and their 64-bit
 * names), what ROMIO's MPI_File_iread/iwrite use: their records nest under the MPI-IO call.
 *
 * A request is modelled like an MPI nonblocking one (docs/FORMAT.md): the call that queues it
 * (aio_read/aio_write, or one aio_read/aio_write child of lio_listio per queued entry) records
 * file, offset and size, flags NONBLOCKING, link = a request id, result = the size when it was
 * queued; aio_return, which hands the program the bytes transferred, records a tracer_complete
 * child with the same link, file and offset, and size = result = those bytes. The other calls
 * record object = the file, result = their return value. */
#include <aio.h>
#include <errno.h>

#include "core.h"
#include "fd_table.h"

/* The 64-bit names take struct aiocb64, the same layout as struct aiocb on LP64 targets. */
_Static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64), "aiocb64 differs from aiocb");

/* ---- requests in flight, keyed by their aiocb ---- */

#define AIO_SLOTS 1024 /* a full table leaves new requests without completion records */

typedef struct {
    const struct aiocb *cb; /* NULL: free */
    uint64_t id;
    uint32_t object;
    uint64_t offset;
} aio_slot;

static aio_slot slots[AIO_SLOTS];
static int slots_lock;
static unsigned slots_used; /* read without the lock: 0 lets aio_return skip the lookup */

static inline void slots_acquire(void)
{
    while (__atomic_exchange_n(&slots_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&slots_lock, __ATOMIC_RELAXED)) {}
}

static inline void slots_release(void)
{
    __atomic_store_n(&slots_lock, 0, __ATOMIC_RELEASE);
}

static inline unsigned slot_of(const struct aiocb *cb)
{
    uint64_t key = (uint64_t)(uintptr_t)cb * 0x9e3779b97f4a7c15ULL;
    return (unsigned)(key >> 40) % AIO_SLOTS;
}

/* Remembers a queued request until its aio_return (a reused aiocb replaces its old entry). */
static void request_track(const struct aiocb *cb, uint64_t id, uint32_t object, uint64_t offset)
{
    slots_acquire();
    unsigned i = slot_of(cb);
    for (unsigned n = 0; n < AIO_SLOTS; n++, i = (i + 1) % AIO_SLOTS) {
        if (slots[i].cb == cb || !slots[i].cb) {
            if (!slots[i].cb) slots_used++;
            slots[i] = (aio_slot){cb, id, object, offset};
            break;
        }
    }
    slots_release();
}

/* Takes the entry of cb out of the table: 1 and *out when there was one. */
static int request_take(const struct aiocb *cb, aio_slot *out)
{
    if (!__atomic_load_n(&slots_used, __ATOMIC_RELAXED)) return 0;
    int found = 0;
    slots_acquire();
    unsigned i = slot_of(cb);
    for (unsigned n = 0; n < AIO_SLOTS && slots[i].cb; n++, i = (i + 1) % AIO_SLOTS) {
        if (slots[i].cb != cb) continue;
        *out = slots[i];
        found = 1;
        /* Backward-shift deletion keeps every other entry reachable from its home slot. */
        unsigned hole = i;
        for (unsigned j = (i + 1) % AIO_SLOTS; slots[j].cb; j = (j + 1) % AIO_SLOTS) {
            unsigned home = slot_of(slots[j].cb);
            int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!between) {
                slots[hole] = slots[j];
                hole = j;
            }
        }
        slots[hole].cb = NULL;
        slots_used--;
        break;
    }
    slots_release();
    return found;
}

/* ---- shared pieces ---- */

static inline int missing(void)
{
    errno = ENOSYS;
    return -1;
}

/* The record of a queued request (func: aio_read/aio_write or their 64-bit ids); r = what
 * the queueing call returned (0: queued). Tracks it for its completion when queued. */
static inline pioscope_event queued_event(uint16_t func, const struct aiocb *cb, int r, int err)
{
    pioscope_event ev = {0};
    ev.func = func;
    ev.flags = PIOSCOPE_F_NONBLOCKING;
    ev.object = pioscope_fd_file(cb->aio_fildes);
    ev.offset = cb->aio_offset > 0 ? (uint64_t)cb->aio_offset : 0;
    ev.size = cb->aio_nbytes;
    ev.result = r == 0 ? (int64_t)ev.size : -1;
    ev.error = r == 0 ? 0 : err;
    if (r == 0) {
        ev.link = pioscope_request_id();
        request_track(cb, ev.link, ev.object, ev.offset);
    }
    return ev;
}

/* aio_read, aio_write (and their 64-bit names). */
typedef int queue_fn(struct aiocb *);

static inline int do_queue(pioscope_target *target, struct aiocb *cb)
{
    pioscope_call call;
    queue_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(cb);
    int err = errno;
    pioscope_stop(&call);
    pioscope_event ev = {0};
    if (call.recording) ev = queued_event(target->func, cb, r, err);
    pioscope_leave(&call, &ev);
    errno = err;
    return r;
}

/* aio_return: the call, and inside it the completion of the request it returns. */
typedef ssize_t return_fn(struct aiocb *);

static inline ssize_t do_return(pioscope_target *target, struct aiocb *cb)
{
    pioscope_call call;
    return_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    ssize_t r = real(cb);
    int err = errno;
    aio_slot request;
    int tracked = request_take(cb, &request);
    pioscope_event ev = {0};
    if (call.recording) {
        ev.func = target->func;
        ev.object = pioscope_fd_file(cb->aio_fildes);
        ev.result = r;
        ev.error = r < 0 ? err : 0;
        if (tracked) {
            /* The error of the request is aio_error's, which aio_return no longer reports. */
            pioscope_event done = {0};
            done.func = PIOSCOPE_FN_tracer_complete;
            done.flags = PIOSCOPE_F_COMPLETION;
            done.object = request.object;
            done.offset = request.offset;
            done.link = request.id;
            done.size = r > 0 ? (uint64_t)r : 0;
            done.result = r;
            done.error = ev.error;
            pioscope_record_instant(&done); /* before the call ends: inside it, one level down */
        }
    }
    pioscope_leave(&call, &ev);
    errno = err;
    return r;
}

/* aio_error: result = the request's status (0 done, or its error number). A poll that finds
 * the request still in progress is not recorded: ROMIO's MPI_Wait polls in a busy loop (one
 * record per turn would swamp the trace), and the waiting is the MPI_Wait's. */
typedef int error_fn(const struct aiocb *);

static inline int do_error(pioscope_target *target, const struct aiocb *cb)
{
    pioscope_call call;
    error_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(cb);
    int err = errno;
    if (r == EINPROGRESS) call.recording = 0;
    pioscope_record(&call, target->func, pioscope_fd_file(cb->aio_fildes), 0, 0, r, r < 0, err,
                    0);
    errno = err;
    return r;
}

/* aio_suspend: size = the number of requests waited for. */
typedef int suspend_fn(const struct aiocb *const[], int, const struct timespec *);

static inline int do_suspend(pioscope_target *target, const struct aiocb *const list[], int n,
                             const struct timespec *timeout)
{
    pioscope_call call;
    suspend_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(list, n, timeout);
    int err = errno;
    uint32_t object = 0;
    for (int i = 0; list && i < n && !object; i++)
        if (list[i]) object = pioscope_fd_file(list[i]->aio_fildes);
    pioscope_record(&call, target->func, object, 0, n > 0 ? (uint64_t)n : 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

/* aio_fsync: queued like a read or write (its aio_return completes it), size 0. */
typedef int fsync_fn(int, struct aiocb *);

static inline int do_fsync(pioscope_target *target, int op, struct aiocb *cb)
{
    pioscope_call call;
    fsync_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(op, cb);
    int err = errno;
    pioscope_stop(&call);
    pioscope_event ev = {0};
    if (call.recording) {
        ev = queued_event(target->func, cb, r, err);
        ev.offset = 0;
        ev.size = 0;
        ev.result = r;
    }
    pioscope_leave(&call, &ev);
    errno = err;
    return r;
}

/* aio_cancel: object = the file of fd; result = AIO_CANCELED, AIO_NOTCANCELED, AIO_ALLDONE. */
typedef int cancel_fn(int, struct aiocb *);

static inline int do_cancel(pioscope_target *target, int fd, struct aiocb *cb)
{
    pioscope_call call;
    cancel_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(fd, cb);
    int err = errno;
    pioscope_record(&call, target->func, pioscope_fd_file(fd), 0, 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

/* lio_listio: the call (size = the entries' bytes), and inside it one queued aio_read or
 * aio_write child per read or write entry (read_func, write_func), when the list was queued.
 * With LIO_WAIT the requests are done when it returns; their aio_return completes them. */
typedef int listio_fn(int, struct aiocb *const[], int, struct sigevent *);

static inline int do_listio(pioscope_target *target, uint16_t read_func, uint16_t write_func,
                            int mode, struct aiocb *const list[], int n, struct sigevent *sev)
{
    pioscope_call call;
    listio_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(mode, list, n, sev);
    int err = errno;
    pioscope_stop(&call);
    pioscope_event ev = {0};
    if (call.recording) {
        for (int i = 0; list && i < n; i++) {
            const struct aiocb *cb = list[i];
            if (!cb || (cb->aio_lio_opcode != LIO_READ && cb->aio_lio_opcode != LIO_WRITE))
                continue;
            ev.size += cb->aio_nbytes;
            if (!ev.object) ev.object = pioscope_fd_file(cb->aio_fildes);
            if (r != 0) continue;
            uint16_t func = cb->aio_lio_opcode == LIO_READ ? read_func : write_func;
            pioscope_event child = queued_event(func, cb, 0, 0);
            pioscope_record_instant(&child);
        }
        ev.func = target->func;
        ev.result = r;
        ev.error = r < 0 ? err : 0;
    }
    pioscope_leave(&call, &ev);
    errno = err;
    return r;
}

/* ---- the exported functions ---- */

PIOSCOPE_WRAPPER(aio_read, int, aio_read, (struct aiocb *cb))
{
    return do_queue(&target_aio_read, cb);
}

PIOSCOPE_WRAPPER(aio_read64, int, aio_read64, (struct aiocb64 *cb))
{
    return do_queue(&target_aio_read64, (struct aiocb *)cb);
}

PIOSCOPE_WRAPPER(aio_write, int, aio_write, (struct aiocb *cb))
{
    return do_queue(&target_aio_write, cb);
}

PIOSCOPE_WRAPPER(aio_write64, int, aio_write64, (struct aiocb64 *cb))
{
    return do_queue(&target_aio_write64, (struct aiocb *)cb);
}

PIOSCOPE_WRAPPER(aio_return, ssize_t, aio_return, (struct aiocb *cb))
{
    return do_return(&target_aio_return, cb);
}

PIOSCOPE_WRAPPER(aio_return64, ssize_t, aio_return64, (struct aiocb64 *cb))
{
    return do_return(&target_aio_return64, (struct aiocb *)cb);
}

PIOSCOPE_WRAPPER(aio_error, int, aio_error, (const struct aiocb *cb))
{
    return do_error(&target_aio_error, cb);
}

PIOSCOPE_WRAPPER(aio_error64, int, aio_error64, (const struct aiocb64 *cb))
{
    return do_error(&target_aio_error64, (const struct aiocb *)cb);
}

PIOSCOPE_WRAPPER(aio_suspend, int, aio_suspend, (const struct aiocb *const list[], int n,
                                                 const struct timespec *timeout))
{
    return do_suspend(&target_aio_suspend, list, n, timeout);
}

PIOSCOPE_WRAPPER(aio_suspend64, int, aio_suspend64, (const struct aiocb64 *const list[], int n,
                                                     const struct timespec *timeout))
{
    return do_suspend(&target_aio_suspend64, (const struct aiocb *const *)list, n, timeout);
}

PIOSCOPE_WRAPPER(aio_fsync, int, aio_fsync, (int op, struct aiocb *cb))
{
    return do_fsync(&target_aio_fsync, op, cb);
}

PIOSCOPE_WRAPPER(aio_fsync64, int, aio_fsync64, (int op, struct aiocb64 *cb))
{
    return do_fsync(&target_aio_fsync64, op, (struct aiocb *)cb);
}

PIOSCOPE_WRAPPER(aio_cancel, int, aio_cancel, (int fd, struct aiocb *cb))
{
    return do_cancel(&target_aio_cancel, fd, cb);
}

PIOSCOPE_WRAPPER(aio_cancel64, int, aio_cancel64, (int fd, struct aiocb64 *cb))
{
    return do_cancel(&target_aio_cancel64, fd, (struct aiocb *)cb);
}

PIOSCOPE_WRAPPER(lio_listio, int, lio_listio, (int mode, struct aiocb *const list[], int n,
                                               struct sigevent *sev))
{
    return do_listio(&target_lio_listio, PIOSCOPE_FN_aio_read, PIOSCOPE_FN_aio_write, mode, list,
                     n, sev);
}

PIOSCOPE_WRAPPER(lio_listio64, int, lio_listio64, (int mode, struct aiocb64 *const list[], int n,
                                                   struct sigevent *sev))
{
    return do_listio(&target_lio_listio64, PIOSCOPE_FN_aio_read64, PIOSCOPE_FN_aio_write64, mode,
                     (struct aiocb *const *)list, n, sev);
}
