/* mpi_common.h: what the MPI and MPI-IO wrapper files share: the wrapper and alias macros, small
 * helpers for record fields, and the interfaces of the communicator, request and file tables. */
#ifndef PIOSCOPE_MPI_COMMON_H
#define PIOSCOPE_MPI_COMMON_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <mpi.h>
#include "mpi_large_count.h"
#include "tracer.h"

#ifndef PIOSCOPE_EXPORT
#define PIOSCOPE_EXPORT __attribute__((visibility("default")))
#endif

/* Every MPI function is defined once under its PMPI_ name (which catches the Fortran bindings
 * and MPICH's calls to itself) and exported again under its MPI_ name by this alias. */
#define PIOSCOPE_MPI_ALIAS(name) \
    extern __typeof__(P##name) name __attribute__((alias("P" #name), visibility("default")))

/* Declares the wrapper of the recorded MPI function `name` (MPI_Send): PMPI_Send taking
 * `params` (a parenthesised parameter list, as mpi.h has it), its target (the real PMPI_Send,
 * recorded as PIOSCOPE_FN_MPI_Send) as target_MPI_Send, and MPI_Send as its alias. The body
 * follows the macro:
 *     PIOSCOPE_MPI_WRAPPER(MPI_Barrier, (MPI_Comm comm)) { ... &target_MPI_Barrier ... } */
#define PIOSCOPE_MPI_WRAPPER(name, params)                                                    \
    static pioscope_target target_##name = {NULL, "P" #name, PIOSCOPE_FN_##name};             \
    PIOSCOPE_MPI_ALIAS(name);                                                                 \
    PIOSCOPE_EXPORT int P##name params

/* A peer or root that is not a rank: MPI_PROC_NULL, MPI_ANY_SOURCE not yet resolved, a
 * communicator the tracer could not describe, a collective without root. */
#define PIOSCOPE_MPI_NO_RANK 0xFFFFFFFFu

/* The record offset of MPI point-to-point calls: peer (world rank) << 32 | tag, both as uint32. */
static inline uint64_t pioscope_mpi_peer_tag(uint32_t world_peer, int tag)
{
    return ((uint64_t)world_peer << 32) | (uint32_t)tag;
}

/* The helpers below call MPI: use them between pioscope_internal_begin/end, and only on
 * arguments the real call has just accepted (an invalid handle would reach the error handler,
 * which may abort the program). */

/* count elements of type in bytes; 0 if the size is undefined. */
static inline uint64_t pioscope_mpi_type_bytes(MPI_Datatype type, MPI_Count count)
{
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED ||
        size < 0)
        return 0;
    return (uint64_t)size * (uint64_t)count;
}

/* Bytes a completed operation transferred according to its status (any datatype). */
static inline int64_t pioscope_mpi_status_bytes(const MPI_Status *status)
{
    MPI_Count bytes = 0;
    if (PMPI_Get_elements_x(status, MPI_BYTE, &bytes) != MPI_SUCCESS || bytes == MPI_UNDEFINED)
        return -1;
    return (int64_t)bytes;
}

/* The MPI error class of a failed call's return code. */
static inline int32_t pioscope_mpi_error_class(int rc)
{
    int cls = rc;
    if (PMPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = rc;
    return cls;
}

/* A tiny spinlock for the tables' writers (inserts, removals, request bookkeeping). */
static inline void pioscope_mpi_lock(int *lock)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(lock, __ATOMIC_RELAXED))
            if (++spins % 64 == 0)
                sched_yield(); /* the holder may be descheduled on an oversubscribed node */
    }
}

static inline void pioscope_mpi_unlock(int *lock)
{
    __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* ---- mpi_clock_sync.c ---- */
/* Ping-pong against rank 0 of comm; writes one CLOCK_SYNC chunk. Collective over comm. */
void pioscope_mpi_clock_sync(MPI_Comm comm, uint32_t phase);

/* ---- mpi_comms.c: communicator descriptions and rank translation ---- */
typedef struct {
    uint32_t object;     /* interned PIOSCOPE_STRING_COMMUNICATOR description */
    int size;            /* local group size */
    int rank;            /* this process's rank in it */
    int inter;           /* 1 for an intercommunicator (peers name the remote group) */
    uint32_t slot;       /* cache slot, for pioscope_mpi_comm_world_rank */
    uint32_t generation; /* the slot's generation when this ref was taken */
} pioscope_mpi_comm_ref;

void pioscope_mpi_comms_init(void);   /* after MPI_Init (internal) */
void pioscope_mpi_comms_fini(void);   /* before MPI_Finalize */
int pioscope_mpi_world_rank(void);
/* Describes comm; returns 0 (and a zeroed ref) when MPI is not ready or comm is unusable. */
int pioscope_mpi_comm_get(MPI_Comm comm, pioscope_mpi_comm_ref *ref);
/* The MPI_COMM_WORLD rank of rank `rank` of the communicator (of its remote group for an
 * intercommunicator); PIOSCOPE_MPI_NO_RANK for MPI_PROC_NULL, MPI_ANY_SOURCE, a rank out of
 * range, or a communicator freed since the ref was taken. */
uint32_t pioscope_mpi_comm_world_rank(const pioscope_mpi_comm_ref *ref, int rank);

/* ---- mpi_requests.c: nonblocking requests and their completion ---- */
enum pioscope_mpi_request_kind {
    PIOSCOPE_MPI_REQ_SEND = 1, /* Isend, Issend */
    PIOSCOPE_MPI_REQ_RECV = 2, /* Irecv: the completion resolves source and tag */
    PIOSCOPE_MPI_REQ_FILE = 3  /* MPI_File_i*: the completion carries the bytes transferred */
};
/* Remembers a started request until a Wait/Test completes it; the completion repeats object,
 * offset (an Irecv's is replaced by the actual source and tag) and PIOSCOPE_F_OFFSET_UNKNOWN
 * from flags. comm (for an Irecv's source) may be NULL. */
void pioscope_mpi_request_track(MPI_Request request, uint64_t id, int kind, uint8_t flags,
                                uint32_t object, uint64_t offset, uint64_t size,
                                const pioscope_mpi_comm_ref *comm);

/* ---- mpi_io_handles.c: open files and collective instance numbers ---- */
typedef struct {
    int state;             /* slot state (mpi_io_handles.c) */
    MPI_File fh;
    uint32_t handle_id;    /* equal on every rank of the open: root world rank << 16 | open no. */
    uint32_t object;       /* interned path */
    int amode;
    uint32_t collectives;  /* collective calls so far on this handle (open = 0) */
    /* The split collective in flight (MPI allows one per file handle). */
    uint64_t split_link;
    uint64_t split_offset;
    uint64_t split_size;
    uint8_t split_flags;
} pioscope_mpi_file;

/* Agrees on a handle id over comm after MPI_File_open returned open_rc (every rank must call). */
uint32_t pioscope_mpi_file_open_id(MPI_Comm comm, int open_rc);
pioscope_mpi_file *pioscope_mpi_file_add(MPI_File fh, uint32_t handle_id, uint32_t object,
                                         int amode);
pioscope_mpi_file *pioscope_mpi_file_find(MPI_File fh);
void pioscope_mpi_file_remove(pioscope_mpi_file *file);
/* The link of the next collective call on the file: handle_id << 32 | call number. */
uint64_t pioscope_mpi_file_next_collective(pioscope_mpi_file *file);

/* ---- mpi_io_info.c: hints and file views ---- */
/* Writes the SETTINGS of object, as two chunks each written only when its text differs from
 * the last one written for object in this process: `extra` lines (may be NULL) with every hint
 * of MPI_File_get_info, and with_view the current view (view.* keys). Internal MPI calls. */
void pioscope_mpi_io_settings(MPI_File fh, uint32_t object, uint16_t func, uint64_t ticks,
                              const char *extra, int with_view);

#endif
