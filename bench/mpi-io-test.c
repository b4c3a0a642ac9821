/* mpi-io-test.c: pioscope-mpi-io-test, after PVFS2's mpi-io-test: every rank writes then reads
 * back its blocks of a shared file, blocks dealt round-robin, a barrier before each operation. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#define READ_SENTINEL 0x5a

struct iotest {
    uint64_t blocks, block_size, iterations;
    int collective, keep, no_verify, json;
    const char *path;
    struct bench_hints hints;
    MPI_Info info;
    unsigned char *buf; /* this rank's blocks, back to back */
    uint64_t bytes;     /* per rank */
};

static MPI_Offset block_offset(const struct iotest *t, uint64_t k)
{
    /* Block b of the file belongs to rank b % nprocs: this rank's k-th block is b = k*n + rank. */
    return (MPI_Offset)((k * (uint64_t)bench_nprocs + (uint64_t)bench_rank) * t->block_size);
}

static const char *const hint_keys[] = {"cb_buffer_size", "cb_nodes", "romio_cb_write",
                                        "romio_cb_read", "striping_unit", "striping_factor",
                                        NULL};

/* One phase over this rank's blocks: barrier, then per block a barrier and one write_at or
 * read_at (or the _all forms), then for writes MPI_File_sync. Answers the slowest rank's time. */
static double phase(struct iotest *t, MPI_File fh, int writing)
{
    const char *call = writing ? (t->collective ? "MPI_File_write_at_all" : "MPI_File_write_at")
                               : (t->collective ? "MPI_File_read_at_all" : "MPI_File_read_at");
    int bs = (int)t->block_size;
    bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", NULL);
    double t0 = MPI_Wtime();
    for (uint64_t k = 0; k < t->blocks; k++) {
        MPI_Status st;
        unsigned char *p = t->buf + k * t->block_size;
        MPI_Offset off = block_offset(t, k);
        int rc;
        bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", NULL);
        if (writing)
            rc = t->collective ? MPI_File_write_at_all(fh, off, p, bs, MPI_BYTE, &st)
                               : MPI_File_write_at(fh, off, p, bs, MPI_BYTE, &st);
        else
            rc = t->collective ? MPI_File_read_at_all(fh, off, p, bs, MPI_BYTE, &st)
                               : MPI_File_read_at(fh, off, p, bs, MPI_BYTE, &st);
        bench_check(rc, call, t->path);
        int done;
        bench_check(MPI_Get_count(&st, MPI_BYTE, &done), "MPI_Get_count", NULL);
        if (done != bs)
            bench_fail("%s(%s) at offset %lld moved %d of %d bytes", call, t->path,
                       (long long)off, done, bs);
    }
    if (writing)
        bench_check(MPI_File_sync(fh), "MPI_File_sync", t->path);
    return bench_max_over_ranks(MPI_Wtime() - t0);
}

static uint64_t block_seed(uint64_t k, uint64_t iter)
{
    return bench_seed((uint64_t)bench_rank, iter, k);
}

static const char summary[] =
    "After PVFS2's mpi-io-test: each process writes --blocks blocks of --block-size bytes to one\n"
    "shared file, then reads them back and checks them. Blocks are dealt round-robin: block b of\n"
    "the file belongs to process b % nprocs, so process p's k-th block starts at\n"
    "(k*nprocs + p) * block_size. Every write_at / read_at (write_at_all / read_at_all with\n"
    "--collective) is preceded by a barrier.\n"
    "\n"
    "Timed per phase, as the slowest process's time: write = first barrier .. last write +\n"
    "MPI_File_sync; read = first barrier .. last read. Open and close are not timed. Bandwidth =\n"
    "aggregate bytes (nprocs * blocks * block_size) / time; the summary is the mean over\n"
    "iterations, dropping the fastest and slowest when there are >= 3.";

static const char epilog[] =
    "Example: mpiexec -n 4 pioscope-mpi-io-test --block-size 1M --collective";

int main(int argc, char **argv)
{
    struct iotest t = {
        .blocks = 16,
        .block_size = 65536,
        .iterations = 3,
        .path = "./pioscope-mpi-io-test.dat",
    };
    const struct bench_opt opts[] = {
        {.name = "blocks", .kind = BENCH_OPT_COUNT, .dest = &t.blocks, .min = 1,
         .max = INT32_MAX, .help = "Blocks each process writes and reads."},
        {.name = "block-size", .kind = BENCH_OPT_SIZE, .dest = &t.block_size, .min = 1,
         .max = INT32_MAX, .help = "Bytes per block (one call per block)."},
        {.name = "collective", .kind = BENCH_OPT_FLAG, .dest = &t.collective,
         .help = "Use MPI_File_write_at_all / read_at_all (default: the\n"
                 "independent MPI_File_write_at / read_at)."},
        {.name = "iterations", .kind = BENCH_OPT_COUNT, .dest = &t.iterations, .min = 1,
         .max = 1000000, .help = "Write+read iterations (the file is reopened each time)."},
        {.name = "hint", .kind = BENCH_OPT_HINT, .dest = &t.hints,
         .help = "MPI_Info hint given at open; repeatable."},
        {.name = "path", .kind = BENCH_OPT_STRING, .dest = &t.path, .metavar = "FILE",
         .help = "The shared file."},
        {.name = "keep", .kind = BENCH_OPT_FLAG, .dest = &t.keep,
         .help = "Leave the file in place at the end (default: delete it)."},
        {.name = "no-verify", .kind = BENCH_OPT_FLAG, .dest = &t.no_verify,
         .help = "Do not check the data read back."},
        {.name = "json", .kind = BENCH_OPT_FLAG, .dest = &t.json,
         .help = "Print one JSON object on stdout instead of the report."},
    };

    MPI_Init(&argc, &argv);
    bench_init("pioscope-mpi-io-test");
    int rc = bench_parse(argc, argv, summary, opts, (int)(sizeof opts / sizeof opts[0]), epilog);
    uint64_t file_bytes = 0;
    if (rc == BENCH_CONTINUE &&
        (!bench_mul_u64(t.blocks, t.block_size, &t.bytes) || (size_t)t.bytes != t.bytes ||
         !bench_mul_u64(t.bytes, (uint64_t)bench_nprocs, &file_bytes) ||
         file_bytes > (uint64_t)INT64_MAX))
        rc = bench_usage_error("--blocks %llu x --block-size %llu is too large",
                               (unsigned long long)t.blocks, (unsigned long long)t.block_size);
    if (rc != BENCH_CONTINUE) {
        MPI_Finalize();
        return rc;
    }
    bench_files_return_errors();
    t.info = bench_hints_info(&t.hints);
    t.buf = malloc(t.bytes);
    double *wtime = calloc(t.iterations, sizeof *wtime);
    double *rtime = calloc(t.iterations, sizeof *rtime);
    if (!t.buf || !wtime || !rtime)
        bench_fail("cannot allocate the %llu-byte buffer", (unsigned long long)t.bytes);

    struct bench_hint_values hv = {0};
    uint64_t done = 0, bad_total = 0;
    double wall0 = MPI_Wtime();
    for (uint64_t it = 0; it < t.iterations && bad_total == 0; it++) {
        MPI_File fh;
        for (uint64_t k = 0; k < t.blocks; k++)
            bench_fill(t.buf + k * t.block_size, t.block_size, block_seed(k, it));
        bench_check(MPI_File_open(MPI_COMM_WORLD, t.path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                  t.info, &fh),
                    "MPI_File_open", t.path);
        if (it == 0)
            bench_hint_values_get(fh, hint_keys, &hv);
        wtime[it] = phase(&t, fh, 1);
        memset(t.buf, READ_SENTINEL, t.bytes);
        rtime[it] = phase(&t, fh, 0);
        bench_check(MPI_File_close(&fh), "MPI_File_close", t.path);
        done = it + 1;

        if (t.no_verify)
            continue;
        uint64_t bad = 0;
        bench_maybe_corrupt(t.buf);
        for (uint64_t k = 0; k < t.blocks; k++) {
            uint64_t first = 0, seed = block_seed(k, it);
            uint64_t n = bench_compare(t.buf + k * t.block_size, t.block_size, seed, &first);
            if (n && bad == 0)
                fprintf(stderr, "%s: rank %d: iteration %llu: block at file offset %lld: %llu "
                                "wrong bytes, first at +%llu: expected 0x%02x, read 0x%02x\n",
                        bench_prog, bench_rank, (unsigned long long)it,
                        (long long)block_offset(&t, k), (unsigned long long)n,
                        (unsigned long long)first, bench_expected(seed, first),
                        t.buf[k * t.block_size + first]);
            bad += n;
        }
        bad_total = bench_sum_over_ranks(bad);
    }
    double wall = MPI_Wtime() - wall0;

    bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", NULL);
    if (!t.keep && bench_rank == 0)
        bench_check(MPI_File_delete(t.path, t.info), "MPI_File_delete", t.path);

    double agg = (double)file_bytes;
    const char *mode = t.collective ? "collective" : "independent";
    if (bench_rank == 0 && t.json) {
        struct bench_json j;
        bench_json_start(&j, stdout);
        bench_json_str(&j, "benchmark", "mpi-io-test");
        bench_json_u64(&j, "nprocs", (uint64_t)bench_nprocs);
        bench_json_object(&j, "config");
        bench_json_u64(&j, "blocks", t.blocks);
        bench_json_u64(&j, "block_size", t.block_size);
        bench_json_str(&j, "mode", mode);
        bench_json_u64(&j, "iterations", t.iterations);
        bench_json_str(&j, "path", t.path);
        bench_json_hints(&j, "hints", &t.hints);
        bench_json_end(&j, '}');
        bench_json_u64(&j, "bytes_per_process", t.bytes);
        bench_json_u64(&j, "aggregate_bytes", file_bytes);
        bench_json_hint_values(&j, "hints_in_effect", &hv);
        bench_json_u64(&j, "iterations_done", done);
        bench_json_passes(&j, "write", agg, wtime, done);
        bench_json_passes(&j, "read", agg, rtime, done);
        bench_json_object(&j, "verify");
        bench_json_bool(&j, "checked", !t.no_verify);
        bench_json_bool(&j, "ok", bad_total == 0);
        bench_json_u64(&j, "wrong_bytes", bad_total);
        bench_json_end(&j, '}');
        bench_json_f64(&j, "wall_s", wall);
        bench_json_finish(&j);
    } else if (bench_rank == 0) {
        char b1[32], b2[32], b3[32];
        printf("%s: %d processes, %s, %llu blocks x %s per process\n", bench_prog, bench_nprocs,
               mode, (unsigned long long)t.blocks, bench_fmt_bytes((double)t.block_size, b1));
        printf("  data       %s per process, %s aggregate (%s)\n",
               bench_fmt_bytes((double)t.bytes, b2), bench_fmt_bytes(agg, b3), t.path);
        bench_print_hints(&t.hints, &hv);
        bench_print_passes(agg, wtime, rtime, done);
        if (t.no_verify)
            printf("  verify     skipped\n");
        else if (bad_total)
            printf("  verify     FAILED: %llu wrong bytes in iteration %llu\n",
                   (unsigned long long)bad_total, (unsigned long long)done - 1);
        else
            printf("  verify     ok (%llu iterations)\n", (unsigned long long)done);
        printf("  wall       %.2f s\n", wall);
    }
    fflush(stdout);

    free(t.buf);
    free(wtime);
    free(rtime);
    bench_info_free(&t.info);
    MPI_Finalize();
    return bad_total ? BENCH_EXIT_VERIFY : BENCH_EXIT_OK;
}
