/* Parallel HDF5 with a known set of calls, for tests/test_hdf5_trace.py: per rank one
 * H5Pset_fapl_mpio, H5Fcreate (alignment 4096 for objects >= 1 byte), H5Gcreate2 "/fields",
 * H5Dcreate2 "/fields/temperature" (contiguous) and "/fields/pressure" (chunked ROWS x 64),
 * H5Acreate2 + H5Awrite of the int attribute "step" on temperature, one collective H5Dwrite of
 * the rank's block of temperature and one independent H5Dwrite of its block of pressure,
 * H5Fflush, then H5Fopen, H5Dopen2 temperature and one collective H5Dread of the block, checked.
 * The other forms, once each: H5Dcreate1 "/fields/humidity" (contiguous floats),
 * H5Acreate_by_name + H5Awrite of the int attribute "units" on pressure; after the read
 * H5Oopen of pressure and of "/fields", H5Dopen1 humidity, H5Aread of "step" (checked).
 * Usage: h5_trace FILE. Exit 0, 3 when a value read back is wrong. */
#include <hdf5.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The runtime declares these types itself (runtime/src/hdf5_abi.h): prove they agree. */
_Static_assert(sizeof(hid_t) == 8 && sizeof(herr_t) == 4 && sizeof(hsize_t) == 8 &&
                   sizeof(hssize_t) == 8 && sizeof(htri_t) == 4,
               "HDF5 integer types as runtime/src/hdf5_abi.h declares them");
_Static_assert(sizeof(hbool_t) == sizeof(bool), "hbool_t is C99 bool");
_Static_assert(H5FD_MPIO_COLLECTIVE == 1 && H5D_CHUNKED == 2 && H5S_SEL_ALL == 3 &&
                   H5S_MAX_RANK == 32 && H5P_DEFAULT == 0 && H5S_ALL == 0 && H5I_DATASET == 5,
               "HDF5 constants as runtime/src/hdf5_abi.h declares them");

#define ROWS 16
#define COLUMNS 256

static void check(herr_t status, const char *what)
{
    if (status < 0) {
        fprintf(stderr, "h5_trace: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static hid_t create_dataset(hid_t group, const char *name, hid_t space, hid_t dcpl)
{
    hid_t d = H5Dcreate2(group, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    check(d, name);
    return d;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: h5_trace FILE\n");
        MPI_Finalize();
        return 2;
    }
    hsize_t dims[2] = {(hsize_t)ROWS * nprocs, COLUMNS};
    hsize_t start[2] = {(hsize_t)ROWS * rank, 0}, count[2] = {ROWS, COLUMNS};
    hsize_t chunk[2] = {ROWS, 64};
    double *block = malloc(sizeof(double) * ROWS * COLUMNS);
    for (int i = 0; i < ROWS * COLUMNS; i++) block[i] = rank * ROWS * COLUMNS + i;

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    check(H5Pset_alignment(fapl, 1, 4096), "H5Pset_alignment");
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file, "H5Fcreate");
    hid_t group = H5Gcreate2(file, "/fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(group, "H5Gcreate2");
    hid_t filespace = H5Screate_simple(2, dims, NULL);
    hid_t chunked = H5Pcreate(H5P_DATASET_CREATE);
    check(H5Pset_chunk(chunked, 2, chunk), "H5Pset_chunk");
    hid_t temperature = create_dataset(group, "temperature", filespace, H5P_DEFAULT);
    hid_t pressure = create_dataset(group, "pressure", filespace, chunked);
    hid_t humidity = H5Dcreate1(group, "humidity", H5T_NATIVE_FLOAT, filespace, H5P_DEFAULT);
    check(humidity, "H5Dcreate1");
    check(H5Dclose(humidity), "H5Dclose");

    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(temperature, "step", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
    check(attr, "H5Acreate2");
    int step = 7;
    check(H5Awrite(attr, H5T_NATIVE_INT, &step), "H5Awrite");
    H5Aclose(attr);
    attr = H5Acreate_by_name(file, "fields/pressure", "units", H5T_NATIVE_INT, scalar,
                             H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(attr, "H5Acreate_by_name");
    check(H5Awrite(attr, H5T_NATIVE_INT, &step), "H5Awrite");
    H5Aclose(attr);

    hid_t memspace = H5Screate_simple(2, count, NULL);
    check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start, NULL, count, NULL), "select");
    hid_t collective = H5Pcreate(H5P_DATASET_XFER);
    check(H5Pset_dxpl_mpio(collective, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    check(H5Dwrite(temperature, H5T_NATIVE_DOUBLE, memspace, filespace, collective, block),
          "H5Dwrite temperature");
    check(H5Dwrite(pressure, H5T_NATIVE_DOUBLE, memspace, filespace, H5P_DEFAULT, block),
          "H5Dwrite pressure");
    check(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
    check(H5Dclose(pressure), "H5Dclose");
    check(H5Dclose(temperature), "H5Dclose");
    check(H5Gclose(group), "H5Gclose");
    check(H5Fclose(file), "H5Fclose");

    file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    check(file, "H5Fopen");
    temperature = H5Dopen2(file, "/fields/temperature", H5P_DEFAULT);
    check(temperature, "H5Dopen2");
    double *back = malloc(sizeof(double) * ROWS * COLUMNS);
    check(H5Dread(temperature, H5T_NATIVE_DOUBLE, memspace, filespace, collective, back),
          "H5Dread");
    int wrong = 0;
    for (int i = 0; i < ROWS * COLUMNS; i++) wrong += back[i] != block[i];
    hid_t object = H5Oopen(file, "/fields/pressure", H5P_DEFAULT);
    check(object, "H5Oopen");
    H5Oclose(object);
    object = H5Oopen(file, "/fields", H5P_DEFAULT);
    check(object, "H5Oopen");
    H5Oclose(object);
    humidity = H5Dopen1(file, "/fields/humidity");
    check(humidity, "H5Dopen1");
    check(H5Dclose(humidity), "H5Dclose");
    attr = H5Aopen(temperature, "step", H5P_DEFAULT);
    int step_back = 0;
    check(H5Aread(attr, H5T_NATIVE_INT, &step_back), "H5Aread");
    H5Aclose(attr);
    wrong += step_back != step;
    check(H5Dclose(temperature), "H5Dclose");
    check(H5Fclose(file), "H5Fclose");

    H5Pclose(collective);
    H5Pclose(chunked);
    H5Pclose(fapl);
    H5Sclose(memspace);
    H5Sclose(scalar);
    H5Sclose(filespace);
    free(back);
    free(block);
    MPI_Finalize();
    return wrong ? 3 : 0;
}
