/* clock.c: owns the record clock: which one (TSC or CLOCK_MONOTONIC) and the ns clocks that
 * chunk headers pair with it so a reader can fit ticks to ns. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "sys.h"
#include "tracer.h"

int pioscope_clock_tsc PIOSCOPE_HIDDEN = 0;

uint64_t pioscope_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The test-only skew of PIOSCOPE_TEST_CLOCK_SKEW (0, 0 when unset). */
static int64_t skew_offset_ns, skew_drift_ppm;

uint64_t pioscope_host_ns(void)
{
    /* No branch: unset, both terms are 0. The record clock never comes here (a MONOTONIC
     * record clock reads pioscope_mono_ns), so the skew reaches the events through the
     * (ticks, ns) pairs of the chunk headers, as a real other host's clock would. */
    uint64_t mono = pioscope_mono_ns();
    int64_t drift = (int64_t)((__int128)mono * skew_drift_ppm / 1000000);
    return mono + (uint64_t)(skew_offset_ns + drift);
}

int pioscope_clock_test_skew(const char *spec)
{
    if (!spec || !*spec) return 0;
    char *end;
    long long offset = strtoll(spec, &end, 10);
    if (end == spec || *end != ',') return -1;
    const char *ppm_text = end + 1;
    long long ppm = strtoll(ppm_text, &end, 10);
    if (end == ppm_text || *end) return -1;
    /* Within +-1 day and +-10 %, and never below 0 now: the skewed clock stays a clock. */
    if (offset < -86400000000000LL || offset > 86400000000000LL || ppm < -100000 || ppm > 100000)
        return -1;
    uint64_t mono = pioscope_mono_ns();
    if ((int64_t)mono + offset + (int64_t)((__int128)mono * ppm / 1000000) < 0) return -1;
    skew_offset_ns = offset;
    skew_drift_ppm = ppm;
    return 1;
}

uint64_t pioscope_unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* True when the first "flags" line of /proc/cpuinfo lists both words. Read with raw syscalls:
 * the tracer's own I/O is never traced. */
static int cpu_has_invariant_tsc(void)
{
    static char text[32768];
    long fd = pio_openat(AT_FDCWD, "/proc/cpuinfo", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return 0;
    size_t used = 0;
    for (;;) {
        long n = pio_read((int)fd, text + used, sizeof text - 1 - used);
        if (n <= 0) break;
        used += (size_t)n;
        if (used == sizeof text - 1) break;
    }
    pio_close((int)fd);
    text[used] = 0;
    char *flags = strstr(text, "\nflags");
    if (!flags) return 0;
    char *eol = strchr(flags + 1, '\n');
    if (eol) *eol = 0;
    return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
}

int pioscope_clock_init(const char *forced)
{
    int tsc = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (forced && !strcmp(forced, "tsc"))
        tsc = 1;
    else if (forced && !strcmp(forced, "monotonic"))
        tsc = 0;
    else
        tsc = cpu_has_invariant_tsc();
#else
    (void)forced;
#endif
    pioscope_clock_tsc = tsc;
    return pioscope_clock_kind();
}

int pioscope_clock_kind(void)
{
    return pioscope_clock_tsc ? PIOSCOPE_CLOCK_TSC : PIOSCOPE_CLOCK_MONOTONIC;
}

const char *pioscope_clock_name(void)
{
    return pioscope_clock_tsc ? "tsc" : "monotonic";
}
