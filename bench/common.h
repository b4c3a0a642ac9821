/* common.h: what the bench programs share: option tables and --help, hint lists, MPI error
 * checks, timing reductions, trimmed means, byte formatting and a tiny JSON writer. */
#ifndef PIOSCOPE_BENCH_COMMON_H
#define PIOSCOPE_BENCH_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes, the same for every bench program (documented in --help and README.md). */
enum {
    BENCH_EXIT_OK = 0,
    BENCH_EXIT_ERROR = 1,  /* an MPI or file-system call failed */
    BENCH_EXIT_USAGE = 2,  /* bad command line */
    BENCH_EXIT_VERIFY = 3, /* data read back (or a file's size) was not what was written */
};

/* bench_parse's "keep going" answer; every other answer is an exit status. */
#define BENCH_CONTINUE (-1)

enum bench_opt_kind {
    BENCH_OPT_SIZE,   /* uint64_t: bytes, accepts K/M/G (binary) suffixes */
    BENCH_OPT_COUNT,  /* uint64_t: plain non-negative integer */
    BENCH_OPT_CHOICE, /* int: index into choices */
    BENCH_OPT_STRING, /* const char * */
    BENCH_OPT_FLAG,   /* int: set to 1 when present */
    BENCH_OPT_HINT,   /* struct bench_hints: KEY=VALUE, repeatable */
};

/* One command-line option. The default shown by --help is whatever *dest holds before parsing. */
struct bench_opt {
    const char *name; /* long name without the leading "--" */
    enum bench_opt_kind kind;
    void *dest;
    const char *const *choices; /* BENCH_OPT_CHOICE: NULL-terminated list */
    uint64_t min, max;          /* BENCH_OPT_SIZE / BENCH_OPT_COUNT: accepted range */
    const char *help;           /* may hold '\n' to break lines */
    const char *metavar;        /* NULL: chosen from the kind (BYTES, N, a|b, ...) */
};

#define BENCH_MAX_HINTS 64

/* The --hint KEY=VALUE pairs, in command-line order; key and value point into argv. */
struct bench_hints {
    int count;
    const char *key[BENCH_MAX_HINTS];
    int key_len[BENCH_MAX_HINTS];
    const char *value[BENCH_MAX_HINTS];
};

/* Hint values read back from an open file (MPI_File_get_info): what ROMIO really uses. */
#define BENCH_MAX_REPORTED_HINTS 12
struct bench_hint_values {
    int count;
    const char *key[BENCH_MAX_REPORTED_HINTS];
    char value[BENCH_MAX_REPORTED_HINTS][MPI_MAX_INFO_VAL + 1];
    int set[BENCH_MAX_REPORTED_HINTS];
};

/* Program identity and rank, used in every message. Call right after MPI_Init. */
void bench_init(const char *prog);
extern const char *bench_prog;
extern int bench_rank, bench_nprocs;

/* Parses argv against opts. Handles --help (prints on rank 0, answers 0) and bad input (message
 * on rank 0 naming the option and value, answers BENCH_EXIT_USAGE). Otherwise BENCH_CONTINUE.
 * summary: a paragraph printed above the option list; epilog: printed below it (may be NULL). */
int bench_parse(int argc, char **argv, const char *summary, const struct bench_opt *opts,
                int nopts, const char *epilog);

/* For checks made after parsing (combinations, sizes): prints on rank 0 and answers
 * BENCH_EXIT_USAGE so main can finalize and return it. */
int bench_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Aborts the job with a message naming the call (and the path if any) when rc is not
 * MPI_SUCCESS. Used for every MPI call whose failure leaves nothing sensible to do: a rank that
 * stopped would leave the others hanging in the next collective. */
void bench_check(int rc, const char *call, const char *path);

/* Reports a non-MPI failure (errno-style) and aborts the job. */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Makes MPI_ERRORS_RETURN the error handler of every file opened from now on. */
void bench_files_return_errors(void);

/* A new MPI_Info holding the --hint pairs (MPI_INFO_NULL when there are none). */
MPI_Info bench_hints_info(const struct bench_hints *h);
void bench_info_free(MPI_Info *info);

/* Reads the values of keys (NULL-terminated) from fh's info. */
void bench_hint_values_get(MPI_File fh, const char *const *keys, struct bench_hint_values *out);

/* Max of a per-rank value over MPI_COMM_WORLD, known on every rank. */
double bench_max_over_ranks(double local);
/* Sum of a per-rank count over MPI_COMM_WORLD, known on every rank. */
uint64_t bench_sum_over_ranks(uint64_t local);

/* Mean of v[0..n); when n >= 3 one smallest and one largest value are left out. */
double bench_trimmed_mean(const double *v, int n);

/* "1.50 MiB" style; buf must hold at least 32 bytes. Returns buf. */
const char *bench_fmt_bytes(double bytes, char *buf);

/* Overflow-checked product; answers 0 on overflow. */
int bench_mul_u64(uint64_t a, uint64_t b, uint64_t *out);

/* Test data: bytes that depend on a seed, so misplaced or stale data is caught on read-back. */
uint64_t bench_seed(uint64_t a, uint64_t b, uint64_t c);
void bench_fill(unsigned char *p, uint64_t n, uint64_t seed);
/* Answers how many of p[0..n) differ from bench_fill(.., seed); *first gets the first one. */
uint64_t bench_compare(const unsigned char *p, uint64_t n, uint64_t seed, uint64_t *first);
unsigned char bench_expected(uint64_t seed, uint64_t j);
/* For tests of the tests: when PIOSCOPE_BENCH_CORRUPT=1 is set, flips *p on rank 0, so a run
 * can prove that verification fails (exit 3) when data is wrong. Call after a read. */
void bench_maybe_corrupt(unsigned char *p);

/* Throughput of agg_bytes moved in each of times[0..n), averaged with bench_trimmed_mean. */
double bench_mean_rate(double agg_bytes, const double *times, uint64_t n);

/* The human report's shared lines (rank 0 only): requested and in-effect hints; the
 * per-iteration table of write and/or read times (either array may be NULL) and their means. */
void bench_print_hints(const struct bench_hints *h, const struct bench_hint_values *v);
void bench_print_passes(double agg_bytes, const double *wtime, const double *rtime, uint64_t n);

/* A minimal JSON writer for the --json object: keys are plain identifiers, strings are escaped,
 * non-finite numbers become null. */
struct bench_json {
    FILE *f;
    int depth;
    int need_comma[16];
};
void bench_json_start(struct bench_json *j, FILE *f); /* opens the top-level object */
void bench_json_finish(struct bench_json *j);         /* closes it and ends the line */
void bench_json_object(struct bench_json *j, const char *key); /* key NULL inside arrays */
void bench_json_array(struct bench_json *j, const char *key);
void bench_json_end(struct bench_json *j, char closer); /* closer: '}' or ']' */
void bench_json_str(struct bench_json *j, const char *key, const char *val); /* val NULL: null */
void bench_json_u64(struct bench_json *j, const char *key, uint64_t val);
void bench_json_f64(struct bench_json *j, const char *key, double val);
void bench_json_bool(struct bench_json *j, const char *key, int val);
void bench_json_hints(struct bench_json *j, const char *key, const struct bench_hints *h);
void bench_json_hint_values(struct bench_json *j, const char *key,
                            const struct bench_hint_values *v);
/* {"time_s":[..],"throughput_bytes_per_s":[..],"mean_throughput_bytes_per_s":x,
 *  "extremes_dropped":bool} */
void bench_json_passes(struct bench_json *j, const char *key, double agg_bytes,
                       const double *times, uint64_t n);

#endif
