/* PnetCDF written the slow way and the fast way, for tests/test_pnetcdf_findings.py: every
 * rank writes its ROWS rows of double "temperature" [ROWS x ranks, COLUMNS], then the file goes
 * back to define mode for a variable "pressure" with a NOTE_BYTES attribute.
 *   blocking:    one ncmpi_put_vara_double_all per row, and ncmpi_enddef with no header space
 *                reserved, so the enddef after ncmpi_redef moves the data written;
 *   nonblocking: one ncmpi_iput_vara_double per row and one ncmpi_wait_all, and
 *                ncmpi__enddef reserving H_MINFREE bytes of header, which the redef fills.
 * Usage: pnc_findings blocking|nonblocking FILE. Exit 0. */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <string.h>

#define ROWS 16
#define COLUMNS 512
#define NOTE_BYTES 2048
#define H_MINFREE 8192

static void check(int status, const char *what)
{
    if (status != NC_NOERR) {
        fprintf(stderr, "pnc_findings: %s: %s\n", what, ncmpi_strerror(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int nonblocking = argc == 3 && strcmp(argv[1], "nonblocking") == 0;
    if (argc != 3 || (!nonblocking && strcmp(argv[1], "blocking") != 0)) {
        if (rank == 0) fprintf(stderr, "usage: pnc_findings blocking|nonblocking FILE\n");
        MPI_Finalize();
        return 2;
    }
    static double rows[ROWS][COLUMNS];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLUMNS; c++) rows[r][c] = (rank * ROWS + r) * COLUMNS + c;

    int ncid, dims[2], t_var, p_var;
    check(ncmpi_create(MPI_COMM_WORLD, argv[2], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL,
                       &ncid), "ncmpi_create");
    check(ncmpi_def_dim(ncid, "y", (MPI_Offset)ROWS * nprocs, &dims[0]), "def_dim y");
    check(ncmpi_def_dim(ncid, "x", COLUMNS, &dims[1]), "def_dim x");
    check(ncmpi_def_var(ncid, "temperature", NC_DOUBLE, 2, dims, &t_var), "def_var");
    check(nonblocking ? ncmpi__enddef(ncid, H_MINFREE, 0, 0, 0) : ncmpi_enddef(ncid), "enddef");

    int requests[ROWS], statuses[ROWS];
    for (int r = 0; r < ROWS; r++) {
        MPI_Offset start[2] = {(MPI_Offset)rank * ROWS + r, 0}, count[2] = {1, COLUMNS};
        check(nonblocking
                  ? ncmpi_iput_vara_double(ncid, t_var, start, count, rows[r], &requests[r])
                  : ncmpi_put_vara_double_all(ncid, t_var, start, count, rows[r]),
              "put");
    }
    if (nonblocking) check(ncmpi_wait_all(ncid, ROWS, requests, statuses), "ncmpi_wait_all");

    char note[NOTE_BYTES];
    memset(note, 'n', sizeof note);
    check(ncmpi_redef(ncid), "ncmpi_redef");
    check(ncmpi_def_var(ncid, "pressure", NC_DOUBLE, 2, dims, &p_var), "def_var");
    check(ncmpi_put_att_text(ncid, p_var, "note", sizeof note, note), "put_att");
    check(ncmpi_enddef(ncid), "ncmpi_enddef");
    check(ncmpi_close(ncid), "ncmpi_close");
    MPI_Finalize();
    return 0;
}
