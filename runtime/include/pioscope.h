/* pioscope.h: user regions for programs traced by pioscope. Include it and mark phases:
 *
 *     pioscope_region_begin("checkpoint");
 *     ... I/O ...
 *     pioscope_region_end();
 *
 * Nothing to link: the calls reach libpioscope.so when it is preloaded (LD_PRELOAD) and do
 * nothing otherwise. Regions nest; the calls made inside a region are its children in the
 * trace. The name is copied; it can be any string.
 *
 * How: weak references to the library's entry points. A non-PIE executable has its undefined
 * weak references set to 0 at link time, so there the entry points are looked up once with
 * dlsym(RTLD_DEFAULT) instead (dlsym itself weak: in libc since glibc 2.34; on older glibc
 * without -ldl the regions quietly do nothing in non-PIE programs). */
#ifndef PIOSCOPE_H
#define PIOSCOPE_H

#include <dlfcn.h>
#ifndef RTLD_DEFAULT
#define RTLD_DEFAULT ((void *)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

extern void pioscope_region_begin_impl(const char *name) __attribute__((weak));
extern void pioscope_region_end_impl(void) __attribute__((weak));
#pragma weak dlsym

typedef void (*pioscope_region_begin_fn)(const char *);
typedef void (*pioscope_region_end_fn)(void);

/* Each looks the entry point up once per translation unit when the weak reference is 0 (a
 * benign race: every thread finds the same value). */
static inline void pioscope_region_begin(const char *name)
{
    static pioscope_region_begin_fn found;
    static int looked;
    pioscope_region_begin_fn fn = pioscope_region_begin_impl;
    if (!fn) {
        if (!looked) {
            if (dlsym) *(void **)&found = dlsym(RTLD_DEFAULT, "pioscope_region_begin_impl");
            looked = 1;
        }
        fn = found;
    }
    if (fn) fn(name);
}

static inline void pioscope_region_end(void)
{
    static pioscope_region_end_fn found;
    static int looked;
    pioscope_region_end_fn fn = pioscope_region_end_impl;
    if (!fn) {
        if (!looked) {
            if (dlsym) *(void **)&found = dlsym(RTLD_DEFAULT, "pioscope_region_end_impl");
            looked = 1;
        }
        fn = found;
    }
    if (fn) fn();
}

#ifdef __cplusplus
}
#endif

#endif
