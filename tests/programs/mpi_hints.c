/* mpi_hints: opens a file with a few hints and prints every hint MPI_File_get_info reports, as
 * "key=value" lines from rank 0, so the tests can compare them with the recorded values.
 * usage: mpiexec -n N mpi_hints FILE */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_ds_write", "disable");
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);

    MPI_Info used;
    MPI_File_get_info(fh, &used);
    int nkeys;
    MPI_Info_get_nkeys(used, &nkeys);
    for (int i = 0; i < nkeys && rank == 0; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag;
        MPI_Info_get_nthkey(used, i, key);
        MPI_Info_get(used, key, MPI_MAX_INFO_VAL, value, &flag);
        if (flag) printf("%s=%s\n", key, value);
    }
    MPI_Info_free(&used);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
