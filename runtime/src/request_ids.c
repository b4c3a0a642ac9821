/* request_ids.c: owns the ids of nonblocking requests (MPI's and POSIX aio's), so that a start
 * and its completion share one id that no other request of the process has. */
#include "tracer.h"

static uint64_t next_id;

uint64_t pioscope_request_id(void)
{
    return __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
}
