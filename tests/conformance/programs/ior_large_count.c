/* IOR's MPI-IO access pattern (one shared file, `-a MPIIO -c -e`) through the MPI-4 large-count
 * calls: each of SEGMENTS segments holds one block of BLOCK bytes per rank, rank r's block at
 * (segment * nprocs + r) * BLOCK, moved in transfers of TRANSFER bytes with
 * MPI_File_write_at_all_c, then MPI_File_sync, close; the file reopened and read back with
 * MPI_File_read_at_all_c and checked. MPICH 4 provides the _c calls that IOR uses when its
 * configure finds them.
 * Usage: ior_large_count FILE [SEGMENTS BLOCK TRANSFER]. Exit 0 when every byte read back is
 * right, 3 when one is not, 2 on bad arguments. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int err, const char *what) {
    if (err != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, text, &len);
        fprintf(stderr, "ior_large_count: %s: %s\n", what, text);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The byte IOR-style data holds at a file offset: a function of the offset, so a misplaced
 * transfer shows. */
static unsigned char byte_at(MPI_Offset offset) { return (unsigned char)(offset * 7 + 3); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    long long segments = argc > 2 ? atoll(argv[2]) : 4;
    long long block = argc > 3 ? atoll(argv[3]) : 1 << 20;
    long long transfer = argc > 4 ? atoll(argv[4]) : 1 << 18;
    if (argc != 2 && argc != 5) {
        if (rank == 0) fprintf(stderr, "usage: ior_large_count FILE [SEGMENTS BLOCK TRANSFER]\n");
        MPI_Finalize();
        return 2;
    }
    if (segments <= 0 || transfer <= 0 || block <= 0 || block % transfer != 0) {
        if (rank == 0)
            fprintf(stderr, "ior_large_count: BLOCK %lld must be a multiple of TRANSFER %lld\n",
                    block, transfer);
        MPI_Finalize();
        return 2;
    }
    unsigned char *buf = malloc((size_t)transfer);
    MPI_File fh;
    MPI_Status status;

    check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh), "MPI_File_open");
    for (long long s = 0; s < segments; s++)
        for (long long t = 0; t < block / transfer; t++) {
            MPI_Offset offset = (s * nprocs + rank) * block + t * transfer;
            for (long long i = 0; i < transfer; i++) buf[i] = byte_at(offset + i);
            check(MPI_File_write_at_all_c(fh, offset, buf, (MPI_Count)transfer, MPI_BYTE,
                                          &status), "MPI_File_write_at_all_c");
        }
    check(MPI_File_sync(fh), "MPI_File_sync");
    check(MPI_File_close(&fh), "MPI_File_close");

    long long wrong = 0;
    check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
          "MPI_File_open");
    for (long long s = 0; s < segments; s++)
        for (long long t = 0; t < block / transfer; t++) {
            MPI_Offset offset = (s * nprocs + rank) * block + t * transfer;
            memset(buf, 0, (size_t)transfer);
            check(MPI_File_read_at_all_c(fh, offset, buf, (MPI_Count)transfer, MPI_BYTE,
                                         &status), "MPI_File_read_at_all_c");
            MPI_Count got;
            MPI_Get_count_c(&status, MPI_BYTE, &got);
            wrong += transfer - got;
            for (long long i = 0; i < got; i++) wrong += buf[i] != byte_at(offset + i);
        }
    check(MPI_File_close(&fh), "MPI_File_close");

    long long wrong_total = 0;
    MPI_Allreduce(&wrong, &wrong_total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ior_large_count: %d ranks, %lld segments of %lld-byte blocks, %lld-byte "
               "transfers, %lld wrong bytes\n", nprocs, segments, block, transfer, wrong_total);
    free(buf);
    MPI_Finalize();
    return wrong_total ? 3 : 0;
}
