/* mpi_clock_sync.c: measures this rank's CLOCK_MONOTONIC offset against rank 0 by ping-pong
 * (at MPI_Init and MPI_Finalize) and writes it as a CLOCK_SYNC chunk.
 *
 * Rank 0 serves the other ranks one after the other, ROUNDS round trips each. The round trip
 * with the smallest duration gives the estimate: offset = t_ref - (t_send + t_recv) / 2, with an
 * error bounded by half that round trip. */
#include "mpi_common.h"

#define ROUNDS 20
#define TAG 0x5053 /* on the tracer's private communicator: no clash with the program */

void pioscope_mpi_clock_sync(MPI_Comm comm, uint32_t phase)
{
    static void *send_slot, *recv_slot;
    __typeof__(&PMPI_Send) send = (__typeof__(send))pioscope_resolve(&send_slot, "PMPI_Send");
    __typeof__(&PMPI_Recv) recv = (__typeof__(recv))pioscope_resolve(&recv_slot, "PMPI_Recv");
    int rank = 0, size = 1;
    if (!send || !recv || comm == MPI_COMM_NULL)
        return;
    pioscope_internal_begin();
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    if (rank == 0) {
        for (int peer = 1; peer < size; peer++) {
            for (int round = 0; round < ROUNDS; round++) {
                uint64_t now;
                recv(NULL, 0, MPI_BYTE, peer, TAG, comm, MPI_STATUS_IGNORE);
                now = pioscope_host_ns();
                send(&now, 1, MPI_UINT64_T, peer, TAG, comm);
            }
        }
        pioscope_internal_end();
        pioscope_write_clock_sync(phase, 0, 0, pioscope_host_ns());
        return;
    }
    uint64_t best_rtt = UINT64_MAX, best_mid = 0;
    int64_t best_offset = 0;
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t reference = 0;
        uint64_t sent = pioscope_host_ns();
        send(NULL, 0, MPI_BYTE, 0, TAG, comm);
        recv(&reference, 1, MPI_UINT64_T, 0, TAG, comm, MPI_STATUS_IGNORE);
        uint64_t received = pioscope_host_ns();
        uint64_t rtt = received - sent;
        if (rtt < best_rtt) {
            best_rtt = rtt;
            best_mid = sent + rtt / 2;
            best_offset = (int64_t)(reference - best_mid);
        }
    }
    pioscope_internal_end();
    pioscope_write_clock_sync(phase, best_offset, best_rtt, best_mid);
}
