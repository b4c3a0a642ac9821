/* PnetCDF with a known set of calls, for tests/test_pnetcdf_trace.py: per rank ncmpi_create,
 * int "temperature" and float "pressure" [4 x ranks, 10], ncmpi_enddef, one collective
 * ncmpi_put_vara_int_all of the rank's 4 rows of temperature, one ncmpi_iput_vara_float of its
 * rows of pressure completed by ncmpi_wait_all, ncmpi_redef, double "humidity" added,
 * ncmpi_enddef, one independent ncmpi_put_vara_double of its rows of humidity, ncmpi_close;
 * then ncmpi_open, one ncmpi_get_vara_int_all of its rows of temperature (checked),
 * of pressure one ncmpi_get_var_float_all (the whole variable), one ncmpi_get_vars_float_all
 * of every second column of its rows and, independent, one generic ncmpi_get_varn of its
 * first two rows as two pieces (checked), ncmpi_close.
 * Usage: pnc_trace FILE. Exit 0, 3 when a value read back is wrong. */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 4
#define COLUMNS 10

static void check(int status, const char *what)
{
    if (status != NC_NOERR) {
        fprintf(stderr, "pnc_trace: %s: %s\n", what, ncmpi_strerror(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: pnc_trace FILE\n");
        MPI_Finalize();
        return 2;
    }
    int temperature[ROWS][COLUMNS], back[ROWS][COLUMNS];
    float pressure[ROWS][COLUMNS];
    double humidity[ROWS][COLUMNS];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLUMNS; c++) {
            temperature[r][c] = (rank * ROWS + r) * COLUMNS + c;
            pressure[r][c] = (float)temperature[r][c];
            humidity[r][c] = temperature[r][c];
        }
    MPI_Offset start[2] = {(MPI_Offset)rank * ROWS, 0}, count[2] = {ROWS, COLUMNS};

    int ncid, dims[2], t_var, p_var, h_var;
    check(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL,
                       &ncid), "ncmpi_create");
    check(ncmpi_def_dim(ncid, "y", (MPI_Offset)ROWS * nprocs, &dims[0]), "def_dim y");
    check(ncmpi_def_dim(ncid, "x", COLUMNS, &dims[1]), "def_dim x");
    check(ncmpi_def_var(ncid, "temperature", NC_INT, 2, dims, &t_var), "def_var");
    check(ncmpi_def_var(ncid, "pressure", NC_FLOAT, 2, dims, &p_var), "def_var");
    check(ncmpi_enddef(ncid), "ncmpi_enddef");
    check(ncmpi_put_vara_int_all(ncid, t_var, start, count, &temperature[0][0]), "put_vara_int_all");
    int request, status;
    check(ncmpi_iput_vara_float(ncid, p_var, start, count, &pressure[0][0], &request), "iput");
    check(ncmpi_wait_all(ncid, 1, &request, &status), "ncmpi_wait_all");
    check(status, "iput status");
    check(ncmpi_redef(ncid), "ncmpi_redef");
    check(ncmpi_def_var(ncid, "humidity", NC_DOUBLE, 2, dims, &h_var), "def_var");
    check(ncmpi_enddef(ncid), "ncmpi_enddef");
    check(ncmpi_begin_indep_data(ncid), "begin_indep_data");
    check(ncmpi_put_vara_double(ncid, h_var, start, count, &humidity[0][0]), "put_vara_double");
    check(ncmpi_end_indep_data(ncid), "end_indep_data");
    check(ncmpi_close(ncid), "ncmpi_close");

    check(ncmpi_open(MPI_COMM_WORLD, argv[1], NC_NOWRITE, MPI_INFO_NULL, &ncid), "ncmpi_open");
    check(ncmpi_inq_varid(ncid, "temperature", &t_var), "inq_varid");
    check(ncmpi_get_vara_int_all(ncid, t_var, start, count, &back[0][0]), "get_vara_int_all");
    check(ncmpi_inq_varid(ncid, "pressure", &p_var), "inq_varid");
    float *all = malloc(sizeof(float) * ROWS * COLUMNS * nprocs);
    check(ncmpi_get_var_float_all(ncid, p_var, all), "get_var_float_all");
    float every_second[ROWS][COLUMNS / 2], two_rows[2][COLUMNS];
    MPI_Offset half[2] = {ROWS, COLUMNS / 2}, stride[2] = {1, 2};
    check(ncmpi_get_vars_float_all(ncid, p_var, start, half, stride, &every_second[0][0]),
          "get_vars_float_all");
    MPI_Offset row0[2] = {start[0], 0}, row1[2] = {start[0] + 1, 0}, one_row[2] = {1, COLUMNS};
    MPI_Offset *starts[2] = {row0, row1}, *counts[2] = {one_row, one_row};
    check(ncmpi_begin_indep_data(ncid), "begin_indep_data");
    check(ncmpi_get_varn(ncid, p_var, 2, starts, counts, &two_rows[0][0], 2 * COLUMNS,
                         MPI_FLOAT), "get_varn");
    check(ncmpi_end_indep_data(ncid), "end_indep_data");
    check(ncmpi_close(ncid), "ncmpi_close");
    int wrong = 0;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLUMNS; c++) {
            wrong += back[r][c] != temperature[r][c];
            wrong += all[(rank * ROWS + r) * COLUMNS + c] != pressure[r][c];
            wrong += c % 2 == 0 && every_second[r][c / 2] != pressure[r][c];
            wrong += r < 2 && two_rows[r][c] != pressure[r][c];
        }
    free(all);
    MPI_Finalize();
    return wrong ? 3 : 0;
}
