/* mpi_write_shared: every rank appends 16 contiguous blocks of 4 KiB to DIR/shared.dat through
 * the shared file pointer (MPI_File_write_shared, default view), after opening and closing
 * DIR/config.txt before MPI_Init (an application file outside MPI). ROMIO keeps the shared
 * pointer in a hidden file beside the data (.shared.dat.shfp.<n>) and reads, locks and writes it
 * inside every MPI_File_write_shared.
 * usage: mpi_write_shared DIR */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { BLOCKS = 16, BLOCK = 4096 };

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: mpi_write_shared DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/config.txt", argv[1]);
    FILE *config = fopen(path, "w");
    if (config) fclose(config);
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char buf[BLOCK];
    memset(buf, 'a' + rank, sizeof buf);
    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (int i = 0; i < BLOCKS; i++)
        MPI_File_write_shared(fh, buf, sizeof buf, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
