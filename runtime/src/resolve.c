/* resolve.c: owns finding the real functions behind the intercepted ones, guarded against
 * recursion when dlsym itself reaches an intercepted function.
 *
 * RATIONALE: dlsym(RTLD_NEXT) searches the global scope only. A library loaded with
 * dlopen(RTLD_LOCAL), as Python loads an extension module and with it its dependencies
 * (h5py's libhdf5), is not in it: the wrapper would find no real function and fail the
 * program's call. So when RTLD_NEXT finds nothing, every loaded object but this library is
 * asked in load order, once per function. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>

#include "tracer.h"

static __thread int resolving __attribute__((tls_model("initial-exec")));

struct local_search {
    const char *name;
    void *self_base;  /* this library's load address: its own wrappers are not the answer */
    void *found;
};

static int search_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct local_search *s = data;
    /* The main program (empty name) searches the global scope, this library included. */
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    void *handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) return 0;
    void *p = dlsym(handle, s->name);
    dlclose(handle);
    Dl_info where;
    if (!p || (dladdr(p, &where) && where.dli_fbase == s->self_base)) return 0;
    s->found = p;
    return 1;
}

/* `name` in an object loaded outside the global scope (RTLD_LOCAL), or NULL. */
static void *real_in_local_scope(const char *name)
{
    Dl_info self;
    if (!dladdr((void *)&real_in_local_scope, &self)) return NULL;
    struct local_search s = {name, self.dli_fbase, NULL};
    dl_iterate_phdr(search_object, &s);
    return s.found;
}

void *pioscope_real(const char *name)
{
    if (resolving) return NULL;
    int saved = errno;
    resolving = 1;
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) p = real_in_local_scope(name);
    resolving = 0;
    errno = saved;
    return p;
}
