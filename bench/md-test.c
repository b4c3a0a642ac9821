/* md-test.c: pioscope-md-test, after PVFS2's mpi-md-test: metadata rates through MPI-IO, every
 * rank creating, then statting, then deleting its own small files in one directory. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { PHASE_CREATE, PHASE_STAT, PHASE_REMOVE, NPHASES };
static const char *const phase_name[NPHASES] = {"create", "stat", "remove"};

struct mdtest {
    uint64_t files, iterations;
    int json;
    const char *dir;
    struct bench_hints hints;
    MPI_Info info;
    char *path; /* scratch for one file name */
    size_t path_len;
};

static const char *file_name(struct mdtest *m, uint64_t i)
{
    snprintf(m->path, m->path_len, "%s/pioscope-md.r%d.f%llu", m->dir, bench_rank,
             (unsigned long long)i);
    return m->path;
}

/* mkdir -p, on rank 0; answers 1 when the last component was created here (so we remove it). */
static int make_dir(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode))
            bench_fail("--dir %s exists and is not a directory", dir);
        return 0;
    }
    char *tmp = strdup(dir);
    if (!tmp)
        bench_fail("out of memory");
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            bench_fail("cannot create directory %s (for --dir %s): %s", tmp, dir,
                       strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        bench_fail("cannot create directory %s: %s", tmp, strerror(errno));
    free(tmp);
    return 1;
}

/* One phase over this rank's files; answers the slowest rank's time. *bad counts stat'ed files
 * whose size is not 0 (nothing is ever written to them). */
static double phase(struct mdtest *m, int which, uint64_t *bad)
{
    bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", NULL);
    double t0 = MPI_Wtime();
    for (uint64_t i = 0; i < m->files; i++) {
        const char *name = file_name(m, i);
        MPI_File fh;
        MPI_Offset size;
        switch (which) {
        case PHASE_CREATE:
            bench_check(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                      m->info, &fh),
                        "MPI_File_open", name);
            bench_check(MPI_File_close(&fh), "MPI_File_close", name);
            break;
        case PHASE_STAT:
            bench_check(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, m->info, &fh),
                        "MPI_File_open", name);
            bench_check(MPI_File_get_size(fh, &size), "MPI_File_get_size", name);
            bench_check(MPI_File_close(&fh), "MPI_File_close", name);
            if (size != 0 && (*bad)++ == 0)
                fprintf(stderr, "%s: rank %d: %s has size %lld, expected 0\n", bench_prog,
                        bench_rank, name, (long long)size);
            break;
        case PHASE_REMOVE:
            bench_check(MPI_File_delete(name, m->info), "MPI_File_delete", name);
            break;
        }
    }
    return bench_max_over_ranks(MPI_Wtime() - t0);
}

static const char summary[] =
    "After PVFS2's mpi-md-test: metadata operation rates through MPI-IO. Each process, in\n"
    "three phases separated by barriers:\n"
    "  create  --files files: MPI_File_open(MPI_COMM_SELF, CREATE|WRONLY) + MPI_File_close\n"
    "  stat    the same files: MPI_File_open(RDONLY) + MPI_File_get_size + MPI_File_close\n"
    "  remove  the same files: MPI_File_delete\n"
    "in --dir (created if missing, removed at the end if this run created it). Rate = nprocs *\n"
    "files / the slowest process's phase time. A stat'ed file whose size is not 0 fails the run.";

static const char epilog[] = "Example: mpiexec -n 4 pioscope-md-test --files 1000 --dir /scratch/md";

int main(int argc, char **argv)
{
    struct mdtest m = {
        .files = 100,
        .iterations = 1,
        .dir = "./pioscope-md-test.d",
    };
    const struct bench_opt opts[] = {
        {.name = "files", .kind = BENCH_OPT_COUNT, .dest = &m.files, .min = 1,
         .max = 100000000, .help = "Files each process creates, stats and removes."},
        {.name = "dir", .kind = BENCH_OPT_STRING, .dest = &m.dir, .metavar = "DIR",
         .help = "Directory for the files (created if missing)."},
        {.name = "iterations", .kind = BENCH_OPT_COUNT, .dest = &m.iterations, .min = 1,
         .max = 1000000, .help = "Repetitions of the three phases."},
        {.name = "hint", .kind = BENCH_OPT_HINT, .dest = &m.hints,
         .help = "MPI_Info hint given to MPI_File_open and MPI_File_delete;\nrepeatable."},
        {.name = "json", .kind = BENCH_OPT_FLAG, .dest = &m.json,
         .help = "Print one JSON object on stdout instead of the report."},
    };

    MPI_Init(&argc, &argv);
    bench_init("pioscope-md-test");
    int rc = bench_parse(argc, argv, summary, opts, (int)(sizeof opts / sizeof opts[0]), epilog);
    if (rc != BENCH_CONTINUE) {
        MPI_Finalize();
        return rc;
    }
    bench_files_return_errors();
    m.info = bench_hints_info(&m.hints);
    m.path_len = strlen(m.dir) + 64;
    m.path = malloc(m.path_len);
    double *t[NPHASES];
    for (int p = 0; p < NPHASES; p++)
        t[p] = calloc(m.iterations, sizeof(double));
    if (!m.path || !t[0] || !t[1] || !t[2])
        bench_fail("out of memory");

    int created_dir = bench_rank == 0 ? make_dir(m.dir) : 0;
    uint64_t bad = 0, bad_total = 0, done = 0;
    double wall0 = MPI_Wtime();
    for (uint64_t it = 0; it < m.iterations && bad_total == 0; it++) {
        for (int p = 0; p < NPHASES; p++)
            t[p][it] = phase(&m, p, &bad); /* its first barrier also waits for make_dir */
        bad_total = bench_sum_over_ranks(bad);
        done = it + 1;
    }
    double wall = MPI_Wtime() - wall0;
    if (created_dir && rmdir(m.dir) != 0)
        fprintf(stderr, "%s: warning: could not remove %s: %s\n", bench_prog, m.dir,
                strerror(errno));

    double ops = (double)m.files * bench_nprocs;
    if (bench_rank == 0 && m.json) {
        struct bench_json j;
        bench_json_start(&j, stdout);
        bench_json_str(&j, "benchmark", "md-test");
        bench_json_u64(&j, "nprocs", (uint64_t)bench_nprocs);
        bench_json_object(&j, "config");
        bench_json_u64(&j, "files", m.files);
        bench_json_str(&j, "dir", m.dir);
        bench_json_u64(&j, "iterations", m.iterations);
        bench_json_hints(&j, "hints", &m.hints);
        bench_json_end(&j, '}');
        bench_json_u64(&j, "ops_per_phase", (uint64_t)ops);
        bench_json_u64(&j, "iterations_done", done);
        for (int p = 0; p < NPHASES; p++) {
            bench_json_object(&j, phase_name[p]);
            bench_json_array(&j, "time_s");
            for (uint64_t i = 0; i < done; i++)
                bench_json_f64(&j, NULL, t[p][i]);
            bench_json_end(&j, ']');
            bench_json_f64(&j, "mean_ops_per_s", bench_mean_rate(ops, t[p], done));
            bench_json_end(&j, '}');
        }
        bench_json_object(&j, "verify");
        bench_json_bool(&j, "ok", bad_total == 0);
        bench_json_u64(&j, "wrong_size_files", bad_total);
        bench_json_end(&j, '}');
        bench_json_f64(&j, "wall_s", wall);
        bench_json_finish(&j);
    } else if (bench_rank == 0) {
        printf("%s: %d processes x %llu files in %s\n", bench_prog, bench_nprocs,
               (unsigned long long)m.files, m.dir);
        printf("  iter  create s  creates/s    stat s    stats/s  remove s  removes/s\n");
        for (uint64_t i = 0; i < done; i++) {
            printf("  %4llu", (unsigned long long)i);
            for (int p = 0; p < NPHASES; p++)
                printf("  %8.4f  %9.0f", t[p][i], ops / t[p][i]);
            printf("\n");
        }
        const char *how = done >= 3 ? "mean, fastest and slowest iteration dropped" : "mean";
        for (int p = 0; p < NPHASES; p++) {
            double r = bench_mean_rate(ops, t[p], done);
            /* Each process issues its operations one after another: its latency is nprocs/r. */
            printf("  %-9s  %.0f ops/s, %.3f ms per operation per process (%s)\n", phase_name[p],
                   r, 1e3 * bench_nprocs / r, how);
        }
        printf("  verify     %s\n", bad_total ? "FAILED: created files are not empty" : "ok");
        printf("  wall       %.2f s\n", wall);
    }
    fflush(stdout);

    for (int p = 0; p < NPHASES; p++)
        free(t[p]);
    free(m.path);
    bench_info_free(&m.info);
    MPI_Finalize();
    return bad_total ? BENCH_EXIT_VERIFY : BENCH_EXIT_OK;
}
