/* Parallel HDF5 chunks against a STRIPE-byte stripe (the striping_unit hint given to
 * H5Pset_fapl_mpio), for tests/test_h5_findings.py: every rank writes its BLOCK_ROWS rows of
 * one shared chunked dataset in one independent H5Dwrite.
 *   small:   one row per chunk (4 KiB, a sixteenth of the stripe) and the default alignment
 *            (1), so every chunk is its own small write and some straddle a stripe boundary;
 *   striped: BLOCK_ROWS rows per chunk (one stripe) and H5Pset_alignment(STRIPE, STRIPE), so
 *            each rank's block is one chunk that fills one stripe.
 * Usage: h5_chunks small|striped FILE. Exit 0. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_ROWS 16
#define COLUMNS 512
#define STRIPE 65536 /* BLOCK_ROWS rows of COLUMNS doubles */

static void check(herr_t status, const char *what)
{
    if (status < 0) {
        fprintf(stderr, "h5_chunks: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int striped = argc == 3 && strcmp(argv[1], "striped") == 0;
    if (argc != 3 || (!striped && strcmp(argv[1], "small") != 0)) {
        if (rank == 0) fprintf(stderr, "usage: h5_chunks small|striped FILE\n");
        MPI_Finalize();
        return 2;
    }
    double *block = malloc(sizeof(double) * BLOCK_ROWS * COLUMNS);
    for (int i = 0; i < BLOCK_ROWS * COLUMNS; i++) block[i] = rank * BLOCK_ROWS * COLUMNS + i;

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "65536");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info), "H5Pset_fapl_mpio");
    if (striped) check(H5Pset_alignment(fapl, STRIPE, STRIPE), "H5Pset_alignment");
    hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file, "H5Fcreate");

    hsize_t dims[2] = {(hsize_t)BLOCK_ROWS * nprocs, COLUMNS};
    hsize_t chunk[2] = {striped ? BLOCK_ROWS : 1, COLUMNS};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    check(H5Pset_chunk(dcpl, 2, chunk), "H5Pset_chunk");
    hid_t grid = H5Dcreate2(file, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT);
    check(grid, "H5Dcreate2");

    hsize_t start[2] = {(hsize_t)BLOCK_ROWS * rank, 0}, count[2] = {BLOCK_ROWS, COLUMNS};
    hid_t memspace = H5Screate_simple(2, count, NULL);
    check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL), "select");
    check(H5Dwrite(grid, H5T_NATIVE_DOUBLE, memspace, space, H5P_DEFAULT, block), "H5Dwrite");

    H5Sclose(memspace);
    check(H5Dclose(grid), "H5Dclose");
    check(H5Fclose(file), "H5Fclose");
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Pclose(fapl);
    MPI_Info_free(&info);
    free(block);
    MPI_Finalize();
    return 0;
}
