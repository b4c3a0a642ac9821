/* mpiio_trace.c: an MPI program that exercises what the MPI and MPI-IO wrappers record, for
 * check_raw.py to verify: a collective write of a noncontiguous (interleaved) view, independent
 * writes, a nonblocking file write, a split collective, a collective read, point-to-point
 * (Isend/Irecv/Waitall, Sendrecv, Send/Recv with MPI_ANY_SOURCE) and collectives.
 *
 *   mpiexec -n 4 ./mpiio_trace <data file> <expect dir>
 *
 * Each rank writes <expect dir>/expect.<rank>.txt: what the program knows and the trace must
 * show (pid, the hints MPI_File_get_info reports after open, the sizes it used). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096   /* bytes per block of the interleaved view */
#define BLOCKS 8     /* blocks per rank */
#define INDEP 100    /* bytes of each independent write */
#define TAG_RING 7
#define TAG_ANY 9

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "mpiio_trace: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void write_hints(FILE *out, MPI_File fh)
{
    MPI_Info info;
    int nkeys = 0;
    check(MPI_File_get_info(fh, &info), "get_info");
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        if (flag)
            fprintf(out, "hint %s=%s\n", key, value);
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    int rank, size;
    if (argc < 3) {
        fprintf(stderr, "usage: mpiio_trace <data file> <expect dir>\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char path[4096];
    snprintf(path, sizeof path, "%s/expect.%d.txt", argv[2], rank);
    FILE *expect = fopen(path, "w");
    if (!expect)
        MPI_Abort(MPI_COMM_WORLD, 1);
    fprintf(expect, "pid=%d\nrank=%d\nsize=%d\nblock=%d\nblocks=%d\nindep=%d\n", (int)getpid(),
            rank, size, BLOCK, BLOCKS, INDEP);

    /* Two aggregators (on one node too), so the POSIX writes of the collective show on two
     * ranks only. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_nodes", "2");
    MPI_Info_set(info, "cb_config_list", "*:2");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Info_set(info, "cb_buffer_size", "65536");
    MPI_File fh;
    char target[4200];
    snprintf(target, sizeof target, "ufs:%s", argv[1]); /* the trace must strip "ufs:" */
    check(MPI_File_open(MPI_COMM_WORLD, target, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
          "open");
    MPI_Info_free(&info);
    write_hints(expect, fh);

    /* Interleaved view: rank r owns blocks r, r + size, r + 2 size, ... */
    MPI_Datatype filetype, resized;
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * size, MPI_BYTE, &filetype);
    MPI_Type_create_resized(filetype, 0, (MPI_Aint)BLOCK * BLOCKS * size, &resized);
    MPI_Type_commit(&resized);
    check(MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, resized, "native",
                            MPI_INFO_NULL), "set_view");
    char *data = malloc(BLOCK * BLOCKS);
    memset(data, 'a' + rank, BLOCK * BLOCKS);
    check(MPI_File_write_all(fh, data, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE), "write_all");

    /* Split collective: the second stripe of the view (the pointer is at BLOCKS * BLOCK). */
    check(MPI_File_write_all_begin(fh, data, BLOCK * BLOCKS, MPI_BYTE), "write_all_begin");
    MPI_Status status;
    check(MPI_File_write_all_end(fh, data, &status), "write_all_end");

    /* Back to bytes; independent writes beyond the collective region. */
    MPI_Offset region = (MPI_Offset)2 * BLOCK * BLOCKS * size;
    check(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
    check(MPI_File_write_at(fh, region + (MPI_Offset)rank * INDEP, data, INDEP, MPI_BYTE,
                            MPI_STATUS_IGNORE), "write_at");
    check(MPI_File_seek(fh, region + (MPI_Offset)(size + rank) * INDEP, MPI_SEEK_SET), "seek");
    check(MPI_File_write(fh, data, INDEP, MPI_BYTE, &status), "write");
    MPI_Request file_request;
    check(MPI_File_iwrite_at(fh, region + (MPI_Offset)(2 * size + rank) * INDEP, data, INDEP,
                             MPI_BYTE, &file_request), "iwrite_at");
    check(MPI_Wait(&file_request, MPI_STATUS_IGNORE), "wait");
    fprintf(expect, "region=%lld\n", (long long)region);
    check(MPI_File_sync(fh), "sync");

    /* Collective read of everything this rank wrote collectively. */
    check(MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, resized, "native",
                            MPI_INFO_NULL), "set_view");
    check(MPI_File_read_all(fh, data, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE), "read_all");
    /* A strided view too large to flatten (4 MiB extent): recorded as view.vector. */
    MPI_Datatype strided;
    MPI_Type_create_hvector(1024, 1024, 4096, MPI_BYTE, &strided);
    MPI_Type_commit(&strided);
    check(MPI_File_set_view(fh, 0, MPI_BYTE, strided, "native", MPI_INFO_NULL), "set_view");
    MPI_Type_free(&strided);
    check(MPI_File_close(&fh), "close");
    MPI_Type_free(&resized);
    MPI_Type_free(&filetype);

    /* Ring: Irecv from the left, Isend to the right, Waitall ignoring the statuses. */
    int right = (rank + 1) % size;
    int out[16], in[16];
    for (int i = 0; i < 16; i++)
        out[i] = rank;
    MPI_Request requests[2];
    MPI_Status *volatile ignore = MPI_STATUSES_IGNORE; /* gcc warns on the bare constant */
    MPI_Irecv(in, 16, MPI_INT, MPI_ANY_SOURCE, TAG_RING, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(out, 16, MPI_INT, right, TAG_RING, MPI_COMM_WORLD, &requests[1]);
    check(MPI_Waitall(2, requests, ignore), "waitall");

    /* Sendrecv the other way, on a split communicator with ranks reversed. */
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    int rrank;
    MPI_Comm_rank(reversed, &rrank);
    int rright = (rrank + 1) % size, rleft = (rrank + size - 1) % size;
    double x = rank, y = -1;
    check(MPI_Sendrecv(&x, 1, MPI_DOUBLE, rright, 3, &y, 1, MPI_DOUBLE, rleft, 3, reversed,
                       MPI_STATUS_IGNORE), "sendrecv");
    MPI_Comm_free(&reversed);

    /* Everybody sends one int to rank 0, received with MPI_ANY_SOURCE / MPI_ANY_TAG. */
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, TAG_ANY + rank, MPI_COMM_WORLD);
    }

    /* Collectives. */
    long long value = rank, sum = 0;
    MPI_Bcast(&value, 1, MPI_LONG_LONG, size - 1, MPI_COMM_WORLD);
    MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int *all_out = calloc((size_t)size * 2, sizeof(int)), *all_in = calloc((size_t)size * 2, sizeof(int));
    MPI_Alltoall(all_out, 2, MPI_INT, all_in, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(expect, "done=1\n");
    fclose(expect);
    free(all_out);
    free(all_in);
    free(data);
    MPI_Finalize();
    return 0;
}
