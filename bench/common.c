/* common.c: the option parser and --help generator, hint handling, MPI error checks, reductions,
 * statistics, byte formatting and JSON writer shared by the bench programs (see common.h). */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *bench_prog = "pioscope-bench";
int bench_rank = 0, bench_nprocs = 1;

void bench_init(const char *prog)
{
    bench_prog = prog;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bench_nprocs);
}

/* ---- errors ---------------------------------------------------------------------------- */

void bench_check(int rc, const char *call, const char *path)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error code %d", rc);
    else
        msg[len] = '\0';
    fflush(stdout);
    if (path)
        fprintf(stderr, "%s: rank %d: %s(%s) failed: %s\n", bench_prog, bench_rank, call, path, msg);
    else
        fprintf(stderr, "%s: rank %d: %s failed: %s\n", bench_prog, bench_rank, call, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_ERROR);
    exit(BENCH_EXIT_ERROR); /* MPI_Abort should not return */
}

void bench_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: rank %d: ", bench_prog, bench_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_ERROR);
    exit(BENCH_EXIT_ERROR);
}

int bench_usage_error(const char *fmt, ...)
{
    if (bench_rank == 0) {
        va_list ap;
        fprintf(stderr, "%s: error: ", bench_prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (see %s --help)\n", bench_prog);
    }
    return BENCH_EXIT_USAGE;
}

void bench_files_return_errors(void)
{
    /* The default file error handler already returns in MPI, but an MPI library may be built
     * otherwise; say it explicitly so every file call's code reaches bench_check. */
    bench_check(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN),
                "MPI_File_set_errhandler", NULL);
}

/* ---- option parsing -------------------------------------------------------------------- */

/* Parses a byte count with an optional binary suffix (K, KiB, M, MiB, G, GiB, T, TiB; any case). */
static int parse_size(const char *s, int allow_suffix, uint64_t *out)
{
    if (!isdigit((unsigned char)s[0]))
        return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return 0;
    uint64_t mult = 1;
    if (*end && allow_suffix) {
        switch (tolower((unsigned char)*end)) {
        case 'k': mult = 1ull << 10; break;
        case 'm': mult = 1ull << 20; break;
        case 'g': mult = 1ull << 30; break;
        case 't': mult = 1ull << 40; break;
        default: return 0;
        }
        end++;
        if (strcmp(end, "iB") == 0 || strcmp(end, "ib") == 0)
            end += 2;
    }
    if (*end)
        return 0;
    return bench_mul_u64(v, mult, out);
}

static const char *default_metavar(const struct bench_opt *o, char *buf, size_t len)
{
    if (o->metavar)
        return o->metavar;
    switch (o->kind) {
    case BENCH_OPT_SIZE: return "BYTES";
    case BENCH_OPT_COUNT: return "N";
    case BENCH_OPT_STRING: return "STRING";
    case BENCH_OPT_FLAG: return "";
    case BENCH_OPT_HINT: return "KEY=VALUE";
    case BENCH_OPT_CHOICE: {
        size_t used = 0;
        buf[0] = '\0';
        for (int i = 0; o->choices[i]; i++)
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                     i ? "|" : "", o->choices[i]);
        return buf;
    }
    }
    return "";
}

/* The current value of *dest as --help shows it as the default; "" when there is none to show. */
static void format_default(const struct bench_opt *o, char *buf, size_t len)
{
    buf[0] = '\0';
    switch (o->kind) {
    case BENCH_OPT_SIZE:
    case BENCH_OPT_COUNT:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)o->dest);
        break;
    case BENCH_OPT_CHOICE:
        snprintf(buf, len, "%s", o->choices[*(const int *)o->dest]);
        break;
    case BENCH_OPT_STRING:
        snprintf(buf, len, "%s", *(const char *const *)o->dest);
        break;
    case BENCH_OPT_FLAG:
    case BENCH_OPT_HINT:
        break;
    }
}

static void print_help(const char *summary, const struct bench_opt *opts, int nopts,
                        const char *epilog)
{
    printf("Usage: mpiexec -n NPROCS %s [OPTIONS]\n\n%s\n\nOptions:\n", bench_prog, summary);
    for (int i = 0; i <= nopts; i++) {
        char mv[256], left[320], def[256];
        const char *help;
        if (i < nopts) {
            const struct bench_opt *o = &opts[i];
            const char *m = default_metavar(o, mv, sizeof mv);
            snprintf(left, sizeof left, "--%s%s%s", o->name, *m ? " " : "", m);
            format_default(o, def, sizeof def);
            help = o->help;
        } else {
            snprintf(left, sizeof left, "--help");
            def[0] = '\0';
            help = "Print this help and exit.";
        }
        /* Two columns: the option, then its help; the default goes on a line of its own when
         * it would make the last help line wider than 100 characters. */
        int col;
        if (strlen(left) >= 29) { /* keep at least one space between the columns */
            printf("  %s\n", left);
            col = printf("  %-30s", "");
        } else {
            col = printf("  %-30s", left);
        }
        for (const char *p = help; *p; p++) {
            putchar(*p);
            col++;
            if (*p == '\n')
                col = printf("  %-30s", "");
        }
        if (def[0]) {
            if (col + (int)strlen(def) + 12 > 100)
                printf("\n  %-30s[default: %s]", "", def);
            else
                printf(" [default: %s]", def);
        }
        putchar('\n');
    }
    int sizes = 0, hints = 0;
    for (int i = 0; i < nopts; i++) {
        sizes |= opts[i].kind == BENCH_OPT_SIZE;
        hints |= opts[i].kind == BENCH_OPT_HINT;
    }
    printf("\nOptions take their value as the next argument or after '=' (--opt=VALUE).\n");
    if (sizes)
        printf("Sizes (BYTES) take an optional binary suffix: K, M, G, T (65536 = 64K).\n");
    if (hints)
        printf("Hint values go to MPI verbatim, without suffixes: cb_buffer_size=4194304, not 4M.\n"
               "The report shows the values in effect.\n");
    if (epilog)
        printf("\n%s\n", epilog);
    printf("\nExit status: 0 success, 1 an MPI or file-system call failed, 2 bad command line,\n"
           "3 verification failed (the program checks what it wrote; see above).\n");
    fflush(stdout);
}

static int set_value(const struct bench_opt *o, const char *val)
{
    switch (o->kind) {
    case BENCH_OPT_SIZE:
    case BENCH_OPT_COUNT: {
        uint64_t v;
        int is_size = o->kind == BENCH_OPT_SIZE;
        if (!parse_size(val, is_size, &v))
            return bench_usage_error("invalid value '%s' for --%s: expected %s", val, o->name,
                                     is_size ? "a byte count such as 4096 or 64K"
                                             : "a non-negative integer");
        if (v < o->min || v > o->max)
            return bench_usage_error("invalid value '%s' for --%s: must be between %llu and %llu",
                                     val, o->name, (unsigned long long)o->min,
                                     (unsigned long long)o->max);
        *(uint64_t *)o->dest = v;
        return BENCH_CONTINUE;
    }
    case BENCH_OPT_CHOICE:
        for (int i = 0; o->choices[i]; i++) {
            if (strcmp(val, o->choices[i]) == 0) {
                *(int *)o->dest = i;
                return BENCH_CONTINUE;
            }
        }
        {
            char mv[256];
            return bench_usage_error("invalid value '%s' for --%s: expected one of %s", val,
                                     o->name, default_metavar(o, mv, sizeof mv));
        }
    case BENCH_OPT_STRING:
        if (!*val)
            return bench_usage_error("invalid value '' for --%s: must not be empty", o->name);
        *(const char **)o->dest = val;
        return BENCH_CONTINUE;
    case BENCH_OPT_HINT: {
        struct bench_hints *h = o->dest;
        const char *eq = strchr(val, '=');
        if (!eq || eq == val || !eq[1])
            return bench_usage_error("invalid value '%s' for --%s: expected KEY=VALUE "
                                     "(e.g. cb_buffer_size=4194304)", val, o->name);
        if (eq - val >= MPI_MAX_INFO_KEY || strlen(eq + 1) >= MPI_MAX_INFO_VAL)
            return bench_usage_error("invalid value '%s' for --%s: key longer than %d or value "
                                     "longer than %d characters", val, o->name,
                                     MPI_MAX_INFO_KEY - 1, MPI_MAX_INFO_VAL - 1);
        if (h->count == BENCH_MAX_HINTS)
            return bench_usage_error("too many --%s options (at most %d)", o->name,
                                     BENCH_MAX_HINTS);
        h->key[h->count] = val;
        h->key_len[h->count] = (int)(eq - val);
        h->value[h->count] = eq + 1;
        h->count++;
        return BENCH_CONTINUE;
    }
    case BENCH_OPT_FLAG:
        *(int *)o->dest = 1;
        return BENCH_CONTINUE;
    }
    return BENCH_CONTINUE;
}

int bench_parse(int argc, char **argv, const char *summary, const struct bench_opt *opts,
                int nopts, const char *epilog)
{
    /* --help must show the defaults even after other options were given: look for it first. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (bench_rank == 0)
                print_help(summary, opts, nopts, epilog);
            return BENCH_EXIT_OK;
        }
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || !arg[2])
            return bench_usage_error("unexpected argument '%s'", arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const struct bench_opt *o = NULL;
        for (int k = 0; k < nopts; k++) {
            if (strlen(opts[k].name) == nlen && strncmp(opts[k].name, name, nlen) == 0) {
                o = &opts[k];
                break;
            }
        }
        if (!o)
            return bench_usage_error("unknown option '--%.*s'", (int)nlen, name);
        const char *val;
        if (o->kind == BENCH_OPT_FLAG) {
            if (eq)
                return bench_usage_error("option --%s takes no value (got '%s')", o->name, eq + 1);
            val = "";
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            return bench_usage_error("option --%s needs a value", o->name);
        }
        int rc = set_value(o, val);
        if (rc != BENCH_CONTINUE)
            return rc;
    }
    return BENCH_CONTINUE;
}

/* ---- hints ----------------------------------------------------------------------------- */

MPI_Info bench_hints_info(const struct bench_hints *h)
{
    if (h->count == 0)
        return MPI_INFO_NULL;
    MPI_Info info;
    bench_check(MPI_Info_create(&info), "MPI_Info_create", NULL);
    for (int i = 0; i < h->count; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        snprintf(key, sizeof key, "%.*s", h->key_len[i], h->key[i]);
        bench_check(MPI_Info_set(info, key, h->value[i]), "MPI_Info_set", key);
    }
    return info;
}

void bench_info_free(MPI_Info *info)
{
    if (*info != MPI_INFO_NULL)
        bench_check(MPI_Info_free(info), "MPI_Info_free", NULL);
}

void bench_hint_values_get(MPI_File fh, const char *const *keys, struct bench_hint_values *out)
{
    MPI_Info info;
    bench_check(MPI_File_get_info(fh, &info), "MPI_File_get_info", NULL);
    out->count = 0;
    for (int i = 0; keys[i] && out->count < BENCH_MAX_REPORTED_HINTS; i++) {
        int n = out->count++, flag = 0;
        out->key[n] = keys[i];
        out->value[n][0] = '\0';
#if MPI_VERSION >= 4
        int buflen = MPI_MAX_INFO_VAL + 1;
        bench_check(MPI_Info_get_string(info, keys[i], &buflen, out->value[n], &flag),
                    "MPI_Info_get_string", keys[i]);
#else
        bench_check(MPI_Info_get(info, keys[i], MPI_MAX_INFO_VAL, out->value[n], &flag),
                    "MPI_Info_get", keys[i]);
#endif
        out->set[n] = flag;
    }
    bench_check(MPI_Info_free(&info), "MPI_Info_free", NULL);
}

/* ---- reductions and statistics --------------------------------------------------------- */

double bench_max_over_ranks(double local)
{
    double global;
    bench_check(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                "MPI_Allreduce", NULL);
    return global;
}

uint64_t bench_sum_over_ranks(uint64_t local)
{
    uint64_t global;
    bench_check(MPI_Allreduce(&local, &global, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce", NULL);
    return global;
}

double bench_trimmed_mean(const double *v, int n)
{
    if (n <= 0)
        return NAN;
    int lo = 0, hi = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += v[i];
        if (v[i] < v[lo])
            lo = i;
        if (v[i] > v[hi])
            hi = i;
    }
    if (n < 3)
        return sum / n;
    if (lo == hi) /* all equal */
        hi = lo == 0 ? 1 : 0;
    return (sum - v[lo] - v[hi]) / (n - 2);
}

int bench_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

const char *bench_fmt_bytes(double bytes, char *buf)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, 32, "%.0f B", bytes);
    else
        snprintf(buf, 32, "%.2f %s", bytes, units[u]);
    return buf;
}

/* ---- test data ------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

uint64_t bench_seed(uint64_t a, uint64_t b, uint64_t c)
{
    return mix64(mix64(mix64(a) + b) + c);
}

unsigned char bench_expected(uint64_t seed, uint64_t j)
{
    /* Cheap to generate and to check, and differs between any two seeds within 8 bytes. */
    return (unsigned char)((seed >> ((j & 7) * 8)) + (j >> 3));
}

void bench_fill(unsigned char *p, uint64_t n, uint64_t seed)
{
    for (uint64_t j = 0; j < n; j++)
        p[j] = bench_expected(seed, j);
}

uint64_t bench_compare(const unsigned char *p, uint64_t n, uint64_t seed, uint64_t *first)
{
    uint64_t bad = 0;
    for (uint64_t j = 0; j < n; j++) {
        if (p[j] != bench_expected(seed, j) && bad++ == 0)
            *first = j;
    }
    return bad;
}

void bench_maybe_corrupt(unsigned char *p)
{
    const char *v = getenv("PIOSCOPE_BENCH_CORRUPT");
    if (bench_rank == 0 && v && strcmp(v, "1") == 0)
        *p ^= 0xff;
}

/* ---- shared report lines --------------------------------------------------------------- */

double bench_mean_rate(double agg_bytes, const double *times, uint64_t n)
{
    double *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        bench_fail("out of memory");
    for (uint64_t i = 0; i < n; i++)
        r[i] = agg_bytes / times[i];
    double m = bench_trimmed_mean(r, (int)n);
    free(r);
    return m;
}

void bench_print_hints(const struct bench_hints *h, const struct bench_hint_values *v)
{
    printf("  hints set ");
    for (int i = 0; i < h->count; i++)
        printf(" %s", h->key[i]); /* points at "KEY=VALUE" as given */
    printf("%s\n  in effect ", h->count ? "" : " (none)");
    for (int i = 0; i < v->count; i++)
        printf(" %s=%s", v->key[i], v->set[i] ? v->value[i] : "(unset)");
    printf("\n");
}

void bench_print_passes(double agg_bytes, const double *wtime, const double *rtime, uint64_t n)
{
    const double mib = 1048576.0;
    printf("  iter%s%s\n", wtime ? "   write s  write MiB/s" : "",
           rtime ? "    read s   read MiB/s" : "");
    for (uint64_t i = 0; i < n; i++) {
        printf("  %4llu", (unsigned long long)i);
        if (wtime)
            printf("  %8.4f  %11.2f", wtime[i], agg_bytes / wtime[i] / mib);
        if (rtime)
            printf("  %8.4f  %11.2f", rtime[i], agg_bytes / rtime[i] / mib);
        printf("\n");
    }
    const char *how = n >= 3 ? "mean, fastest and slowest iteration dropped" : "mean";
    if (wtime)
        printf("  write      %.2f MiB/s (%s)\n", bench_mean_rate(agg_bytes, wtime, n) / mib, how);
    if (rtime)
        printf("  read       %.2f MiB/s (%s)\n", bench_mean_rate(agg_bytes, rtime, n) / mib, how);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_key(struct bench_json *j, const char *key)
{
    if (j->need_comma[j->depth])
        fputc(',', j->f);
    j->need_comma[j->depth] = 1;
    if (key)
        fprintf(j->f, "\"%s\":", key);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void bench_json_start(struct bench_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->need_comma[0] = 0;
    fputc('{', f);
    j->depth = 1;
    j->need_comma[1] = 0;
}

void bench_json_finish(struct bench_json *j)
{
    fputs("}\n", j->f);
    fflush(j->f);
}

void bench_json_object(struct bench_json *j, const char *key)
{
    json_key(j, key);
    fputc('{', j->f);
    j->need_comma[++j->depth] = 0;
}

void bench_json_array(struct bench_json *j, const char *key)
{
    json_key(j, key);
    fputc('[', j->f);
    j->need_comma[++j->depth] = 0;
}

void bench_json_end(struct bench_json *j, char closer)
{
    j->depth--;
    fputc(closer, j->f);
}

void bench_json_str(struct bench_json *j, const char *key, const char *val)
{
    json_key(j, key);
    if (val)
        json_string(j->f, val);
    else
        fputs("null", j->f);
}

void bench_json_u64(struct bench_json *j, const char *key, uint64_t val)
{
    json_key(j, key);
    fprintf(j->f, "%llu", (unsigned long long)val);
}

void bench_json_f64(struct bench_json *j, const char *key, double val)
{
    json_key(j, key);
    if (isfinite(val))
        fprintf(j->f, "%.9g", val);
    else
        fputs("null", j->f);
}

void bench_json_bool(struct bench_json *j, const char *key, int val)
{
    json_key(j, key);
    fputs(val ? "true" : "false", j->f);
}

void bench_json_hints(struct bench_json *j, const char *key, const struct bench_hints *h)
{
    bench_json_object(j, key);
    for (int i = 0; i < h->count; i++) {
        char k[MPI_MAX_INFO_KEY + 1];
        snprintf(k, sizeof k, "%.*s", h->key_len[i], h->key[i]);
        json_key(j, NULL);
        json_string(j->f, k);
        fputc(':', j->f);
        json_string(j->f, h->value[i]);
    }
    bench_json_end(j, '}');
}

void bench_json_hint_values(struct bench_json *j, const char *key,
                            const struct bench_hint_values *v)
{
    bench_json_object(j, key);
    for (int i = 0; i < v->count; i++)
        bench_json_str(j, v->key[i], v->set[i] ? v->value[i] : NULL);
    bench_json_end(j, '}');
}

void bench_json_passes(struct bench_json *j, const char *key, double agg_bytes,
                       const double *times, uint64_t n)
{
    bench_json_object(j, key);
    bench_json_array(j, "time_s");
    for (uint64_t i = 0; i < n; i++)
        bench_json_f64(j, NULL, times[i]);
    bench_json_end(j, ']');
    bench_json_array(j, "throughput_bytes_per_s");
    for (uint64_t i = 0; i < n; i++)
        bench_json_f64(j, NULL, agg_bytes / times[i]);
    bench_json_end(j, ']');
    bench_json_f64(j, "mean_throughput_bytes_per_s", bench_mean_rate(agg_bytes, times, n));
    bench_json_bool(j, "extremes_dropped", n >= 3);
    bench_json_end(j, '}');
}
