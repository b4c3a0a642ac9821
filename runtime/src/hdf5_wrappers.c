/* hdf5_wrappers.c: HDF5 interception (the HDF5 layer, functions.def 900-949). The MPI-IO calls
 * of HDF5's MPI-IO driver, and the POSIX calls beneath them, nest under these records.
 * Fields of a record:
 *   object  H5F*: the file's path; H5D*, H5Gcreate2, H5Oopen: "<file path>:<object path>";
 *           H5Acreate2, H5Acreate_by_name, H5Awrite, H5Aread:
 *           "<file path>:<object path>@<attribute>"; H5Pset_fapl_mpio: none
 *   size    H5Dwrite/H5Dread: bytes selected (points x memory type size); H5Acreate*,
 *           H5Awrite, H5Aread: bytes of the attribute; else 0
 *   offset  H5Dwrite/H5Dread: the selection's first element in the dataset's row-major order,
 *           in bytes (OFFSET_UNKNOWN when HDF5 could not say); else 0
 *   flags   COLLECTIVE on a transfer whose property list asks for collective MPI-IO
 *   result  create/open: the new id; transfers: the bytes on success; else the return value
 *   error   -1 when the call failed (HDF5 keeps the reason on its error stack, not in errno)
 * Settings chunks of the object: at H5Fcreate/H5Fopen the file's access properties, at
 * H5Dcreate2/H5Dopen2 (H5Dcreate1, H5Dopen1, H5Oopen of a dataset) the dataset's dims, type
 * size, layout and chunk, at a transfer the selection's shape when it changed (hdf5_query.c).
 * HDF5 is asked nothing after a failed call, so the error stack the program may print is
 * HDF5's own. */
#include <errno.h>

#include "hdf5_query.h"
#include "tracer.h"

#ifndef PIOSCOPE_NO_MPI
#include <mpi.h>
#endif

/* The real function was not found (no HDF5 in the process): fail as HDF5 would. */
static inline hid_t missing(void)
{
    errno = ENOSYS;
    return -1;
}

/* Records a call whose object is already known. */
PIOSCOPE_ALWAYS_INLINE
static inline void h5_record(const pioscope_call *call, uint16_t func, uint32_t object,
                             uint64_t size, int64_t result, uint8_t flags)
{
    pioscope_event ev = {func, flags, object, 0, size, result, result < 0 ? -1 : 0, 0};
    pioscope_leave(call, &ev);
}

/* ---- files ---- */

/* After H5Fcreate/H5Fopen: the file's string and its access settings. */
static hid_t file_opened(pioscope_call *call, uint16_t func, const char *name, hid_t file,
                         int err)
{
    pioscope_stop(call);
    uint32_t object = 0;
    if (call->recording) {
        object = pioscope_intern_path(name, -1);
        if (file >= 0) {
            pioscope_h5_remember(file, object);
            pioscope_h5_file_settings(file, object, func, call->start);
        }
    }
    h5_record(call, func, object, 0, file, 0);
    errno = err;
    return file;
}

PIOSCOPE_WRAPPER(H5Fcreate, hid_t, H5Fcreate,
                 (const char *name, unsigned flags, hid_t fcpl, hid_t fapl))
{
    pioscope_call call;
    h5_fcreate_fn *real = pioscope_begin(&call, &target_H5Fcreate);
    if (!real) return missing();
    hid_t r = real(name, flags, fcpl, fapl);
    return file_opened(&call, target_H5Fcreate.func, name, r, errno);
}

PIOSCOPE_WRAPPER(H5Fopen, hid_t, H5Fopen, (const char *name, unsigned flags, hid_t fapl))
{
    pioscope_call call;
    h5_fopen_fn *real = pioscope_begin(&call, &target_H5Fopen);
    if (!real) return missing();
    hid_t r = real(name, flags, fapl);
    return file_opened(&call, target_H5Fopen.func, name, r, errno);
}

PIOSCOPE_WRAPPER(H5Fclose, herr_t, H5Fclose, (hid_t file))
{
    pioscope_call call;
    h5_id_fn *real = pioscope_begin(&call, &target_H5Fclose);
    if (!real) return (herr_t)missing();
    herr_t r = real(file);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = pioscope_h5_known_object(file);
    if (r >= 0) pioscope_h5_forget(file);
    h5_record(&call, target_H5Fclose.func, object, 0, r, 0);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(H5Fflush, herr_t, H5Fflush, (hid_t object_id, int scope))
{
    pioscope_call call;
    h5_fflush_fn *real = pioscope_begin(&call, &target_H5Fflush);
    if (!real) return (herr_t)missing();
    herr_t r = real(object_id, scope);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = call.recording && r >= 0 ? pioscope_h5_file_object(object_id) : 0;
    h5_record(&call, target_H5Fflush.func, object, 0, r, 0);
    errno = err;
    return r;
}

/* ---- datasets ---- */

/* After a dataset create or open, the call stopped: the dataset's string, remembered for its
 * transfers, and its settings. */
static hid_t dataset_named(pioscope_call *call, uint16_t func, hid_t dset, int err)
{
    uint32_t object = 0;
    if (call->recording && dset >= 0) {
        object = pioscope_h5_member_object(dset);
        pioscope_h5_remember(dset, object);
        pioscope_h5_dataset_settings(dset, object, func, call->start);
    }
    h5_record(call, func, object, 0, dset, 0);
    errno = err;
    return dset;
}

static hid_t dataset_opened(pioscope_call *call, uint16_t func, hid_t dset, int err)
{
    pioscope_stop(call);
    return dataset_named(call, func, dset, err);
}

PIOSCOPE_WRAPPER(H5Dcreate2, hid_t, H5Dcreate2,
                 (hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl,
                  hid_t dapl))
{
    pioscope_call call;
    h5_dcreate2_fn *real = pioscope_begin(&call, &target_H5Dcreate2);
    if (!real) return missing();
    hid_t r = real(loc, name, type, space, lcpl, dcpl, dapl);
    return dataset_opened(&call, target_H5Dcreate2.func, r, errno);
}

PIOSCOPE_WRAPPER(H5Dopen2, hid_t, H5Dopen2, (hid_t loc, const char *name, hid_t dapl))
{
    pioscope_call call;
    h5_dopen2_fn *real = pioscope_begin(&call, &target_H5Dopen2);
    if (!real) return missing();
    hid_t r = real(loc, name, dapl);
    return dataset_opened(&call, target_H5Dopen2.func, r, errno);
}

/* The 1.6 API, still exported (H5Dcreate and H5Dopen are these in a build with
 * H5_USE_16_API). */
PIOSCOPE_WRAPPER(H5Dcreate1, hid_t, H5Dcreate1,
                 (hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl))
{
    pioscope_call call;
    h5_dcreate1_fn *real = pioscope_begin(&call, &target_H5Dcreate1);
    if (!real) return missing();
    hid_t r = real(loc, name, type, space, dcpl);
    return dataset_opened(&call, target_H5Dcreate1.func, r, errno);
}

PIOSCOPE_WRAPPER(H5Dopen1, hid_t, H5Dopen1, (hid_t loc, const char *name))
{
    pioscope_call call;
    h5_dopen1_fn *real = pioscope_begin(&call, &target_H5Dopen1);
    if (!real) return missing();
    hid_t r = real(loc, name);
    return dataset_opened(&call, target_H5Dopen1.func, r, errno);
}

/* Opens a group, dataset or named datatype: a dataset is named and its settings written as at
 * H5Dopen2, the others only named. */
PIOSCOPE_WRAPPER(H5Oopen, hid_t, H5Oopen, (hid_t loc, const char *name, hid_t lapl))
{
    pioscope_call call;
    h5_oopen_fn *real = pioscope_begin(&call, &target_H5Oopen);
    if (!real) return missing();
    hid_t r = real(loc, name, lapl);
    int err = errno;
    pioscope_stop(&call);
    if (call.recording && r >= 0 && pioscope_h5_is_dataset(r))
        return dataset_named(&call, target_H5Oopen.func, r, err);
    uint32_t object = call.recording && r >= 0 ? pioscope_h5_member_object(r) : 0;
    h5_record(&call, target_H5Oopen.func, object, 0, r, 0);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(H5Dclose, herr_t, H5Dclose, (hid_t dset))
{
    pioscope_call call;
    h5_id_fn *real = pioscope_begin(&call, &target_H5Dclose);
    if (!real) return (herr_t)missing();
    herr_t r = real(dset);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = pioscope_h5_known_object(dset);
    if (r >= 0) pioscope_h5_forget(dset);
    h5_record(&call, target_H5Dclose.func, object, 0, r, 0);
    errno = err;
    return r;
}

/* After H5Dwrite/H5Dread: the dataset, the selection's bytes and place, the transfer mode. */
PIOSCOPE_ALWAYS_INLINE
static inline herr_t transfer_done(pioscope_call *call, uint16_t func, hid_t dset,
                                   hid_t mem_type, hid_t file_space, hid_t dxpl, herr_t r,
                                   int err)
{
    pioscope_stop(call);
    pioscope_event ev = {func, PIOSCOPE_F_OFFSET_UNKNOWN, 0, 0, 0, r, r < 0 ? -1 : 0, 0};
    if (call->recording) {
        ev.object = pioscope_h5_dataset_object(dset);
        if (r >= 0) {
            pioscope_h5_selection sel =
                pioscope_h5_transfer(dset, mem_type, file_space, ev.object, func, call->start);
            ev.size = sel.bytes;
            ev.result = (int64_t)sel.bytes;
            ev.offset = sel.offset;
            if (sel.offset_known) ev.flags = 0;
            if (pioscope_h5_collective(dxpl)) ev.flags |= PIOSCOPE_F_COLLECTIVE;
        }
    }
    pioscope_leave(call, &ev);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(H5Dwrite, herr_t, H5Dwrite,
                 (hid_t dset, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                  const void *buf))
{
    pioscope_call call;
    h5_dwrite_fn *real = pioscope_begin(&call, &target_H5Dwrite);
    if (!real) return (herr_t)missing();
    herr_t r = real(dset, mem_type, mem_space, file_space, dxpl, buf);
    return transfer_done(&call, target_H5Dwrite.func, dset, mem_type, file_space, dxpl, r,
                         errno);
}

PIOSCOPE_WRAPPER(H5Dread, herr_t, H5Dread,
                 (hid_t dset, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                  void *buf))
{
    pioscope_call call;
    h5_dread_fn *real = pioscope_begin(&call, &target_H5Dread);
    if (!real) return (herr_t)missing();
    herr_t r = real(dset, mem_type, mem_space, file_space, dxpl, buf);
    return transfer_done(&call, target_H5Dread.func, dset, mem_type, file_space, dxpl, r,
                         errno);
}

/* ---- groups, attributes, file access ---- */

PIOSCOPE_WRAPPER(H5Gcreate2, hid_t, H5Gcreate2,
                 (hid_t loc, const char *name, hid_t lcpl, hid_t gcpl, hid_t gapl))
{
    pioscope_call call;
    h5_gcreate2_fn *real = pioscope_begin(&call, &target_H5Gcreate2);
    if (!real) return missing();
    hid_t r = real(loc, name, lcpl, gcpl, gapl);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = call.recording && r >= 0 ? pioscope_h5_member_object(r) : 0;
    h5_record(&call, target_H5Gcreate2.func, object, 0, r, 0);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(H5Acreate2, hid_t, H5Acreate2,
                 (hid_t loc, const char *name, hid_t type, hid_t space, hid_t acpl, hid_t aapl))
{
    pioscope_call call;
    h5_acreate2_fn *real = pioscope_begin(&call, &target_H5Acreate2);
    if (!real) return missing();
    hid_t r = real(loc, name, type, space, acpl, aapl);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = 0;
    uint64_t bytes = 0;
    if (call.recording && r >= 0) {
        object = pioscope_h5_attribute_object(loc, name);
        bytes = pioscope_h5_attribute_bytes(type, space);
    }
    h5_record(&call, target_H5Acreate2.func, object, bytes, r, 0);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(H5Acreate_by_name, hid_t, H5Acreate_by_name,
                 (hid_t loc, const char *obj_name, const char *attr_name, hid_t type, hid_t space,
                  hid_t acpl, hid_t aapl, hid_t lapl))
{
    pioscope_call call;
    h5_acreate_by_name_fn *real = pioscope_begin(&call, &target_H5Acreate_by_name);
    if (!real) return missing();
    hid_t r = real(loc, obj_name, attr_name, type, space, acpl, aapl, lapl);
    int err = errno;
    pioscope_stop(&call);
    uint32_t object = 0;
    uint64_t bytes = 0;
    if (call.recording && r >= 0) {
        /* Named by the new attribute itself: obj_name is relative to loc. */
        object = pioscope_h5_open_attribute_object(r);
        bytes = pioscope_h5_attribute_bytes(type, space);
    }
    h5_record(&call, target_H5Acreate_by_name.func, object, bytes, r, 0);
    errno = err;
    return r;
}

/* After H5Awrite/H5Aread: the attribute and its bytes. */
static herr_t attribute_moved(pioscope_call *call, uint16_t func, hid_t attr, hid_t mem_type,
                              herr_t r, int err)
{
    pioscope_stop(call);
    uint32_t object = 0;
    uint64_t bytes = 0;
    if (call->recording && r >= 0) {
        object = pioscope_h5_open_attribute_object(attr);
        bytes = pioscope_h5_open_attribute_bytes(attr, mem_type);
    }
    h5_record(call, func, object, bytes, r < 0 ? r : (int64_t)bytes, 0);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(H5Awrite, herr_t, H5Awrite, (hid_t attr, hid_t mem_type, const void *buf))
{
    pioscope_call call;
    h5_awrite_fn *real = pioscope_begin(&call, &target_H5Awrite);
    if (!real) return (herr_t)missing();
    herr_t r = real(attr, mem_type, buf);
    return attribute_moved(&call, target_H5Awrite.func, attr, mem_type, r, errno);
}

PIOSCOPE_WRAPPER(H5Aread, herr_t, H5Aread, (hid_t attr, hid_t mem_type, void *buf))
{
    pioscope_call call;
    h5_aread_fn *real = pioscope_begin(&call, &target_H5Aread);
    if (!real) return (herr_t)missing();
    herr_t r = real(attr, mem_type, buf);
    return attribute_moved(&call, target_H5Aread.func, attr, mem_type, r, errno);
}

#ifndef PIOSCOPE_NO_MPI
typedef herr_t h5_set_fapl_mpio_fn(hid_t fapl, MPI_Comm comm, MPI_Info info);

PIOSCOPE_WRAPPER(H5Pset_fapl_mpio, herr_t, H5Pset_fapl_mpio,
                 (hid_t fapl, MPI_Comm comm, MPI_Info info))
{
    pioscope_call call;
    h5_set_fapl_mpio_fn *real = pioscope_begin(&call, &target_H5Pset_fapl_mpio);
    if (!real) return (herr_t)missing();
    herr_t r = real(fapl, comm, info);
    int err = errno;
    h5_record(&call, target_H5Pset_fapl_mpio.func, 0, 0, r, 0);
    errno = err;
    return r;
}
#endif
