/* hpio.c: pioscope-hpio, the HPIO access pattern (Ching et al.): region count/size/spacing,
 * contiguous or not in memory and in the file, independent or collective, timed open..close. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

enum { LAYOUT_CONTIG, LAYOUT_NONCONTIG };
enum { MODE_INDEPENDENT, MODE_COLLECTIVE };
enum { OP_WRITE, OP_READ, OP_BOTH };

static const char *const layouts[] = {"contig", "noncontig", NULL};
static const char *const modes[] = {"independent", "collective", NULL};
static const char *const ops[] = {"write", "read", "both", NULL};

/* Read back into a buffer filled with this byte: the gaps of a noncontiguous memory layout must
 * still hold it afterwards. Written gaps hold GAP_FILL, which must never reach the file. */
#define READ_SENTINEL 0x5a
#define GAP_FILL 0xee

struct hpio {
    /* options */
    uint64_t region_size, region_count, region_spacing, iterations;
    int mem, file_layout, mode, op, keep, no_verify, json;
    const char *path;
    struct bench_hints hints;
    /* derived */
    uint64_t stride;      /* region_size + region_spacing */
    uint64_t bytes;       /* data bytes per process */
    uint64_t buf_len;     /* bytes of the memory buffer */
    uint64_t file_extent; /* bytes from offset 0 to the end of the last region in the file */
    MPI_Datatype memtype, filetype;
    int memcount;
    MPI_Offset disp;
    MPI_Info info;
    unsigned char *buf;
};

/* What a failed verification found on this rank (first mismatch only). */
struct mismatch {
    uint64_t bytes; /* wrong bytes in regions */
    uint64_t gaps;  /* memory-gap bytes the read overwrote */
    uint64_t region, offset;
    int expected, got;
};

/* Every region's bytes depend on (rank, region, iteration), so data that lands at another
 * rank's offset, in another region, or left over from an earlier iteration is caught. */
static uint64_t region_seed(int rank, uint64_t region, uint64_t iter)
{
    return bench_seed((uint64_t)rank, iter, region);
}

static unsigned char *region_ptr(const struct hpio *h, uint64_t i)
{
    return h->buf + i * (h->mem == LAYOUT_CONTIG ? h->region_size : h->stride);
}

static void fill_buffer(struct hpio *h, uint64_t iter)
{
    if (h->mem == LAYOUT_NONCONTIG)
        memset(h->buf, GAP_FILL, h->buf_len);
    for (uint64_t i = 0; i < h->region_count; i++) {
        unsigned char *p = region_ptr(h, i);
        bench_fill(p, h->region_size, region_seed(bench_rank, i, iter));
    }
}

static uint64_t file_offset(const struct hpio *h, uint64_t region, uint64_t j)
{
    if (h->file_layout == LAYOUT_CONTIG)
        return (uint64_t)h->disp + region * h->region_size + j;
    return (region * (uint64_t)bench_nprocs + (uint64_t)bench_rank) * h->stride + j;
}

static void check_buffer(const struct hpio *h, uint64_t iter, struct mismatch *m)
{
    memset(m, 0, sizeof *m);
    for (uint64_t i = 0; i < h->region_count; i++) {
        const unsigned char *p = region_ptr(h, i);
        uint64_t seed = region_seed(bench_rank, i, iter), j = 0;
        uint64_t bad = bench_compare(p, h->region_size, seed, &j);
        if (bad && m->bytes == 0) {
            m->region = i;
            m->offset = file_offset(h, i, j);
            m->expected = bench_expected(seed, j);
            m->got = p[j];
        }
        m->bytes += bad;
        if (h->mem == LAYOUT_NONCONTIG)
            for (uint64_t g = h->region_size; g < h->stride; g++)
                m->gaps += p[g] != READ_SENTINEL;
    }
}

/* ---- setup ----------------------------------------------------------------------------- */

static int derive(struct hpio *h)
{
    h->stride = h->region_size + h->region_spacing;
    uint64_t n = (uint64_t)bench_nprocs;
    if (!bench_mul_u64(h->region_count, h->region_size, &h->bytes) ||
        !bench_mul_u64(h->region_count, h->mem == LAYOUT_CONTIG ? h->region_size : h->stride,
                       &h->buf_len) ||
        (size_t)h->buf_len != h->buf_len)
        return bench_usage_error("--region-count %llu x --region-size %llu (+ --region-spacing) "
                                 "does not fit in memory",
                                 (unsigned long long)h->region_count,
                                 (unsigned long long)h->region_size);
    uint64_t all;
    if (h->file_layout == LAYOUT_NONCONTIG) {
        if (!bench_mul_u64(h->region_count, n, &all) || !bench_mul_u64(all, h->stride, &all) ||
            all > (uint64_t)INT64_MAX)
            return bench_usage_error("the file would exceed 2^63 bytes: reduce --region-count, "
                                     "--region-size or --region-spacing");
        h->file_extent = all - h->region_spacing;
        h->disp = (MPI_Offset)((uint64_t)bench_rank * h->stride);
    } else {
        if (!bench_mul_u64(h->bytes, n, &all) || all > (uint64_t)INT64_MAX)
            return bench_usage_error("the file would exceed 2^63 bytes: reduce --region-count "
                                     "or --region-size");
        h->file_extent = all;
        h->disp = (MPI_Offset)((uint64_t)bench_rank * h->bytes);
    }
    return BENCH_CONTINUE;
}

static void build_types(struct hpio *h)
{
    int size = (int)h->region_size, count = (int)h->region_count;
    if (h->mem == LAYOUT_CONTIG) {
        bench_check(MPI_Type_contiguous(size, MPI_BYTE, &h->memtype), "MPI_Type_contiguous",
                    NULL);
        h->memcount = count;
    } else {
        /* Memory holds the same region/spacing pattern as a noncontiguous file would. */
        bench_check(MPI_Type_create_hvector(count, size, (MPI_Aint)h->stride, MPI_BYTE,
                                            &h->memtype),
                    "MPI_Type_create_hvector", NULL);
        h->memcount = 1;
    }
    bench_check(MPI_Type_commit(&h->memtype), "MPI_Type_commit", NULL);

    if (h->file_layout == LAYOUT_CONTIG) {
        h->filetype = MPI_BYTE; /* the displacement alone places each rank's block */
        return;
    }
    /* Rank p's region i at (i * nprocs + p) * stride: the displacement gives p * stride, the
     * vector steps nprocs * stride. Resized to the whole interleaved pattern so that the view
     * tiles correctly should a caller ever write more than one instance. */
    MPI_Datatype vec;
    MPI_Aint step = (MPI_Aint)(h->stride * (uint64_t)bench_nprocs);
    bench_check(MPI_Type_create_hvector(count, size, step, MPI_BYTE, &vec),
                "MPI_Type_create_hvector", NULL);
    bench_check(MPI_Type_create_resized(vec, 0, step * (MPI_Aint)count, &h->filetype),
                "MPI_Type_create_resized", NULL);
    bench_check(MPI_Type_free(&vec), "MPI_Type_free", NULL);
    bench_check(MPI_Type_commit(&h->filetype), "MPI_Type_commit", NULL);
}

/* ---- one timed pass -------------------------------------------------------------------- */

static const char *const write_hint_keys[] = {"cb_buffer_size", "cb_nodes", "romio_cb_write",
                                              "romio_ds_write", "ind_wr_buffer_size", NULL};
static const char *const read_hint_keys[] = {"cb_buffer_size", "cb_nodes", "romio_cb_read",
                                             "romio_ds_read", "ind_rd_buffer_size", NULL};
static const char *const both_hint_keys[] = {
    "cb_buffer_size",     "cb_nodes",      "romio_cb_write", "romio_ds_write",
    "ind_wr_buffer_size", "romio_cb_read", "romio_ds_read",  "ind_rd_buffer_size",
    NULL};

/* Barrier, then open + set_view + write (+ sync) or read + close, timed; the answer is the
 * slowest rank's time. When hv is not NULL the hints in effect are read before closing. */
static double timed_pass(struct hpio *h, int writing, struct bench_hint_values *hv)
{
    MPI_File fh;
    MPI_Status st;
    int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    int rc;

    bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", NULL);
    double t0 = MPI_Wtime();
    bench_check(MPI_File_open(MPI_COMM_WORLD, h->path, amode, h->info, &fh), "MPI_File_open",
                h->path);
    bench_check(MPI_File_set_view(fh, h->disp, MPI_BYTE, h->filetype, "native", h->info),
                "MPI_File_set_view", h->path);
    if (writing) {
        if (h->mode == MODE_COLLECTIVE)
            rc = MPI_File_write_all(fh, h->buf, h->memcount, h->memtype, &st);
        else
            rc = MPI_File_write(fh, h->buf, h->memcount, h->memtype, &st);
        bench_check(rc, h->mode == MODE_COLLECTIVE ? "MPI_File_write_all" : "MPI_File_write",
                    h->path);
        /* HPIO counts the sync: the data has to reach the file system, not just a cache. */
        bench_check(MPI_File_sync(fh), "MPI_File_sync", h->path);
    } else {
        if (h->mode == MODE_COLLECTIVE)
            rc = MPI_File_read_all(fh, h->buf, h->memcount, h->memtype, &st);
        else
            rc = MPI_File_read(fh, h->buf, h->memcount, h->memtype, &st);
        bench_check(rc, h->mode == MODE_COLLECTIVE ? "MPI_File_read_all" : "MPI_File_read",
                    h->path);
    }
    if (hv)
        bench_hint_values_get(fh, h->op == OP_BOTH ? both_hint_keys
                                  : writing        ? write_hint_keys
                                                   : read_hint_keys,
                              hv);
    bench_check(MPI_File_close(&fh), "MPI_File_close", h->path);
    double t = MPI_Wtime() - t0;

    MPI_Count done;
    bench_check(MPI_Get_elements_x(&st, h->memtype, &done), "MPI_Get_elements_x", NULL);
    if ((uint64_t)done != h->bytes)
        bench_fail("%s %s: transferred %lld of %llu bytes", writing ? "write" : "read", h->path,
                   (long long)done, (unsigned long long)h->bytes);
    return bench_max_over_ranks(t);
}

/* ---- report ---------------------------------------------------------------------------- */

struct results {
    uint64_t done; /* iterations completed */
    double *wtime, *rtime;
    double wall;
    int verified, failed;
    uint64_t bad_bytes;
    struct bench_hint_values hv;
};

static double agg_bytes(const struct hpio *h)
{
    return (double)h->bytes * bench_nprocs;
}

static void report_text(const struct hpio *h, const struct results *res)
{
    char b1[32], b2[32], b3[32];
    printf("%s: %d processes, %s %s, memory %s, file %s\n", bench_prog, bench_nprocs,
           modes[h->mode], h->op == OP_BOTH ? "write+read" : ops[h->op], layouts[h->mem],
           layouts[h->file_layout]);
    printf("  regions    %llu x %llu B, spacing %llu B\n", (unsigned long long)h->region_count,
           (unsigned long long)h->region_size, (unsigned long long)h->region_spacing);
    printf("  data       %s per process, %s aggregate, file extent %s (%s)\n",
           bench_fmt_bytes((double)h->bytes, b1),
           bench_fmt_bytes(agg_bytes(h), b2),
           bench_fmt_bytes((double)h->file_extent, b3), h->path);
    bench_print_hints(&h->hints, &res->hv);
    bench_print_passes(agg_bytes(h), h->op != OP_READ ? res->wtime : NULL,
                       h->op != OP_WRITE ? res->rtime : NULL, res->done);
    if (!res->verified)
        printf("  verify     skipped\n");
    else if (res->failed)
        printf("  verify     FAILED: %llu wrong bytes in iteration %llu\n",
               (unsigned long long)res->bad_bytes, (unsigned long long)res->done - 1);
    else
        printf("  verify     ok (%llu iterations)\n", (unsigned long long)res->done);
    printf("  wall       %.2f s\n", res->wall);
}

static void report_json(const struct hpio *h, const struct results *res)
{
    struct bench_json j;
    bench_json_start(&j, stdout);
    bench_json_str(&j, "benchmark", "hpio");
    bench_json_u64(&j, "nprocs", (uint64_t)bench_nprocs);
    bench_json_object(&j, "config");
    bench_json_u64(&j, "region_size", h->region_size);
    bench_json_u64(&j, "region_count", h->region_count);
    bench_json_u64(&j, "region_spacing", h->region_spacing);
    bench_json_str(&j, "mem", layouts[h->mem]);
    bench_json_str(&j, "file_layout", layouts[h->file_layout]);
    bench_json_str(&j, "mode", modes[h->mode]);
    bench_json_str(&j, "op", ops[h->op]);
    bench_json_u64(&j, "iterations", h->iterations);
    bench_json_str(&j, "path", h->path);
    bench_json_hints(&j, "hints", &h->hints);
    bench_json_end(&j, '}');
    bench_json_u64(&j, "bytes_per_process", h->bytes);
    bench_json_u64(&j, "aggregate_bytes", h->bytes * (uint64_t)bench_nprocs);
    bench_json_u64(&j, "file_extent_bytes", h->file_extent);
    bench_json_hint_values(&j, "hints_in_effect", &res->hv);
    bench_json_u64(&j, "iterations_done", res->done);
    if (h->op != OP_READ)
        bench_json_passes(&j, "write", agg_bytes(h), res->wtime, res->done);
    if (h->op != OP_WRITE)
        bench_json_passes(&j, "read", agg_bytes(h), res->rtime, res->done);
    bench_json_object(&j, "verify");
    bench_json_bool(&j, "checked", res->verified);
    bench_json_bool(&j, "ok", !res->failed);
    bench_json_u64(&j, "wrong_bytes", res->bad_bytes);
    bench_json_end(&j, '}');
    bench_json_f64(&j, "wall_s", res->wall);
    bench_json_finish(&j);
}

/* ---- main ------------------------------------------------------------------------------ */

static const char summary[] =
    "HPIO access pattern (Ching et al.): each process accesses --region-count regions of\n"
    "--region-size bytes separated by --region-spacing bytes. In a noncontiguous file the\n"
    "processes' regions interleave: region i of process p starts at (i*nprocs + p) *\n"
    "(region_size + region_spacing). In a contiguous file each process owns one block of\n"
    "region_count * region_size bytes. A noncontiguous memory buffer repeats the region/spacing\n"
    "pattern. Built from MPI derived datatypes and MPI_File_set_view.\n"
    "\n"
    "Each iteration: barrier, then open + set_view + write + MPI_File_sync + close timed\n"
    "(the slowest process's time; the sync is counted, as in HPIO), and likewise for reads\n"
    "(without the sync). Throughput = aggregate bytes / time; the summary is the mean\n"
    "throughput after dropping the fastest and slowest iteration (when there are >= 3).\n"
    "--op read writes the file once, untimed, before the timed reads.";

static const char epilog[] =
    "The report also shows the hint values ROMIO reports in effect (MPI_File_get_info):\n"
    "cb_buffer_size, cb_nodes, romio_cb_write/read, romio_ds_write/read, ind_wr/rd_buffer_size.\n"
    "Example: mpiexec -n 4 pioscope-hpio --mode collective --hint cb_buffer_size=4194304";

int main(int argc, char **argv)
{
    struct hpio h = {
        .region_size = 32,
        .region_count = 32768,
        .region_spacing = 128,
        .iterations = 10,
        .mem = LAYOUT_CONTIG,
        .file_layout = LAYOUT_NONCONTIG,
        .mode = MODE_INDEPENDENT,
        .op = OP_WRITE,
        .path = "./pioscope-hpio.dat",
    };
    const struct bench_opt opts[] = {
        {.name = "region-size", .kind = BENCH_OPT_SIZE, .dest = &h.region_size, .min = 1,
         .max = INT32_MAX, .help = "Bytes in each region."},
        {.name = "region-count", .kind = BENCH_OPT_COUNT, .dest = &h.region_count, .min = 1,
         .max = INT32_MAX, .help = "Regions per process."},
        {.name = "region-spacing", .kind = BENCH_OPT_SIZE, .dest = &h.region_spacing, .min = 0,
         .max = 1ull << 40, .help = "Bytes between consecutive regions (memory and file)."},
        {.name = "mem", .kind = BENCH_OPT_CHOICE, .dest = &h.mem, .choices = layouts,
         .help = "Memory buffer: contig (regions back to back) or noncontig\n"
                 "(regions separated by --region-spacing)."},
        {.name = "file-layout", .kind = BENCH_OPT_CHOICE, .dest = &h.file_layout,
         .choices = layouts,
         .help = "File: contig (one block per process) or noncontig\n"
                 "(regions of all processes interleaved)."},
        {.name = "mode", .kind = BENCH_OPT_CHOICE, .dest = &h.mode, .choices = modes,
         .help = "independent: MPI_File_write/read; collective:\n"
                 "MPI_File_write_all/read_all."},
        {.name = "op", .kind = BENCH_OPT_CHOICE, .dest = &h.op, .choices = ops,
         .help = "What to time; both = write then read back each iteration."},
        {.name = "iterations", .kind = BENCH_OPT_COUNT, .dest = &h.iterations, .min = 1,
         .max = 1000000, .help = "Timed iterations."},
        {.name = "hint", .kind = BENCH_OPT_HINT, .dest = &h.hints,
         .help = "MPI_Info hint given at open and set_view; repeatable,\n"
                 "e.g. --hint cb_buffer_size=4194304 --hint romio_ds_write=disable."},
        {.name = "path", .kind = BENCH_OPT_STRING, .dest = &h.path, .metavar = "FILE",
         .help = "File to write and read (ROMIO prefixes such as ufs: work)."},
        {.name = "keep", .kind = BENCH_OPT_FLAG, .dest = &h.keep,
         .help = "Leave the file in place at the end (default: delete it)."},
        {.name = "no-verify", .kind = BENCH_OPT_FLAG, .dest = &h.no_verify,
         .help = "Do not check the data read back (checked by default for\n"
                 "--op both and --op read)."},
        {.name = "json", .kind = BENCH_OPT_FLAG, .dest = &h.json,
         .help = "Print one JSON object on stdout instead of the report."},
    };

    MPI_Init(&argc, &argv);
    bench_init("pioscope-hpio");
    int rc = bench_parse(argc, argv, summary, opts, (int)(sizeof opts / sizeof opts[0]), epilog);
    if (rc == BENCH_CONTINUE)
        rc = derive(&h);
    if (rc != BENCH_CONTINUE) {
        MPI_Finalize();
        return rc;
    }
    bench_files_return_errors();
    build_types(&h);
    h.info = bench_hints_info(&h.hints);
    h.buf = malloc(h.buf_len ? h.buf_len : 1);
    struct results res = {0};
    res.wtime = calloc(h.iterations, sizeof(double));
    res.rtime = calloc(h.iterations, sizeof(double));
    if (!h.buf || !res.wtime || !res.rtime)
        bench_fail("cannot allocate the %llu-byte memory buffer (see --region-count, "
                   "--region-size, --mem)", (unsigned long long)h.buf_len);
    res.verified = !h.no_verify && h.op != OP_WRITE;

    double wall0 = MPI_Wtime();
    if (h.op == OP_READ) {
        fill_buffer(&h, 0);
        timed_pass(&h, 1, NULL);
    }
    for (uint64_t it = 0; it < h.iterations && !res.failed; it++) {
        struct bench_hint_values *hv = it == 0 ? &res.hv : NULL;
        uint64_t pattern = h.op == OP_READ ? 0 : it;
        if (h.op != OP_READ) {
            fill_buffer(&h, pattern);
            res.wtime[it] = timed_pass(&h, 1, hv);
            hv = NULL;
        }
        if (h.op != OP_WRITE) {
            memset(h.buf, READ_SENTINEL, h.buf_len);
            res.rtime[it] = timed_pass(&h, 0, hv);
            if (res.verified) {
                struct mismatch m;
                bench_maybe_corrupt(h.buf);
                check_buffer(&h, pattern, &m);
                res.bad_bytes = bench_sum_over_ranks(m.bytes + m.gaps);
                res.failed = res.bad_bytes != 0;
                if (m.bytes)
                    fprintf(stderr, "%s: rank %d: iteration %llu: %llu wrong bytes; first in "
                                    "region %llu at file offset %llu: expected 0x%02x, read 0x%02x\n",
                            bench_prog, bench_rank, (unsigned long long)it,
                            (unsigned long long)m.bytes, (unsigned long long)m.region,
                            (unsigned long long)m.offset, m.expected, m.got);
                if (m.gaps)
                    fprintf(stderr, "%s: rank %d: iteration %llu: the read changed %llu bytes "
                                    "of the memory gaps between regions\n",
                            bench_prog, bench_rank, (unsigned long long)it,
                            (unsigned long long)m.gaps);
            }
        }
        res.done = it + 1;
    }
    res.wall = MPI_Wtime() - wall0;

    bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", NULL);
    if (!h.keep && bench_rank == 0)
        bench_check(MPI_File_delete(h.path, h.info), "MPI_File_delete", h.path);
    if (bench_rank == 0) {
        if (h.json)
            report_json(&h, &res);
        else
            report_text(&h, &res);
        fflush(stdout);
    }

    free(res.wtime);
    free(res.rtime);
    free(h.buf);
    bench_info_free(&h.info);
    bench_check(MPI_Type_free(&h.memtype), "MPI_Type_free", NULL);
    if (h.filetype != MPI_BYTE)
        bench_check(MPI_Type_free(&h.filetype), "MPI_Type_free", NULL);
    MPI_Finalize();
    return res.failed ? BENCH_EXIT_VERIFY : BENCH_EXIT_OK;
}
