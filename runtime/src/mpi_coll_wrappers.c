/* mpi_coll_wrappers.c: MPI collective wrappers (Barrier ... Exscan). object = communicator,
 * offset = root (world rank, or none) << 32 | communicator size, size = bytes this rank
 * contributes (see coll_* below), flags PIOSCOPE_F_COLLECTIVE. */
#include "mpi_common.h"

/* What a finished collective knows after the real call; the byte count is computed by the
 * wrapper because each collective spells its buffers differently. */
typedef struct {
    pioscope_call call;
    pioscope_mpi_comm_ref ref;
    int have_ref;
} coll_op;

static inline void coll_begin(coll_op *op)
{
    pioscope_enter(&op->call);
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

static inline void coll_end(coll_op *op, uint16_t func, int rc, int root, uint64_t bytes)
{
    pioscope_event ev = {0};
    if (op->call.recording) {
        ev.func = func;
        ev.flags = PIOSCOPE_F_COLLECTIVE;
        ev.object = op->have_ref ? op->ref.object : 0;
        ev.offset = coll_offset(op, root);
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
}

static inline int64_t sum_counts(const int counts[], int n)
{
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += counts[i];
    return total;
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

#define COLL_NO_ROOT (-1)

PIOSCOPE_EXPORT int PMPI_Barrier(MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Barrier) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Barrier");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        coll_describe(&op, comm);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Barrier, rc, COLL_NO_ROOT, 0);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Barrier);

/* size = the message (count x type) on every rank, root included. */
PIOSCOPE_EXPORT int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                               MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Bcast) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Bcast");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(buffer, count, datatype, root, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        coll_describe(&op, comm);
        bytes = pioscope_mpi_type_bytes(datatype, count);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Bcast, rc, root, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Bcast);

/* Reduce, Allreduce, Scan, Exscan: size = count x type. */
typedef int (*reduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

static inline int reduction(reduce_fn real, uint16_t func, const void *sendbuf, void *recvbuf,
                            int count, MPI_Datatype datatype, MPI_Op op_, MPI_Comm comm)
{
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, recvbuf, count, datatype, op_, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        coll_describe(&op, comm);
        bytes = pioscope_mpi_type_bytes(datatype, count);
        pioscope_internal_end();
    }
    coll_end(&op, func, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_EXPORT int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op_, int root, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Reduce) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Reduce");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, recvbuf, count, datatype, op_, root, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        coll_describe(&op, comm);
        bytes = pioscope_mpi_type_bytes(datatype, count);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Reduce, rc, root, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Reduce);

PIOSCOPE_EXPORT int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Allreduce) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Allreduce");
    return reduction(real, PIOSCOPE_FN_MPI_Allreduce, sendbuf, recvbuf, count, datatype, op, comm);
}
PIOSCOPE_MPI_ALIAS(MPI_Allreduce);

PIOSCOPE_EXPORT int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Scan) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Scan");
    return reduction(real, PIOSCOPE_FN_MPI_Scan, sendbuf, recvbuf, count, datatype, op, comm);
}
PIOSCOPE_MPI_ALIAS(MPI_Scan);

PIOSCOPE_EXPORT int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Exscan) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Exscan");
    return reduction(real, PIOSCOPE_FN_MPI_Exscan, sendbuf, recvbuf, count, datatype, op, comm);
}
PIOSCOPE_MPI_ALIAS(MPI_Exscan);

/* size = sum(recvcounts) x type: the whole vector each rank contributes to. */
PIOSCOPE_EXPORT int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
                                        const int recvcounts[], MPI_Datatype datatype, MPI_Op op_,
                                        MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Reduce_scatter) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Reduce_scatter");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, recvbuf, recvcounts, datatype, op_, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm))
            bytes = pioscope_mpi_type_bytes(datatype, sum_counts(recvcounts, op.ref.size));
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Reduce_scatter, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Reduce_scatter);

/* size = recvcount x comm size x type. */
PIOSCOPE_EXPORT int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                              MPI_Datatype datatype, MPI_Op op_, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Reduce_scatter_block) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Reduce_scatter_block");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, recvbuf, recvcount, datatype, op_, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm))
            bytes = pioscope_mpi_type_bytes(datatype, (MPI_Count)recvcount * op.ref.size);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Reduce_scatter_block, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Reduce_scatter_block);

/* Gather, Gatherv: size = sendcount x sendtype (MPI_IN_PLACE at the root: its own block). */
PIOSCOPE_EXPORT int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Gather) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Gather");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm) && root != MPI_ROOT && root != MPI_PROC_NULL)
            bytes = sendbuf == MPI_IN_PLACE ? pioscope_mpi_type_bytes(recvtype, recvcount)
                                            : pioscope_mpi_type_bytes(sendtype, sendcount);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Gather, rc, root, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Gather);

PIOSCOPE_EXPORT int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Gatherv) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Gatherv");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm) && root != MPI_ROOT && root != MPI_PROC_NULL)
            bytes = sendbuf == MPI_IN_PLACE
                        ? pioscope_mpi_type_bytes(recvtype, recvcounts[op.ref.rank])
                        : pioscope_mpi_type_bytes(sendtype, sendcount);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Gatherv, rc, root, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Gatherv);

/* Scatter, Scatterv: the root's size = everything it scatters (its own block included); the
 * other ranks send nothing (0). */
PIOSCOPE_EXPORT int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Scatter) real = (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Scatter");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm) && coll_is_root(&op, root))
            bytes = pioscope_mpi_type_bytes(sendtype, (MPI_Count)sendcount * coll_peers(&op, comm));
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Scatter, rc, root, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Scatter);

PIOSCOPE_EXPORT int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                  MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Scatterv) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Scatterv");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm) && coll_is_root(&op, root))
            bytes = pioscope_mpi_type_bytes(sendtype,
                                            sum_counts(sendcounts, coll_peers(&op, comm)));
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Scatterv, rc, root, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Scatterv);

/* Allgather, Allgatherv: size = sendcount x sendtype (MPI_IN_PLACE: this rank's block). */
PIOSCOPE_EXPORT int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Allgather) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Allgather");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        coll_describe(&op, comm);
        bytes = sendbuf == MPI_IN_PLACE ? pioscope_mpi_type_bytes(recvtype, recvcount)
                                        : pioscope_mpi_type_bytes(sendtype, sendcount);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Allgather, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Allgather);

PIOSCOPE_EXPORT int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Allgatherv) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Allgatherv");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm))
            bytes = sendbuf == MPI_IN_PLACE
                        ? pioscope_mpi_type_bytes(recvtype, recvcounts[op.ref.rank])
                        : pioscope_mpi_type_bytes(sendtype, sendcount);
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Allgatherv, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Allgatherv);

/* Alltoall family: size = everything this rank sends (its own block included). */
PIOSCOPE_EXPORT int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Alltoall) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Alltoall");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm)) {
            MPI_Count n = coll_peers(&op, comm);
            bytes = sendbuf == MPI_IN_PLACE ? pioscope_mpi_type_bytes(recvtype, recvcount * n)
                                            : pioscope_mpi_type_bytes(sendtype, sendcount * n);
        }
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Alltoall, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Alltoall);

PIOSCOPE_EXPORT int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Alltoallv) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Alltoallv");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                  comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm)) {
            int n = coll_peers(&op, comm);
            bytes = sendbuf == MPI_IN_PLACE
                        ? pioscope_mpi_type_bytes(recvtype, sum_counts(recvcounts, n))
                        : pioscope_mpi_type_bytes(sendtype, sum_counts(sendcounts, n));
        }
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Alltoallv, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Alltoallv);

PIOSCOPE_EXPORT int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[], const int rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static void *real_slot;
    __typeof__(&PMPI_Alltoallw) real =
        (__typeof__(real))pioscope_resolve(&real_slot, "PMPI_Alltoallw");
    if (!real)
        return MPI_ERR_INTERN;
    coll_op op;
    coll_begin(&op);
    int rc = real(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                  recvtypes, comm);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    uint64_t bytes = 0;
    op.have_ref = 0;
    if (op.call.recording && rc == MPI_SUCCESS) {
        pioscope_internal_begin();
        if (coll_describe(&op, comm)) {
            int n = coll_peers(&op, comm);
            int in_place = sendbuf == MPI_IN_PLACE;
            for (int i = 0; i < n; i++)
                bytes += in_place ? pioscope_mpi_type_bytes(recvtypes[i], recvcounts[i])
                                  : pioscope_mpi_type_bytes(sendtypes[i], sendcounts[i]);
        }
        pioscope_internal_end();
    }
    coll_end(&op, PIOSCOPE_FN_MPI_Alltoallw, rc, COLL_NO_ROOT, bytes);
    errno = saved_errno;
    return rc;
}
PIOSCOPE_MPI_ALIAS(MPI_Alltoallw);
