/* net.c: pioscope-cal-net, the MPI ping-pong behind `pioscope calibrate`: one-way time of a
 * message between ranks 0 and 1 across message sizes, as JSON. Whether the two ranks share a
 * node decides what it measures (intra-node shared memory, or the network between two nodes):
 * run it with one rank per node on two nodes to calibrate the network. With more than 2 ranks
 * the others busy-wait meanwhile (as MPI ranks do in a job), and it also times MPI_Barrier and
 * a small MPI_Alltoall over every rank: what a synchronization costs when the job's ranks share
 * fewer cores than they are (a waiting rank must be scheduled to answer), and cycles of ROMIO's
 * two-phase exchange into one aggregator (all ranks send, rank 0 receives into strided pieces):
 * the job's own exchange, with its scheduling, copies and datatype processing together. */
#define _POSIX_C_SOURCE 200809L
#include "../common.h"

#include <stdlib.h>
#include <string.h>

struct net_opts {
    uint64_t max_size;   /* largest message */
    uint64_t ms_per_size; /* time budget per size and repetition */
    uint64_t reps;       /* repetitions of each timed loop; the fastest counts */
    int json;
};

/* Ranks 0 and 1 exchange n messages of size bytes each way; answers the elapsed time on 0. */
static double pingpong(char *buf, uint64_t size, uint64_t n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (uint64_t i = 0; i < n; i++) {
        if (bench_rank == 0) {
            bench_check(MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD), "MPI_Send", NULL);
            bench_check(MPI_Recv(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                        "MPI_Recv", NULL);
        } else if (bench_rank == 1) {
            bench_check(MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                        "MPI_Recv", NULL);
            bench_check(MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD), "MPI_Send", NULL);
        }
    }
    return MPI_Wtime() - t0;
}

/* n rounds of a barrier, or of an 8-byte-per-peer all-to-all, over every rank; answers the
 * elapsed time on rank 0. */
static double sync_rounds(int alltoall, uint64_t *sendbuf, uint64_t *recvbuf, uint64_t n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (uint64_t i = 0; i < n; i++) {
        if (alltoall)
            bench_check(MPI_Alltoall(sendbuf, 1, MPI_UINT64_T, recvbuf, 1, MPI_UINT64_T,
                                     MPI_COMM_WORLD),
                        "MPI_Alltoall", NULL);
        else
            bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", NULL);
    }
    return MPI_Wtime() - t0;
}

/* Sorts a handful of times and answers the median. */
static double median(double *times, uint64_t k)
{
    for (uint64_t a = 1; a < k; a++) /* insertion sort: a handful of values */
        for (uint64_t b = a; b > 0 && times[b] < times[b - 1]; b--) {
            double x = times[b];
            times[b] = times[b - 1];
            times[b - 1] = x;
        }
    return times[k / 2];
}

/* Rounds per timed loop so that one loop takes about `ms` milliseconds, given one round's
 * time on rank 0 (3 to 100000; rank 0 decides for everyone). */
static uint64_t loops_for(double once_s, uint64_t ms)
{
    uint64_t n = 0;
    if (bench_rank == 0) {
        n = once_s > 0 ? (uint64_t)((double)ms * 1e-3 / once_s) : 1000;
        n = n < 3 ? 3 : n > 100000 ? 100000 : n;
    }
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return n;
}

/* Time of one synchronization (median of reps loops sized to the budget: scheduling delays are
 * the thing measured, so the fastest loop would hide them). */
static double sync_time(int alltoall, uint64_t ms, uint64_t reps)
{
    uint64_t *sendbuf = calloc((size_t)bench_nprocs, sizeof *sendbuf);
    uint64_t *recvbuf = calloc((size_t)bench_nprocs, sizeof *recvbuf);
    if (!sendbuf || !recvbuf)
        bench_fail("out of memory for the all-to-all buffers");
    uint64_t n = loops_for(sync_rounds(alltoall, sendbuf, recvbuf, 5) / 5.0, ms);
    double times[100];
    uint64_t k = reps < 100 ? reps : 100;
    for (uint64_t r = 0; r < k; r++)
        times[r] = sync_rounds(alltoall, sendbuf, recvbuf, n) / (double)n;
    free(sendbuf);
    free(recvbuf);
    return median(times, k);
}

/* n cycles of ROMIO's two-phase exchange with rank 0 as the aggregator: an 8-byte-per-peer
 * MPI_Alltoall (the sizes), then every rank (rank 0 too) sends `bytes` contiguous bytes to rank
 * 0, which receives each rank's share as `piece`-byte pieces interleaved with the others' and
 * 128-byte holes (an hindexed type into its collective buffer, as ROMIO receives HPIO's
 * regions), then MPI_Waitall. Answers the elapsed time on rank 0. */
static double cycle_rounds(uint64_t piece, uint64_t bytes, MPI_Datatype recv_type, char *cb,
                           char *sendbuf, uint64_t *a2a, uint64_t n)
{
    const uint64_t gap = 128;
    int nprocs = bench_nprocs;
    MPI_Request *req = calloc((size_t)nprocs + 1, sizeof *req);
    /* Statuses rather than MPI_STATUSES_IGNORE, which GCC's overflow check misreads. */
    MPI_Status *status = calloc((size_t)nprocs + 1, sizeof *status);
    if (!req || !status)
        bench_fail("out of memory for the requests");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (uint64_t i = 0; i < n; i++) {
        bench_check(MPI_Alltoall(a2a, 1, MPI_UINT64_T, a2a + nprocs, 1, MPI_UINT64_T,
                                 MPI_COMM_WORLD),
                    "MPI_Alltoall", NULL);
        int k = 0;
        if (bench_rank == 0)
            for (int r = 0; r < nprocs; r++)
                bench_check(MPI_Irecv(cb + (uint64_t)r * (piece + gap), 1, recv_type, r, 7,
                                      MPI_COMM_WORLD, &req[k++]),
                            "MPI_Irecv", NULL);
        bench_check(MPI_Isend(sendbuf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req[k++]),
                    "MPI_Isend", NULL);
        bench_check(MPI_Waitall(k, req, status), "MPI_Waitall", NULL);
    }
    free(req);
    free(status);
    return MPI_Wtime() - t0;
}

/* Median time of one exchange cycle (see cycle_rounds), loops sized to the budget. */
static double cycle_time(uint64_t piece, uint64_t bytes, uint64_t ms, uint64_t reps)
{
    const uint64_t gap = 128;
    uint64_t pieces = bytes / piece, nprocs = (uint64_t)bench_nprocs;
    uint64_t span = pieces * nprocs * (piece + gap);
    char *sendbuf = malloc(bytes), *cb = bench_rank == 0 ? malloc(span) : NULL;
    uint64_t *a2a = calloc(2 * nprocs, sizeof *a2a);
    int *lens = malloc(pieces * sizeof *lens);
    MPI_Aint *disps = malloc(pieces * sizeof *disps);
    if (!sendbuf || (bench_rank == 0 && !cb) || !a2a || !lens || !disps)
        bench_fail("out of memory for the exchange buffers");
    memset(sendbuf, 1, bytes);
    if (cb)
        memset(cb, 0, span);
    for (uint64_t i = 0; i < pieces; i++) {
        lens[i] = (int)piece;
        disps[i] = (MPI_Aint)(i * nprocs * (piece + gap));
    }
    MPI_Datatype t;
    MPI_Type_create_hindexed((int)pieces, lens, disps, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    uint64_t n = loops_for(cycle_rounds(piece, bytes, t, cb, sendbuf, a2a, 2) / 2.0, ms);
    double times[100];
    uint64_t k = reps < 100 ? reps : 100;
    for (uint64_t r = 0; r < k; r++)
        times[r] = cycle_rounds(piece, bytes, t, cb, sendbuf, a2a, n) / (double)n;
    MPI_Type_free(&t);
    free(sendbuf);
    free(cb);
    free(a2a);
    free(lens);
    free(disps);
    return median(times, k);
}

/* Rank 0 allocates 64 MiB (above glibc's largest mmap threshold, so fresh pages each time, as
 * ROMIO's per-call collective buffer) and fills it, while the other ranks busy-wait in a
 * barrier; answers the median fill rate in bytes per second (rank 0 only). */
static volatile int fresh_sink;

static double fresh_memory_rate(uint64_t reps)
{
    const size_t bytes = 64u << 20;
    double times[100];
    uint64_t k = reps < 100 ? reps + 2 : 100; /* a few more: each is a single fill */
    for (uint64_t r = 0; r < k && bench_rank == 0; r++) {
        double t0 = MPI_Wtime();
        char *p = malloc(bytes);
        if (!p)
            bench_fail("out of memory for a 64 MiB buffer");
        memset(p, (int)r + 1, bytes);
        /* Read it back through a volatile pointer: the fill must not be optimized away. */
        volatile char *v = p;
        for (size_t i = 0; i < bytes; i += 1u << 20)
            fresh_sink += v[i];
        times[r] = MPI_Wtime() - t0;
        free(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return bench_rank == 0 ? (double)bytes / median(times, k) : 0;
}

int main(int argc, char **argv)
{
    struct net_opts o = {.max_size = 4u << 20, .ms_per_size = 30, .reps = 3, .json = 0};
    const struct bench_opt opts[] = {
        {.name = "max-size", .kind = BENCH_OPT_SIZE, .dest = &o.max_size, .min = 1,
         .max = 1u << 30, .help = "Largest message; sizes go 1, 4, 16, ... up to it."},
        {.name = "ms-per-size", .kind = BENCH_OPT_COUNT, .dest = &o.ms_per_size, .min = 1,
         .max = 100000, .help = "Milliseconds each timed loop runs (iterations are chosen to fit)."},
        {.name = "reps", .kind = BENCH_OPT_COUNT, .dest = &o.reps, .min = 1, .max = 100,
         .help = "Timed loops per size; the fastest one counts."},
        {.name = "json", .kind = BENCH_OPT_FLAG, .dest = &o.json,
         .help = "Print one JSON object on stdout instead of the table."},
    };
    const char *summary = "MPI ping-pong between ranks 0 and 1 (other ranks wait): one-way time\n"
                          "per message size. Used by `pioscope calibrate`.";
    MPI_Init(&argc, &argv);
    bench_init("pioscope-cal-net");
    int rc = bench_parse(argc, argv, summary, opts, (int)(sizeof opts / sizeof opts[0]), NULL);
    if (rc == BENCH_CONTINUE && bench_nprocs < 2)
        rc = bench_usage_error("needs at least 2 ranks (got %d)", bench_nprocs);
    if (rc != BENCH_CONTINUE) {
        MPI_Finalize();
        return rc;
    }

    char host[MPI_MAX_PROCESSOR_NAME + 1] = {0}, host1[MPI_MAX_PROCESSOR_NAME + 1] = {0};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    if (bench_rank == 1)
        MPI_Send(host, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    if (bench_rank == 0)
        MPI_Recv(host1, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    char *buf = malloc(o.max_size);
    if (!buf)
        bench_fail("out of memory for a %llu-byte buffer", (unsigned long long)o.max_size);
    memset(buf, 1, o.max_size);

    struct bench_json j;
    if (bench_rank == 0) {
        if (o.json) {
            bench_json_start(&j, stdout);
            bench_json_str(&j, "benchmark", "net");
            bench_json_u64(&j, "ranks", (uint64_t)bench_nprocs);
            bench_json_str(&j, "host0", host);
            bench_json_str(&j, "host1", host1);
            bench_json_bool(&j, "same_node", strcmp(host, host1) == 0);
            bench_json_array(&j, "points");
        } else {
            printf("ping-pong %s <-> %s\n%12s %12s %14s\n", host, host1, "bytes", "iterations",
                   "one-way (us)");
        }
    }
    for (uint64_t size = 1; size <= o.max_size; size *= 4) {
        /* Warm up (connections, registration), then size the loop to the time budget. */
        double t = pingpong(buf, size, 5) / 5.0;
        uint64_t n = 0;
        if (bench_rank == 0) {
            double want = (double)o.ms_per_size * 1e-3;
            n = t > 0 ? (uint64_t)(want / t) : 1000;
            if (n < 3)
                n = 3;
            if (n > 1000000)
                n = 1000000;
        }
        MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        double best = 0;
        for (uint64_t r = 0; r < o.reps; r++) {
            double e = pingpong(buf, size, n);
            if (r == 0 || e < best)
                best = e;
        }
        double one_way = best / (2.0 * (double)n);
        if (bench_rank == 0) {
            if (o.json) {
                bench_json_object(&j, NULL);
                bench_json_u64(&j, "size", size);
                bench_json_u64(&j, "iterations", n);
                bench_json_f64(&j, "one_way_s", one_way);
                bench_json_end(&j, '}');
            } else {
                printf("%12llu %12llu %14.3f\n", (unsigned long long)size, (unsigned long long)n,
                       one_way * 1e6);
            }
        }
        if (size > o.max_size / 4)
            break;
    }
    /* Synchronizations over every rank: a longer budget, since one may cost a scheduler slice. */
    double barrier = sync_time(0, 10 * o.ms_per_size, o.reps);
    double alltoall = sync_time(1, 10 * o.ms_per_size, o.reps);
    if (bench_rank == 0) {
        if (o.json) {
            bench_json_end(&j, ']');
            bench_json_f64(&j, "barrier_s", barrier);
            bench_json_f64(&j, "alltoall_s", alltoall);
        } else {
            printf("%d ranks: MPI_Barrier %.3f us, MPI_Alltoall (8 B) %.3f us\n", bench_nprocs,
                   barrier * 1e6, alltoall * 1e6);
        }
    }
    double fresh = fresh_memory_rate(o.reps);
    if (bench_rank == 0) {
        if (o.json) {
            bench_json_f64(&j, "fresh_memory_bytes_per_s", fresh);
            bench_json_array(&j, "exchange");
        } else {
            printf("fill of fresh memory (64 MiB): %.2f GB/s\n", fresh * 1e-9);
        }
    }
    /* Two-phase exchange cycles into rank 0: small and large pieces, little and much data. */
    const uint64_t cycles[][2] = {{32, 64u << 10}, {32, 1u << 20}, {1024, 1u << 20}, {1024, 8u << 20}};
    for (size_t c = 0; c < sizeof cycles / sizeof cycles[0]; c++) {
        uint64_t piece = cycles[c][0], bytes = cycles[c][1];
        double e = cycle_time(piece, bytes, 10 * o.ms_per_size, o.reps);
        uint64_t total = bytes * (uint64_t)bench_nprocs;
        if (bench_rank == 0 && o.json) {
            bench_json_object(&j, NULL);
            bench_json_u64(&j, "bytes", total);
            bench_json_u64(&j, "pieces", total / piece);
            bench_json_f64(&j, "s", e);
            bench_json_end(&j, '}');
        } else if (bench_rank == 0) {
            printf("exchange cycle: %d x %llu B in %llu-byte pieces into rank 0: %.3f us\n",
                   bench_nprocs, (unsigned long long)bytes, (unsigned long long)piece, e * 1e6);
        }
    }
    if (bench_rank == 0 && o.json) {
        bench_json_end(&j, ']');
        bench_json_finish(&j);
    }
    free(buf);
    MPI_Finalize();
    return BENCH_EXIT_OK;
}
