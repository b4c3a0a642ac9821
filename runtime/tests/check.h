/* check.h: the tiny test harness of the C tests: named checks that print "PASS name" or
 * "FAIL name" (the runner counts them) and explain each failed condition on stderr. */
#ifndef PIOSCOPE_CHECK_H
#define PIOSCOPE_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static const char *check_name;
static int check_failures;   /* in the current check */
static int check_failed;     /* checks failed in this program */

static inline void check_begin(const char *name)
{
    check_name = name;
    check_failures = 0;
}

static inline int check_that(int ok, const char *expr, int line, const char *fmt, ...)
{
    if (ok) return 1;
    check_failures++;
    fprintf(stderr, "  %s: line %d: %s", check_name, line, expr);
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(" (", stderr);
        vfprintf(stderr, fmt, ap);
        fputs(")", stderr);
        va_end(ap);
    }
    fputc('\n', stderr);
    return 0;
}

static inline void check_end(void)
{
    printf("%s %s\n", check_failures ? "FAIL" : "PASS", check_name);
    fflush(stdout);
    if (check_failures) check_failed++;
}

/* CHECK(cond) or CHECK(cond, "format", args...): records a failed condition. */
#define CHECK(cond, ...) check_that(!!(cond), #cond, __LINE__, "" __VA_ARGS__)

#endif
