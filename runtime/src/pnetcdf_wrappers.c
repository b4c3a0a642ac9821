/* pnetcdf_wrappers.c: PnetCDF interception (the PnetCDF layer, functions.def 950-999; the MPI
 * runtime only). PnetCDF's MPI-IO calls, and ROMIO's POSIX calls beneath them, nest under these
 * records. The typed forms of a family (ncmpi_put_vara_int_all, ..._double_all) are recorded
 * under its generic name (ncmpi_put_vara_all), as glibc's __read_chk is recorded as read: the
 * type shows in the bytes. Fields of a record:
 *   object  create/open/close/enddef/redef, wait_all/wait: the file's path; the vara families:
 *           "<file path>:<variable name>"
 *   size    vara: bytes of the access (count's elements x element size; the generic forms:
 *           bufcount x size of buftype, or count's elements x size of buftype when bufcount
 *           is -1); wait_all/wait: requests passed; else 0
 *   offset  unknown (flag OFFSET_UNKNOWN) for the vara families; else 0
 *   flags   COLLECTIVE on the _all forms, ncmpi_wait_all and open/create/close/enddef/redef
 *   result  the bytes on success, else the return value (a negative NC_ error)
 *   error   the NC_ error code (negative) when the call failed, else 0
 * iput/iget only queue the access: its MPI-IO happens inside the wait_all (or wait) that
 * completes it. The count's shape is written as settings of the variable (nc.count) when it
 * changes. Nothing of PnetCDF is linked: every function is found with dlsym on first use. */
#ifndef PIOSCOPE_NO_MPI
#include <errno.h>
#include <mpi.h>

#include "core.h"
#include "object_table.h"
#include "tracer.h"

enum { INDEPENDENT = 0, COLLECTIVE = PIOSCOPE_F_COLLECTIVE };
#define NC_NAME_BYTES 257  /* NC_MAX_NAME + 1 */

typedef int nc_open_fn(MPI_Comm comm, const char *path, int mode, MPI_Info info, int *ncid);
typedef int nc_id_fn(int ncid);
typedef int nc_vara_fn(int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                       const void *buf);
typedef int nc_ivara_fn(int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                        const void *buf, int *req);
typedef int nc_vara_generic_fn(int ncid, int varid, const MPI_Offset *start,
                               const MPI_Offset *count, const void *buf, MPI_Offset bufcount,
                               MPI_Datatype buftype);
typedef int nc_ivara_generic_fn(int ncid, int varid, const MPI_Offset *start,
                                const MPI_Offset *count, const void *buf, MPI_Offset bufcount,
                                MPI_Datatype buftype, int *req);
typedef int nc_wait_fn(int ncid, int count, int requests[], int statuses[]);
typedef int nc_inq_varname_fn(int ncid, int varid, char *name);
typedef int nc_inq_int_fn(int ncid, int *value);            /* ncmpi_inq_nvars */
typedef int nc_inq_varndims_fn(int ncid, int varid, int *ndims);

/* NC_ENOTBUILT-like failure when PnetCDF is absent (the program could not have called it). */
static inline int missing(void)
{
    errno = ENOSYS;
    return -1;
}

/* ---- names ---- */

static pioscope_object_table objects = PIOSCOPE_OBJECT_TABLE_INIT;
static void *inq_varname_, *inq_nvars_, *inq_varndims_;

/* Keys of the object table: a file by its ncid, a variable by ncid and varid (both > 0). */
static int64_t file_key(int ncid)
{
    return ((int64_t)(uint32_t)ncid + 1) << 32;
}

static int64_t variable_key(int ncid, int varid)
{
    return file_key(ncid) | (uint32_t)(varid + 1);
}

/* The "<file>:<variable>" string of a variable, remembered on first use. */
static uint32_t variable_object(int ncid, int varid)
{
    uint32_t object = pioscope_objects_find(&objects, variable_key(ncid, varid));
    if (object) return object;
    nc_inq_varname_fn *inq = pioscope_resolve(&inq_varname_, "ncmpi_inq_varname");
    uint32_t file = pioscope_objects_find(&objects, file_key(ncid));
    char name[NC_NAME_BYTES];
    if (!inq || !file) return 0;
    pioscope_internal_begin();
    int r = inq(ncid, varid, name);
    pioscope_internal_end();
    if (r != 0) return 0;
    object = pioscope_intern_member(file, name);
    pioscope_objects_remember(&objects, variable_key(ncid, varid), object);
    return object;
}

/* ---- the count of an access ---- */

/* Elements in `count` (the variable's dimensions), and its shape written as settings of the
 * variable when it changed. */
static uint64_t count_elements(int ncid, int varid, const MPI_Offset *count, uint32_t object,
                               uint16_t func, uint64_t ticks)
{
    nc_inq_varndims_fn *inq = pioscope_resolve(&inq_varndims_, "ncmpi_inq_varndims");
    int ndims = 0;
    pioscope_internal_begin();
    int r = inq ? inq(ncid, varid, &ndims) : -1;
    pioscope_internal_end();
    if (r != 0 || ndims < 0 || (ndims > 0 && !count)) return 0;
    uint64_t elements = 1, hash = 0xcbf29ce484222325ull ^ (uint64_t)ndims;
    for (int i = 0; i < ndims; i++) {
        elements *= (uint64_t)count[i];
        hash = (hash ^ (uint64_t)count[i]) * 0x100000001b3ull;
    }
    if (object && pioscope_objects_shape_changed(&objects, variable_key(ncid, varid), hash | 1)) {
        char text[512];
        pioscope_text t = {text, sizeof text, 0};
        pioscope_text_str(&t, "nc.count=");
        for (int i = 0; i < ndims; i++) {
            if (i) pioscope_text_put(&t, "x", 1);
            pioscope_text_u64(&t, (uint64_t)count[i]);
        }
        pioscope_text_put(&t, "\n", 1);
        pioscope_write_settings(object, func, ticks, text, pioscope_text_used(&t));
    }
    return elements;
}

/* After a vara call: the variable, the bytes, the mode. `element` 0: bytes are `bytes`. */
PIOSCOPE_ALWAYS_INLINE
static inline int vara_done(pioscope_call *call, uint16_t func, uint8_t flags, int ncid,
                            int varid, const MPI_Offset *count, uint64_t element,
                            uint64_t bytes, int r, int err)
{
    pioscope_stop(call);
    uint32_t object = 0;
    if (call->recording) {
        object = variable_object(ncid, varid);
        uint64_t elements = count_elements(ncid, varid, count, object, func, call->start);
        if (element) bytes = elements * element;
    }
    pioscope_event ev = {func, flags | PIOSCOPE_F_OFFSET_UNKNOWN, object, 0, bytes,
                         r == 0 ? (int64_t)bytes : r, r == 0 ? 0 : r, 0};
    pioscope_leave(call, &ev);
    errno = err;
    return r;
}

static int do_vara(pioscope_target *t, uint8_t flags, int ncid, int varid,
                   const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                   size_t element)
{
    pioscope_call call;
    nc_vara_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, buf);
    return vara_done(&call, t->func, flags, ncid, varid, count, element, 0, r, errno);
}

static int do_ivara(pioscope_target *t, uint8_t flags, int ncid, int varid,
                    const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                    size_t element, int *req)
{
    pioscope_call call;
    nc_ivara_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, buf, req);
    return vara_done(&call, t->func, flags, ncid, varid, count, element, 0, r, errno);
}

/* Bytes of a generic access: bufcount x size of buftype, or (bufcount -1, buftype a basic
 * type) the count's elements x its size, told by element_size. */
static uint64_t generic_bytes(MPI_Offset bufcount, MPI_Datatype buftype, uint64_t *element_size)
{
    int size = 0;
    pioscope_internal_begin();
    if (buftype == MPI_DATATYPE_NULL || PMPI_Type_size(buftype, &size) != MPI_SUCCESS) size = 0;
    pioscope_internal_end();
    *element_size = bufcount < 0 ? (uint64_t)size : 0;
    return bufcount < 0 ? 0 : (uint64_t)bufcount * (uint64_t)size;
}

static int do_vara_generic(pioscope_target *t, uint8_t flags, int ncid, int varid,
                           const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                           MPI_Offset bufcount, MPI_Datatype buftype)
{
    pioscope_call call;
    nc_vara_generic_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, buf, bufcount, buftype);
    int err = errno;
    uint64_t element = 0, bytes = call.recording ? generic_bytes(bufcount, buftype, &element) : 0;
    return vara_done(&call, t->func, flags, ncid, varid, count, element, bytes, r, err);
}

static int do_ivara_generic(pioscope_target *t, uint8_t flags, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                            MPI_Offset bufcount, MPI_Datatype buftype, int *req)
{
    pioscope_call call;
    nc_ivara_generic_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, buf, bufcount, buftype, req);
    int err = errno;
    uint64_t element = 0, bytes = call.recording ? generic_bytes(bufcount, buftype, &element) : 0;
    return vara_done(&call, t->func, flags, ncid, varid, count, element, bytes, r, err);
}

/* ---- files ---- */

static int file_opened(pioscope_call *call, uint16_t func, const char *path, int r, int *ncid,
                       int err)
{
    pioscope_stop(call);
    uint32_t object = 0;
    if (call->recording && r == 0 && ncid) {
        object = pioscope_intern_path(path, -1);
        pioscope_objects_remember(&objects, file_key(*ncid), object);
    }
    pioscope_record(call, func, object, 0, 0, r, r != 0, r, COLLECTIVE);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(ncmpi_create, int, ncmpi_create,
                 (MPI_Comm comm, const char *path, int cmode, MPI_Info info, int *ncid))
{
    pioscope_call call;
    nc_open_fn *real = pioscope_begin(&call, &target_ncmpi_create);
    if (!real) return missing();
    int r = real(comm, path, cmode, info, ncid);
    return file_opened(&call, target_ncmpi_create.func, path, r, ncid, errno);
}

PIOSCOPE_WRAPPER(ncmpi_open, int, ncmpi_open,
                 (MPI_Comm comm, const char *path, int omode, MPI_Info info, int *ncid))
{
    pioscope_call call;
    nc_open_fn *real = pioscope_begin(&call, &target_ncmpi_open);
    if (!real) return missing();
    int r = real(comm, path, omode, info, ncid);
    return file_opened(&call, target_ncmpi_open.func, path, r, ncid, errno);
}

/* A call on a whole file (enddef, redef, close). */
static int do_file_call(pioscope_target *t, int ncid)
{
    pioscope_call call;
    nc_id_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = pioscope_objects_find(&objects, file_key(ncid));
    pioscope_record(&call, t->func, object, 0, 0, r, r != 0, r, COLLECTIVE);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(ncmpi_enddef, int, ncmpi_enddef, (int ncid))
{
    return do_file_call(&target_ncmpi_enddef, ncid);
}

PIOSCOPE_WRAPPER(ncmpi_redef, int, ncmpi_redef, (int ncid))
{
    return do_file_call(&target_ncmpi_redef, ncid);
}

PIOSCOPE_WRAPPER(ncmpi_close, int, ncmpi_close, (int ncid))
{
    /* The variables' names go with the file: the ncid may name another file next. */
    nc_inq_int_fn *inq_nvars = pioscope_resolve(&inq_nvars_, "ncmpi_inq_nvars");
    int nvars = 0;
    pioscope_internal_begin();
    if (!inq_nvars || inq_nvars(ncid, &nvars) != 0) nvars = 0;
    pioscope_internal_end();
    for (int varid = 0; varid < nvars; varid++)
        pioscope_objects_forget(&objects, variable_key(ncid, varid));
    int r = do_file_call(&target_ncmpi_close, ncid);
    if (r == 0) pioscope_objects_forget(&objects, file_key(ncid));
    return r;
}

/* ---- waits ---- */

static int do_wait(pioscope_target *t, uint8_t flags, int ncid, int count, int requests[],
                   int statuses[])
{
    pioscope_call call;
    nc_wait_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, count, requests, statuses);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = pioscope_objects_find(&objects, file_key(ncid));
    uint64_t n = count > 0 ? (uint64_t)count : 0;
    pioscope_record(&call, t->func, object, 0, n, r == 0 ? (int64_t)n : r, r != 0, r, flags);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(ncmpi_wait_all, int, ncmpi_wait_all,
                 (int ncid, int count, int requests[], int statuses[]))
{
    return do_wait(&target_ncmpi_wait_all, COLLECTIVE, ncid, count, requests, statuses);
}

PIOSCOPE_WRAPPER(ncmpi_wait, int, ncmpi_wait, (int ncid, int count, int requests[], int statuses[]))
{
    return do_wait(&target_ncmpi_wait, INDEPENDENT, ncid, count, requests, statuses);
}

/* ---- data: the vara families ---- */

/* ncmpi_put_vara: the generic form, then the typed ones, recorded as ncmpi_put_vara. */
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_vara_generic(&target_ncmpi_put_vara, INDEPENDENT, ncid, varid, start, count, buf,
                           bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_text,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const char *buf))
{
    return do_vara(&target_ncmpi_put_vara_text, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_schar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const signed char *buf))
{
    return do_vara(&target_ncmpi_put_vara_schar, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_uchar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned char *buf))
{
    return do_vara(&target_ncmpi_put_vara_uchar, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_short,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const short *buf))
{
    return do_vara(&target_ncmpi_put_vara_short, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_ushort,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned short *buf))
{
    return do_vara(&target_ncmpi_put_vara_ushort, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_int,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const int *buf))
{
    return do_vara(&target_ncmpi_put_vara_int, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_uint,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned int *buf))
{
    return do_vara(&target_ncmpi_put_vara_uint, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_long,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const long *buf))
{
    return do_vara(&target_ncmpi_put_vara_long, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_float,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const float *buf))
{
    return do_vara(&target_ncmpi_put_vara_float, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_double,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const double *buf))
{
    return do_vara(&target_ncmpi_put_vara_double, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_longlong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const long long *buf))
{
    return do_vara(&target_ncmpi_put_vara_longlong, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara, int, ncmpi_put_vara_ulonglong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned long long *buf))
{
    return do_vara(&target_ncmpi_put_vara_ulonglong, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}

/* ncmpi_put_vara_all: the generic form, then the typed ones, recorded as ncmpi_put_vara_all. */
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_vara_generic(&target_ncmpi_put_vara_all, COLLECTIVE, ncid, varid, start, count, buf,
                           bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_text_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const char *buf))
{
    return do_vara(&target_ncmpi_put_vara_text_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_schar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const signed char *buf))
{
    return do_vara(&target_ncmpi_put_vara_schar_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_uchar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned char *buf))
{
    return do_vara(&target_ncmpi_put_vara_uchar_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_short_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const short *buf))
{
    return do_vara(&target_ncmpi_put_vara_short_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_ushort_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned short *buf))
{
    return do_vara(&target_ncmpi_put_vara_ushort_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_int_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const int *buf))
{
    return do_vara(&target_ncmpi_put_vara_int_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_uint_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned int *buf))
{
    return do_vara(&target_ncmpi_put_vara_uint_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_long_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const long *buf))
{
    return do_vara(&target_ncmpi_put_vara_long_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_float_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const float *buf))
{
    return do_vara(&target_ncmpi_put_vara_float_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_double_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const double *buf))
{
    return do_vara(&target_ncmpi_put_vara_double_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_longlong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const long long *buf))
{
    return do_vara(&target_ncmpi_put_vara_longlong_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vara_all, int, ncmpi_put_vara_ulonglong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned long long *buf))
{
    return do_vara(&target_ncmpi_put_vara_ulonglong_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}

/* ncmpi_get_vara: the generic form, then the typed ones, recorded as ncmpi_get_vara. */
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_vara_generic(&target_ncmpi_get_vara, INDEPENDENT, ncid, varid, start, count, buf,
                           bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_text,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  char *buf))
{
    return do_vara(&target_ncmpi_get_vara_text, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_schar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  signed char *buf))
{
    return do_vara(&target_ncmpi_get_vara_schar, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_uchar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned char *buf))
{
    return do_vara(&target_ncmpi_get_vara_uchar, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_short,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  short *buf))
{
    return do_vara(&target_ncmpi_get_vara_short, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_ushort,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned short *buf))
{
    return do_vara(&target_ncmpi_get_vara_ushort, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_int,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  int *buf))
{
    return do_vara(&target_ncmpi_get_vara_int, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_uint,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned int *buf))
{
    return do_vara(&target_ncmpi_get_vara_uint, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_long,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  long *buf))
{
    return do_vara(&target_ncmpi_get_vara_long, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_float,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  float *buf))
{
    return do_vara(&target_ncmpi_get_vara_float, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_double,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  double *buf))
{
    return do_vara(&target_ncmpi_get_vara_double, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_longlong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  long long *buf))
{
    return do_vara(&target_ncmpi_get_vara_longlong, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara, int, ncmpi_get_vara_ulonglong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned long long *buf))
{
    return do_vara(&target_ncmpi_get_vara_ulonglong, INDEPENDENT, ncid, varid, start, count, buf,
                   sizeof *buf);
}

/* ncmpi_get_vara_all: the generic form, then the typed ones, recorded as ncmpi_get_vara_all. */
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_vara_generic(&target_ncmpi_get_vara_all, COLLECTIVE, ncid, varid, start, count, buf,
                           bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_text_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  char *buf))
{
    return do_vara(&target_ncmpi_get_vara_text_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_schar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  signed char *buf))
{
    return do_vara(&target_ncmpi_get_vara_schar_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_uchar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned char *buf))
{
    return do_vara(&target_ncmpi_get_vara_uchar_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_short_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  short *buf))
{
    return do_vara(&target_ncmpi_get_vara_short_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_ushort_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned short *buf))
{
    return do_vara(&target_ncmpi_get_vara_ushort_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_int_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  int *buf))
{
    return do_vara(&target_ncmpi_get_vara_int_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_uint_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned int *buf))
{
    return do_vara(&target_ncmpi_get_vara_uint_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_long_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  long *buf))
{
    return do_vara(&target_ncmpi_get_vara_long_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_float_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  float *buf))
{
    return do_vara(&target_ncmpi_get_vara_float_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_double_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  double *buf))
{
    return do_vara(&target_ncmpi_get_vara_double_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_longlong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  long long *buf))
{
    return do_vara(&target_ncmpi_get_vara_longlong_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vara_all, int, ncmpi_get_vara_ulonglong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned long long *buf))
{
    return do_vara(&target_ncmpi_get_vara_ulonglong_all, COLLECTIVE, ncid, varid, start, count, buf,
                   sizeof *buf);
}

/* ncmpi_iput_vara: the generic form, then the typed ones, recorded as ncmpi_iput_vara. */
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const void *buf, MPI_Offset bufcount, MPI_Datatype buftype, int *req))
{
    return do_ivara_generic(&target_ncmpi_iput_vara, INDEPENDENT, ncid, varid, start, count, buf,
                            bufcount, buftype, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_text,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const char *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_text, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_schar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const signed char *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_schar, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_uchar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned char *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_uchar, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_short,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const short *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_short, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_ushort,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned short *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_ushort, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_int,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const int *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_int, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_uint,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned int *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_uint, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_long,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const long *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_long, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_float,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const float *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_float, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_double,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const double *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_double, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_longlong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const long long *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_longlong, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iput_vara, int, ncmpi_iput_vara_ulonglong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const unsigned long long *buf, int *req))
{
    return do_ivara(&target_ncmpi_iput_vara_ulonglong, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}

/* ncmpi_iget_vara: the generic form, then the typed ones, recorded as ncmpi_iget_vara. */
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  void *buf, MPI_Offset bufcount, MPI_Datatype buftype, int *req))
{
    return do_ivara_generic(&target_ncmpi_iget_vara, INDEPENDENT, ncid, varid, start, count, buf,
                            bufcount, buftype, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_text,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  char *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_text, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_schar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  signed char *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_schar, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_uchar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned char *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_uchar, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_short,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  short *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_short, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_ushort,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned short *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_ushort, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_int,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  int *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_int, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_uint,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned int *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_uint, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_long,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  long *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_long, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_float,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  float *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_float, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_double,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  double *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_double, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_longlong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  long long *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_longlong, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}
PIOSCOPE_WRAPPER(ncmpi_iget_vara, int, ncmpi_iget_vara_ulonglong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  unsigned long long *buf, int *req))
{
    return do_ivara(&target_ncmpi_iget_vara_ulonglong, INDEPENDENT, ncid, varid, start, count, buf,
                    sizeof *buf, req);
}

#endif
