/* mpi_coll_wrappers.c: MPI collective wrappers (Barrier ... Exscan, and the MPI-4 large-count
 * _c forms of all but Barrier). object = communicator,
 * offset = root (world rank, or none) << 32 | communicator size, size = bytes this rank
 * contributes (see coll_bytes below), flags PIOSCOPE_F_COLLECTIVE. */
#include "mpi_common.h"

/* The arguments a collective's size is computed from; those a function does not have are 0. */
typedef struct {
    MPI_Count count;           /* Bcast, the reductions (Reduce_scatter_block: its recvcount) */
    MPI_Datatype datatype;     /* ... and their datatype (Reduce_scatter's too) */
    const void *sendbuf;
    MPI_Count sendcount, recvcount;
    MPI_Datatype sendtype, recvtype;
    const void *sendcounts, *recvcounts; /* int[], or MPI_Count[] when large */
    const MPI_Datatype *sendtypes, *recvtypes;
    int large;                 /* an MPI-4 _c form: the count arrays are MPI_Count[] */
} coll_args;

/* One collective in flight: what the wrapper passes in (comm, root, args), what the call and
 * the communicator's description add. */
typedef struct {
    MPI_Comm comm;
    int root;                  /* COLL_NO_ROOT for a collective without root */
    coll_args args;
    pioscope_target *target;
    pioscope_call call;
    pioscope_mpi_comm_ref ref;
    int have_ref;
} coll_op;

#define COLL_NO_ROOT (-1)

/* Resolves the real collective and, when there is one, starts the traced call. */
static inline void *coll_begin(coll_op *op, pioscope_target *target)
{
    op->target = target;
    return pioscope_begin(&op->call, target);
}

/* Between internal_begin/end, after a successful call: describes the communicator. */
static inline int coll_describe(coll_op *op, MPI_Comm comm)
{
    op->have_ref = pioscope_mpi_comm_get(comm, &op->ref);
    return op->have_ref;
}

/* root < 0: no root. On an intercommunicator MPI_ROOT is this process. */
static inline uint64_t coll_offset(const coll_op *op, int root)
{
    uint32_t world = PIOSCOPE_MPI_NO_RANK;
    if (op->have_ref && root == MPI_ROOT)
        world = (uint32_t)pioscope_mpi_world_rank();
    else if (op->have_ref && root >= 0)
        world = pioscope_mpi_comm_world_rank(&op->ref, root);
    return ((uint64_t)world << 32) | (uint32_t)(op->have_ref ? op->ref.size : 0);
}

/* Is this process the root of a rooted collective? */
static inline int coll_is_root(const coll_op *op, int root)
{
    return op->have_ref && (op->ref.inter ? root == MPI_ROOT : root == op->ref.rank);
}

/* Entry i of a count array (sendcounts, recvcounts) of the call. */
static inline MPI_Count count_at(const coll_args *a, const void *counts, int i)
{
    return a->large ? ((const MPI_Count *)counts)[i] : ((const int *)counts)[i];
}

static inline MPI_Count sum_counts(const coll_args *a, const void *counts, int n)
{
    MPI_Count total = 0;
    for (int i = 0; i < n; i++)
        total += count_at(a, counts, i);
    return total;
}

/* The int-count function whose buffers a collective spells: itself, or for an MPI-4 _c form
 * its int-count twin (same arguments, MPI_Count counts). */
static inline uint16_t coll_shape(uint16_t func)
{
    switch (func) {
    case PIOSCOPE_FN_MPI_Bcast_c: return PIOSCOPE_FN_MPI_Bcast;
    case PIOSCOPE_FN_MPI_Reduce_c: return PIOSCOPE_FN_MPI_Reduce;
    case PIOSCOPE_FN_MPI_Allreduce_c: return PIOSCOPE_FN_MPI_Allreduce;
    case PIOSCOPE_FN_MPI_Gather_c: return PIOSCOPE_FN_MPI_Gather;
    case PIOSCOPE_FN_MPI_Gatherv_c: return PIOSCOPE_FN_MPI_Gatherv;
    case PIOSCOPE_FN_MPI_Scatter_c: return PIOSCOPE_FN_MPI_Scatter;
    case PIOSCOPE_FN_MPI_Scatterv_c: return PIOSCOPE_FN_MPI_Scatterv;
    case PIOSCOPE_FN_MPI_Allgather_c: return PIOSCOPE_FN_MPI_Allgather;
    case PIOSCOPE_FN_MPI_Allgatherv_c: return PIOSCOPE_FN_MPI_Allgatherv;
    case PIOSCOPE_FN_MPI_Alltoall_c: return PIOSCOPE_FN_MPI_Alltoall;
    case PIOSCOPE_FN_MPI_Alltoallv_c: return PIOSCOPE_FN_MPI_Alltoallv;
    case PIOSCOPE_FN_MPI_Alltoallw_c: return PIOSCOPE_FN_MPI_Alltoallw;
    case PIOSCOPE_FN_MPI_Reduce_scatter_c: return PIOSCOPE_FN_MPI_Reduce_scatter;
    case PIOSCOPE_FN_MPI_Reduce_scatter_block_c: return PIOSCOPE_FN_MPI_Reduce_scatter_block;
    case PIOSCOPE_FN_MPI_Scan_c: return PIOSCOPE_FN_MPI_Scan;
    case PIOSCOPE_FN_MPI_Exscan_c: return PIOSCOPE_FN_MPI_Exscan;
    default: return func;
    }
}

/* Local size for an intracommunicator, remote size for an intercommunicator (the number of
 * entries in the count arrays of the v-variants). */
static inline int coll_peers(const coll_op *op, MPI_Comm comm)
{
    int n = op->ref.size;
    if (op->ref.inter)
        PMPI_Comm_remote_size(comm, &n);
    return n;
}

/* The record's size: the bytes this rank contributes, as each collective spells its buffers
 * (func: its coll_shape). Between internal_begin/end, after coll_describe. */
static inline uint64_t coll_bytes(uint16_t func, const coll_op *op)
{
    const coll_args *a = &op->args;
    MPI_Comm comm = op->comm;
    int root = op->root;
    int in_place = a->sendbuf == MPI_IN_PLACE;
    switch (func) {
    /* Bcast: the message (count x type) on every rank, root included. Reduce, Allreduce, Scan,
     * Exscan: count x type. */
    case PIOSCOPE_FN_MPI_Bcast:
    case PIOSCOPE_FN_MPI_Reduce:
    case PIOSCOPE_FN_MPI_Allreduce:
    case PIOSCOPE_FN_MPI_Scan:
    case PIOSCOPE_FN_MPI_Exscan:
        return pioscope_mpi_type_bytes(a->datatype, a->count);
    /* sum(recvcounts) x type: the whole vector each rank contributes to. */
    case PIOSCOPE_FN_MPI_Reduce_scatter:
        if (!op->have_ref)
            return 0;
        return pioscope_mpi_type_bytes(a->datatype, sum_counts(a, a->recvcounts, op->ref.size));
    /* recvcount x comm size x type. */
    case PIOSCOPE_FN_MPI_Reduce_scatter_block:
        if (!op->have_ref)
            return 0;
        return pioscope_mpi_type_bytes(a->datatype, a->count * op->ref.size);
    /* Gather, Gatherv: sendcount x sendtype (MPI_IN_PLACE at the root: its own block). */
    case PIOSCOPE_FN_MPI_Gather:
        if (!op->have_ref || root == MPI_ROOT || root == MPI_PROC_NULL)
            return 0;
        return in_place ? pioscope_mpi_type_bytes(a->recvtype, a->recvcount)
                        : pioscope_mpi_type_bytes(a->sendtype, a->sendcount);
    case PIOSCOPE_FN_MPI_Gatherv:
        if (!op->have_ref || root == MPI_ROOT || root == MPI_PROC_NULL)
            return 0;
        return in_place ? pioscope_mpi_type_bytes(a->recvtype, count_at(a, a->recvcounts,
                                                                        op->ref.rank))
                        : pioscope_mpi_type_bytes(a->sendtype, a->sendcount);
    /* Scatter, Scatterv: the root's size = everything it scatters (its own block included);
     * the other ranks send nothing (0). */
    case PIOSCOPE_FN_MPI_Scatter:
        if (!coll_is_root(op, root))
            return 0;
        return pioscope_mpi_type_bytes(a->sendtype, a->sendcount * coll_peers(op, comm));
    case PIOSCOPE_FN_MPI_Scatterv:
        if (!coll_is_root(op, root))
            return 0;
        return pioscope_mpi_type_bytes(a->sendtype,
                                       sum_counts(a, a->sendcounts, coll_peers(op, comm)));
    /* Allgather, Allgatherv: sendcount x sendtype (MPI_IN_PLACE: this rank's block). */
    case PIOSCOPE_FN_MPI_Allgather:
        return in_place ? pioscope_mpi_type_bytes(a->recvtype, a->recvcount)
                        : pioscope_mpi_type_bytes(a->sendtype, a->sendcount);
    case PIOSCOPE_FN_MPI_Allgatherv:
        if (!op->have_ref)
            return 0;
        return in_place ? pioscope_mpi_type_bytes(a->recvtype, count_at(a, a->recvcounts,
                                                                        op->ref.rank))
                        : pioscope_mpi_type_bytes(a->sendtype, a->sendcount);
    /* Alltoall family: everything this rank sends (its own block included). */
    case PIOSCOPE_FN_MPI_Alltoall: {
        if (!op->have_ref)
            return 0;
        MPI_Count n = coll_peers(op, comm);
        return in_place ? pioscope_mpi_type_bytes(a->recvtype, a->recvcount * n)
                        : pioscope_mpi_type_bytes(a->sendtype, a->sendcount * n);
    }
    case PIOSCOPE_FN_MPI_Alltoallv: {
        if (!op->have_ref)
            return 0;
        int n = coll_peers(op, comm);
        return in_place ? pioscope_mpi_type_bytes(a->recvtype, sum_counts(a, a->recvcounts, n))
                        : pioscope_mpi_type_bytes(a->sendtype, sum_counts(a, a->sendcounts, n));
    }
    case PIOSCOPE_FN_MPI_Alltoallw: {
        if (!op->have_ref)
            return 0;
        int n = coll_peers(op, comm);
        uint64_t bytes = 0;
        for (int i = 0; i < n; i++)
            bytes += in_place
                         ? pioscope_mpi_type_bytes(a->recvtypes[i], count_at(a, a->recvcounts, i))
                         : pioscope_mpi_type_bytes(a->sendtypes[i], count_at(a, a->sendcounts, i));
        return bytes;
    }
    default: /* Barrier */
        return 0;
    }
}

/* After the real call returned rc: saves errno, takes the end time, describes the
 * communicator, sizes the call, records it, restores errno and returns rc. */
static inline int coll_end(coll_op *op, int rc)
{
    int saved_errno = errno;
    pioscope_stop(&op->call);
    uint16_t func = op->target->func;
    uint64_t bytes = 0;
    op->have_ref = 0;
    if (op->call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        coll_describe(op, op->comm);
        bytes = coll_bytes(coll_shape(func), op);
        pioscope_internal_end();
    }
    pioscope_event ev = {0};
    if (op->call.recording) {
        ev.func = func;
        ev.flags = PIOSCOPE_F_COLLECTIVE;
        ev.object = op->have_ref ? op->ref.object : 0;
        ev.offset = coll_offset(op, op->root);
        ev.size = bytes;
        ev.result = (int64_t)bytes;
        if (rc != MPI_SUCCESS) {
            pioscope_internal_begin();
            ev.error = pioscope_mpi_error_class(rc);
            pioscope_internal_end();
            ev.result = -1;
        }
    }
    pioscope_leave(&op->call, &ev);
    errno = saved_errno;
    return rc;
}

/* ---- one helper per signature that several functions share ---- */

/* The MPI-4 large-count form (_c) of a function differs only in its counts, MPI_Count: the
 * helper takes them as MPI_Count and calls through the prototype `width` names. */
enum coll_width { COLL_INT, COLL_LARGE };

typedef __typeof__(PMPI_Allreduce) allreduce_fn;
typedef __typeof__(PMPI_Gather) gather_fn;
typedef __typeof__(PMPI_Allgather) allgather_fn;
typedef __typeof__(PMPI_Allreduce_c) allreduce_c_fn;
typedef __typeof__(PMPI_Gather_c) gather_c_fn;
typedef __typeof__(PMPI_Allgather_c) allgather_c_fn;

/* Allreduce, Scan, Exscan, Reduce_scatter_block (count: its recvcount). */
static inline int do_allreduce(pioscope_target *target, int width, const void *sendbuf,
                               void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Op reduction, MPI_Comm comm)
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT,
                  .args = {.count = count, .datatype = datatype}};
    void *real = coll_begin(&op, target);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = width == COLL_LARGE
                 ? ((allreduce_c_fn *)real)(sendbuf, recvbuf, count, datatype, reduction, comm)
                 : ((allreduce_fn *)real)(sendbuf, recvbuf, (int)count, datatype, reduction,
                                          comm);
    return coll_end(&op, rc);
}

/* Gather, Scatter. */
static inline int do_gather(pioscope_target *target, int width, const void *sendbuf,
                            MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    coll_op op = {.comm = comm, .root = root,
                  .args = {.sendbuf = sendbuf, .sendcount = sendcount, .recvcount = recvcount,
                           .sendtype = sendtype, .recvtype = recvtype}};
    void *real = coll_begin(&op, target);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = width == COLL_LARGE
                 ? ((gather_c_fn *)real)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, root, comm)
                 : ((gather_fn *)real)(sendbuf, (int)sendcount, sendtype, recvbuf,
                                       (int)recvcount, recvtype, root, comm);
    return coll_end(&op, rc);
}

/* Allgather, Alltoall. */
static inline int do_allgather(pioscope_target *target, int width, const void *sendbuf,
                               MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT,
                  .args = {.sendbuf = sendbuf, .sendcount = sendcount, .recvcount = recvcount,
                           .sendtype = sendtype, .recvtype = recvtype}};
    void *real = coll_begin(&op, target);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = width == COLL_LARGE
                 ? ((allgather_c_fn *)real)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm)
                 : ((allgather_fn *)real)(sendbuf, (int)sendcount, sendtype, recvbuf,
                                          (int)recvcount, recvtype, comm);
    return coll_end(&op, rc);
}

/* ---- the exported functions ---- */

PIOSCOPE_MPI_WRAPPER(MPI_Barrier, (MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT};
    __typeof__(&PMPI_Barrier) real = coll_begin(&op, &target_MPI_Barrier);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Bcast, (void *buffer, int count, MPI_Datatype datatype, int root,
                                 MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root, .args = {.count = count, .datatype = datatype}};
    __typeof__(&PMPI_Bcast) real = coll_begin(&op, &target_MPI_Bcast);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(buffer, count, datatype, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Reduce, (const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op reduction, int root,
                                  MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root, .args = {.count = count, .datatype = datatype}};
    __typeof__(&PMPI_Reduce) real = coll_begin(&op, &target_MPI_Reduce);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, recvbuf, count, datatype, reduction, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Allreduce, (const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Allreduce, COLL_INT, sendbuf, recvbuf, count, datatype, op,
                        comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Scan, (const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Scan, COLL_INT, sendbuf, recvbuf, count, datatype, op, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Exscan, (const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Exscan, COLL_INT, sendbuf, recvbuf, count, datatype, op, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Reduce_scatter, (const void *sendbuf, void *recvbuf,
                                          const int recvcounts[], MPI_Datatype datatype,
                                          MPI_Op reduction, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT,
                  .args = {.datatype = datatype, .recvcounts = recvcounts}};
    __typeof__(&PMPI_Reduce_scatter) real = coll_begin(&op, &target_MPI_Reduce_scatter);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, recvbuf, recvcounts, datatype, reduction, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Reduce_scatter_block, (const void *sendbuf, void *recvbuf,
                                                int recvcount, MPI_Datatype datatype, MPI_Op op,
                                                MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Reduce_scatter_block, COLL_INT, sendbuf, recvbuf, recvcount,
                        datatype, op, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm))
{
    return do_gather(&target_MPI_Gather, COLL_INT, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, int root, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root,
                  .args = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvtype = recvtype, .recvcounts = recvcounts}};
    __typeof__(&PMPI_Gatherv) real = coll_begin(&op, &target_MPI_Gatherv);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm))
{
    return do_gather(&target_MPI_Scatter, COLL_INT, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Scatterv, (const void *sendbuf, const int sendcounts[],
                                    const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root,
                  .args = {.sendbuf = sendbuf, .recvcount = recvcount, .sendtype = sendtype,
                           .recvtype = recvtype, .sendcounts = sendcounts}};
    __typeof__(&PMPI_Scatterv) real = coll_begin(&op, &target_MPI_Scatterv);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm))
{
    return do_allgather(&target_MPI_Allgather, COLL_INT, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, const int recvcounts[], const int displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT,
                  .args = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvtype = recvtype, .recvcounts = recvcounts}};
    __typeof__(&PMPI_Allgatherv) real = coll_begin(&op, &target_MPI_Allgatherv);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm))
{
    return do_allgather(&target_MPI_Alltoall, COLL_INT, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Alltoallv, (const void *sendbuf, const int sendcounts[],
                                     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT,
                  .args = {.sendbuf = sendbuf, .sendtype = sendtype, .recvtype = recvtype,
                           .sendcounts = sendcounts, .recvcounts = recvcounts}};
    __typeof__(&PMPI_Alltoallv) real = coll_begin(&op, &target_MPI_Alltoallv);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                  comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Alltoallw, (const void *sendbuf, const int sendcounts[],
                                     const int sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, const int recvcounts[], const int rdispls[],
                                     const MPI_Datatype recvtypes[], MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT,
                  .args = {.sendbuf = sendbuf, .sendcounts = sendcounts, .recvcounts = recvcounts,
                           .sendtypes = sendtypes, .recvtypes = recvtypes}};
    __typeof__(&PMPI_Alltoallw) real = coll_begin(&op, &target_MPI_Alltoallw);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                  recvtypes, comm);
    return coll_end(&op, rc);
}

/* ---- MPI-4 large-count forms: the same records, the counts MPI_Count, the displacements
 * MPI_Aint ---- */

PIOSCOPE_MPI_WRAPPER(MPI_Bcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                                   MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root, .args = {.large = 1, .count = count,
                                                       .datatype = datatype}};
    __typeof__(&PMPI_Bcast_c) real = coll_begin(&op, &target_MPI_Bcast_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(buffer, count, datatype, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Reduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Op reduction, int root,
                                    MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root, .args = {.large = 1, .count = count,
                                                       .datatype = datatype}};
    __typeof__(&PMPI_Reduce_c) real = coll_begin(&op, &target_MPI_Reduce_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, recvbuf, count, datatype, reduction, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Allreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Allreduce_c, COLL_LARGE, sendbuf, recvbuf, count, datatype,
                        op, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Scan_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Scan_c, COLL_LARGE, sendbuf, recvbuf, count, datatype, op,
                        comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Exscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Exscan_c, COLL_LARGE, sendbuf, recvbuf, count, datatype, op,
                        comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Reduce_scatter_c, (const void *sendbuf, void *recvbuf,
                                            const MPI_Count recvcounts[], MPI_Datatype datatype,
                                            MPI_Op reduction, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT, .args = {.large = 1, .datatype = datatype,
                                                               .recvcounts = recvcounts}};
    __typeof__(&PMPI_Reduce_scatter_c) real = coll_begin(&op, &target_MPI_Reduce_scatter_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, recvbuf, recvcounts, datatype, reduction, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Reduce_scatter_block_c, (const void *sendbuf, void *recvbuf,
                                                  MPI_Count recvcount, MPI_Datatype datatype,
                                                  MPI_Op op, MPI_Comm comm))
{
    return do_allreduce(&target_MPI_Reduce_scatter_block_c, COLL_LARGE, sendbuf, recvbuf,
                        recvcount, datatype, op, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Gather_c, (const void *sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                    MPI_Datatype recvtype, int root, MPI_Comm comm))
{
    return do_gather(&target_MPI_Gather_c, COLL_LARGE, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Gatherv_c, (const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf,
                                     const MPI_Count recvcounts[], const MPI_Aint displs[],
                                     MPI_Datatype recvtype, int root, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root, .args = {.large = 1, .sendbuf = sendbuf,
                                                       .sendcount = sendcount,
                                                       .sendtype = sendtype, .recvtype = recvtype,
                                                       .recvcounts = recvcounts}};
    __typeof__(&PMPI_Gatherv_c) real = coll_begin(&op, &target_MPI_Gatherv_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Scatter_c, (const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype recvtype, int root, MPI_Comm comm))
{
    return do_gather(&target_MPI_Scatter_c, COLL_LARGE, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Scatterv_c, (const void *sendbuf, const MPI_Count sendcounts[],
                                      const MPI_Aint displs[], MPI_Datatype sendtype,
                                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                      int root, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = root, .args = {.large = 1, .sendbuf = sendbuf,
                                                       .recvcount = recvcount,
                                                       .sendtype = sendtype, .recvtype = recvtype,
                                                       .sendcounts = sendcounts}};
    __typeof__(&PMPI_Scatterv_c) real = coll_begin(&op, &target_MPI_Scatterv_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Allgather_c, (const void *sendbuf, MPI_Count sendcount,
                                       MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                       MPI_Datatype recvtype, MPI_Comm comm))
{
    return do_allgather(&target_MPI_Allgather_c, COLL_LARGE, sendbuf, sendcount, sendtype,
                        recvbuf, recvcount, recvtype, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Allgatherv_c, (const void *sendbuf, MPI_Count sendcount,
                                        MPI_Datatype sendtype, void *recvbuf,
                                        const MPI_Count recvcounts[], const MPI_Aint displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT, .args = {.large = 1, .sendbuf = sendbuf,
                                                               .sendcount = sendcount,
                                                               .sendtype = sendtype,
                                                               .recvtype = recvtype,
                                                               .recvcounts = recvcounts}};
    __typeof__(&PMPI_Allgatherv_c) real = coll_begin(&op, &target_MPI_Allgatherv_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Alltoall_c, (const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm))
{
    return do_allgather(&target_MPI_Alltoall_c, COLL_LARGE, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[],
                                       const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                       void *recvbuf, const MPI_Count recvcounts[],
                                       const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                       MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT, .args = {.large = 1, .sendbuf = sendbuf,
                                                               .sendtype = sendtype,
                                                               .recvtype = recvtype,
                                                               .sendcounts = sendcounts,
                                                               .recvcounts = recvcounts}};
    __typeof__(&PMPI_Alltoallv_c) real = coll_begin(&op, &target_MPI_Alltoallv_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                  comm);
    return coll_end(&op, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[],
                                       const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                       void *recvbuf, const MPI_Count recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                       MPI_Comm comm))
{
    coll_op op = {.comm = comm, .root = COLL_NO_ROOT, .args = {.large = 1, .sendbuf = sendbuf,
                                                               .sendcounts = sendcounts,
                                                               .recvcounts = recvcounts,
                                                               .sendtypes = sendtypes,
                                                               .recvtypes = recvtypes}};
    __typeof__(&PMPI_Alltoallw_c) real = coll_begin(&op, &target_MPI_Alltoallw_c);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                  recvtypes, comm);
    return coll_end(&op, rc);
}
