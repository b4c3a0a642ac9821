/* regions.c: owns user regions (include/pioscope.h): a per-thread stack of open regions; each
 * region becomes one record (func = region, object = its name) that encloses the calls made
 * inside it, like a traced call. */
#include "core.h"

PIOSCOPE_EXPORT void pioscope_region_begin_impl(const char *name);
PIOSCOPE_EXPORT void pioscope_region_end_impl(void);

PIOSCOPE_EXPORT void pioscope_region_begin_impl(const char *name)
{
    pioscope_thread_state *t = &pioscope_thread;
    if (!__atomic_load_n(&pioscope_recording, __ATOMIC_RELAXED) || t->internal) return;
    struct pioscope_tbuf *b = pioscope_thread_buffer();
    if (!b) return;
    if (b->region_top >= PIOSCOPE_REGION_MAX) {
        b->region_overflow++;  /* too deep: still nests, not recorded */
        t->depth++;
        return;
    }
    uint32_t id = pioscope_intern_string(PIOSCOPE_STRING_REGION, name ? name : "");
    struct pioscope_region_frame *f = &b->regions[b->region_top++];
    f->name = id;
    f->depth = t->depth++;
    f->start = pioscope_ticks();
}

PIOSCOPE_EXPORT void pioscope_region_end_impl(void)
{
    uint64_t end = pioscope_ticks();
    pioscope_thread_state *t = &pioscope_thread;
    struct pioscope_tbuf *b = t->buf;
    if (!b) return;
    if (b->region_overflow) {
        b->region_overflow--;
        if (t->depth) t->depth--;
        return;
    }
    if (!b->region_top) return;  /* an end without a begin */
    struct pioscope_region_frame *f = &b->regions[--b->region_top];
    t->depth = f->depth;
    pioscope_event ev = {PIOSCOPE_FN_region, 0, f->name, 0, 0, 0, 0, 0};
    pioscope_append(f->start, end - f->start, f->depth, &ev);
}
