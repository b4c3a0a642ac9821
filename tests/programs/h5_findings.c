/* Parallel HDF5 written the slow way and the fast way, for tests/test_h5_findings.py: every
 * rank writes its ROWS rows of one shared dataset one row per H5Dwrite and STEPS values as
 * attributes of the dataset, then every rank opens the file again and reads its rows back.
 *   independent: the default transfer (independent MPI-IO), the default file access
 *                properties (every rank reads and writes the metadata itself), one int
 *                attribute per value and an H5Fflush after every FLUSH_ROWS rows;
 *   collective:  H5Pset_dxpl_mpio(H5FD_MPIO_COLLECTIVE), H5Pset_coll_metadata_write and
 *                H5Pset_all_coll_metadata_ops, the values in one array attribute and one
 *                H5Fflush after the rows.
 * Usage: h5_findings independent|collective FILE. Exit 0, 3 when a value read back is wrong. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 32
#define COLUMNS 512
#define STEPS 40
#define FLUSH_ROWS 8

static void check(herr_t status, const char *what)
{
    if (status < 0) {
        fprintf(stderr, "h5_findings: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The rows of `rank` moved one H5Dwrite (or H5Dread) per row; written, `file` flushed after
 * every `flush_rows` rows. */
static void rows(hid_t file, hid_t dataset, hid_t dxpl, int rank, double *block, int write,
                 int flush_rows)
{
    hid_t filespace = H5Dget_space(dataset);
    hsize_t count[2] = {1, COLUMNS};
    hid_t memspace = H5Screate_simple(2, count, NULL);
    for (int i = 0; i < ROWS; i++) {
        hsize_t start[2] = {(hsize_t)ROWS * rank + i, 0};
        check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start, NULL, count, NULL),
              "select");
        double *row = block + (size_t)i * COLUMNS;
        check(write ? H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, row)
                    : H5Dread(dataset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, row),
              write ? "H5Dwrite" : "H5Dread");
        if (write && (i + 1) % flush_rows == 0)
            check(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
    }
    H5Sclose(memspace);
    H5Sclose(filespace);
}

/* STEPS int values on `dataset`: one scalar attribute each, or one array attribute. */
static void attributes(hid_t dataset, int grouped)
{
    int steps[STEPS];
    for (int i = 0; i < STEPS; i++) steps[i] = i;
    hsize_t n = STEPS;
    hid_t space = grouped ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    for (int i = 0; i < (grouped ? 1 : STEPS); i++) {
        char name[16];
        snprintf(name, sizeof name, grouped ? "steps" : "step%02d", i);
        hid_t a = H5Acreate2(dataset, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
        check(a, "H5Acreate2");
        check(H5Awrite(a, H5T_NATIVE_INT, grouped ? steps : &steps[i]), "H5Awrite");
        H5Aclose(a);
    }
    H5Sclose(space);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int collective = argc == 3 && strcmp(argv[1], "collective") == 0;
    if (argc != 3 || (!collective && strcmp(argv[1], "independent") != 0)) {
        if (rank == 0) fprintf(stderr, "usage: h5_findings independent|collective FILE\n");
        MPI_Finalize();
        return 2;
    }
    double *block = malloc(sizeof(double) * ROWS * COLUMNS);
    double *back = malloc(sizeof(double) * ROWS * COLUMNS);
    for (int i = 0; i < ROWS * COLUMNS; i++) block[i] = rank * ROWS * COLUMNS + i;

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (collective) {
        check(H5Pset_coll_metadata_write(fapl, 1), "H5Pset_coll_metadata_write");
        check(H5Pset_all_coll_metadata_ops(fapl, 1), "H5Pset_all_coll_metadata_ops");
        check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    }

    hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file, "H5Fcreate");
    hsize_t dims[2] = {(hsize_t)ROWS * nprocs, COLUMNS};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t grid = H5Dcreate2(file, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    check(grid, "H5Dcreate2");
    rows(file, grid, dxpl, rank, block, 1, collective ? ROWS : FLUSH_ROWS);
    attributes(grid, collective);
    check(H5Dclose(grid), "H5Dclose");
    check(H5Fclose(file), "H5Fclose");

    file = H5Fopen(argv[2], H5F_ACC_RDONLY, fapl);
    check(file, "H5Fopen");
    grid = H5Dopen2(file, "grid", H5P_DEFAULT);
    check(grid, "H5Dopen2");
    rows(file, grid, dxpl, rank, back, 0, ROWS);
    int wrong = memcmp(back, block, sizeof(double) * ROWS * COLUMNS) != 0;
    check(H5Dclose(grid), "H5Dclose");
    check(H5Fclose(file), "H5Fclose");

    H5Sclose(space);
    H5Pclose(dxpl);
    H5Pclose(fapl);
    free(back);
    free(block);
    MPI_Finalize();
    return wrong ? 3 : 0;
}
