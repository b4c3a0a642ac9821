/* clock.c: owns the record clock: which one (TSC or CLOCK_MONOTONIC) and the ns clocks that
 * chunk headers pair with it so a reader can fit ticks to ns. */
#include <fcntl.h>
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
