/* mpi_all_calls.c: calls every MPI and MPI-IO function of functions.def at least once (the
 * MPI-4 large-count _c forms with the same arguments as their int twins), for
 * check_all_calls.py to verify that each one is recorded with its family's fields (object,
 * flags, link, size). Needs an even number of ranks >= 2.
 *
 *   mpiexec -n 4 ./mpi_all_calls <data file> */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256 /* bytes per rank per file access */

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "mpi_all_calls: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The MPI-4 large-count forms exist only in an MPI-4 library (MPICH 4; not Open MPI 4.1, an
 * MPI-3 library): they are built, and checked by check_all_calls.py, only there. */
#if MPI_VERSION >= 4
#define HAVE_LARGE_COUNT 1
#else
#define HAVE_LARGE_COUNT 0
#endif

#if HAVE_LARGE_COUNT
/* The _c forms of every data access, stripes 8-13 as stripes 0-5 above, then the shared
 * pointer at stripe 14. */
static void large_count_file_calls(MPI_File fh, int rank, int size)
{
    MPI_Status st;
    MPI_Request req;
    char buf[N];
    memset(buf, 'a' + rank, sizeof buf);
    MPI_Count n = N;
    MPI_Offset mine = (MPI_Offset)rank * N, stripe = (MPI_Offset)size * N;

    check(MPI_File_write_at_c(fh, 8 * stripe + mine, buf, n, MPI_BYTE, &st), "write_at_c");
    check(MPI_File_read_at_c(fh, 8 * stripe + mine, buf, n, MPI_BYTE, &st), "read_at_c");
    check(MPI_File_write_at_all_c(fh, 8 * stripe + mine, buf, n, MPI_BYTE, &st), "wa_all_c");
    check(MPI_File_read_at_all_c(fh, 8 * stripe + mine, buf, n, MPI_BYTE, &st), "ra_all_c");
    check(MPI_File_seek(fh, 9 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_write_c(fh, buf, n, MPI_BYTE, &st), "write_c");
    check(MPI_File_seek(fh, 9 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_read_c(fh, buf, n, MPI_BYTE, &st), "read_c");
    check(MPI_File_seek(fh, 9 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_write_all_c(fh, buf, n, MPI_BYTE, &st), "write_all_c");
    check(MPI_File_seek(fh, 9 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_read_all_c(fh, buf, n, MPI_BYTE, &st), "read_all_c");

    check(MPI_File_iwrite_at_c(fh, 10 * stripe + mine, buf, n, MPI_BYTE, &req), "iwrite_at_c");
    check(MPI_Wait(&req, &st), "wait");
    check(MPI_File_iread_at_c(fh, 10 * stripe + mine, buf, n, MPI_BYTE, &req), "iread_at_c");
    check(MPI_Wait(&req, &st), "wait");
    check(MPI_File_iwrite_at_all_c(fh, 10 * stripe + mine, buf, n, MPI_BYTE, &req), "iwaa_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_iread_at_all_c(fh, 10 * stripe + mine, buf, n, MPI_BYTE, &req), "iraa_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 11 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iwrite_c(fh, buf, n, MPI_BYTE, &req), "iwrite_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 11 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iread_c(fh, buf, n, MPI_BYTE, &req), "iread_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 11 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iwrite_all_c(fh, buf, n, MPI_BYTE, &req), "iwrite_all_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 11 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iread_all_c(fh, buf, n, MPI_BYTE, &req), "iread_all_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");

    check(MPI_File_write_at_all_begin_c(fh, 12 * stripe + mine, buf, n, MPI_BYTE), "wab_c");
    check(MPI_File_write_at_all_end(fh, buf, &st), "wa_end");
    check(MPI_File_read_at_all_begin_c(fh, 12 * stripe + mine, buf, n, MPI_BYTE), "rab_c");
    check(MPI_File_read_at_all_end(fh, buf, &st), "ra_end");
    check(MPI_File_seek(fh, 13 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_write_all_begin_c(fh, buf, n, MPI_BYTE), "w_begin_c");
    check(MPI_File_write_all_end(fh, buf, MPI_STATUS_IGNORE), "w_end");
    check(MPI_File_seek(fh, 13 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_read_all_begin_c(fh, buf, n, MPI_BYTE), "r_begin_c");
    check(MPI_File_read_all_end(fh, buf, MPI_STATUS_IGNORE), "r_end");

    check(MPI_File_seek_shared(fh, 14 * stripe, MPI_SEEK_SET), "seek_shared");
    check(MPI_File_write_shared_c(fh, buf, n, MPI_BYTE, &st), "write_shared_c");
    check(MPI_File_write_ordered_c(fh, buf, n, MPI_BYTE, &st), "write_ordered_c");
    check(MPI_File_iwrite_shared_c(fh, buf, n, MPI_BYTE, &req), "iwrite_shared_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_write_ordered_begin_c(fh, buf, n, MPI_BYTE), "wo_begin_c");
    check(MPI_File_write_ordered_end(fh, buf, &st), "wo_end");
    check(MPI_File_seek_shared(fh, 14 * stripe, MPI_SEEK_SET), "seek_shared");
    check(MPI_File_read_shared_c(fh, buf, n, MPI_BYTE, &st), "read_shared_c");
    check(MPI_File_read_ordered_c(fh, buf, n, MPI_BYTE, &st), "read_ordered_c");
    check(MPI_File_iread_shared_c(fh, buf, n, MPI_BYTE, &req), "iread_shared_c");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_read_ordered_begin_c(fh, buf, n, MPI_BYTE), "ro_begin_c");
    check(MPI_File_read_ordered_end(fh, buf, &st), "ro_end");
}
#endif

static int datarep_extent(MPI_Datatype type, MPI_Aint *extent, void *state)
{
    MPI_Aint lb;
    (void)state;
    return MPI_Type_get_extent(type, &lb, extent);
}

/* The queries, atomicity and data representations of the file chapter. */
static void file_queries(MPI_File fh)
{
    MPI_Offset size, position, byte, disp;
    MPI_Group group;
    MPI_Info info;
    MPI_Datatype etype, filetype;
    MPI_Aint extent;
    char datarep[MPI_MAX_DATAREP_STRING];
    int amode, flag;
    check(MPI_File_get_size(fh, &size), "get_size");
    check(MPI_File_get_group(fh, &group), "get_group");
    MPI_Group_free(&group);
    check(MPI_File_get_amode(fh, &amode), "get_amode");
    check(MPI_File_get_info(fh, &info), "get_info");
    MPI_Info_free(&info);
    check(MPI_File_get_view(fh, &disp, &etype, &filetype, datarep), "get_view");
    check(MPI_File_get_position(fh, &position), "get_position");
    check(MPI_File_get_position_shared(fh, &position), "get_position_shared");
    check(MPI_File_get_byte_offset(fh, position, &byte), "get_byte_offset");
    check(MPI_File_get_type_extent(fh, MPI_INT, &extent), "get_type_extent");
#if HAVE_LARGE_COUNT
    MPI_Count extent_c;
    check(MPI_File_get_type_extent_c(fh, MPI_INT, &extent_c), "get_type_extent_c");
#endif
    check(MPI_File_set_atomicity(fh, 1), "set_atomicity");
    check(MPI_File_get_atomicity(fh, &flag), "get_atomicity");
    check(MPI_File_set_atomicity(fh, 0), "set_atomicity");
    /* Open MPI's OMPIO refuses new data representations: the call is recorded all the same. */
    MPI_Register_datarep("pioscope_test", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                         datarep_extent, NULL);
#if HAVE_LARGE_COUNT
    check(MPI_Register_datarep_c("pioscope_test_c", MPI_CONVERSION_FN_NULL_C,
                                 MPI_CONVERSION_FN_NULL_C, datarep_extent, NULL),
          "register_datarep_c");
#endif
}

static void file_calls(const char *path, int rank, int size)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    char buf[N];
    int flag = 0;
    memset(buf, 'A' + rank, sizeof buf);
    MPI_Offset mine = (MPI_Offset)rank * N, stripe = (MPI_Offset)size * N;

    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh), "open");
    check(MPI_File_set_size(fh, 0), "set_size");
    check(MPI_File_preallocate(fh, 16 * stripe), "preallocate");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    check(MPI_File_set_info(fh, info), "set_info");
    MPI_Info_free(&info);
    check(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");

    /* Stripe 0: explicit offsets; 1: individual pointer; 2-3: nonblocking; 4-5: split. */
    check(MPI_File_write_at(fh, mine, buf, N, MPI_BYTE, &st), "write_at");
    check(MPI_File_read_at(fh, mine, buf, N, MPI_BYTE, &st), "read_at");
    check(MPI_File_write_at_all(fh, mine, buf, N, MPI_BYTE, &st), "write_at_all");
    check(MPI_File_read_at_all(fh, mine, buf, N, MPI_BYTE, &st), "read_at_all");
    check(MPI_File_seek(fh, stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_write(fh, buf, N, MPI_BYTE, &st), "write");
    check(MPI_File_seek(fh, stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_read(fh, buf, N, MPI_BYTE, &st), "read");
    check(MPI_File_seek(fh, stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_write_all(fh, buf, N, MPI_BYTE, &st), "write_all");
    check(MPI_File_seek(fh, stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_read_all(fh, buf, N, MPI_BYTE, &st), "read_all");

    check(MPI_File_iwrite_at(fh, 2 * stripe + mine, buf, N, MPI_BYTE, &req), "iwrite_at");
    check(MPI_Wait(&req, &st), "wait");
    check(MPI_File_iread_at(fh, 2 * stripe + mine, buf, N, MPI_BYTE, &req), "iread_at");
    do
        check(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "test");
    while (!flag);
    check(MPI_File_iwrite_at_all(fh, 2 * stripe + mine, buf, N, MPI_BYTE, &req), "iwrite_at_all");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_iread_at_all(fh, 2 * stripe + mine, buf, N, MPI_BYTE, &req), "iread_at_all");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 3 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iwrite(fh, buf, N, MPI_BYTE, &req), "iwrite");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 3 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iread(fh, buf, N, MPI_BYTE, &req), "iread");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 3 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iwrite_all(fh, buf, N, MPI_BYTE, &req), "iwrite_all");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_seek(fh, 3 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_iread_all(fh, buf, N, MPI_BYTE, &req), "iread_all");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");

    check(MPI_File_write_at_all_begin(fh, 4 * stripe + mine, buf, N, MPI_BYTE), "wa_begin");
    check(MPI_File_write_at_all_end(fh, buf, &st), "wa_end");
    check(MPI_File_read_at_all_begin(fh, 4 * stripe + mine, buf, N, MPI_BYTE), "ra_begin");
    check(MPI_File_read_at_all_end(fh, buf, &st), "ra_end");
    check(MPI_File_seek(fh, 5 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_write_all_begin(fh, buf, N, MPI_BYTE), "w_begin");
    check(MPI_File_write_all_end(fh, buf, MPI_STATUS_IGNORE), "w_end");
    check(MPI_File_seek(fh, 5 * stripe + mine, MPI_SEEK_SET), "seek");
    check(MPI_File_read_all_begin(fh, buf, N, MPI_BYTE), "r_begin");
    check(MPI_File_read_all_end(fh, buf, MPI_STATUS_IGNORE), "r_end");

    /* Shared pointer: offsets unknown. */
    check(MPI_File_seek_shared(fh, 6 * stripe, MPI_SEEK_SET), "seek_shared");
    check(MPI_File_write_shared(fh, buf, N, MPI_BYTE, &st), "write_shared");
    check(MPI_File_write_ordered(fh, buf, N, MPI_BYTE, &st), "write_ordered");
    check(MPI_File_iwrite_shared(fh, buf, N, MPI_BYTE, &req), "iwrite_shared");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_write_ordered_begin(fh, buf, N, MPI_BYTE), "wo_begin");
    check(MPI_File_write_ordered_end(fh, buf, &st), "wo_end");
    check(MPI_File_seek_shared(fh, 6 * stripe, MPI_SEEK_SET), "seek_shared");
    check(MPI_File_read_shared(fh, buf, N, MPI_BYTE, &st), "read_shared");
    check(MPI_File_read_ordered(fh, buf, N, MPI_BYTE, &st), "read_ordered");
    check(MPI_File_iread_shared(fh, buf, N, MPI_BYTE, &req), "iread_shared");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_File_read_ordered_begin(fh, buf, N, MPI_BYTE), "ro_begin");
    check(MPI_File_read_ordered_end(fh, buf, &st), "ro_end");

#if HAVE_LARGE_COUNT
    large_count_file_calls(fh, rank, size);
#endif
    file_queries(fh);

    check(MPI_File_sync(fh), "sync");
    check(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        check(MPI_File_delete(path, MPI_INFO_NULL), "delete");
}

static void p2p_calls(int rank, int size)
{
    int partner = rank ^ 1; /* pairs (0,1), (2,3), ... */
    int v = rank, w = -1;
    MPI_Status st;
    MPI_Request reqs[4];
    int index, count, flag, indices[4];
    if (partner >= size)
        return;
    char bsend_buf[MPI_BSEND_OVERHEAD + 64];
    void *detached;
    int detached_size;
    MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);
    if (rank % 2 == 0) {
        MPI_Send(&v, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
        MPI_Ssend(&v, 1, MPI_INT, partner, 2, MPI_COMM_WORLD);
        MPI_Bsend(&v, 1, MPI_INT, partner, 3, MPI_COMM_WORLD);
        MPI_Recv(&w, 0, MPI_INT, partner, 4, MPI_COMM_WORLD, &st); /* partner's Irecv is up */
        MPI_Rsend(&v, 1, MPI_INT, partner, 5, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&w, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, &st);
        MPI_Recv(&w, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st);
        MPI_Irecv(&w, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &reqs[0]);
        MPI_Send(&v, 0, MPI_INT, partner, 4, MPI_COMM_WORLD);
        MPI_Wait(&reqs[0], &st);
    }
    MPI_Buffer_detach(&detached, &detached_size);

    /* Nonblocking: Waitall, Waitany, Waitsome, Testall, Testany, Testsome. */
    int a[4] = {rank, rank, rank, rank}, b[4];
    MPI_Status *volatile ignore = MPI_STATUSES_IGNORE; /* gcc warns on the bare constant */
    MPI_Status sts[2];
    /* Sends that complete at once share one built-in handle in MPICH: each must still get its
     * own completion. */
    for (int i = 0; i < 3; i++)
        MPI_Isend(&a[i], 1, MPI_INT, partner, 20 + i, MPI_COMM_WORLD, &reqs[i]);
    for (int i = 2; i >= 0; i--)
        MPI_Recv(&b[i], 1, MPI_INT, partner, 20 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(3, reqs, ignore);
    MPI_Irecv(&b[0], 1, MPI_INT, partner, 10, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&a[0], 1, MPI_INT, partner, 10, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitany(2, reqs, &index, &st);
    MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE);
    MPI_Irecv(&b[1], 1, MPI_INT, partner, 11, MPI_COMM_WORLD, &reqs[0]);
    MPI_Issend(&a[1], 1, MPI_INT, partner, 11, MPI_COMM_WORLD, &reqs[1]);
    for (int done = 0; done < 2; done += count)
        MPI_Waitsome(2, reqs, &count, indices, sts);
    MPI_Irecv(&b[2], 1, MPI_INT, partner, 12, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&a[2], 1, MPI_INT, partner, 12, MPI_COMM_WORLD, &reqs[1]);
    do
        MPI_Testall(2, reqs, &flag, ignore);
    while (!flag);
    MPI_Irecv(&b[3], 1, MPI_INT, partner, 13, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&a[3], 1, MPI_INT, partner, 13, MPI_COMM_WORLD, &reqs[1]);
    for (int done = 0; done < 2;) {
        MPI_Testany(2, reqs, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED)
            done++;
    }
    MPI_Irecv(&b[0], 1, MPI_INT, partner, 14, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&a[0], 1, MPI_INT, partner, 14, MPI_COMM_WORLD, &reqs[1]);
    for (int done = 0; done < 2;) {
        MPI_Testsome(2, reqs, &count, indices, ignore);
        if (count != MPI_UNDEFINED)
            done += count;
    }
    MPI_Sendrecv(&v, 1, MPI_INT, partner, 15, &w, 1, MPI_INT, partner, 15, MPI_COMM_WORLD, &st);

#if HAVE_LARGE_COUNT
    /* The _c forms (tags 30-39), each as its int twin above. */
    MPI_Count one = 1;
    MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);
    if (rank % 2 == 0) {
        MPI_Send_c(&v, one, MPI_INT, partner, 31, MPI_COMM_WORLD);
        MPI_Ssend_c(&v, one, MPI_INT, partner, 32, MPI_COMM_WORLD);
        MPI_Bsend_c(&v, one, MPI_INT, partner, 33, MPI_COMM_WORLD);
        MPI_Recv_c(&w, 0, MPI_INT, partner, 34, MPI_COMM_WORLD, &st);
        MPI_Rsend_c(&v, one, MPI_INT, partner, 35, MPI_COMM_WORLD);
    } else {
        MPI_Recv_c(&w, one, MPI_INT, partner, 31, MPI_COMM_WORLD, &st);
        MPI_Recv_c(&w, one, MPI_INT, partner, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv_c(&w, one, MPI_INT, MPI_ANY_SOURCE, 33, MPI_COMM_WORLD, &st);
        MPI_Irecv_c(&w, one, MPI_INT, partner, 35, MPI_COMM_WORLD, &reqs[0]);
        MPI_Send_c(&v, 0, MPI_INT, partner, 34, MPI_COMM_WORLD);
        MPI_Wait(&reqs[0], &st);
    }
    MPI_Buffer_detach(&detached, &detached_size);
    MPI_Irecv_c(&b[0], one, MPI_INT, partner, 36, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend_c(&a[0], one, MPI_INT, partner, 36, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, ignore);
    MPI_Irecv_c(&b[1], one, MPI_INT, partner, 37, MPI_COMM_WORLD, &reqs[0]);
    MPI_Issend_c(&a[1], one, MPI_INT, partner, 37, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, ignore);
    MPI_Sendrecv_c(&v, one, MPI_INT, partner, 38, &w, one, MPI_INT, partner, 38, MPI_COMM_WORLD,
                   &st);
#endif
}

static void collective_calls(int rank, int size)
{
    int n = size;
    int *s = calloc((size_t)n * 4, sizeof(int)), *r = calloc((size_t)n * 4, sizeof(int));
    int *counts = malloc((size_t)n * sizeof(int)), *displs = malloc((size_t)n * sizeof(int));
    MPI_Datatype *types = malloc((size_t)n * sizeof(MPI_Datatype));
    int *bdispls = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        counts[i] = 2;
        displs[i] = 2 * i;
        types[i] = MPI_INT;
        bdispls[i] = 2 * i * (int)sizeof(int);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(s, 4, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Reduce(s, r, 4, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
    MPI_Allreduce(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gather(s, 2, MPI_INT, r, 2, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Gatherv(s, 2, MPI_INT, r, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Scatter(s, 2, MPI_INT, r, 2, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Scatterv(s, counts, displs, MPI_INT, r, 2, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Allgather(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(s, 2, MPI_INT, r, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(s, counts, displs, MPI_INT, r, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallw(s, counts, bdispls, types, r, counts, bdispls, types, MPI_COMM_WORLD);
    MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(s, r, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

#if HAVE_LARGE_COUNT
    /* The _c forms: MPI_Count counts, MPI_Aint displacements. */
    MPI_Count *ccounts = malloc((size_t)n * sizeof(MPI_Count));
    MPI_Aint *cdispls = malloc((size_t)n * sizeof(MPI_Aint));
    MPI_Aint *cbdispls = malloc((size_t)n * sizeof(MPI_Aint));
    for (int i = 0; i < n; i++) {
        ccounts[i] = counts[i];
        cdispls[i] = displs[i];
        cbdispls[i] = bdispls[i];
    }
    MPI_Bcast_c(s, 4, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Reduce_c(s, r, 4, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
    MPI_Allreduce_c(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gather_c(s, 2, MPI_INT, r, 2, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Gatherv_c(s, 2, MPI_INT, r, ccounts, cdispls, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Scatter_c(s, 2, MPI_INT, r, 2, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Scatterv_c(s, ccounts, cdispls, MPI_INT, r, 2, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Allgather_c(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv_c(s, 2, MPI_INT, r, ccounts, cdispls, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall_c(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv_c(s, ccounts, cdispls, MPI_INT, r, ccounts, cdispls, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallw_c(s, ccounts, cbdispls, types, r, ccounts, cbdispls, types, MPI_COMM_WORLD);
    MPI_Reduce_scatter_c(s, r, ccounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block_c(s, r, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan_c(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan_c(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(ccounts);
    free(cdispls);
    free(cbdispls);
#endif
    (void)rank;
    free(s);
    free(r);
    free(counts);
    free(displs);
    free(types);
    free(bdispls);
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    if (argc < 2) {
        fprintf(stderr, "usage: mpi_all_calls <data file>\n");
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    file_calls(argv[1], rank, size);
    p2p_calls(rank, size);
    collective_calls(rank, size);
    MPI_Finalize();
    return 0;
}
