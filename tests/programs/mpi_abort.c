/* mpi_abort: every rank writes 100 one-byte records to DIR/rank-N.bin, then rank 0 calls
 * MPI_Abort(MPI_COMM_WORLD, 3) while the others wait in a barrier (issue 12: the aborting
 * rank's records must reach its trace).
 * usage: mpi_abort DIR */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.bin", argc > 1 ? argv[1] : ".", rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 100; i++) pwrite(fd, "a", 1, i);
    close(fd);
    if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
