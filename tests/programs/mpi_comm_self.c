/* mpi_comm_self: rank 0 alone opens DIR/self.dat on MPI_COMM_SELF and writes 4 KiB to it (as
 * IOR's existence check and ROMIO tests' verification passes do), then every rank writes 4 KiB
 * of DIR/shared.dat collectively on MPI_COMM_WORLD.
 * usage: mpi_comm_self DIR */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: mpi_comm_self DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char buf[4096], path[4096];
    memset(buf, 'a' + rank, sizeof buf);
    MPI_File fh;
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/self.dat", argv[1]);
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_write_at(fh, 0, buf, sizeof buf, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    }
    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof buf, buf, sizeof buf, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
