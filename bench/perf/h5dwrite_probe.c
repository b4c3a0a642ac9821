/* h5dwrite_probe: ns per H5Dwrite of a small selection (one row of 16 doubles of a 1024 x 16
 * dataset of a file on HDF5's default POSIX driver), over N writes after a warm-up of 1024.
 * overhead.py runs it traced and untraced, alternately. Prints the ns per write.
 * usage: h5dwrite_probe N FILE */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROWS = 1024, COLUMNS = 16 };

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Writes `n` rows, one H5Dwrite each, cycling through the dataset. */
static int write_rows(long n, hid_t dset, hid_t memspace, hid_t filespace, const double *row)
{
    for (long i = 0; i < n; i++) {
        hsize_t start[2] = {(hsize_t)(i % ROWS), 0}, count[2] = {1, COLUMNS};
        H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start, NULL, count, NULL);
        if (H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, filespace, H5P_DEFAULT, row) < 0)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    MPI_Init(&argc, &argv);
    long n = atol(argv[1]);
    hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {ROWS, COLUMNS}, row_dims[2] = {1, COLUMNS};
    hid_t filespace = H5Screate_simple(2, dims, NULL);
    hid_t memspace = H5Screate_simple(2, row_dims, NULL);
    hid_t dset = H5Dcreate2(file, "rows", H5T_NATIVE_DOUBLE, filespace, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    if (file < 0 || dset < 0) return 1;
    double row[COLUMNS];
    for (int c = 0; c < COLUMNS; c++) row[c] = c;
    if (write_rows(ROWS, dset, memspace, filespace, row)) return 1;
    long long t0 = now_ns();
    if (write_rows(n, dset, memspace, filespace, row)) return 1;
    long long t1 = now_ns();
    H5Dclose(dset);
    H5Sclose(memspace);
    H5Sclose(filespace);
    H5Fclose(file);
    MPI_Finalize();
    printf("%.2f\n", (double)(t1 - t0) / n);
    return 0;
}
