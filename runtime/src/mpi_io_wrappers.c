/* mpi_io_wrappers.c: the MPI-IO wrappers (every MPI_File_* call of functions.def, with their
 * MPI-4 large-count _c forms, and MPI_Register_datarep). object = the file's path, offset = the
 * file byte of the first byte accessed (the view resolved), size = bytes requested, result =
 * bytes transferred, link = collective instance or request id. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "mpi_common.h"

/* How a data call names its position in the file. */
enum io_position {
    IO_NONE,       /* not a data access (metadata calls, split collective ends) */
    IO_EXPLICIT,   /* _at: an offset in etypes relative to the view */
    IO_INDIVIDUAL, /* the individual file pointer */
    IO_SHARED      /* the shared file pointer (_shared, _ordered): not resolved */
};

/* One MPI-IO call in flight. */
typedef struct {
    pioscope_call call;
    pioscope_mpi_file *file; /* NULL for a handle the tracer did not see opened */
    uint16_t func;
    uint8_t flags;
    int position;
    MPI_Offset at;           /* IO_EXPLICIT: the offset argument */
    uint64_t byte_offset;    /* the resolved file byte */
    int resolved;
    uint64_t link;
} io_op;

/* The status to pass to the real call: the program's, or ours when it ignores it. */
static inline MPI_Status *io_status(MPI_Status *status, MPI_Status *local)
{
    if (status != MPI_STATUS_IGNORE)
        return status;
    memset(local, 0, sizeof *local);
    return local;
}

static inline int io_can_query(const io_op *op)
{
    return op->file && !(op->file->amode & MPI_MODE_SEQUENTIAL);
}

/* The file byte of etype offset `at` in the current view. */
static inline void io_resolve(io_op *op, MPI_File fh, MPI_Offset at)
{
    MPI_Offset byte = 0;
    if (PMPI_File_get_byte_offset(fh, at, &byte) == MPI_SUCCESS && byte >= 0) {
        op->byte_offset = (uint64_t)byte;
        op->resolved = 1;
    }
}

/* The individual file pointer, as a file byte (before the call moves it). */
static inline void io_resolve_pointer(io_op *op, MPI_File fh)
{
    MPI_Offset position = 0;
    if (io_can_query(op) && PMPI_File_get_position(fh, &position) == MPI_SUCCESS)
        io_resolve(op, fh, position);
}

/* Numbers a collective call (on every rank, recording or not, so the numbers stay equal), reads
 * the individual pointer before the call moves it, then starts the traced call. */
static inline void io_begin(io_op *op, uint16_t func, MPI_File fh, int position, uint8_t flags,
                            MPI_Offset at)
{
    op->file = pioscope_mpi_file_find(fh);
    op->func = func;
    op->flags = flags;
    op->position = position;
    op->at = at;
    op->byte_offset = 0;
    op->resolved = 0;
    op->link = flags & PIOSCOPE_F_COLLECTIVE ? pioscope_mpi_file_next_collective(op->file) : 0;
    if (position == IO_INDIVIDUAL && op->file) {
        pioscope_internal_begin();
        io_resolve_pointer(op, fh);
        pioscope_internal_end();
    }
    pioscope_enter(&op->call);
}

static inline void io_event(const io_op *op, pioscope_event *ev)
{
    ev->func = op->func;
    ev->flags = op->flags;
    ev->object = op->file ? op->file->object : 0;
    ev->link = op->link;
}

static inline void io_failed(pioscope_event *ev, int rc)
{
    ev->error = pioscope_mpi_error_class(rc);
    ev->result = -1;
}

/* Ends a data call that returned rc: saves errno, takes the end time, records, restores errno
 * and returns rc. status: blocking call; request: nonblocking start; neither: the begin of a
 * split collective (remembered on the handle for its end). */
static inline int io_end_transfer(io_op *op, MPI_File fh, int rc, MPI_Count count,
                                  MPI_Datatype type,
                                  const MPI_Status *status, const MPI_Request *request)
{
    int saved_errno = errno;
    pioscope_stop(&op->call);
    pioscope_event ev = {0};
    if (op->call.recording) {
        pioscope_internal_begin();
        io_event(op, &ev);
        if (rc == MPI_SUCCESS) {
            if (op->position == IO_EXPLICIT && io_can_query(op))
                io_resolve(op, fh, op->at);
            ev.size = pioscope_mpi_type_bytes(type, count);
            ev.result = status ? pioscope_mpi_status_bytes(status) : (int64_t)ev.size;
        } else {
            io_failed(&ev, rc);
        }
        pioscope_internal_end();
        if (op->resolved)
            ev.offset = op->byte_offset;
        else
            ev.flags |= PIOSCOPE_F_OFFSET_UNKNOWN;
        if (request) {
            /* A nonblocking collective is linked by its request, not by its instance. */
            ev.flags |= PIOSCOPE_F_NONBLOCKING;
            ev.link = 0;
            if (rc == MPI_SUCCESS) {
                ev.link = pioscope_request_id();
                pioscope_mpi_request_track(*request, ev.link, PIOSCOPE_MPI_REQ_FILE, ev.flags,
                                           ev.object, ev.offset, ev.size, NULL);
            }
        }
        if (!status && !request && op->file) {
            op->file->split_link = ev.link;
            op->file->split_offset = ev.offset;
            op->file->split_size = ev.size;
            op->file->split_flags = ev.flags;
        }
    }
    pioscope_leave(&op->call, &ev);
    errno = saved_errno;
    return rc;
}

/* Ends a split collective that returned rc (the instance, offset and size of its begin; result
 * from the status), keeping errno as it was, and returns rc. */
static inline int io_end_split(io_op *op, int rc, const MPI_Status *status)
{
    int saved_errno = errno;
    pioscope_stop(&op->call);
    pioscope_event ev = {0};
    if (op->call.recording) {
        io_event(op, &ev);
        if (op->file) {
            ev.flags = op->file->split_flags;
            ev.link = op->file->split_link;
            ev.offset = op->file->split_offset;
            ev.size = op->file->split_size;
        } else {
            ev.flags = PIOSCOPE_F_COLLECTIVE | PIOSCOPE_F_OFFSET_UNKNOWN;
        }
        pioscope_internal_begin();
        if (rc == MPI_SUCCESS)
            ev.result = pioscope_mpi_status_bytes(status);
        else
            io_failed(&ev, rc);
        pioscope_internal_end();
    }
    pioscope_leave(&op->call, &ev);
    errno = saved_errno;
    return rc;
}

/* Ends a metadata call: offset and size as the caller defines them for this function. */
static inline void io_end_meta(io_op *op, int rc, uint64_t offset, uint64_t size)
{
    pioscope_event ev = {0};
    if (op->call.recording) {
        io_event(op, &ev);
        ev.flags |= op->position == IO_SHARED ? PIOSCOPE_F_OFFSET_UNKNOWN : 0;
        ev.offset = offset;
        ev.size = size;
        ev.result = (int64_t)size;
        if (rc != MPI_SUCCESS) {
            pioscope_internal_begin();
            io_failed(&ev, rc);
            pioscope_internal_end();
        }
    }
    pioscope_leave(&op->call, &ev);
}

/* ROMIO lets a file name start with the file system it should use ("ufs:/scratch/f"); the
 * record keeps the path only. */
static const char *strip_fs_prefix(const char *filename)
{
    static const char *const prefixes[] = {
        "ufs",  "nfs",  "lustre", "gpfs", "panfs", "pvfs2",  "pvfs",       "daos",   "ime",
        "xfs",  "sfs",  "hfs",    "pfs",  "piofs", "testfs", "bglockless", "bg",     "zoidfs",
        "ftp",  "gsiftp", "quobyte"};
    const char *colon = filename ? strchr(filename, ':') : NULL;
    if (!colon)
        return filename;
    size_t length = (size_t)(colon - filename);
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strlen(prefixes[i]) == length && strncasecmp(filename, prefixes[i], length) == 0)
            return colon + 1;
    return filename;
}

/* ---- the real functions: one prototype per signature, as mpi.h declares it ----
 * The read and the write of a family differ only in the constness of the buffer, so the
 * family's helper takes the buffer const and calls through the prototype `dir` names (a read's
 * buffer came in non-const from the program). The MPI-4 large-count form (_c) of a function
 * differs only in its count, an MPI_Count: the helper takes the count as MPI_Count and calls
 * through the prototype `width` names. */
enum io_dir { IO_READ, IO_WRITE };
enum io_width { IO_INT, IO_LARGE };

typedef __typeof__(PMPI_File_read_at) read_at_fn;
typedef __typeof__(PMPI_File_write_at) write_at_fn;
typedef __typeof__(PMPI_File_read) read_fn;
typedef __typeof__(PMPI_File_write) write_fn;
typedef __typeof__(PMPI_File_iread_at) iread_at_fn;
typedef __typeof__(PMPI_File_iwrite_at) iwrite_at_fn;
typedef __typeof__(PMPI_File_iread) iread_fn;
typedef __typeof__(PMPI_File_iwrite) iwrite_fn;
typedef __typeof__(PMPI_File_read_at_all_begin) read_at_begin_fn;
typedef __typeof__(PMPI_File_write_at_all_begin) write_at_begin_fn;
typedef __typeof__(PMPI_File_read_all_begin) read_begin_fn;
typedef __typeof__(PMPI_File_write_all_begin) write_begin_fn;
typedef __typeof__(PMPI_File_read_at_c) read_at_c_fn;
typedef __typeof__(PMPI_File_write_at_c) write_at_c_fn;
typedef __typeof__(PMPI_File_read_c) read_c_fn;
typedef __typeof__(PMPI_File_write_c) write_c_fn;
typedef __typeof__(PMPI_File_iread_at_c) iread_at_c_fn;
typedef __typeof__(PMPI_File_iwrite_at_c) iwrite_at_c_fn;
typedef __typeof__(PMPI_File_iread_c) iread_c_fn;
typedef __typeof__(PMPI_File_iwrite_c) iwrite_c_fn;
typedef __typeof__(PMPI_File_read_at_all_begin_c) read_at_begin_c_fn;
typedef __typeof__(PMPI_File_write_at_all_begin_c) write_at_begin_c_fn;
typedef __typeof__(PMPI_File_read_all_begin_c) read_begin_c_fn;
typedef __typeof__(PMPI_File_write_all_begin_c) write_begin_c_fn;
typedef __typeof__(PMPI_File_read_all_end) read_end_fn;
typedef __typeof__(PMPI_File_write_all_end) write_end_fn;
typedef __typeof__(PMPI_File_set_size) resize_fn;
typedef __typeof__(PMPI_File_seek) seek_fn;

/* ---- open, close, delete ---- */

/* link = handle id << 32 | 0; then the SETTINGS of the file (open.amode, open.comm_size and the
 * hints; the default view), each written when it differs from the last one of this file. */
PIOSCOPE_MPI_WRAPPER(MPI_File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                                     MPI_File *fh))
{
    pioscope_call call;
    __typeof__(&PMPI_File_open) real = pioscope_begin(&call, &target_MPI_File_open);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(comm, filename, amode, info, fh);
    int saved_errno = errno;
    pioscope_stop(&call);
    uint32_t handle_id = pioscope_mpi_file_open_id(comm, rc);
    uint32_t object = 0;
    if (filename && (rc == MPI_SUCCESS || call.recording)) /* a failed open names its file too */
        object = pioscope_intern_path(strip_fs_prefix(filename), -1);
    if (rc == MPI_SUCCESS)
        pioscope_mpi_file_add(*fh, handle_id, object, amode);
    pioscope_event ev = {0};
    if (call.recording) {
        ev.func = target_MPI_File_open.func;
        ev.flags = PIOSCOPE_F_COLLECTIVE;
        ev.object = object;
        ev.link = (uint64_t)handle_id << 32;
        if (rc != MPI_SUCCESS) {
            pioscope_internal_begin();
            io_failed(&ev, rc);
            pioscope_internal_end();
        }
    }
    pioscope_leave(&call, &ev);
    if (call.recording && rc == MPI_SUCCESS) {
        int size = 0;
        char extra[96];
        pioscope_internal_begin();
        PMPI_Comm_size(comm, &size);
        pioscope_internal_end();
        snprintf(extra, sizeof extra, "open.amode=%d\nopen.comm_size=%d\n", amode, size);
        pioscope_mpi_io_settings(*fh, object, target_MPI_File_open.func, call.start, extra, 1);
    }
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_File_close, (MPI_File *fh))
{
    __typeof__(&PMPI_File_close) real = pioscope_target_real(&target_MPI_File_close);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target_MPI_File_close.func, fh ? *fh : MPI_FILE_NULL, IO_NONE,
             PIOSCOPE_F_COLLECTIVE, 0);
    int rc = real(fh);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    io_end_meta(&op, rc, 0, 0);
    if (rc == MPI_SUCCESS) /* after the record, which reads the entry's path */
        pioscope_mpi_file_remove(op.file);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_File_delete, (const char *filename, MPI_Info info))
{
    __typeof__(&PMPI_File_delete) real = pioscope_target_real(&target_MPI_File_delete);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target_MPI_File_delete.func, MPI_FILE_NULL, IO_NONE, 0, 0);
    int rc = real(filename, info);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    pioscope_event ev = {0};
    if (op.call.recording) {
        ev.func = target_MPI_File_delete.func;
        ev.object = filename ? pioscope_intern_path(strip_fs_prefix(filename), -1) : 0;
        if (rc != MPI_SUCCESS) {
            pioscope_internal_begin();
            io_failed(&ev, rc);
            pioscope_internal_end();
        }
    }
    pioscope_leave(&op.call, &ev);
    errno = saved_errno;
    return rc;
}

/* ---- metadata ---- */

/* offset = disp; then the SETTINGS of the file (hints, new view), each written when it
 * differs from the last one of this file. */
PIOSCOPE_MPI_WRAPPER(MPI_File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                         MPI_Datatype filetype, const char *datarep, MPI_Info info))
{
    __typeof__(&PMPI_File_set_view) real = pioscope_target_real(&target_MPI_File_set_view);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target_MPI_File_set_view.func, fh, IO_NONE, PIOSCOPE_F_COLLECTIVE, 0);
    int rc = real(fh, disp, etype, filetype, datarep, info);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    io_end_meta(&op, rc, disp > 0 ? (uint64_t)disp : 0, 0);
    if (op.call.recording && rc == MPI_SUCCESS && op.file)
        pioscope_mpi_io_settings(fh, op.file->object, target_MPI_File_set_view.func,
                                 op.call.start, NULL, 1);
    errno = saved_errno;
    return rc;
}

/* Then the SETTINGS of the hints in force after the call, if they changed. */
PIOSCOPE_MPI_WRAPPER(MPI_File_set_info, (MPI_File fh, MPI_Info info))
{
    __typeof__(&PMPI_File_set_info) real = pioscope_target_real(&target_MPI_File_set_info);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target_MPI_File_set_info.func, fh, IO_NONE, PIOSCOPE_F_COLLECTIVE, 0);
    int rc = real(fh, info);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    io_end_meta(&op, rc, 0, 0);
    if (op.call.recording && rc == MPI_SUCCESS && op.file)
        pioscope_mpi_io_settings(fh, op.file->object, target_MPI_File_set_info.func,
                                 op.call.start, NULL, 0);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_File_sync, (MPI_File fh))
{
    __typeof__(&PMPI_File_sync) real = pioscope_target_real(&target_MPI_File_sync);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target_MPI_File_sync.func, fh, IO_NONE, PIOSCOPE_F_COLLECTIVE, 0);
    int rc = real(fh);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    io_end_meta(&op, rc, 0, 0);
    errno = saved_errno;
    return rc;
}

/* set_size, preallocate: size = the size asked for. */
static inline int do_resize(pioscope_target *target, MPI_File fh, MPI_Offset size)
{
    resize_fn *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target->func, fh, IO_NONE, PIOSCOPE_F_COLLECTIVE, 0);
    int rc = real(fh, size);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    io_end_meta(&op, rc, 0, size > 0 ? (uint64_t)size : 0);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_File_set_size, (MPI_File fh, MPI_Offset size))
{
    return do_resize(&target_MPI_File_set_size, fh, size);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_preallocate, (MPI_File fh, MPI_Offset size))
{
    return do_resize(&target_MPI_File_preallocate, fh, size);
}

/* seek (position IO_NONE): offset = the file byte the individual pointer points to after the
 * seek. seek_shared (IO_SHARED): the shared pointer is not read back (that is file I/O in
 * ROMIO), offset unknown. */
static inline int do_seek(pioscope_target *target, int position, uint8_t flags, MPI_File fh,
                          MPI_Offset offset, int whence)
{
    seek_fn *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target->func, fh, position, flags, 0);
    int rc = real(fh, offset, whence);
    int saved_errno = errno;
    pioscope_stop(&op.call);
    if (position != IO_SHARED) {
        if (op.call.recording && rc == MPI_SUCCESS) {
            pioscope_internal_begin();
            io_resolve_pointer(&op, fh);
            pioscope_internal_end();
        }
        if (!op.resolved)
            op.flags |= PIOSCOPE_F_OFFSET_UNKNOWN;
    }
    io_end_meta(&op, rc, op.byte_offset, 0);
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_File_seek, (MPI_File fh, MPI_Offset offset, int whence))
{
    return do_seek(&target_MPI_File_seek, IO_NONE, 0, fh, offset, whence);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
{
    return do_seek(&target_MPI_File_seek_shared, IO_SHARED, PIOSCOPE_F_COLLECTIVE, fh, offset,
                   whence);
}

/* ---- queries and the rest of the file chapter (MPI 4.0 chapter 14) ----
 * Local calls that move no data; the record says the program asked, and when (ROMIO's
 * get_size and get_position_shared do file I/O of their own, which nests under them). */

/* A query on fh whose answer is not recorded: offset and size 0. */
static inline void query_begin(io_op *op, pioscope_target *target, MPI_File fh)
{
    io_begin(op, target->func, fh, IO_NONE, 0, 0);
}

/* Ends it with offset and size as the caller defines them for this function, keeping errno. */
static inline int query_end(io_op *op, int rc, uint64_t offset, uint64_t size)
{
    int saved_errno = errno;
    pioscope_stop(&op->call);
    io_end_meta(op, rc, offset, size);
    errno = saved_errno;
    return rc;
}

static inline uint64_t nonnegative(MPI_Offset value)
{
    return value > 0 ? (uint64_t)value : 0;
}

/* size = the file's size in bytes. */
PIOSCOPE_MPI_WRAPPER(MPI_File_get_size, (MPI_File fh, MPI_Offset *size))
{
    __typeof__(&PMPI_File_get_size) real = pioscope_target_real(&target_MPI_File_get_size);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_size, fh);
    int rc = real(fh, size);
    return query_end(&op, rc, 0, rc == MPI_SUCCESS ? nonnegative(*size) : 0);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_get_group, (MPI_File fh, MPI_Group *group))
{
    __typeof__(&PMPI_File_get_group) real = pioscope_target_real(&target_MPI_File_get_group);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_group, fh);
    int rc = real(fh, group);
    return query_end(&op, rc, 0, 0);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_get_amode, (MPI_File fh, int *amode))
{
    __typeof__(&PMPI_File_get_amode) real = pioscope_target_real(&target_MPI_File_get_amode);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_amode, fh);
    int rc = real(fh, amode);
    return query_end(&op, rc, 0, 0);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_get_info, (MPI_File fh, MPI_Info *info_used))
{
    __typeof__(&PMPI_File_get_info) real = pioscope_target_real(&target_MPI_File_get_info);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_info, fh);
    int rc = real(fh, info_used);
    return query_end(&op, rc, 0, 0);
}

/* offset = the view's displacement. */
PIOSCOPE_MPI_WRAPPER(MPI_File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                                         MPI_Datatype *filetype, char *datarep))
{
    __typeof__(&PMPI_File_get_view) real = pioscope_target_real(&target_MPI_File_get_view);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_view, fh);
    int rc = real(fh, disp, etype, filetype, datarep);
    return query_end(&op, rc, rc == MPI_SUCCESS ? nonnegative(*disp) : 0, 0);
}

/* offset = the individual pointer, in etypes of the view (as the call returns it). */
PIOSCOPE_MPI_WRAPPER(MPI_File_get_position, (MPI_File fh, MPI_Offset *offset))
{
    __typeof__(&PMPI_File_get_position) real =
        pioscope_target_real(&target_MPI_File_get_position);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_position, fh);
    int rc = real(fh, offset);
    return query_end(&op, rc, rc == MPI_SUCCESS ? nonnegative(*offset) : 0, 0);
}

/* offset = the shared pointer, in etypes of the view. */
PIOSCOPE_MPI_WRAPPER(MPI_File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
{
    __typeof__(&PMPI_File_get_position_shared) real =
        pioscope_target_real(&target_MPI_File_get_position_shared);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_position_shared, fh);
    int rc = real(fh, offset);
    return query_end(&op, rc, rc == MPI_SUCCESS ? nonnegative(*offset) : 0, 0);
}

/* offset = the file byte the call returns (of etype offset `offset` in the view). */
PIOSCOPE_MPI_WRAPPER(MPI_File_get_byte_offset, (MPI_File fh, MPI_Offset offset,
                                                MPI_Offset *disp))
{
    __typeof__(&PMPI_File_get_byte_offset) real =
        pioscope_target_real(&target_MPI_File_get_byte_offset);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_byte_offset, fh);
    int rc = real(fh, offset, disp);
    return query_end(&op, rc, rc == MPI_SUCCESS ? nonnegative(*disp) : 0, 0);
}

/* size = the extent in the file of the datatype. */
PIOSCOPE_MPI_WRAPPER(MPI_File_get_type_extent, (MPI_File fh, MPI_Datatype datatype,
                                                MPI_Aint *extent))
{
    __typeof__(&PMPI_File_get_type_extent) real =
        pioscope_target_real(&target_MPI_File_get_type_extent);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_type_extent, fh);
    int rc = real(fh, datatype, extent);
    return query_end(&op, rc, 0, rc == MPI_SUCCESS ? nonnegative(*extent) : 0);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_get_type_extent_c, (MPI_File fh, MPI_Datatype datatype,
                                                  MPI_Count *extent))
{
    __typeof__(&PMPI_File_get_type_extent_c) real =
        pioscope_target_real(&target_MPI_File_get_type_extent_c);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_type_extent_c, fh);
    int rc = real(fh, datatype, extent);
    return query_end(&op, rc, 0, rc == MPI_SUCCESS ? nonnegative(*extent) : 0);
}

/* Collective; size = the flag asked for (1: atomic mode on). */
PIOSCOPE_MPI_WRAPPER(MPI_File_set_atomicity, (MPI_File fh, int flag))
{
    __typeof__(&PMPI_File_set_atomicity) real =
        pioscope_target_real(&target_MPI_File_set_atomicity);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target_MPI_File_set_atomicity.func, fh, IO_NONE, PIOSCOPE_F_COLLECTIVE, 0);
    int rc = real(fh, flag);
    return query_end(&op, rc, 0, flag ? 1 : 0);
}

/* size = the flag returned. */
PIOSCOPE_MPI_WRAPPER(MPI_File_get_atomicity, (MPI_File fh, int *flag))
{
    __typeof__(&PMPI_File_get_atomicity) real =
        pioscope_target_real(&target_MPI_File_get_atomicity);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_File_get_atomicity, fh);
    int rc = real(fh, flag);
    return query_end(&op, rc, 0, rc == MPI_SUCCESS && *flag ? 1 : 0);
}

/* Not on a file: object 0. */
PIOSCOPE_MPI_WRAPPER(MPI_Register_datarep, (const char *datarep,
                                            MPI_Datarep_conversion_function *read_conversion_fn,
                                            MPI_Datarep_conversion_function *write_conversion_fn,
                                            MPI_Datarep_extent_function *dtype_file_extent_fn,
                                            void *extra_state))
{
    __typeof__(&PMPI_Register_datarep) real = pioscope_target_real(&target_MPI_Register_datarep);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_Register_datarep, MPI_FILE_NULL);
    int rc = real(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
                  extra_state);
    return query_end(&op, rc, 0, 0);
}

PIOSCOPE_MPI_WRAPPER(MPI_Register_datarep_c,
                     (const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                      MPI_Datarep_conversion_function_c *write_conversion_fn,
                      MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state))
{
    __typeof__(&PMPI_Register_datarep_c) real =
        pioscope_target_real(&target_MPI_Register_datarep_c);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    query_begin(&op, &target_MPI_Register_datarep_c, MPI_FILE_NULL);
    int rc = real(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
                  extra_state);
    return query_end(&op, rc, 0, 0);
}

/* ---- data access, blocking: explicit offset, individual pointer, shared pointer ---- */

/* read_at, write_at and their _all. */
static inline int do_at(pioscope_target *target, uint8_t flags, int dir, int width, MPI_File fh,
                        MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype type,
                        MPI_Status *status)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    MPI_Status local;
    MPI_Status *st = io_status(status, &local);
    io_op op;
    io_begin(&op, target->func, fh, IO_EXPLICIT, flags, offset);
    void *rbuf = (void *)buf;
    int rc;
    if (width == IO_LARGE)
        rc = dir == IO_WRITE ? ((write_at_c_fn *)real)(fh, offset, buf, count, type, st)
                             : ((read_at_c_fn *)real)(fh, offset, rbuf, count, type, st);
    else
        rc = dir == IO_WRITE ? ((write_at_fn *)real)(fh, offset, buf, (int)count, type, st)
                             : ((read_at_fn *)real)(fh, offset, rbuf, (int)count, type, st);
    return io_end_transfer(&op, fh, rc, count, type, st, NULL);
}

/* read, write, their _all (IO_INDIVIDUAL), _shared and _ordered (IO_SHARED). */
static inline int do_ptr(pioscope_target *target, int position, uint8_t flags, int dir, int width,
                         MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type,
                         MPI_Status *status)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    MPI_Status local;
    MPI_Status *st = io_status(status, &local);
    io_op op;
    io_begin(&op, target->func, fh, position, flags, 0);
    void *rbuf = (void *)buf;
    int rc;
    if (width == IO_LARGE)
        rc = dir == IO_WRITE ? ((write_c_fn *)real)(fh, buf, count, type, st)
                             : ((read_c_fn *)real)(fh, rbuf, count, type, st);
    else
        rc = dir == IO_WRITE ? ((write_fn *)real)(fh, buf, (int)count, type, st)
                             : ((read_fn *)real)(fh, rbuf, (int)count, type, st);
    return io_end_transfer(&op, fh, rc, count, type, st, NULL);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                        MPI_Datatype datatype, MPI_Status *status))
{
    return do_at(&target_MPI_File_read_at, 0, IO_READ, IO_INT, fh, offset, buf, count, datatype,
                 status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                            MPI_Datatype datatype, MPI_Status *status))
{
    return do_at(&target_MPI_File_read_at_all, PIOSCOPE_F_COLLECTIVE, IO_READ, IO_INT, fh, offset,
                 buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                         MPI_Datatype datatype, MPI_Status *status))
{
    return do_at(&target_MPI_File_write_at, 0, IO_WRITE, IO_INT, fh, offset, buf, count, datatype,
                 status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf,
                                             int count, MPI_Datatype datatype, MPI_Status *status))
{
    return do_at(&target_MPI_File_write_at_all, PIOSCOPE_F_COLLECTIVE, IO_WRITE, IO_INT, fh,
                 offset, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                     MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read, IO_INDIVIDUAL, 0, IO_READ, IO_INT, fh, buf, count,
                  datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                         MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read_all, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_READ,
                  IO_INT, fh, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write, (MPI_File fh, const void *buf, int count,
                                      MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write, IO_INDIVIDUAL, 0, IO_WRITE, IO_INT, fh, buf, count,
                  datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_all, (MPI_File fh, const void *buf, int count,
                                          MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write_all, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_WRITE,
                  IO_INT, fh, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_shared, (MPI_File fh, void *buf, int count,
                                            MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read_shared, IO_SHARED, 0, IO_READ, IO_INT, fh, buf, count,
                  datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_ordered, (MPI_File fh, void *buf, int count,
                                             MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read_ordered, IO_SHARED, PIOSCOPE_F_COLLECTIVE, IO_READ,
                  IO_INT, fh, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_shared, (MPI_File fh, const void *buf, int count,
                                             MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write_shared, IO_SHARED, 0, IO_WRITE, IO_INT, fh, buf, count,
                  datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_ordered, (MPI_File fh, const void *buf, int count,
                                              MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write_ordered, IO_SHARED, PIOSCOPE_F_COLLECTIVE, IO_WRITE,
                  IO_INT, fh, buf, count, datatype, status);
}

/* ---- data access, nonblocking: link = request id (collective ones too), completed in
 * Wait/Test ---- */

/* iread_at, iwrite_at and their _all. */
static inline int do_iat(pioscope_target *target, uint8_t flags, int dir, int width, MPI_File fh,
                         MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype type,
                         MPI_Request *request)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target->func, fh, IO_EXPLICIT, flags, offset);
    void *rbuf = (void *)buf;
    int rc;
    if (width == IO_LARGE)
        rc = dir == IO_WRITE ? ((iwrite_at_c_fn *)real)(fh, offset, buf, count, type, request)
                             : ((iread_at_c_fn *)real)(fh, offset, rbuf, count, type, request);
    else
        rc = dir == IO_WRITE
                 ? ((iwrite_at_fn *)real)(fh, offset, buf, (int)count, type, request)
                 : ((iread_at_fn *)real)(fh, offset, rbuf, (int)count, type, request);
    return io_end_transfer(&op, fh, rc, count, type, NULL, request);
}

/* iread, iwrite, their _all (IO_INDIVIDUAL) and _shared (IO_SHARED). */
static inline int do_iptr(pioscope_target *target, int position, uint8_t flags, int dir,
                          int width, MPI_File fh, const void *buf, MPI_Count count,
                          MPI_Datatype type, MPI_Request *request)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target->func, fh, position, flags, 0);
    void *rbuf = (void *)buf;
    int rc;
    if (width == IO_LARGE)
        rc = dir == IO_WRITE ? ((iwrite_c_fn *)real)(fh, buf, count, type, request)
                             : ((iread_c_fn *)real)(fh, rbuf, count, type, request);
    else
        rc = dir == IO_WRITE ? ((iwrite_fn *)real)(fh, buf, (int)count, type, request)
                             : ((iread_fn *)real)(fh, rbuf, (int)count, type, request);
    return io_end_transfer(&op, fh, rc, count, type, NULL, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                         MPI_Datatype datatype, MPI_Request *request))
{
    return do_iat(&target_MPI_File_iread_at, 0, IO_READ, IO_INT, fh, offset, buf, count, datatype,
                  request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                             MPI_Datatype datatype, MPI_Request *request))
{
    return do_iat(&target_MPI_File_iread_at_all, PIOSCOPE_F_COLLECTIVE, IO_READ, IO_INT, fh,
                  offset, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf,
                                          int count, MPI_Datatype datatype, MPI_Request *request))
{
    return do_iat(&target_MPI_File_iwrite_at, 0, IO_WRITE, IO_INT, fh, offset, buf, count,
                  datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf,
                                              int count, MPI_Datatype datatype,
                                              MPI_Request *request))
{
    return do_iat(&target_MPI_File_iwrite_at_all, PIOSCOPE_F_COLLECTIVE, IO_WRITE, IO_INT, fh,
                  offset, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                      MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iread, IO_INDIVIDUAL, 0, IO_READ, IO_INT, fh, buf, count,
                   datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                          MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iread_all, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_READ,
                   IO_INT, fh, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite, (MPI_File fh, const void *buf, int count,
                                       MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iwrite, IO_INDIVIDUAL, 0, IO_WRITE, IO_INT, fh, buf, count,
                   datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_all, (MPI_File fh, const void *buf, int count,
                                           MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iwrite_all, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_WRITE,
                   IO_INT, fh, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_shared, (MPI_File fh, void *buf, int count,
                                             MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iread_shared, IO_SHARED, 0, IO_READ, IO_INT, fh, buf, count,
                   datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_shared, (MPI_File fh, const void *buf, int count,
                                              MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iwrite_shared, IO_SHARED, 0, IO_WRITE, IO_INT, fh, buf, count,
                   datatype, request);
}

/* ---- split collectives ----
 * The begin takes the next instance number and records the request (size, offset); the end
 * repeats them with the bytes transferred as result. (ROMIO does all the I/O in the begin.) */

/* read_at_all_begin, write_at_all_begin. */
static inline int do_begin_at(pioscope_target *target, int dir, int width, MPI_File fh,
                              MPI_Offset offset, const void *buf, MPI_Count count,
                              MPI_Datatype type)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target->func, fh, IO_EXPLICIT, PIOSCOPE_F_COLLECTIVE, offset);
    void *rbuf = (void *)buf;
    int rc;
    if (width == IO_LARGE)
        rc = dir == IO_WRITE ? ((write_at_begin_c_fn *)real)(fh, offset, buf, count, type)
                             : ((read_at_begin_c_fn *)real)(fh, offset, rbuf, count, type);
    else
        rc = dir == IO_WRITE ? ((write_at_begin_fn *)real)(fh, offset, buf, (int)count, type)
                             : ((read_at_begin_fn *)real)(fh, offset, rbuf, (int)count, type);
    return io_end_transfer(&op, fh, rc, count, type, NULL, NULL);
}

/* read_all_begin, write_all_begin (IO_INDIVIDUAL), the _ordered_begin ones (IO_SHARED). */
static inline int do_begin_ptr(pioscope_target *target, int position, int dir, int width,
                               MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype type)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    io_op op;
    io_begin(&op, target->func, fh, position, PIOSCOPE_F_COLLECTIVE, 0);
    void *rbuf = (void *)buf;
    int rc;
    if (width == IO_LARGE)
        rc = dir == IO_WRITE ? ((write_begin_c_fn *)real)(fh, buf, count, type)
                             : ((read_begin_c_fn *)real)(fh, rbuf, count, type);
    else
        rc = dir == IO_WRITE ? ((write_begin_fn *)real)(fh, buf, (int)count, type)
                             : ((read_begin_fn *)real)(fh, rbuf, (int)count, type);
    return io_end_transfer(&op, fh, rc, count, type, NULL, NULL);
}

/* Every _end: no new instance, the end shares its begin's. */
static inline int do_end(pioscope_target *target, int dir, MPI_File fh, const void *buf,
                         MPI_Status *status)
{
    void *real = pioscope_target_real(target);
    if (!real)
        return MPI_ERR_INTERN;
    MPI_Status local;
    MPI_Status *st = io_status(status, &local);
    io_op op;
    io_begin(&op, target->func, fh, IO_NONE, 0, 0);
    int rc = dir == IO_WRITE ? ((write_end_fn *)real)(fh, buf, st)
                             : ((read_end_fn *)real)(fh, (void *)buf, st);
    return io_end_split(&op, rc, st);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf,
                                                  int count, MPI_Datatype datatype))
{
    return do_begin_at(&target_MPI_File_read_at_all_begin, IO_READ, IO_INT, fh, offset, buf,
                       count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
{
    return do_end(&target_MPI_File_read_at_all_end, IO_READ, fh, buf, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_all_begin, (MPI_File fh, void *buf, int count,
                                               MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_read_all_begin, IO_INDIVIDUAL, IO_READ, IO_INT, fh, buf,
                        count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
{
    return do_end(&target_MPI_File_read_all_end, IO_READ, fh, buf, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_ordered_begin, (MPI_File fh, void *buf, int count,
                                                   MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_read_ordered_begin, IO_SHARED, IO_READ, IO_INT, fh, buf,
                        count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
{
    return do_end(&target_MPI_File_read_ordered_end, IO_READ, fh, buf, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf,
                                                   int count, MPI_Datatype datatype))
{
    return do_begin_at(&target_MPI_File_write_at_all_begin, IO_WRITE, IO_INT, fh, offset, buf,
                       count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
{
    return do_end(&target_MPI_File_write_at_all_end, IO_WRITE, fh, buf, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_all_begin, (MPI_File fh, const void *buf, int count,
                                                MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_write_all_begin, IO_INDIVIDUAL, IO_WRITE, IO_INT, fh,
                        buf, count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
{
    return do_end(&target_MPI_File_write_all_end, IO_WRITE, fh, buf, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_ordered_begin, (MPI_File fh, const void *buf, int count,
                                                    MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_write_ordered_begin, IO_SHARED, IO_WRITE, IO_INT, fh,
                        buf, count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
{
    return do_end(&target_MPI_File_write_ordered_end, IO_WRITE, fh, buf, status);
}

/* ---- MPI-4 large-count forms: the same records, the count an MPI_Count ---- */

PIOSCOPE_MPI_WRAPPER(MPI_File_read_at_c, (MPI_File fh, MPI_Offset offset, void *buf,
                                          MPI_Count count, MPI_Datatype datatype,
                                          MPI_Status *status))
{
    return do_at(&target_MPI_File_read_at_c, 0, IO_READ, IO_LARGE, fh, offset, buf, count,
                 datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_at_all_c, (MPI_File fh, MPI_Offset offset, void *buf,
                                              MPI_Count count, MPI_Datatype datatype,
                                              MPI_Status *status))
{
    return do_at(&target_MPI_File_read_at_all_c, PIOSCOPE_F_COLLECTIVE, IO_READ, IO_LARGE, fh,
                 offset, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_at_c, (MPI_File fh, MPI_Offset offset, const void *buf,
                                           MPI_Count count, MPI_Datatype datatype,
                                           MPI_Status *status))
{
    return do_at(&target_MPI_File_write_at_c, 0, IO_WRITE, IO_LARGE, fh, offset, buf, count,
                 datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf,
                                               MPI_Count count, MPI_Datatype datatype,
                                               MPI_Status *status))
{
    return do_at(&target_MPI_File_write_at_all_c, PIOSCOPE_F_COLLECTIVE, IO_WRITE, IO_LARGE, fh,
                 offset, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_c, (MPI_File fh, void *buf, MPI_Count count,
                                       MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read_c, IO_INDIVIDUAL, 0, IO_READ, IO_LARGE, fh, buf, count,
                  datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_all_c, (MPI_File fh, void *buf, MPI_Count count,
                                           MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read_all_c, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_READ,
                  IO_LARGE, fh, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_c, (MPI_File fh, const void *buf, MPI_Count count,
                                        MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write_c, IO_INDIVIDUAL, 0, IO_WRITE, IO_LARGE, fh, buf, count,
                  datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_all_c, (MPI_File fh, const void *buf, MPI_Count count,
                                            MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write_all_c, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_WRITE,
                  IO_LARGE, fh, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_shared_c, (MPI_File fh, void *buf, MPI_Count count,
                                              MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read_shared_c, IO_SHARED, 0, IO_READ, IO_LARGE, fh, buf, count,
                  datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_ordered_c, (MPI_File fh, void *buf, MPI_Count count,
                                               MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_read_ordered_c, IO_SHARED, PIOSCOPE_F_COLLECTIVE, IO_READ,
                  IO_LARGE, fh, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_shared_c, (MPI_File fh, const void *buf, MPI_Count count,
                                               MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write_shared_c, IO_SHARED, 0, IO_WRITE, IO_LARGE, fh, buf,
                  count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_ordered_c, (MPI_File fh, const void *buf, MPI_Count count,
                                                MPI_Datatype datatype, MPI_Status *status))
{
    return do_ptr(&target_MPI_File_write_ordered_c, IO_SHARED, PIOSCOPE_F_COLLECTIVE, IO_WRITE,
                  IO_LARGE, fh, buf, count, datatype, status);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_at_c, (MPI_File fh, MPI_Offset offset, void *buf,
                                           MPI_Count count, MPI_Datatype datatype,
                                           MPI_Request *request))
{
    return do_iat(&target_MPI_File_iread_at_c, 0, IO_READ, IO_LARGE, fh, offset, buf, count,
                  datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_at_all_c, (MPI_File fh, MPI_Offset offset, void *buf,
                                               MPI_Count count, MPI_Datatype datatype,
                                               MPI_Request *request))
{
    return do_iat(&target_MPI_File_iread_at_all_c, PIOSCOPE_F_COLLECTIVE, IO_READ, IO_LARGE, fh,
                  offset, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_at_c, (MPI_File fh, MPI_Offset offset, const void *buf,
                                            MPI_Count count, MPI_Datatype datatype,
                                            MPI_Request *request))
{
    return do_iat(&target_MPI_File_iwrite_at_c, 0, IO_WRITE, IO_LARGE, fh, offset, buf, count,
                  datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf,
                                                MPI_Count count, MPI_Datatype datatype,
                                                MPI_Request *request))
{
    return do_iat(&target_MPI_File_iwrite_at_all_c, PIOSCOPE_F_COLLECTIVE, IO_WRITE, IO_LARGE, fh,
                  offset, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_c, (MPI_File fh, void *buf, MPI_Count count,
                                        MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iread_c, IO_INDIVIDUAL, 0, IO_READ, IO_LARGE, fh, buf, count,
                   datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_all_c, (MPI_File fh, void *buf, MPI_Count count,
                                            MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iread_all_c, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_READ,
                   IO_LARGE, fh, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_c, (MPI_File fh, const void *buf, MPI_Count count,
                                         MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iwrite_c, IO_INDIVIDUAL, 0, IO_WRITE, IO_LARGE, fh, buf,
                   count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_all_c, (MPI_File fh, const void *buf, MPI_Count count,
                                             MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iwrite_all_c, IO_INDIVIDUAL, PIOSCOPE_F_COLLECTIVE, IO_WRITE,
                   IO_LARGE, fh, buf, count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iread_shared_c, (MPI_File fh, void *buf, MPI_Count count,
                                               MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iread_shared_c, IO_SHARED, 0, IO_READ, IO_LARGE, fh, buf,
                   count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_iwrite_shared_c, (MPI_File fh, const void *buf, MPI_Count count,
                                                MPI_Datatype datatype, MPI_Request *request))
{
    return do_iptr(&target_MPI_File_iwrite_shared_c, IO_SHARED, 0, IO_WRITE, IO_LARGE, fh, buf,
                   count, datatype, request);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_at_all_begin_c, (MPI_File fh, MPI_Offset offset, void *buf,
                                                    MPI_Count count, MPI_Datatype datatype))
{
    return do_begin_at(&target_MPI_File_read_at_all_begin_c, IO_READ, IO_LARGE, fh, offset, buf,
                       count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_all_begin_c, (MPI_File fh, void *buf, MPI_Count count,
                                                 MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_read_all_begin_c, IO_INDIVIDUAL, IO_READ, IO_LARGE, fh,
                        buf, count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_read_ordered_begin_c, (MPI_File fh, void *buf, MPI_Count count,
                                                     MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_read_ordered_begin_c, IO_SHARED, IO_READ, IO_LARGE, fh,
                        buf, count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_at_all_begin_c, (MPI_File fh, MPI_Offset offset,
                                                     const void *buf, MPI_Count count,
                                                     MPI_Datatype datatype))
{
    return do_begin_at(&target_MPI_File_write_at_all_begin_c, IO_WRITE, IO_LARGE, fh, offset, buf,
                       count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_all_begin_c, (MPI_File fh, const void *buf, MPI_Count count,
                                                  MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_write_all_begin_c, IO_INDIVIDUAL, IO_WRITE, IO_LARGE, fh,
                        buf, count, datatype);
}

PIOSCOPE_MPI_WRAPPER(MPI_File_write_ordered_begin_c, (MPI_File fh, const void *buf,
                                                      MPI_Count count, MPI_Datatype datatype))
{
    return do_begin_ptr(&target_MPI_File_write_ordered_begin_c, IO_SHARED, IO_WRITE, IO_LARGE, fh,
                        buf, count, datatype);
}
