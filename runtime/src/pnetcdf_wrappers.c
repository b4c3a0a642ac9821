/* pnetcdf_wrappers.c: PnetCDF interception (the PnetCDF layer, functions.def 950-999; the MPI
 * runtime only). PnetCDF's MPI-IO calls, and ROMIO's POSIX calls beneath them, nest under these
 * records. The typed forms of a family (ncmpi_put_vara_int_all, ..._double_all) are recorded
 * under its generic name (ncmpi_put_vara_all), as glibc's __read_chk is recorded as read: the
 * type shows in the bytes. Fields of a record:
 *   object  create/open/close/enddef/_enddef/redef, wait_all/wait: the file's path; the
 *           data families (var, vara, vars, varn): "<file path>:<variable name>"
 *   size    data: bytes of the access (elements x element size; the generic forms: bufcount x
 *           size of buftype, or elements x size of buftype when bufcount is -1). Elements:
 *           the count's (vara, vars), the variable's dimensions now (var), the sum of the
 *           counts (varn); wait_all/wait: requests passed; else 0
 *   offset  unknown (flag OFFSET_UNKNOWN) for the data families; else 0
 *   flags   COLLECTIVE on the _all forms, ncmpi_wait_all and the calls on a whole file;
 *           NONBLOCKING on iput/iget (no request id: PnetCDF numbers its requests itself)
 *   result  the bytes on success, else the return value (a negative NC_ error)
 *   error   the NC_ error code (negative) when the call failed, else 0
 * iput/iget only queue the access: its MPI-IO happens inside the wait_all (or wait) that
 * completes it. The count's shape (var: the variable's dimensions) is written as settings of
 * the variable (nc.count) when it changes. Nothing of PnetCDF is linked: every function is
 * found with dlsym on first use. */
#ifndef PIOSCOPE_NO_MPI
#include <errno.h>
#include <mpi.h>

#include "core.h"
#include "object_table.h"
#include "tracer.h"

enum { INDEPENDENT = 0, COLLECTIVE = PIOSCOPE_F_COLLECTIVE };
#define NC_NAME_BYTES 257  /* NC_MAX_NAME + 1 */
#define NC_WHOLE_MAX_DIMS 64  /* a whole-variable access of more dimensions counts no bytes */

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
typedef int nc_var_fn(int ncid, int varid, const void *buf);
typedef int nc_var_generic_fn(int ncid, int varid, const void *buf, MPI_Offset bufcount,
                              MPI_Datatype buftype);
typedef int nc_vars_fn(int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                       const MPI_Offset *stride, const void *buf);
typedef int nc_vars_generic_fn(int ncid, int varid, const MPI_Offset *start,
                               const MPI_Offset *count, const MPI_Offset *stride,
                               const void *buf, MPI_Offset bufcount, MPI_Datatype buftype);
typedef int nc_varn_fn(int ncid, int varid, int num, MPI_Offset *const *starts,
                       MPI_Offset *const *counts, const void *buf);
typedef int nc_varn_generic_fn(int ncid, int varid, int num, MPI_Offset *const *starts,
                               MPI_Offset *const *counts, const void *buf,
                               MPI_Offset bufcount, MPI_Datatype buftype);
typedef int nc_wait_fn(int ncid, int count, int requests[], int statuses[]);
typedef int nc_inq_varname_fn(int ncid, int varid, char *name);
typedef int nc_inq_int_fn(int ncid, int *value);            /* ncmpi_inq_nvars */
typedef int nc_inq_varndims_fn(int ncid, int varid, int *ndims);
typedef int nc_inq_vardimid_fn(int ncid, int varid, int *dimids);
typedef int nc_inq_dimlen_fn(int ncid, int dimid, MPI_Offset *length);

/* NC_ENOTBUILT-like failure when PnetCDF is absent (the program could not have called it). */
static inline int missing(void)
{
    errno = ENOSYS;
    return -1;
}

/* ---- names ---- */

static pioscope_object_table objects = PIOSCOPE_OBJECT_TABLE_INIT;
static void *inq_varname_, *inq_nvars_, *inq_varndims_, *inq_vardimid_, *inq_dimlen_;

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

/* The number of dimensions of a variable, -1 when PnetCDF cannot say. */
static int variable_ndims(int ncid, int varid)
{
    nc_inq_varndims_fn *inq = pioscope_resolve(&inq_varndims_, "ncmpi_inq_varndims");
    int ndims = -1;
    pioscope_internal_begin();
    if (!inq || inq(ncid, varid, &ndims) != 0) ndims = -1;
    pioscope_internal_end();
    return ndims;
}

/* Elements of the whole variable (its dimensions now: a record variable's records so far),
 * its shape written as count_elements does. */
static uint64_t whole_elements(int ncid, int varid, uint32_t object, uint16_t func,
                               uint64_t ticks)
{
    nc_inq_vardimid_fn *inq_dims = pioscope_resolve(&inq_vardimid_, "ncmpi_inq_vardimid");
    nc_inq_dimlen_fn *inq_len = pioscope_resolve(&inq_dimlen_, "ncmpi_inq_dimlen");
    int ndims = variable_ndims(ncid, varid);
    if (!inq_dims || !inq_len || ndims < 0 || ndims > NC_WHOLE_MAX_DIMS) return 0;
    int dimids[NC_WHOLE_MAX_DIMS];
    MPI_Offset count[NC_WHOLE_MAX_DIMS];
    int ok = 1;
    pioscope_internal_begin();
    ok = inq_dims(ncid, varid, dimids) == 0;
    for (int i = 0; ok && i < ndims; i++) ok = inq_len(ncid, dimids[i], &count[i]) == 0;
    pioscope_internal_end();
    return ok ? count_elements(ncid, varid, count, object, func, ticks) : 0;
}

/* Elements of a varn access: the sum of its `num` counts (none: one element per start). */
static uint64_t varn_elements(int ncid, int varid, int num, MPI_Offset *const *counts)
{
    int ndims = variable_ndims(ncid, varid);
    if (ndims < 0 || num <= 0) return 0;
    if (!counts) return (uint64_t)num;
    uint64_t elements = 0;
    for (int i = 0; i < num; i++) {
        uint64_t n = 1;
        for (int d = 0; d < ndims && counts[i]; d++) n *= (uint64_t)counts[i][d];
        elements += counts[i] ? n : 0;
    }
    return elements;
}

/* How an access gives its elements: a count (vara, vars), the whole variable (var), or
 * `num` counts (varn). */
typedef struct {
    enum { EXTENT_COUNT, EXTENT_WHOLE, EXTENT_VARN } kind;
    const MPI_Offset *count;      /* EXTENT_COUNT */
    int num;                      /* EXTENT_VARN */
    MPI_Offset *const *counts;    /* EXTENT_VARN */
} nc_extent;

static uint64_t extent_elements(int ncid, int varid, const nc_extent *ext, uint32_t object,
                                uint16_t func, uint64_t ticks)
{
    switch (ext->kind) {
    case EXTENT_COUNT: return count_elements(ncid, varid, ext->count, object, func, ticks);
    case EXTENT_WHOLE: return whole_elements(ncid, varid, object, func, ticks);
    case EXTENT_VARN: return varn_elements(ncid, varid, ext->num, ext->counts);
    }
    return 0;
}

/* After a data call: the variable, the bytes, the mode. `element` 0: bytes are `bytes`. */
PIOSCOPE_ALWAYS_INLINE
static inline int vara_done(pioscope_call *call, uint16_t func, uint8_t flags, int ncid,
                            int varid, const nc_extent *ext, uint64_t element, uint64_t bytes,
                            int r, int err)
{
    pioscope_stop(call);
    uint32_t object = 0;
    if (call->recording) {
        object = variable_object(ncid, varid);
        uint64_t elements = extent_elements(ncid, varid, ext, object, func, call->start);
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
    nc_extent ext = {EXTENT_COUNT, count, 0, NULL};
    return vara_done(&call, t->func, flags, ncid, varid, &ext, element, 0, r, errno);
}

static int do_ivara(pioscope_target *t, uint8_t flags, int ncid, int varid,
                    const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                    size_t element, int *req)
{
    pioscope_call call;
    nc_ivara_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, buf, req);
    nc_extent ext = {EXTENT_COUNT, count, 0, NULL};
    return vara_done(&call, t->func, flags | PIOSCOPE_F_NONBLOCKING, ncid, varid, &ext, element,
                     0, r, errno);
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

/* After a generic data call (a buffer of bufcount buftypes). */
static int generic_done(pioscope_call *call, uint16_t func, uint8_t flags, int ncid, int varid,
                        const nc_extent *ext, MPI_Offset bufcount, MPI_Datatype buftype, int r,
                        int err)
{
    uint64_t element = 0, bytes = call->recording ? generic_bytes(bufcount, buftype, &element) : 0;
    return vara_done(call, func, flags, ncid, varid, ext, element, bytes, r, err);
}

static int do_vara_generic(pioscope_target *t, uint8_t flags, int ncid, int varid,
                           const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                           MPI_Offset bufcount, MPI_Datatype buftype)
{
    pioscope_call call;
    nc_vara_generic_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, buf, bufcount, buftype);
    nc_extent ext = {EXTENT_COUNT, count, 0, NULL};
    return generic_done(&call, t->func, flags, ncid, varid, &ext, bufcount, buftype, r, errno);
}

static int do_ivara_generic(pioscope_target *t, uint8_t flags, int ncid, int varid,
                            const MPI_Offset *start, const MPI_Offset *count, const void *buf,
                            MPI_Offset bufcount, MPI_Datatype buftype, int *req)
{
    pioscope_call call;
    nc_ivara_generic_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, buf, bufcount, buftype, req);
    nc_extent ext = {EXTENT_COUNT, count, 0, NULL};
    return generic_done(&call, t->func, flags | PIOSCOPE_F_NONBLOCKING, ncid, varid, &ext,
                        bufcount, buftype, r, errno);
}

static int do_var(pioscope_target *t, uint8_t flags, int ncid, int varid, const void *buf,
                  size_t element)
{
    pioscope_call call;
    nc_var_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, buf);
    nc_extent ext = {EXTENT_WHOLE, NULL, 0, NULL};
    return vara_done(&call, t->func, flags, ncid, varid, &ext, element, 0, r, errno);
}

static int do_var_generic(pioscope_target *t, uint8_t flags, int ncid, int varid,
                          const void *buf, MPI_Offset bufcount, MPI_Datatype buftype)
{
    pioscope_call call;
    nc_var_generic_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, buf, bufcount, buftype);
    nc_extent ext = {EXTENT_WHOLE, NULL, 0, NULL};
    return generic_done(&call, t->func, flags, ncid, varid, &ext, bufcount, buftype, r, errno);
}

static int do_vars(pioscope_target *t, uint8_t flags, int ncid, int varid,
                   const MPI_Offset *start, const MPI_Offset *count, const MPI_Offset *stride,
                   const void *buf, size_t element)
{
    pioscope_call call;
    nc_vars_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, stride, buf);
    nc_extent ext = {EXTENT_COUNT, count, 0, NULL};
    return vara_done(&call, t->func, flags, ncid, varid, &ext, element, 0, r, errno);
}

static int do_vars_generic(pioscope_target *t, uint8_t flags, int ncid, int varid,
                           const MPI_Offset *start, const MPI_Offset *count,
                           const MPI_Offset *stride, const void *buf, MPI_Offset bufcount,
                           MPI_Datatype buftype)
{
    pioscope_call call;
    nc_vars_generic_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, start, count, stride, buf, bufcount, buftype);
    nc_extent ext = {EXTENT_COUNT, count, 0, NULL};
    return generic_done(&call, t->func, flags, ncid, varid, &ext, bufcount, buftype, r, errno);
}

static int do_varn(pioscope_target *t, uint8_t flags, int ncid, int varid, int num,
                   MPI_Offset *const *starts, MPI_Offset *const *counts, const void *buf,
                   size_t element)
{
    pioscope_call call;
    nc_varn_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, num, starts, counts, buf);
    nc_extent ext = {EXTENT_VARN, NULL, num, counts};
    return vara_done(&call, t->func, flags, ncid, varid, &ext, element, 0, r, errno);
}

static int do_varn_generic(pioscope_target *t, uint8_t flags, int ncid, int varid, int num,
                           MPI_Offset *const *starts, MPI_Offset *const *counts,
                           const void *buf, MPI_Offset bufcount, MPI_Datatype buftype)
{
    pioscope_call call;
    nc_varn_generic_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid, varid, num, starts, counts, buf, bufcount, buftype);
    nc_extent ext = {EXTENT_VARN, NULL, num, counts};
    return generic_done(&call, t->func, flags, ncid, varid, &ext, bufcount, buftype, r, errno);
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

/* After a call on a whole file: its record. */
static int file_call_done(pioscope_call *call, uint16_t func, int ncid, int r, int err)
{
    pioscope_stop(call);
    uint32_t object = pioscope_objects_find(&objects, file_key(ncid));
    pioscope_record(call, func, object, 0, 0, r, r != 0, r, COLLECTIVE);
    errno = err;
    return r;
}

/* A call on a whole file (enddef, redef, close). */
static int do_file_call(pioscope_target *t, int ncid)
{
    pioscope_call call;
    nc_id_fn *real = pioscope_begin(&call, t);
    if (!real) return missing();
    int r = real(ncid);
    return file_call_done(&call, t->func, ncid, r, errno);
}

PIOSCOPE_WRAPPER(ncmpi_enddef, int, ncmpi_enddef, (int ncid))
{
    return do_file_call(&target_ncmpi_enddef, ncid);
}

typedef int nc_enddef_space_fn(int ncid, MPI_Offset h_minfree, MPI_Offset v_align,
                               MPI_Offset v_minfree, MPI_Offset r_align);

/* ncmpi_enddef reserving header space and aligning the data sections. */
PIOSCOPE_WRAPPER(ncmpi__enddef, int, ncmpi__enddef,
                 (int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
                  MPI_Offset r_align))
{
    pioscope_call call;
    nc_enddef_space_fn *real = pioscope_begin(&call, &target_ncmpi__enddef);
    if (!real) return missing();
    int r = real(ncid, h_minfree, v_align, v_minfree, r_align);
    return file_call_done(&call, target_ncmpi__enddef.func, ncid, r, errno);
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

/* ---- data: the var (whole variable), vars (strided) and varn (several pieces) families ---- */

/* ncmpi_put_var: the generic form, then the typed ones, recorded as ncmpi_put_var. */
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var,
                 (int ncid, int varid, const void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_var_generic(&target_ncmpi_put_var, INDEPENDENT, ncid, varid, buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_text,
                 (int ncid, int varid, const char *buf))
{
    return do_var(&target_ncmpi_put_var_text, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_schar,
                 (int ncid, int varid, const signed char *buf))
{
    return do_var(&target_ncmpi_put_var_schar, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_uchar,
                 (int ncid, int varid, const unsigned char *buf))
{
    return do_var(&target_ncmpi_put_var_uchar, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_short,
                 (int ncid, int varid, const short *buf))
{
    return do_var(&target_ncmpi_put_var_short, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_ushort,
                 (int ncid, int varid, const unsigned short *buf))
{
    return do_var(&target_ncmpi_put_var_ushort, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_int,
                 (int ncid, int varid, const int *buf))
{
    return do_var(&target_ncmpi_put_var_int, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_uint,
                 (int ncid, int varid, const unsigned int *buf))
{
    return do_var(&target_ncmpi_put_var_uint, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_long,
                 (int ncid, int varid, const long *buf))
{
    return do_var(&target_ncmpi_put_var_long, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_float,
                 (int ncid, int varid, const float *buf))
{
    return do_var(&target_ncmpi_put_var_float, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_double,
                 (int ncid, int varid, const double *buf))
{
    return do_var(&target_ncmpi_put_var_double, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_longlong,
                 (int ncid, int varid, const long long *buf))
{
    return do_var(&target_ncmpi_put_var_longlong, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var, int, ncmpi_put_var_ulonglong,
                 (int ncid, int varid, const unsigned long long *buf))
{
    return do_var(&target_ncmpi_put_var_ulonglong, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}

/* ncmpi_put_var_all: the generic form, then the typed ones, recorded as ncmpi_put_var_all. */
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_all,
                 (int ncid, int varid, const void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_var_generic(&target_ncmpi_put_var_all, COLLECTIVE, ncid, varid, buf, bufcount,
                          buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_text_all,
                 (int ncid, int varid, const char *buf))
{
    return do_var(&target_ncmpi_put_var_text_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_schar_all,
                 (int ncid, int varid, const signed char *buf))
{
    return do_var(&target_ncmpi_put_var_schar_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_uchar_all,
                 (int ncid, int varid, const unsigned char *buf))
{
    return do_var(&target_ncmpi_put_var_uchar_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_short_all,
                 (int ncid, int varid, const short *buf))
{
    return do_var(&target_ncmpi_put_var_short_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_ushort_all,
                 (int ncid, int varid, const unsigned short *buf))
{
    return do_var(&target_ncmpi_put_var_ushort_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_int_all,
                 (int ncid, int varid, const int *buf))
{
    return do_var(&target_ncmpi_put_var_int_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_uint_all,
                 (int ncid, int varid, const unsigned int *buf))
{
    return do_var(&target_ncmpi_put_var_uint_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_long_all,
                 (int ncid, int varid, const long *buf))
{
    return do_var(&target_ncmpi_put_var_long_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_float_all,
                 (int ncid, int varid, const float *buf))
{
    return do_var(&target_ncmpi_put_var_float_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_double_all,
                 (int ncid, int varid, const double *buf))
{
    return do_var(&target_ncmpi_put_var_double_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_longlong_all,
                 (int ncid, int varid, const long long *buf))
{
    return do_var(&target_ncmpi_put_var_longlong_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_var_all, int, ncmpi_put_var_ulonglong_all,
                 (int ncid, int varid, const unsigned long long *buf))
{
    return do_var(&target_ncmpi_put_var_ulonglong_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}

/* ncmpi_get_var: the generic form, then the typed ones, recorded as ncmpi_get_var. */
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var,
                 (int ncid, int varid, void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_var_generic(&target_ncmpi_get_var, INDEPENDENT, ncid, varid, buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_text,
                 (int ncid, int varid, char *buf))
{
    return do_var(&target_ncmpi_get_var_text, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_schar,
                 (int ncid, int varid, signed char *buf))
{
    return do_var(&target_ncmpi_get_var_schar, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_uchar,
                 (int ncid, int varid, unsigned char *buf))
{
    return do_var(&target_ncmpi_get_var_uchar, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_short,
                 (int ncid, int varid, short *buf))
{
    return do_var(&target_ncmpi_get_var_short, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_ushort,
                 (int ncid, int varid, unsigned short *buf))
{
    return do_var(&target_ncmpi_get_var_ushort, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_int,
                 (int ncid, int varid, int *buf))
{
    return do_var(&target_ncmpi_get_var_int, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_uint,
                 (int ncid, int varid, unsigned int *buf))
{
    return do_var(&target_ncmpi_get_var_uint, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_long,
                 (int ncid, int varid, long *buf))
{
    return do_var(&target_ncmpi_get_var_long, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_float,
                 (int ncid, int varid, float *buf))
{
    return do_var(&target_ncmpi_get_var_float, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_double,
                 (int ncid, int varid, double *buf))
{
    return do_var(&target_ncmpi_get_var_double, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_longlong,
                 (int ncid, int varid, long long *buf))
{
    return do_var(&target_ncmpi_get_var_longlong, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var, int, ncmpi_get_var_ulonglong,
                 (int ncid, int varid, unsigned long long *buf))
{
    return do_var(&target_ncmpi_get_var_ulonglong, INDEPENDENT, ncid, varid, buf, sizeof *buf);
}

/* ncmpi_get_var_all: the generic form, then the typed ones, recorded as ncmpi_get_var_all. */
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_all,
                 (int ncid, int varid, void *buf, MPI_Offset bufcount, MPI_Datatype buftype))
{
    return do_var_generic(&target_ncmpi_get_var_all, COLLECTIVE, ncid, varid, buf, bufcount,
                          buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_text_all,
                 (int ncid, int varid, char *buf))
{
    return do_var(&target_ncmpi_get_var_text_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_schar_all,
                 (int ncid, int varid, signed char *buf))
{
    return do_var(&target_ncmpi_get_var_schar_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_uchar_all,
                 (int ncid, int varid, unsigned char *buf))
{
    return do_var(&target_ncmpi_get_var_uchar_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_short_all,
                 (int ncid, int varid, short *buf))
{
    return do_var(&target_ncmpi_get_var_short_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_ushort_all,
                 (int ncid, int varid, unsigned short *buf))
{
    return do_var(&target_ncmpi_get_var_ushort_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_int_all,
                 (int ncid, int varid, int *buf))
{
    return do_var(&target_ncmpi_get_var_int_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_uint_all,
                 (int ncid, int varid, unsigned int *buf))
{
    return do_var(&target_ncmpi_get_var_uint_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_long_all,
                 (int ncid, int varid, long *buf))
{
    return do_var(&target_ncmpi_get_var_long_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_float_all,
                 (int ncid, int varid, float *buf))
{
    return do_var(&target_ncmpi_get_var_float_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_double_all,
                 (int ncid, int varid, double *buf))
{
    return do_var(&target_ncmpi_get_var_double_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_longlong_all,
                 (int ncid, int varid, long long *buf))
{
    return do_var(&target_ncmpi_get_var_longlong_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_var_all, int, ncmpi_get_var_ulonglong_all,
                 (int ncid, int varid, unsigned long long *buf))
{
    return do_var(&target_ncmpi_get_var_ulonglong_all, COLLECTIVE, ncid, varid, buf, sizeof *buf);
}

/* ncmpi_put_vars: the generic form, then the typed ones, recorded as ncmpi_put_vars. */
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_vars_generic(&target_ncmpi_put_vars, INDEPENDENT, ncid, varid, start, count, stride,
                           buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_text,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const char *buf))
{
    return do_vars(&target_ncmpi_put_vars_text, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_schar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const signed char *buf))
{
    return do_vars(&target_ncmpi_put_vars_schar, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_uchar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned char *buf))
{
    return do_vars(&target_ncmpi_put_vars_uchar, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_short,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const short *buf))
{
    return do_vars(&target_ncmpi_put_vars_short, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_ushort,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned short *buf))
{
    return do_vars(&target_ncmpi_put_vars_ushort, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_int,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const int *buf))
{
    return do_vars(&target_ncmpi_put_vars_int, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_uint,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned int *buf))
{
    return do_vars(&target_ncmpi_put_vars_uint, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_long,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const long *buf))
{
    return do_vars(&target_ncmpi_put_vars_long, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_float,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const float *buf))
{
    return do_vars(&target_ncmpi_put_vars_float, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_double,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const double *buf))
{
    return do_vars(&target_ncmpi_put_vars_double, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_longlong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const long long *buf))
{
    return do_vars(&target_ncmpi_put_vars_longlong, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars, int, ncmpi_put_vars_ulonglong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned long long *buf))
{
    return do_vars(&target_ncmpi_put_vars_ulonglong, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}

/* ncmpi_put_vars_all: the generic form, then the typed ones, recorded as ncmpi_put_vars_all. */
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_vars_generic(&target_ncmpi_put_vars_all, COLLECTIVE, ncid, varid, start, count,
                           stride, buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_text_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const char *buf))
{
    return do_vars(&target_ncmpi_put_vars_text_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_schar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const signed char *buf))
{
    return do_vars(&target_ncmpi_put_vars_schar_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_uchar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned char *buf))
{
    return do_vars(&target_ncmpi_put_vars_uchar_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_short_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const short *buf))
{
    return do_vars(&target_ncmpi_put_vars_short_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_ushort_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned short *buf))
{
    return do_vars(&target_ncmpi_put_vars_ushort_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_int_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const int *buf))
{
    return do_vars(&target_ncmpi_put_vars_int_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_uint_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned int *buf))
{
    return do_vars(&target_ncmpi_put_vars_uint_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_long_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const long *buf))
{
    return do_vars(&target_ncmpi_put_vars_long_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_float_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const float *buf))
{
    return do_vars(&target_ncmpi_put_vars_float_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_double_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const double *buf))
{
    return do_vars(&target_ncmpi_put_vars_double_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_longlong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const long long *buf))
{
    return do_vars(&target_ncmpi_put_vars_longlong_all, COLLECTIVE, ncid, varid, start, count,
                   stride, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_vars_all, int, ncmpi_put_vars_ulonglong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, const unsigned long long *buf))
{
    return do_vars(&target_ncmpi_put_vars_ulonglong_all, COLLECTIVE, ncid, varid, start, count,
                   stride, buf, sizeof *buf);
}

/* ncmpi_get_vars: the generic form, then the typed ones, recorded as ncmpi_get_vars. */
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_vars_generic(&target_ncmpi_get_vars, INDEPENDENT, ncid, varid, start, count, stride,
                           buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_text,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, char *buf))
{
    return do_vars(&target_ncmpi_get_vars_text, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_schar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, signed char *buf))
{
    return do_vars(&target_ncmpi_get_vars_schar, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_uchar,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned char *buf))
{
    return do_vars(&target_ncmpi_get_vars_uchar, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_short,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, short *buf))
{
    return do_vars(&target_ncmpi_get_vars_short, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_ushort,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned short *buf))
{
    return do_vars(&target_ncmpi_get_vars_ushort, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_int,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, int *buf))
{
    return do_vars(&target_ncmpi_get_vars_int, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_uint,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned int *buf))
{
    return do_vars(&target_ncmpi_get_vars_uint, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_long,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, long *buf))
{
    return do_vars(&target_ncmpi_get_vars_long, INDEPENDENT, ncid, varid, start, count, stride, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_float,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, float *buf))
{
    return do_vars(&target_ncmpi_get_vars_float, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_double,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, double *buf))
{
    return do_vars(&target_ncmpi_get_vars_double, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_longlong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, long long *buf))
{
    return do_vars(&target_ncmpi_get_vars_longlong, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars, int, ncmpi_get_vars_ulonglong,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned long long *buf))
{
    return do_vars(&target_ncmpi_get_vars_ulonglong, INDEPENDENT, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}

/* ncmpi_get_vars_all: the generic form, then the typed ones, recorded as ncmpi_get_vars_all. */
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_vars_generic(&target_ncmpi_get_vars_all, COLLECTIVE, ncid, varid, start, count,
                           stride, buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_text_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, char *buf))
{
    return do_vars(&target_ncmpi_get_vars_text_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_schar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, signed char *buf))
{
    return do_vars(&target_ncmpi_get_vars_schar_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_uchar_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned char *buf))
{
    return do_vars(&target_ncmpi_get_vars_uchar_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_short_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, short *buf))
{
    return do_vars(&target_ncmpi_get_vars_short_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_ushort_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned short *buf))
{
    return do_vars(&target_ncmpi_get_vars_ushort_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_int_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, int *buf))
{
    return do_vars(&target_ncmpi_get_vars_int_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_uint_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned int *buf))
{
    return do_vars(&target_ncmpi_get_vars_uint_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_long_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, long *buf))
{
    return do_vars(&target_ncmpi_get_vars_long_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_float_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, float *buf))
{
    return do_vars(&target_ncmpi_get_vars_float_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_double_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, double *buf))
{
    return do_vars(&target_ncmpi_get_vars_double_all, COLLECTIVE, ncid, varid, start, count, stride,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_longlong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, long long *buf))
{
    return do_vars(&target_ncmpi_get_vars_longlong_all, COLLECTIVE, ncid, varid, start, count,
                   stride, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_vars_all, int, ncmpi_get_vars_ulonglong_all,
                 (int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                  const MPI_Offset *stride, unsigned long long *buf))
{
    return do_vars(&target_ncmpi_get_vars_ulonglong_all, COLLECTIVE, ncid, varid, start, count,
                   stride, buf, sizeof *buf);
}

/* ncmpi_put_varn: the generic form, then the typed ones, recorded as ncmpi_put_varn. */
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_varn_generic(&target_ncmpi_put_varn, INDEPENDENT, ncid, varid, num, starts, counts,
                           buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_text,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const char *buf))
{
    return do_varn(&target_ncmpi_put_varn_text, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_schar,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const signed char *buf))
{
    return do_varn(&target_ncmpi_put_varn_schar, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_uchar,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned char *buf))
{
    return do_varn(&target_ncmpi_put_varn_uchar, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_short,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const short *buf))
{
    return do_varn(&target_ncmpi_put_varn_short, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_ushort,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned short *buf))
{
    return do_varn(&target_ncmpi_put_varn_ushort, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_int,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const int *buf))
{
    return do_varn(&target_ncmpi_put_varn_int, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_uint,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned int *buf))
{
    return do_varn(&target_ncmpi_put_varn_uint, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_long,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const long *buf))
{
    return do_varn(&target_ncmpi_put_varn_long, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_float,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const float *buf))
{
    return do_varn(&target_ncmpi_put_varn_float, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_double,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const double *buf))
{
    return do_varn(&target_ncmpi_put_varn_double, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_longlong,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const long long *buf))
{
    return do_varn(&target_ncmpi_put_varn_longlong, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn, int, ncmpi_put_varn_ulonglong,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned long long *buf))
{
    return do_varn(&target_ncmpi_put_varn_ulonglong, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}

/* ncmpi_put_varn_all: the generic form, then the typed ones, recorded as ncmpi_put_varn_all. */
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_varn_generic(&target_ncmpi_put_varn_all, COLLECTIVE, ncid, varid, num, starts, counts,
                           buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_text_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const char *buf))
{
    return do_varn(&target_ncmpi_put_varn_text_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_schar_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const signed char *buf))
{
    return do_varn(&target_ncmpi_put_varn_schar_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_uchar_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned char *buf))
{
    return do_varn(&target_ncmpi_put_varn_uchar_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_short_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const short *buf))
{
    return do_varn(&target_ncmpi_put_varn_short_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_ushort_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned short *buf))
{
    return do_varn(&target_ncmpi_put_varn_ushort_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_int_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const int *buf))
{
    return do_varn(&target_ncmpi_put_varn_int_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_uint_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned int *buf))
{
    return do_varn(&target_ncmpi_put_varn_uint_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_long_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const long *buf))
{
    return do_varn(&target_ncmpi_put_varn_long_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_float_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const float *buf))
{
    return do_varn(&target_ncmpi_put_varn_float_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_double_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const double *buf))
{
    return do_varn(&target_ncmpi_put_varn_double_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_longlong_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const long long *buf))
{
    return do_varn(&target_ncmpi_put_varn_longlong_all, COLLECTIVE, ncid, varid, num, starts,
                   counts, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_put_varn_all, int, ncmpi_put_varn_ulonglong_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, const unsigned long long *buf))
{
    return do_varn(&target_ncmpi_put_varn_ulonglong_all, COLLECTIVE, ncid, varid, num, starts,
                   counts, buf, sizeof *buf);
}

/* ncmpi_get_varn: the generic form, then the typed ones, recorded as ncmpi_get_varn. */
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_varn_generic(&target_ncmpi_get_varn, INDEPENDENT, ncid, varid, num, starts, counts,
                           buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_text,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, char *buf))
{
    return do_varn(&target_ncmpi_get_varn_text, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_schar,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, signed char *buf))
{
    return do_varn(&target_ncmpi_get_varn_schar, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_uchar,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned char *buf))
{
    return do_varn(&target_ncmpi_get_varn_uchar, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_short,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, short *buf))
{
    return do_varn(&target_ncmpi_get_varn_short, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_ushort,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned short *buf))
{
    return do_varn(&target_ncmpi_get_varn_ushort, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_int,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, int *buf))
{
    return do_varn(&target_ncmpi_get_varn_int, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_uint,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned int *buf))
{
    return do_varn(&target_ncmpi_get_varn_uint, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_long,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, long *buf))
{
    return do_varn(&target_ncmpi_get_varn_long, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_float,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, float *buf))
{
    return do_varn(&target_ncmpi_get_varn_float, INDEPENDENT, ncid, varid, num, starts, counts, buf,
                   sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_double,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, double *buf))
{
    return do_varn(&target_ncmpi_get_varn_double, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_longlong,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, long long *buf))
{
    return do_varn(&target_ncmpi_get_varn_longlong, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn, int, ncmpi_get_varn_ulonglong,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned long long *buf))
{
    return do_varn(&target_ncmpi_get_varn_ulonglong, INDEPENDENT, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}

/* ncmpi_get_varn_all: the generic form, then the typed ones, recorded as ncmpi_get_varn_all. */
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, void *buf, MPI_Offset bufcount,
                  MPI_Datatype buftype))
{
    return do_varn_generic(&target_ncmpi_get_varn_all, COLLECTIVE, ncid, varid, num, starts, counts,
                           buf, bufcount, buftype);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_text_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, char *buf))
{
    return do_varn(&target_ncmpi_get_varn_text_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_schar_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, signed char *buf))
{
    return do_varn(&target_ncmpi_get_varn_schar_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_uchar_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned char *buf))
{
    return do_varn(&target_ncmpi_get_varn_uchar_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_short_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, short *buf))
{
    return do_varn(&target_ncmpi_get_varn_short_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_ushort_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned short *buf))
{
    return do_varn(&target_ncmpi_get_varn_ushort_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_int_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, int *buf))
{
    return do_varn(&target_ncmpi_get_varn_int_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_uint_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned int *buf))
{
    return do_varn(&target_ncmpi_get_varn_uint_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_long_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, long *buf))
{
    return do_varn(&target_ncmpi_get_varn_long_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_float_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, float *buf))
{
    return do_varn(&target_ncmpi_get_varn_float_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_double_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, double *buf))
{
    return do_varn(&target_ncmpi_get_varn_double_all, COLLECTIVE, ncid, varid, num, starts, counts,
                   buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_longlong_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, long long *buf))
{
    return do_varn(&target_ncmpi_get_varn_longlong_all, COLLECTIVE, ncid, varid, num, starts,
                   counts, buf, sizeof *buf);
}
PIOSCOPE_WRAPPER(ncmpi_get_varn_all, int, ncmpi_get_varn_ulonglong_all,
                 (int ncid, int varid, int num, MPI_Offset *const *starts,
                  MPI_Offset *const *counts, unsigned long long *buf))
{
    return do_varn(&target_ncmpi_get_varn_ulonglong_all, COLLECTIVE, ncid, varid, num, starts,
                   counts, buf, sizeof *buf);
}

#endif
