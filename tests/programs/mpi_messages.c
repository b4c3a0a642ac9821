/* mpi_messages: a known set of MPI point-to-point messages, for message matching and exports.
 * Needs >= 2 ranks (written for 4). Every rank r:
 *   1. ring with Send/Recv: sends 3 messages of (r+1)*8 bytes, tag 7, to r+1; receives 3 from r-1;
 *   2. Isend/Irecv/Waitall: sends 2 messages of 64 bytes, tags 11 and 12, to r-1; receives 2
 *      from r+1 with MPI_Irecv (tags 12 then 11, so the Waitall completes them by tag);
 *   3. ANY_SOURCE: ranks != 0 send 16 bytes, tag 20, to rank 0, which receives size-1 messages
 *      with MPI_Recv(MPI_ANY_SOURCE) then, after a barrier, size-1 more (tag 21) with
 *      MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Wait (ranks != 0 send twice);
 *   4. Sendrecv: exchange of 32 bytes, tag 30, with r^1 (when it exists).
 * Messages: 3n + 2n + 2(n-1) + (n even ? n : n-1). With 4 ranks: 12 + 8 + 6 + 4 = 30.
 * usage: mpiexec -n N mpi_messages */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char out[256], in[256];
    memset(out, rank, sizeof out);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* 1. ring; even ranks send first so that a rendezvous Send cannot deadlock */
    for (int i = 0; i < 3; i++) {
        if (rank % 2 == 0) {
            MPI_Send(out, (rank + 1) * 8, MPI_BYTE, next, 7, MPI_COMM_WORLD);
            MPI_Recv(in, sizeof in, MPI_BYTE, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, sizeof in, MPI_BYTE, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, (rank + 1) * 8, MPI_BYTE, next, 7, MPI_COMM_WORLD);
        }
    }

    /* 2. nonblocking, the other way round */
    MPI_Request req[4];
    char in2[2][64];
    MPI_Irecv(in2[0], 64, MPI_BYTE, next, 12, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(in2[1], 64, MPI_BYTE, next, 11, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(out, 64, MPI_BYTE, prev, 11, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(out, 64, MPI_BYTE, prev, 12, MPI_COMM_WORLD, &req[3]);
    MPI_Status statuses[4];
    MPI_Waitall(4, req, statuses);

    /* 3. MPI_ANY_SOURCE */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 1; i < size; i++)
            MPI_Recv(in, sizeof in, MPI_BYTE, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 1; i < size; i++) {
            MPI_Request r;
            MPI_Irecv(in, sizeof in, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Send(out, 16, MPI_BYTE, 0, 20, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(out, 16, MPI_BYTE, 0, 21, MPI_COMM_WORLD);
    }

    /* 4. Sendrecv with the partner (after a barrier: rank 0's MPI_ANY_TAG receives above must
     * not take a Sendrecv message) */
    MPI_Barrier(MPI_COMM_WORLD);
    int partner = rank ^ 1;
    if (partner < size)
        MPI_Sendrecv(out, 32, MPI_BYTE, partner, 30, in, sizeof in, MPI_BYTE, partner, 30,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks=%d messages done\n", size);
    MPI_Finalize();
    return 0;
}
