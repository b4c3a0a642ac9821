/* mpi_threads.c: MPI_THREAD_MULTIPLE, three threads per rank exchanging with the partner rank
 * (Isend/Irecv, then Wait or Waitall) on their own tags, for check_threads.py: every start must
 * complete once, on its own thread, with its own tag. Needs an even number of ranks.
 *
 *   mpiexec -n 2 ./mpi_threads */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 3
#define ROUNDS 2000

static int rank;

static void *exchange(void *arg)
{
    int tag = (int)(long)arg, partner = rank ^ 1;
    for (int i = 0; i < ROUNDS; i++) {
        int out = i, in;
        MPI_Request r[2];
        MPI_Irecv(&in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&out, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, &r[1]);
        if (i % 2) {
            MPI_Status *volatile ig = MPI_STATUSES_IGNORE;
            MPI_Waitall(2, r, ig);
        } else {
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "mpi_threads: no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, exchange, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    MPI_Finalize();
    return 0;
}
