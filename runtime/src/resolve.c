/* resolve.c: owns finding the real functions behind the intercepted ones (dlsym RTLD_NEXT),
 * guarded against recursion when dlsym itself reaches an intercepted function. */
#include <dlfcn.h>
#include <errno.h>

#include "tracer.h"

static __thread int resolving __attribute__((tls_model("initial-exec")));

void *pioscope_real(const char *name)
{
    if (resolving) return NULL;
    int saved = errno;
    resolving = 1;
    void *p = dlsym(RTLD_NEXT, name);
    resolving = 0;
    errno = saved;
    return p;
}
