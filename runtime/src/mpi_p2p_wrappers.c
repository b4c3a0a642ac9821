/* mpi_p2p_wrappers.c: MPI point-to-point wrappers (Send, Ssend, Bsend, Rsend, Recv, Sendrecv,
 * Isend, Issend, Irecv and their MPI-4 large-count _c forms). object = communicator,
     offset = world peer << 32 | tag, size = bytes. */
#include "mpi_common.h"

/* A send-side record: dest and tag as given, bytes of the message. */
static void send_event(pioscope_event *ev, uint16_t func, int rc, MPI_Count count,
                       MPI_Datatype type,
                       int dest, int tag, MPI_Comm comm, pioscope_mpi_comm_ref *ref)
{
    ev->func = func;
    ev->offset = pioscope_mpi_peer_tag(PIOSCOPE_MPI_NO_RANK, tag);
    if (rc != MPI_SUCCESS) {
        ev->error = pioscope_mpi_error_class(rc);
        ev->result = -1;
        return;
    }
    if (pioscope_mpi_comm_get(comm, ref)) {
        ev->object = ref->object;
        ev->offset = pioscope_mpi_peer_tag(pioscope_mpi_comm_world_rank(ref, dest), tag);
    }
    ev->size = pioscope_mpi_type_bytes(type, count);
    ev->result = (int64_t)ev->size;
}

/* A receive-side record: size = the buffer's capacity, result = bytes received, offset = the
 * actual source (world) and tag from the status. */
static void recv_event(pioscope_event *ev, uint16_t func, int rc, MPI_Count count,
                       MPI_Datatype type,
                       MPI_Comm comm, const MPI_Status *status)
{
    pioscope_mpi_comm_ref ref;
    ev->func = func;
    ev->offset = pioscope_mpi_peer_tag(PIOSCOPE_MPI_NO_RANK, MPI_ANY_TAG);
    if (rc != MPI_SUCCESS) {
        ev->error = pioscope_mpi_error_class(rc);
        ev->result = -1;
        return;
    }
    if (pioscope_mpi_comm_get(comm, &ref)) {
        ev->object = ref.object;
        ev->offset = pioscope_mpi_peer_tag(pioscope_mpi_comm_world_rank(&ref, status->MPI_SOURCE),
                                           status->MPI_TAG);
    }
    ev->size = pioscope_mpi_type_bytes(type, count);
    ev->result = pioscope_mpi_status_bytes(status);
}

/* ---- the real functions of the shared signatures, as mpi.h declares them ----
 * The MPI-4 large-count form (_c) of a function differs only in its counts, MPI_Count: the
 * helper takes them as MPI_Count and calls through the prototype `width` names. */
enum p2p_width { P2P_INT, P2P_LARGE };

typedef __typeof__(PMPI_Send) send_fn;   /* Ssend, Bsend, Rsend */
typedef __typeof__(PMPI_Isend) isend_fn; /* Issend */
typedef __typeof__(PMPI_Irecv) irecv_fn;
typedef __typeof__(PMPI_Recv) recv_fn;
typedef __typeof__(PMPI_Sendrecv) sendrecv_fn;
typedef __typeof__(PMPI_Send_c) send_c_fn;
typedef __typeof__(PMPI_Isend_c) isend_c_fn;
typedef __typeof__(PMPI_Irecv_c) irecv_c_fn;
typedef __typeof__(PMPI_Recv_c) recv_c_fn;
typedef __typeof__(PMPI_Sendrecv_c) sendrecv_c_fn;

/* Send, Ssend, Bsend, Rsend. */
static inline int do_send(pioscope_target *target, int width, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    pioscope_call call;
    void *real = pioscope_begin(&call, target);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = width == P2P_LARGE ? ((send_c_fn *)real)(buf, count, datatype, dest, tag, comm)
                                : ((send_fn *)real)(buf, (int)count, datatype, dest, tag, comm);
    int saved_errno = errno;
    pioscope_stop(&call);
    pioscope_event ev = {0};
    if (call.recording) {
        pioscope_mpi_comm_ref ref;
        pioscope_internal_begin();
        send_event(&ev, target->func, rc, count, datatype, dest, tag, comm, &ref);
        pioscope_internal_end();
    }
    pioscope_leave(&call, &ev);
    errno = saved_errno;
    return rc;
}

/* Isend, Issend (kind PIOSCOPE_MPI_REQ_SEND) and Irecv (PIOSCOPE_MPI_REQ_RECV, whose buffer is
 * not const: it came in non-const from the program). The start records the peer and tag as
 * given (an Irecv's MPI_ANY_SOURCE: no rank, MPI_ANY_TAG: -1); an Irecv's completion records
 * the actual ones. */
static inline int do_nonblocking(pioscope_target *target, int kind, int width, const void *buf,
                                 MPI_Count count, MPI_Datatype datatype, int peer, int tag,
                                 MPI_Comm comm, MPI_Request *request)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    int recv = kind == PIOSCOPE_MPI_REQ_RECV;
    pioscope_call call;
    pioscope_enter(&call);
    void *rbuf = (void *)buf;
    int rc;
    if (width == P2P_LARGE)
        rc = recv ? ((irecv_c_fn *)real)(rbuf, count, datatype, peer, tag, comm, request)
                  : ((isend_c_fn *)real)(buf, count, datatype, peer, tag, comm, request);
    else
        rc = recv ? ((irecv_fn *)real)(rbuf, (int)count, datatype, peer, tag, comm, request)
                  : ((isend_fn *)real)(buf, (int)count, datatype, peer, tag, comm, request);
    int saved_errno = errno;
    pioscope_stop(&call);
    pioscope_event ev = {0};
    if (call.recording) {
        pioscope_mpi_comm_ref ref;
        pioscope_internal_begin();
        send_event(&ev, target->func, rc, count, datatype, peer, tag, comm, &ref);
        pioscope_internal_end();
        ev.flags = PIOSCOPE_F_NONBLOCKING;
        if (rc == MPI_SUCCESS) {
            ev.link = pioscope_request_id();
            pioscope_mpi_request_track(*request, ev.link, kind, 0, ev.object, ev.offset,
                                       ev.size, recv ? &ref : NULL);
        }
    }
    pioscope_leave(&call, &ev);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_Send, (const void *buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Send, P2P_INT, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Ssend, P2P_INT, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Bsend, P2P_INT, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Rsend, P2P_INT, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Isend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm, MPI_Request *request))
{
    return do_nonblocking(&target_MPI_Isend, PIOSCOPE_MPI_REQ_SEND, P2P_INT, buf, count, datatype,
                          dest, tag, comm, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_Issend, (const void *buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request *request))
{
    return do_nonblocking(&target_MPI_Issend, PIOSCOPE_MPI_REQ_SEND, P2P_INT, buf, count,
                          datatype, dest, tag, comm, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_Irecv, (void *buf, int count, MPI_Datatype datatype, int source,
                                 int tag, MPI_Comm comm, MPI_Request *request))
{
    return do_nonblocking(&target_MPI_Irecv, PIOSCOPE_MPI_REQ_RECV, P2P_INT, buf, count, datatype,
                          source, tag, comm, request);
}

/* Recv: size = the buffer's capacity, result = bytes received. */
static inline int do_recv(pioscope_target *target, int width, void *buf, MPI_Count count,
                          MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Status *status)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    MPI_Status local; /* the source and byte count, when the program ignores the status */
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    pioscope_call call;
    pioscope_enter(&call);
    int rc = width == P2P_LARGE
                 ? ((recv_c_fn *)real)(buf, count, datatype, source, tag, comm, st)
                 : ((recv_fn *)real)(buf, (int)count, datatype, source, tag, comm, st);
    int saved_errno = errno;
    pioscope_stop(&call);
    pioscope_event ev = {0};
    if (call.recording) {
        pioscope_internal_begin();
        recv_event(&ev, target->func, rc, count, datatype, comm, st);
        pioscope_internal_end();
    }
    pioscope_leave(&call, &ev);
    errno = saved_errno;
    return rc;
}

/* The main record is the send half; the receive half is a tracer_complete child with link 0
 * (no request): offset = actual source << 32 | tag, size = result = bytes received. */
static inline int do_sendrecv(pioscope_target *target, int width, const void *sendbuf,
                              MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    pioscope_call call;
    pioscope_enter(&call);
    int rc = width == P2P_LARGE
                 ? ((sendrecv_c_fn *)real)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                           recvcount, recvtype, source, recvtag, comm, st)
                 : ((sendrecv_fn *)real)(sendbuf, (int)sendcount, sendtype, dest, sendtag,
                                         recvbuf, (int)recvcount, recvtype, source, recvtag,
                                         comm, st);
    int saved_errno = errno;
    pioscope_event ev = {0};
    if (call.recording) {
        pioscope_mpi_comm_ref ref;
        pioscope_internal_begin();
        send_event(&ev, target->func, rc, sendcount, sendtype, dest, sendtag, comm, &ref);
        pioscope_event half = {0};
        if (rc == MPI_SUCCESS) {
            recv_event(&half, PIOSCOPE_FN_tracer_complete, rc, recvcount, recvtype, comm, st);
            half.flags = PIOSCOPE_F_COMPLETION;
            half.size = half.result > 0 ? (uint64_t)half.result : 0;
        }
        pioscope_internal_end();
        if (rc == MPI_SUCCESS)
            pioscope_record_instant(&half); /* before leave: inside the call, one level down */
    }
    pioscope_leave(&call, &ev);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag,
                                MPI_Comm comm, MPI_Status *status))
{
    return do_recv(&target_MPI_Recv, P2P_INT, buf, count, datatype, source, tag, comm, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    int dest, int sendtag, void *recvbuf, int recvcount,
                                    MPI_Datatype recvtype, int source, int recvtag,
                                    MPI_Comm comm, MPI_Status *status))
{
    return do_sendrecv(&target_MPI_Sendrecv, P2P_INT, sendbuf, sendcount, sendtype, dest, sendtag,
                       recvbuf, recvcount, recvtype, source, recvtag, comm, status);
}

/* ---- MPI-4 large-count forms: the same records, the counts MPI_Count ---- */

PIOSCOPE_MPI_WRAPPER(MPI_Send_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
                                  int dest, int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Send_c, P2P_LARGE, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Ssend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Ssend_c, P2P_LARGE, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Bsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Bsend_c, P2P_LARGE, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Rsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm))
{
    return do_send(&target_MPI_Rsend_c, P2P_LARGE, buf, count, datatype, dest, tag, comm);
}

PIOSCOPE_MPI_WRAPPER(MPI_Isend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm, MPI_Request *request))
{
    return do_nonblocking(&target_MPI_Isend_c, PIOSCOPE_MPI_REQ_SEND, P2P_LARGE, buf, count,
                          datatype, dest, tag, comm, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_Issend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request *request))
{
    return do_nonblocking(&target_MPI_Issend_c, PIOSCOPE_MPI_REQ_SEND, P2P_LARGE, buf, count,
                          datatype, dest, tag, comm, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_Irecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                                   int tag, MPI_Comm comm, MPI_Request *request))
{
    return do_nonblocking(&target_MPI_Irecv_c, PIOSCOPE_MPI_REQ_RECV, P2P_LARGE, buf, count,
                          datatype, source, tag, comm, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_Recv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                                  int tag, MPI_Comm comm, MPI_Status *status))
{
    return do_recv(&target_MPI_Recv_c, P2P_LARGE, buf, count, datatype, source, tag, comm, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_Sendrecv_c, (const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                                      MPI_Count recvcount, MPI_Datatype recvtype, int source,
                                      int recvtag, MPI_Comm comm, MPI_Status *status))
{
    return do_sendrecv(&target_MPI_Sendrecv_c, P2P_LARGE, sendbuf, sendcount, sendtype, dest,
                       sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status);
}
