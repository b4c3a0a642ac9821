/* Parallel HDF5 through MPI-IO: every rank writes its block of rows of one 2-D dataset of
 * doubles with a collective transfer, then reads its block back collectively and checks every
 * value. Usage: h5_collective FILE [ROWS_PER_RANK] (columns: COLUMNS). Prints one line on
 * rank 0; exit 0 when every value read back is right, 3 when one is not. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define COLUMNS 1024

static void check(herr_t status, const char *what) {
    if (status < 0) {
        fprintf(stderr, "h5_collective: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double value_at(hsize_t row, hsize_t column) { return (double)(row * COLUMNS + column); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: h5_collective FILE [ROWS_PER_RANK]\n");
        MPI_Finalize();
        return 2;
    }
    hsize_t rows_per_rank = argc > 2 ? strtoull(argv[2], NULL, 10) : 64;
    hsize_t dims[2] = {rows_per_rank * nprocs, COLUMNS};

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file, "H5Fcreate");
    hid_t filespace = H5Screate_simple(2, dims, NULL);
    hid_t dataset = H5Dcreate2(file, "values", H5T_NATIVE_DOUBLE, filespace, H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT);
    check(dataset, "H5Dcreate2");

    /* This rank's block of rows. */
    hsize_t start[2] = {rows_per_rank * rank, 0}, count[2] = {rows_per_rank, COLUMNS};
    double *block = malloc(rows_per_rank * COLUMNS * sizeof *block);
    for (hsize_t r = 0; r < rows_per_rank; r++)
        for (hsize_t c = 0; c < COLUMNS; c++)
            block[r * COLUMNS + c] = value_at(start[0] + r, c);
    hid_t memspace = H5Screate_simple(2, count, NULL);
    check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start, NULL, count, NULL),
          "H5Sselect_hyperslab");
    hid_t collective = H5Pcreate(H5P_DATASET_XFER);
    check(H5Pset_dxpl_mpio(collective, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    check(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memspace, filespace, collective, block), "H5Dwrite");

    for (hsize_t i = 0; i < rows_per_rank * COLUMNS; i++)
        block[i] = -1.0;
    check(H5Dread(dataset, H5T_NATIVE_DOUBLE, memspace, filespace, collective, block), "H5Dread");
    unsigned long long wrong = 0;
    for (hsize_t r = 0; r < rows_per_rank; r++)
        for (hsize_t c = 0; c < COLUMNS; c++)
            wrong += block[r * COLUMNS + c] != value_at(start[0] + r, c);
    unsigned long long wrong_total = 0;
    MPI_Allreduce(&wrong, &wrong_total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);

    H5Pclose(collective);
    H5Sclose(memspace);
    H5Sclose(filespace);
    H5Dclose(dataset);
    H5Fclose(file);
    H5Pclose(fapl);
    free(block);
    if (rank == 0)
        printf("h5_collective: %d ranks, %llu x %d doubles, %llu wrong values\n", nprocs,
               (unsigned long long)dims[0], COLUMNS, wrong_total);
    MPI_Finalize();
    return wrong_total ? 3 : 0;
}
