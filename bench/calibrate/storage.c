/* storage.c: pioscope-cal-storage, the storage and metadata micro-benchmarks behind `pioscope
 * calibrate`: POSIX writes and reads, sequential and random, across request sizes and numbers
 * of concurrent ranks, through the page cache and past it (O_DIRECT), and metadata operation
 * times (create, stat, open+close, remove); JSON on stdout. */
#define _GNU_SOURCE /* O_DIRECT */
#include "../common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALIGN 4096

struct st_opts {
    const char *dir;
    uint64_t min_size, max_size; /* request sizes: min, min*4, ... max */
    uint64_t volume;             /* bytes per rank for page-cache runs */
    uint64_t direct_volume;      /* bytes per rank for O_DIRECT runs */
    uint64_t max_requests;       /* cap on requests per rank and run */
    uint64_t files;              /* files per rank for the metadata runs */
    uint64_t reps;               /* repetitions of every run; the fastest counts */
    int json;
};

static struct bench_json J;
static int json_out;
static int direct_ok = 1; /* O_DIRECT worked; else fdatasync per write / fadvise before reads */

static uint64_t next_random(uint64_t *s)
{
    /* xorshift64*: a fixed sequence per rank, so runs are repeatable. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static int open_file(const char *path, int direct, int create)
{
    int flags = O_RDWR | (create ? O_CREAT | O_TRUNC : 0);
    int fd = -1;
    if (direct && direct_ok) {
        fd = open(path, flags | O_DIRECT, 0644);
        if (fd < 0 && errno == EINVAL)
            direct_ok = 0; /* tmpfs and some FUSE file systems */
    }
    if (fd < 0)
        fd = open(path, flags, 0644);
    if (fd < 0)
        bench_fail("open %s: %s", path, strerror(errno));
    return fd;
}

/* One run: `count` requests of `size` bytes on this rank's file (ranks < conc take part).
 * Answers the slowest participating rank's time, known on every rank. */
static double run_io(const char *path, char *buf, uint64_t size, uint64_t count, int write,
                     int direct, int random, int conc)
{
    int part = bench_rank < conc;
    int fd = -1;
    if (part) {
        fd = open_file(path, direct, 0);
        if (!direct_ok && direct && !write)
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ ((uint64_t)bench_rank << 32) ^ size;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (part) {
        for (uint64_t i = 0; i < count; i++) {
            uint64_t block = random ? next_random(&seed) % count : i;
            off_t off = (off_t)(block * size);
            ssize_t n = write ? pwrite(fd, buf, size, off) : pread(fd, buf, size, off);
            if (n != (ssize_t)size)
                bench_fail("%s %s: %s", write ? "pwrite" : "pread", path,
                           n < 0 ? strerror(errno) : "short transfer");
            if (write && direct && !direct_ok)
                fdatasync(fd);
        }
    }
    double t = MPI_Wtime() - t0;
    if (part)
        close(fd);
    return bench_max_over_ranks(part ? t : 0.0);
}

/* run_io `reps` times; the fastest counts (other work on the machine only ever slows a run
 * down). `fresh`: truncate the file before each repetition, untimed (a write to new blocks). */
static double best_io(const char *path, char *buf, uint64_t size, uint64_t count, int write,
                      int direct, int random, int conc, uint64_t reps, int fresh)
{
    double best = 0;
    for (uint64_t r = 0; r < reps; r++) {
        if (fresh && bench_rank < conc) {
            int fd = open_file(path, 0, 1);
            close(fd);
        }
        double t = run_io(path, buf, size, count, write, direct, random, conc);
        if (r == 0 || t < best)
            best = t;
    }
    return best;
}

static void report_io(const char *mode, const char *pattern, int conc, uint64_t size,
                      uint64_t count, double t)
{
    if (bench_rank != 0)
        return;
    double agg = (double)conc * (double)count * (double)size / t;
    if (json_out) {
        bench_json_object(&J, NULL);
        bench_json_str(&J, "mode", mode);
        bench_json_str(&J, "pattern", pattern);
        bench_json_u64(&J, "concurrency", (uint64_t)conc);
        bench_json_u64(&J, "size", size);
        bench_json_u64(&J, "requests", count);
        bench_json_f64(&J, "time_s", t);
        bench_json_f64(&J, "per_request_s", t / (double)count);
        bench_json_f64(&J, "bytes_per_s", agg);
        bench_json_end(&J, '}');
    } else {
        char b[32];
        printf("%-14s %-10s %4d %10s %8llu %12.2f us %10.1f MB/s\n", mode, pattern, conc,
               bench_fmt_bytes((double)size, b), (unsigned long long)count,
               t / (double)count * 1e6, agg / 1e6);
    }
}

static uint64_t requests(uint64_t volume, uint64_t size, uint64_t cap)
{
    uint64_t n = volume / size;
    if (n < 4)
        n = 4;
    return n > cap ? cap : n;
}

/* Metadata: each participating rank creates, stats, opens+closes and removes `files` files in
 * its own directory. */
static void run_meta(const struct st_opts *o, int conc)
{
    static const char *ops[] = {"create", "stat", "open", "remove"};
    char dir[4096], path[4200];
    double best[4] = {0, 0, 0, 0};
    int part = bench_rank < conc;
    snprintf(dir, sizeof dir, "%s/cal-md.%d", o->dir, bench_rank);
    if (part && mkdir(dir, 0755) != 0 && errno != EEXIST)
        bench_fail("mkdir %s: %s", dir, strerror(errno));
    for (uint64_t r = 0; r < o->reps; r++) {
        for (int op = 0; op < 4; op++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (uint64_t i = 0; part && i < o->files; i++) {
                snprintf(path, sizeof path, "%s/f%llu", dir, (unsigned long long)i);
                int fd;
                struct stat sb;
                switch (op) {
                case 0:
                    fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
                    if (fd < 0)
                        bench_fail("create %s: %s", path, strerror(errno));
                    close(fd);
                    break;
                case 1:
                    if (stat(path, &sb) != 0)
                        bench_fail("stat %s: %s", path, strerror(errno));
                    break;
                case 2:
                    fd = open(path, O_RDONLY);
                    if (fd < 0)
                        bench_fail("open %s: %s", path, strerror(errno));
                    close(fd);
                    break;
                default:
                    if (unlink(path) != 0)
                        bench_fail("unlink %s: %s", path, strerror(errno));
                }
            }
            double t = bench_max_over_ranks(part ? MPI_Wtime() - t0 : 0.0);
            if (r == 0 || t < best[op])
                best[op] = t;
        }
    }
    for (int op = 0; op < 4 && bench_rank == 0; op++) {
        double t = best[op];
        if (json_out) {
            bench_json_object(&J, NULL);
            bench_json_str(&J, "op", ops[op]);
            bench_json_u64(&J, "concurrency", (uint64_t)conc);
            bench_json_u64(&J, "files", o->files);
            bench_json_f64(&J, "time_s", t);
            bench_json_f64(&J, "per_op_s", t / (double)o->files);
            bench_json_f64(&J, "ops_per_s", (double)conc * (double)o->files / t);
            bench_json_end(&J, '}');
        } else {
            printf("%-8s %4d %8llu %12.2f us %12.0f ops/s\n", ops[op], conc,
                   (unsigned long long)o->files, t / (double)o->files * 1e6,
                   (double)conc * (double)o->files / t);
        }
    }
    if (part)
        rmdir(dir);
}

int main(int argc, char **argv)
{
    struct st_opts o = {.dir = ".", .min_size = 4096, .max_size = 16u << 20,
                        .volume = 32u << 20, .direct_volume = 16u << 20, .max_requests = 1024,
                        .files = 1000, .reps = 3, .json = 0};
    const struct bench_opt opts[] = {
        {.name = "dir", .kind = BENCH_OPT_STRING, .dest = &o.dir, .metavar = "DIR",
         .help = "Scratch directory on the file system to measure (must exist)."},
        {.name = "min-size", .kind = BENCH_OPT_SIZE, .dest = &o.min_size, .min = ALIGN,
         .max = 1u << 30, .help = "Smallest request (a multiple of 4 KiB)."},
        {.name = "max-size", .kind = BENCH_OPT_SIZE, .dest = &o.max_size, .min = ALIGN,
         .max = 1u << 30, .help = "Largest request; sizes go min, min*4, ... up to it."},
        {.name = "volume", .kind = BENCH_OPT_SIZE, .dest = &o.volume, .min = ALIGN,
         .max = 1ull << 40, .help = "Bytes per rank for each page-cache run."},
        {.name = "direct-volume", .kind = BENCH_OPT_SIZE, .dest = &o.direct_volume, .min = ALIGN,
         .max = 1ull << 40, .help = "Bytes per rank for each O_DIRECT run."},
        {.name = "max-requests", .kind = BENCH_OPT_COUNT, .dest = &o.max_requests, .min = 4,
         .max = 100000000, .help = "At most this many requests per rank and run."},
        {.name = "files", .kind = BENCH_OPT_COUNT, .dest = &o.files, .min = 0, .max = 10000000,
         .help = "Files per rank for the metadata runs (0 runs none)."},
        {.name = "reps", .kind = BENCH_OPT_COUNT, .dest = &o.reps, .min = 1, .max = 100,
         .help = "Repetitions of every run; the fastest counts."},
        {.name = "json", .kind = BENCH_OPT_FLAG, .dest = &o.json,
         .help = "Print one JSON object on stdout instead of the table."},
    };
    const char *summary =
        "Storage micro-benchmarks for `pioscope calibrate`: for 1, 2, 4, ... ranks (up to the\n"
        "job size) and each request size, sequential writes and reads through the page cache,\n"
        "then sequential and random writes and reads with O_DIRECT (fdatasync per write when\n"
        "O_DIRECT is refused); then create, stat, open+close and remove of many files.";
    MPI_Init(&argc, &argv);
    bench_init("pioscope-cal-storage");
    int rc = bench_parse(argc, argv, summary, opts, (int)(sizeof opts / sizeof opts[0]), NULL);
    if (rc == BENCH_CONTINUE && (o.min_size % ALIGN || o.max_size % ALIGN))
        rc = bench_usage_error("--min-size and --max-size must be multiples of 4 KiB");
    if (rc != BENCH_CONTINUE) {
        MPI_Finalize();
        return rc;
    }
    json_out = o.json;
    char path[4200];
    snprintf(path, sizeof path, "%s/cal-io.%d", o.dir, bench_rank);
    char *buf = NULL;
    if (posix_memalign((void **)&buf, ALIGN, o.max_size) != 0)
        bench_fail("out of memory for a %llu-byte buffer", (unsigned long long)o.max_size);
    bench_fill((unsigned char *)buf, o.max_size, 1);

    if (bench_rank == 0) {
        if (json_out) {
            bench_json_start(&J, stdout);
            bench_json_str(&J, "benchmark", "storage");
            bench_json_u64(&J, "ranks", (uint64_t)bench_nprocs);
            bench_json_str(&J, "dir", o.dir);
            bench_json_u64(&J, "reps", o.reps);
            bench_json_array(&J, "runs");
        } else {
            printf("%-14s %-10s %4s %10s %8s %15s %15s\n", "mode", "pattern", "conc", "size",
                   "requests", "per request", "aggregate");
        }
    }
    for (int conc = 1; conc <= bench_nprocs; conc *= 2) {
        for (uint64_t size = o.min_size; size <= o.max_size; size *= 4) {
            uint64_t nc = requests(o.volume, size, o.max_requests);
            uint64_t nd = requests(o.direct_volume, size, o.max_requests);
            /* The page-cache runs write a fresh file, read it back from memory, then write it
             * again: into pages that exist, without allocating them. */
            uint64_t R = o.reps;
            double t = best_io(path, buf, size, nc, 1, 0, 0, conc, R, 1);
            report_io("write-cached", "sequential", conc, size, nc, t);
            t = best_io(path, buf, size, nc, 0, 0, 0, conc, R, 0);
            report_io("read-cached", "sequential", conc, size, nc, t);
            t = best_io(path, buf, size, nc, 1, 0, 0, conc, R, 0);
            report_io("rewrite-cached", "sequential", conc, size, nc, t);
            /* Dirty pages must reach the disk before O_DIRECT runs, untimed. */
            if (bench_rank < conc) {
                int fd = open_file(path, 0, 0);
                fdatasync(fd);
                close(fd);
            }
            t = best_io(path, buf, size, nd, 1, 1, 0, conc, R, 0);
            report_io("write-direct", "sequential", conc, size, nd, t);
            t = best_io(path, buf, size, nd, 0, 1, 0, conc, R, 0);
            report_io("read-direct", "sequential", conc, size, nd, t);
            t = best_io(path, buf, size, nd, 1, 1, 1, conc, R, 0);
            report_io("write-direct", "random", conc, size, nd, t);
            t = best_io(path, buf, size, nd, 0, 1, 1, conc, R, 0);
            report_io("read-direct", "random", conc, size, nd, t);
            if (size > o.max_size / 4)
                break;
        }
        if (conc > bench_nprocs / 2)
            break;
    }
    unlink(path);
    if (bench_rank == 0 && json_out) {
        bench_json_end(&J, ']');
        bench_json_bool(&J, "direct", direct_ok);
        bench_json_array(&J, "metadata");
    }
    if (o.files > 0)
        for (int conc = 1; conc <= bench_nprocs; conc *= 2) {
            run_meta(&o, conc);
            if (conc > bench_nprocs / 2)
                break;
        }
    if (bench_rank == 0 && json_out) {
        bench_json_end(&J, ']');
        bench_json_finish(&J);
    }
    free(buf);
    MPI_Finalize();
    return BENCH_EXIT_OK;
}
