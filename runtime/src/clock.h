/* clock.h: the record clock's choice (rdtsc or CLOCK_MONOTONIC), made once at init. The
 * inline read, pioscope_ticks, is in tracer.h. */
#ifndef PIOSCOPE_CLOCK_H
#define PIOSCOPE_CLOCK_H

#include <stdint.h>

/* Decides the clock: PIOSCOPE_CLOCK=tsc|monotonic forces one, else rdtsc when /proc/cpuinfo
 * says the TSC is constant and nonstop. Returns enum pioscope_clock_kind. */
int pioscope_clock_init(const char *forced);
int pioscope_clock_kind(void);
/* Test only: PIOSCOPE_TEST_CLOCK_SKEW="OFFSET_NS,DRIFT_PPM" makes pioscope_host_ns read like
 * another host's CLOCK_MONOTONIC, mono + OFFSET_NS + mono * DRIFT_PPM / 1e6 (mono since boot, so
 * every process given the same pair shares one clock, as on one host). Returns 1 when set, 0
 * when `spec` is unset or empty, -1 when it does not parse (then nothing is skewed). */
int pioscope_clock_test_skew(const char *spec);
const char *pioscope_clock_name(void);
uint64_t pioscope_unix_ns(void);

#endif
