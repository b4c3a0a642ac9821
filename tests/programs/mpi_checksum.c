/* mpi_checksum: every rank writes a known pattern with MPI-IO (collectively and independently),
 * reads it back and checks it; rank 0 prints a checksum. Its output and exit status must be the
 * same with and without the tracer.  usage: mpiexec -n N mpi_checksum FILE */
#include <mpi.h>
#include <stdio.h>
#include <stdint.h>

#define COUNT 4096

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0) fprintf(stderr, "usage: mpi_checksum FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int out[COUNT], in[COUNT];
    for (int i = 0; i < COUNT; i++) out[i] = rank * 1000003 + i * 7;

    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Offset base = (MPI_Offset)rank * COUNT * sizeof(int);
    MPI_File_write_at_all(fh, base, out, COUNT / 2, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_write_at(fh, base + COUNT / 2 * sizeof(int), out + COUNT / 2, COUNT / 2, MPI_INT,
                      MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_read_at_all(fh, base, in, COUNT, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);

    int bad = 0;
    uint64_t sum = 0;
    for (int i = 0; i < COUNT; i++) {
        bad += in[i] != out[i];
        sum += (uint64_t)in[i] * (uint64_t)(i + 1);
    }
    uint64_t total;
    int total_bad;
    MPI_Reduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("ranks=%d checksum=%llu mismatches=%d\n", size,
                          (unsigned long long)total, total_bad);
    MPI_Finalize();
    return total_bad ? 3 : 0;
}
