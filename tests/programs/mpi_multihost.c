/* mpi_multihost: causally ordered MPI events and a collective write, for clock alignment across
 * hosts (tests/test_multihost.py). Needs >= 2 ranks. Every rank r:
 *   1. ring: sends one 8-byte message, tag 1, to r+1 and receives one from r-1, ROUNDS times,
 *      each round closed by an MPI_Barrier;
 *   2. after the rounds, rank 0 sleeps SLEEP_MS while the others wait in a barrier: the run
 *      spans long enough for a clock drift to move the offsets between MPI_Init and
 *      MPI_Finalize;
 *   3. writes BLOCK bytes at r * BLOCK of FILE with MPI_File_write_at_all, two-phase forced
 *      (romio_cb_write=enable), so ROMIO's aggregators do the POSIX writes: one per host
 *      (ROMIO's default cb_config_list "*:1" counts hosts by MPI_Get_processor_name).
 * Messages: ROUNDS * n; barriers: ROUNDS + 2.  usage: mpiexec -n N mpi_multihost FILE */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ROUNDS 5
#define SLEEP_MS 400
#define BLOCK 65536

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2 || size < 2) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n N mpi_multihost FILE (N >= 2)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char out[8], in[8];
    memset(out, rank, sizeof out);
    for (int i = 0; i < ROUNDS; i++) {
        /* even ranks send first: no deadlock whatever the send protocol */
        if (rank % 2 == 0) {
            MPI_Send(out, sizeof out, MPI_BYTE, next, 1, MPI_COMM_WORLD);
            MPI_Recv(in, sizeof in, MPI_BYTE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, sizeof in, MPI_BYTE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, sizeof out, MPI_BYTE, next, 1, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) {
        struct timespec pause = {SLEEP_MS / 1000, (SLEEP_MS % 1000) * 1000000L};
        nanosleep(&pause, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    static char block[BLOCK];
    memset(block, 'a' + rank % 26, sizeof block);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * BLOCK, block, BLOCK, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Info_free(&info);

    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d on %s done\n", rank, host);
    MPI_Finalize();
    return 0;
}
