/* mpi_sleep: each rank writes its pid to DIR/rank-R.pid, 100 bytes to DIR/data-R.bin, then
 * sleeps SECONDS (default 60) and finalizes, so tests can stop a running traced job.
 * usage: mpi_sleep DIR [SECONDS] */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: mpi_sleep DIR [SECONDS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/data-%d.bin", argv[1], rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char byte = 'x';
    for (int i = 0; fd >= 0 && i < 100; i++) pwrite(fd, &byte, 1, i);
    if (fd >= 0) close(fd);
    /* The pid file last: once it exists, the data is written. */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/rank-%d.tmp", argv[1], rank);
    snprintf(path, sizeof path, "%s/rank-%d.pid", argv[1], rank);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        rename(tmp, path);
    }
    int seconds = argc > 2 ? atoi(argv[2]) : 60;
    for (int i = 0; i < seconds; i++) sleep(1);
    MPI_Finalize();
    return 0;
}
