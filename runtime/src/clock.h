/* clock.h: the record clock's choice (rdtsc or CLOCK_MONOTONIC), made once at init. The
 * inline read, pioscope_ticks, is in tracer.h. */
#ifndef PIOSCOPE_CLOCK_H
#define PIOSCOPE_CLOCK_H

#include <stdint.h>

/* Decides the clock: PIOSCOPE_CLOCK=tsc|monotonic forces one, else rdtsc when /proc/cpuinfo
 * says the TSC is constant and nonstop. Returns enum pioscope_clock_kind. */
int pioscope_clock_init(const char *forced);
int pioscope_clock_kind(void);
const char *pioscope_clock_name(void);
uint64_t pioscope_unix_ns(void);

#endif
