/* mpi_requests.c: the table of traced nonblocking requests (Isend/Issend/Irecv, MPI_File_i*) and
 * the Wait/Test wrappers that record each call and one tracer_complete child per traced request
 * it completed (link = the request id given at the start). */
#include <stdlib.h>
#include <string.h>
#include "mpi_common.h"

/* ---- the table: open addressing with backward-shift deletion, under a spinlock ----
 *
 * RATIONALE: a handle value does not name one request. MPICH gives every send that completes at
 * once the same built-in handle, so several live requests (of one thread or several) can share
 * a value. The table is therefore a multimap: a Wait/Test claims, per array element, the oldest
 * unclaimed entry with that value, preferring entries started by the calling thread, and drops
 * it when MPI reports the request complete (or unclaims it when not). MPI_Request_free drops
 * one too, so a freed request's entry cannot be mistaken for the next request that reuses its
 * handle. */

#define REQUEST_SLOTS 16384u /* power of two; a start that finds it full goes untracked */

typedef struct {
    int used;
    int claimed;             /* taken by a Wait/Test in progress */
    MPI_Request request;
    const void *thread;      /* the starting thread (address of one of its thread locals) */
    uint64_t id;
    uint64_t offset;
    uint64_t size;
    uint32_t object;
    uint8_t kind;
    uint8_t flags;           /* copied onto the completion: PIOSCOPE_F_OFFSET_UNKNOWN */
    pioscope_mpi_comm_ref comm;
} request_slot;

/* A traced request found in an array passed to Wait/Test, copied before the real call (which
 * overwrites the handle). */
typedef struct {
    int index;
    int done; /* MPI completed it */
    request_slot entry;
} pending;

static request_slot table[REQUEST_SLOTS];
static int table_lock;
static unsigned table_count; /* read without the lock: 0 lets Wait/Test skip the lookup */
static __thread char thread_token; /* its address names the calling thread */

static uint32_t request_hash(MPI_Request request)
{
    uint64_t key = 0;
    memcpy(&key, &request, sizeof request < sizeof key ? sizeof request : sizeof key);
    key ^= key >> 31;
    key *= 0x9e3779b97f4a7c15ULL;
    return (uint32_t)(key >> 32);
}

void pioscope_mpi_request_track(MPI_Request request, uint64_t id, int kind, uint8_t flags,
                                uint32_t object, uint64_t offset, uint64_t size,
                                const pioscope_mpi_comm_ref *comm)
{
    if (request == MPI_REQUEST_NULL)
        return;
    request_slot fresh = {1, 0, request, &thread_token, id, offset, size, object, (uint8_t)kind,
                          (uint8_t)(flags & PIOSCOPE_F_OFFSET_UNKNOWN), {0}};
    if (comm)
        fresh.comm = *comm;
    uint32_t home = request_hash(request);
    pioscope_mpi_lock(&table_lock);
    for (uint32_t i = 0; i < REQUEST_SLOTS; i++) {
        request_slot *slot = &table[(home + i) & (REQUEST_SLOTS - 1)];
        if (!slot->used) {
            *slot = fresh;
            table_count++;
            break;
        }
    }
    pioscope_mpi_unlock(&table_lock);
}

/* The slot of the oldest unclaimed entry for `request`, this thread's first; NULL if none. */
static request_slot *oldest_locked(MPI_Request request)
{
    request_slot *mine = NULL, *any = NULL;
    uint32_t home = request_hash(request);
    for (uint32_t i = 0; i < REQUEST_SLOTS; i++) {
        request_slot *slot = &table[(home + i) & (REQUEST_SLOTS - 1)];
        if (!slot->used)
            break;
        if (slot->request != request || slot->claimed)
            continue;
        if (!any || slot->id < any->id)
            any = slot;
        if (slot->thread == &thread_token && (!mine || slot->id < mine->id))
            mine = slot;
    }
    return mine ? mine : any;
}

static request_slot *find_locked(MPI_Request request, uint64_t id)
{
    uint32_t home = request_hash(request);
    for (uint32_t i = 0; i < REQUEST_SLOTS; i++) {
        request_slot *slot = &table[(home + i) & (REQUEST_SLOTS - 1)];
        if (!slot->used)
            return NULL;
        if (slot->request == request && slot->id == id)
            return slot;
    }
    return NULL;
}

/* Empties a slot; Knuth's algorithm R moves later entries back so probe chains stay intact. */
static void delete_locked(request_slot *slot)
{
    const uint32_t mask = REQUEST_SLOTS - 1;
    uint32_t hole = (uint32_t)(slot - table), next = hole;
    table_count--;
    for (;;) {
        table[hole].used = 0;
        for (;;) {
            next = (next + 1) & mask;
            if (!table[next].used)
                return;
            uint32_t want = request_hash(table[next].request) & mask;
            /* The entry at `next` may fill the hole unless its home lies cyclically in
             * (hole, next]. */
            int stays =
                hole <= next ? (hole < want && want <= next) : (hole < want || want <= next);
            if (!stays)
                break;
        }
        table[hole] = table[next];
        hole = next;
    }
}

/* After the call: drops a claimed entry whose request completed, or releases the claim. */
static void settle(const request_slot *entry, int completed)
{
    pioscope_mpi_lock(&table_lock);
    request_slot *slot = find_locked(entry->request, entry->id);
    if (slot && completed)
        delete_locked(slot);
    else if (slot)
        slot->claimed = 0;
    pioscope_mpi_unlock(&table_lock);
}

/* ---- per-thread scratch for request arrays (grows, never shrinks) ---- */

typedef struct {
    pending *pend;
    size_t pend_cap;
    MPI_Status *statuses;
    size_t status_cap;
    int busy; /* a nested Wait (a generalized request's callback) gets a private buffer */
} scratch;

static __thread scratch thread_scratch;

typedef struct {
    scratch *owner;  /* &thread_scratch, or NULL when the buffers below are private */
    pending *pend;
    MPI_Status *statuses;
    pending one;           /* for counts of 1 */
    MPI_Status one_status;
} work;

static int work_open(work *w, int count)
{
    size_t n = count > 0 ? (size_t)count : 1;
    w->owner = NULL;
    w->pend = NULL;
    w->statuses = NULL;
    if (n == 1) {
        w->pend = &w->one;
        return 1;
    }
    scratch *s = &thread_scratch;
    if (s->busy) {
        w->pend = malloc(n * sizeof *w->pend);
        return w->pend != NULL;
    }
    if (s->pend_cap < n) {
        pending *grown = realloc(s->pend, n * sizeof *grown);
        if (!grown)
            return 0;
        s->pend = grown;
        s->pend_cap = n;
    }
    s->busy = 1;
    w->owner = s;
    w->pend = s->pend;
    return 1;
}

/* Statuses to pass in place of MPI_STATUSES_IGNORE. */
static MPI_Status *work_statuses(work *w, int count)
{
    size_t n = count > 0 ? (size_t)count : 1;
    if (n == 1) {
        w->statuses = &w->one_status;
    } else if (w->owner) {
        scratch *s = w->owner;
        if (s->status_cap < n) {
            MPI_Status *grown = realloc(s->statuses, n * sizeof *grown);
            if (!grown)
                return NULL;
            s->statuses = grown;
            s->status_cap = n;
        }
        w->statuses = s->statuses;
    } else {
        w->statuses = malloc(n * sizeof *w->statuses);
    }
    if (w->statuses)
        memset(w->statuses, 0, n * sizeof *w->statuses);
    return w->statuses;
}

static void work_close(work *w)
{
    if (w->owner) {
        w->owner->busy = 0;
        return;
    }
    if (w->pend != &w->one)
        free(w->pend);
    if (w->statuses != &w->one_status)
        free(w->statuses);
}

/* Claims and copies the traced requests among requests[0..count) (in index order); returns
 * how many. Every one must be settled after the call. */
static int collect(const MPI_Request *requests, int count, pending *out)
{
    if (count <= 0 || !__atomic_load_n(&table_count, __ATOMIC_RELAXED))
        return 0;
    int found = 0;
    pioscope_mpi_lock(&table_lock);
    for (int i = 0; i < count; i++) {
        request_slot *slot =
            requests[i] != MPI_REQUEST_NULL ? oldest_locked(requests[i]) : NULL;
        if (slot) {
            slot->claimed = 1;
            out[found].index = i;
            out[found].done = 0;
            out[found].entry = *slot;
            found++;
        }
    }
    pioscope_mpi_unlock(&table_lock);
    return found;
}

static pending *find_pending(pending *pend, int n, int index)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (pend[mid].index == index)
            return &pend[mid];
        if (pend[mid].index < index)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* One traced request completed: record its completion (when recording). status may
 * be NULL when the call failed without per-request statuses. */
static void complete(pending *p, const MPI_Status *status, int call_rc, int recording)
{
    const request_slot *e = &p->entry;
    p->done = 1;
    if (!recording)
        return;
    pioscope_event ev = {0};
    ev.func = PIOSCOPE_FN_tracer_complete;
    ev.flags = PIOSCOPE_F_COMPLETION | e->flags;
    ev.object = e->object;
    ev.link = e->id;
    ev.offset = e->offset;
    pioscope_internal_begin();
    if (call_rc == MPI_ERR_IN_STATUS && status && status->MPI_ERROR != MPI_SUCCESS)
        ev.error = pioscope_mpi_error_class(status->MPI_ERROR);
    else if (call_rc != MPI_SUCCESS && call_rc != MPI_ERR_IN_STATUS)
        ev.error = pioscope_mpi_error_class(call_rc);
    int64_t bytes = (int64_t)e->size;
    if (e->kind != PIOSCOPE_MPI_REQ_SEND)
        bytes = status && !ev.error ? pioscope_mpi_status_bytes(status) : -1;
    if (e->kind == PIOSCOPE_MPI_REQ_RECV && status && !ev.error)
        ev.offset = pioscope_mpi_peer_tag(
            pioscope_mpi_comm_world_rank(&e->comm, status->MPI_SOURCE), status->MPI_TAG);
    pioscope_internal_end();
    ev.size = bytes > 0 ? (uint64_t)bytes : 0;
    ev.result = ev.error ? -1 : bytes;
    pioscope_record_instant(&ev); /* outside the internal bracket, which would drop it */
}

/* After the call: every collected request whose handle MPI set to MPI_REQUEST_NULL completed;
 * its status is statuses[index] (statuses may be NULL). */
static void complete_by_index(pending *pend, int n, const MPI_Request *after,
                              const MPI_Status *statuses, int rc, int recording)
{
    int have_status = statuses && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS);
    for (int k = 0; k < n; k++)
        if (after[pend[k].index] == MPI_REQUEST_NULL)
            complete(&pend[k], have_status ? &statuses[pend[k].index] : NULL, rc, recording);
}

/* After Waitsome/Testsome: statuses[k] belongs to requests[indices[k]]. */
static void complete_some(pending *pend, int n, int outcount, const int *indices,
                          const MPI_Status *statuses, int rc, int recording)
{
    if (outcount == MPI_UNDEFINED)
        return;
    int have_status = statuses && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS);
    for (int k = 0; k < outcount; k++) {
        pending *p = find_pending(pend, n, indices[k]);
        if (p)
            complete(p, have_status ? &statuses[k] : NULL, rc, recording);
    }
}

/* After Waitany/Testany: the one request at index completed (if index is defined). */
static void complete_one(pending *pend, int n, int index, const MPI_Status *status, int rc,
                         int recording)
{
    if (index == MPI_UNDEFINED)
        return;
    pending *p = find_pending(pend, n, index);
    if (p)
        complete(p, rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS ? status : NULL, rc, recording);
}

/* After the call, for every claimed request: drop it if it completed, else release it. */
static void settle_all(const pending *pend, int n)
{
    for (int k = 0; k < n; k++)
        settle(&pend[k].entry, pend[k].done);
}

static void wait_event(pioscope_event *ev, uint16_t func, int count, int rc, int64_t completed)
{
    ev->func = func;
    ev->size = count > 0 ? (uint64_t)count : 0;
    ev->result = completed;
    if (rc != MPI_SUCCESS) {
        pioscope_internal_begin();
        ev->error = pioscope_mpi_error_class(rc);
        pioscope_internal_end();
        ev->result = -1;
    }
}

/* ---- the wrappers ----
 * A Wait and its Test share a helper: `testing` calls through the Test prototype (which adds
 * the flag) and completes requests only when MPI set the flag. */

typedef __typeof__(PMPI_Wait) wait_fn;
typedef __typeof__(PMPI_Test) test_fn;
typedef __typeof__(PMPI_Waitall) waitall_fn;
typedef __typeof__(PMPI_Testall) testall_fn;
typedef __typeof__(PMPI_Waitany) waitany_fn;
typedef __typeof__(PMPI_Testany) testany_fn;
typedef __typeof__(PMPI_Waitsome) waitsome_fn; /* Testsome */

/* Before the call: claims the traced requests among requests[0..count); returns how many. */
static inline int wait_collect(work *w, const MPI_Request *requests, int count)
{
    return work_open(w, count) ? collect(requests, count, w->pend) : 0;
}

/* The status to pass for one request: ours when the program ignores it and a traced request
 * needs it (its byte count, an Irecv's source). */
static inline MPI_Status *wait_status(work *w, int n, MPI_Status *status)
{
    if (!n || status != MPI_STATUS_IGNORE)
        return status;
    memset(&w->one_status, 0, sizeof w->one_status);
    return &w->one_status;
}

/* The same for an array of statuses. */
static inline MPI_Status *wait_statuses(work *w, int n, int count, MPI_Status *statuses)
{
    if (!n || statuses != MPI_STATUSES_IGNORE)
        return statuses;
    return work_statuses(w, count) ? w->statuses : MPI_STATUSES_IGNORE;
}

/* After the completions: releases the claims and records the call (size = requests passed,
 * result = requests completed). */
static inline void wait_finish(pioscope_call *call, work *w, int n, uint16_t func, int count,
                               int rc, int64_t completed)
{
    pioscope_event ev = {0};
    settle_all(w->pend, n);
    if (call->recording)
        wait_event(&ev, func, count, rc, completed);
    work_close(w);
    pioscope_leave(call, &ev);
}

/* Wait, Test. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_wait(pioscope_target *target, int testing, MPI_Request *request, int *flag,
                          MPI_Status *status)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    work w;
    int n = wait_collect(&w, request, 1);
    MPI_Status *st = wait_status(&w, n, status);
    pioscope_call call;
    pioscope_enter(&call);
    int rc = testing ? ((test_fn *)real)(request, flag, st) : ((wait_fn *)real)(request, st);
    int saved_errno = errno;
    int done = !testing || (rc == MPI_SUCCESS && *flag);
    if (done)
        complete_by_index(w.pend, n, request, st == MPI_STATUS_IGNORE ? NULL : st, rc,
                          call.recording);
    wait_finish(&call, &w, n, target->func, 1, rc, done);
    errno = saved_errno;
    return rc;
}

/* Waitall, Testall. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_waitall(pioscope_target *target, int testing, int count,
                             MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    work w;
    int n = wait_collect(&w, requests, count);
    MPI_Status *st = wait_statuses(&w, n, count, statuses);
    pioscope_call call;
    pioscope_enter(&call);
    int rc = testing ? ((testall_fn *)real)(count, requests, flag, st)
                     : ((waitall_fn *)real)(count, requests, st);
    int saved_errno = errno;
    if (!testing || ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *flag))
        complete_by_index(w.pend, n, requests, st == MPI_STATUSES_IGNORE ? NULL : st, rc,
                          call.recording);
    wait_finish(&call, &w, n, target->func, count, rc,
                !testing || (rc == MPI_SUCCESS && *flag) ? count : 0);
    errno = saved_errno;
    return rc;
}

/* Waitany, Testany: the one request at *indx completed (if it is defined). */
PIOSCOPE_ALWAYS_INLINE
static inline int do_waitany(pioscope_target *target, int testing, int count,
                             MPI_Request requests[], int *indx, int *flag, MPI_Status *status)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    work w;
    int n = wait_collect(&w, requests, count);
    MPI_Status *st = wait_status(&w, n, status);
    pioscope_call call;
    pioscope_enter(&call);
    int rc = testing ? ((testany_fn *)real)(count, requests, indx, flag, st)
                     : ((waitany_fn *)real)(count, requests, indx, st);
    int saved_errno = errno;
    int done = rc == MPI_SUCCESS && (!testing || *flag) && *indx != MPI_UNDEFINED;
    if (done)
        complete_one(w.pend, n, *indx, st == MPI_STATUS_IGNORE ? NULL : st, rc, call.recording);
    wait_finish(&call, &w, n, target->func, count, rc, done);
    errno = saved_errno;
    return rc;
}

/* Waitsome, Testsome (one prototype). */
PIOSCOPE_ALWAYS_INLINE
static inline int do_waitsome(pioscope_target *target, int incount, MPI_Request requests[],
                              int *outcount, int indices[], MPI_Status statuses[])
{
    waitsome_fn *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    work w;
    int n = wait_collect(&w, requests, incount);
    MPI_Status *st = wait_statuses(&w, n, incount, statuses);
    pioscope_call call;
    pioscope_enter(&call);
    int rc = real(incount, requests, outcount, indices, st);
    int saved_errno = errno;
    int ok = rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS;
    if (ok)
        complete_some(w.pend, n, *outcount, indices, st == MPI_STATUSES_IGNORE ? NULL : st, rc,
                      call.recording);
    wait_finish(&call, &w, n, target->func, incount, rc,
                ok && *outcount != MPI_UNDEFINED ? *outcount : 0);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_Wait, (MPI_Request *request, MPI_Status *status))
{
    return do_wait(&target_MPI_Wait, 0, request, NULL, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_Test, (MPI_Request *request, int *flag, MPI_Status *status))
{
    return do_wait(&target_MPI_Test, 1, request, flag, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_Waitall, (int count, MPI_Request array_of_requests[],
                                   MPI_Status array_of_statuses[]))
{
    return do_waitall(&target_MPI_Waitall, 0, count, array_of_requests, NULL, array_of_statuses);
}

PIOSCOPE_MPI_WRAPPER(MPI_Testall, (int count, MPI_Request array_of_requests[], int *flag,
                                   MPI_Status array_of_statuses[]))
{
    return do_waitall(&target_MPI_Testall, 1, count, array_of_requests, flag, array_of_statuses);
}

PIOSCOPE_MPI_WRAPPER(MPI_Waitany, (int count, MPI_Request array_of_requests[], int *indx,
                                   MPI_Status *status))
{
    return do_waitany(&target_MPI_Waitany, 0, count, array_of_requests, indx, NULL, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_Testany, (int count, MPI_Request array_of_requests[], int *indx,
                                   int *flag, MPI_Status *status))
{
    return do_waitany(&target_MPI_Testany, 1, count, array_of_requests, indx, flag, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_Waitsome, (int incount, MPI_Request array_of_requests[], int *outcount,
                                    int array_of_indices[], MPI_Status array_of_statuses[]))
{
    return do_waitsome(&target_MPI_Waitsome, incount, array_of_requests, outcount,
                       array_of_indices, array_of_statuses);
}

PIOSCOPE_MPI_WRAPPER(MPI_Testsome, (int incount, MPI_Request array_of_requests[], int *outcount,
                                    int array_of_indices[], MPI_Status array_of_statuses[]))
{
    return do_waitsome(&target_MPI_Testsome, incount, array_of_requests, outcount,
                       array_of_indices, array_of_statuses);
}

/* Not recorded (not in functions.def, so not a PIOSCOPE_MPI_WRAPPER): a freed request's entry
 * must go, or the next request that MPI gives the same handle would be matched with it. */
static void *real_request_free;
PIOSCOPE_EXPORT int PMPI_Request_free(MPI_Request *request)
{
    __typeof__(&PMPI_Request_free) real =
        pioscope_resolve(&real_request_free, "PMPI_Request_free");
    if (!real)
        return MPI_ERR_INTERN;
    pending p;
    int n = collect(request, 1, &p);
    int rc = real(request);
    int saved_errno = errno;
    p.done = rc == MPI_SUCCESS;
    settle_all(&p, n);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Request_free);
