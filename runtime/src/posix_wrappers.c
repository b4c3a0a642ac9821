/* posix_wrappers.c: owns the interception of the POSIX layer of functions.def (open family,
 * read/write and their positioned and vector forms, lseek, sync, truncate, stat family,
 * unlink, mkdir, rmdir, rename), plus the glibc fortify (_chk, _2) entry points, recorded under
 * the plain function's id.
 *
 * Every wrapper is declared by PIOSCOPE_WRAPPER (tracer.h) and has the same shape: resolve the
 * real function once and enter, call it, save errno, record (leave), restore errno, return the
 * real result (calls on an fd read errno only when they failed, below). Fields: object = file id, offset = where the transfer started (lseek,
 * ftruncate: the resulting offset or length), size = bytes requested (0 for metadata calls),
 * result = return value, error = errno when it failed. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core.h"
#include "fd_table.h"

/* ---- shared pieces (control flow in inline functions; macros only declare) ---- */

static inline int missing(void)
{
    errno = ENOSYS;
    return -1;
}

/* True when a call made now would be recorded (decides interning before the call). */
static inline int tracing_now(void)
{
    return __atomic_load_n(&pioscope_recording, __ATOMIC_RELAXED) && !pioscope_thread.internal;
}

/* The *_done functions run right after the real call and leave the program the real function's
 * errno. Those of calls on an fd read errno only when the call failed: nothing they do changes
 * it (the record path keeps it, record.h; so does naming a socket, server_mode.c), and reading
 * it is a call into libc that a successful call need not pay. Those that intern a path save
 * errno first and restore it after. */

/* errno of a call that failed (result < 0), else 0. */
static inline int failure_errno(int64_t result)
{
    return result < 0 ? errno : 0;
}

/* read/write/readv/writev: through the file offset the fd table tracks. */
PIOSCOPE_ALWAYS_INLINE
static inline void through_offset_done(const pioscope_call *call, const pioscope_target *target,
                                       int fd, uint64_t size, ssize_t r, int is_write)
{
    uint8_t flags = 0;
    uint64_t offset = pioscope_fd_advance(fd, r, is_write, &flags);
    pioscope_record(call, target->func, pioscope_fd_file(fd), offset, size, r, r < 0,
                    failure_errno(r), flags);
}

/* pread/pwrite/preadv/pwritev: at the offset given. */
PIOSCOPE_ALWAYS_INLINE
static inline void positioned_done(const pioscope_call *call, const pioscope_target *target, int fd,
                                   uint64_t size, uint64_t offset, ssize_t r)
{
    pioscope_record(call, target->func, pioscope_fd_file(fd), offset, size, r, r < 0,
                    failure_errno(r), 0);
}

/* Metadata calls on an fd. */
PIOSCOPE_ALWAYS_INLINE
static inline void fd_meta_done(const pioscope_call *call, const pioscope_target *target, int fd,
                                uint64_t offset, int r)
{
    pioscope_record(call, target->func, pioscope_fd_file(fd), offset, 0, r, r < 0,
                    failure_errno(r), 0);
}

/* Metadata calls on a path (dirfd: AT_FDCWD or the *at directory). The path is interned after
 * the call's end time is taken. */
PIOSCOPE_ALWAYS_INLINE
static inline void path_meta_done(pioscope_call *call, const pioscope_target *target, int dirfd,
                                  const char *path, int r)
{
    int err = errno;
    pioscope_stop(call);
    uint32_t id = call->recording ? pioscope_intern_path_at(dirfd, path, -1) : 0;
    pioscope_record(call, target->func, id, 0, 0, r, r < 0, err, 0);
    errno = err;
}

/* The open family: the new fd enters the fd table at offset 0. */
PIOSCOPE_ALWAYS_INLINE
static inline void open_done(pioscope_call *call, const pioscope_target *target, int dirfd,
                             const char *path, int flags, int fd)
{
    int err = errno;
    pioscope_stop(call);
    uint32_t id = call->recording ? pioscope_intern_path_at(dirfd, path, fd) : 0;
    if (fd >= 0) pioscope_fd_open(fd, id, flags & O_APPEND);
    pioscope_record(call, target->func, id, 0, 0, fd, fd < 0, err, 0);
    errno = err;
}

/* The mode argument of open and openat, present only when the flags create a file. */
static inline mode_t open_mode(int flags, va_list ap)
{
    int creates = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
    return creates ? (mode_t)va_arg(ap, int) : 0;
}

static inline uint64_t iov_bytes(const struct iovec *iov, int n)
{
    uint64_t total = 0;
    for (int i = 0; iov && i < n; i++) total += iov[i].iov_len;
    return total;
}

/* ---- open family ---- */

typedef int open_fn(const char *, int, ...);
typedef int openat_fn(int, const char *, int, ...);
typedef int creat_fn(const char *, mode_t);
typedef int open2_fn(const char *, int);
typedef int openat2_fn(int, const char *, int);

PIOSCOPE_ALWAYS_INLINE
static inline int do_open(pioscope_target *target, const char *path, int flags, mode_t mode)
{
    pioscope_call call;
    open_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int fd = real(path, flags, mode);
    open_done(&call, target, AT_FDCWD, path, flags, fd);
    return fd;
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_openat(pioscope_target *target, int dirfd, const char *path, int flags,
                            mode_t mode)
{
    pioscope_call call;
    openat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int fd = real(dirfd, path, flags, mode);
    open_done(&call, target, dirfd, path, flags, fd);
    return fd;
}

PIOSCOPE_WRAPPER(open, int, open, (const char *path, int flags, ...))
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return do_open(&target_open, path, flags, mode);
}

PIOSCOPE_WRAPPER(open64, int, open64, (const char *path, int flags, ...))
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return do_open(&target_open64, path, flags, mode);
}

PIOSCOPE_WRAPPER(openat, int, openat, (int dirfd, const char *path, int flags, ...))
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return do_openat(&target_openat, dirfd, path, flags, mode);
}

PIOSCOPE_WRAPPER(openat64, int, openat64, (int dirfd, const char *path, int flags, ...))
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return do_openat(&target_openat64, dirfd, path, flags, mode);
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_creat(pioscope_target *target, const char *path, mode_t mode)
{
    pioscope_call call;
    creat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int fd = real(path, mode);
    open_done(&call, target, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, fd);
    return fd;
}

PIOSCOPE_WRAPPER(creat, int, creat, (const char *path, mode_t mode))
{
    return do_creat(&target_creat, path, mode);
}

PIOSCOPE_WRAPPER(creat64, int, creat64, (const char *path, mode_t mode))
{
    return do_creat(&target_creat64, path, mode);
}

/* _FORTIFY_SOURCE builds call these instead of open/openat when the flags are not constant. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_open_2(pioscope_target *target, const char *path, int flags)
{
    pioscope_call call;
    open2_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int fd = real(path, flags);
    open_done(&call, target, AT_FDCWD, path, flags, fd);
    return fd;
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_openat_2(pioscope_target *target, int dirfd, const char *path, int flags)
{
    pioscope_call call;
    openat2_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int fd = real(dirfd, path, flags);
    open_done(&call, target, dirfd, path, flags, fd);
    return fd;
}

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

PIOSCOPE_WRAPPER(open, int, __open_2, (const char *path, int flags))
{
    return do_open_2(&target___open_2, path, flags);
}

PIOSCOPE_WRAPPER(open64, int, __open64_2, (const char *path, int flags))
{
    return do_open_2(&target___open64_2, path, flags);
}

PIOSCOPE_WRAPPER(openat, int, __openat_2, (int dirfd, const char *path, int flags))
{
    return do_openat_2(&target___openat_2, dirfd, path, flags);
}

PIOSCOPE_WRAPPER(openat64, int, __openat64_2, (int dirfd, const char *path, int flags))
{
    return do_openat_2(&target___openat64_2, dirfd, path, flags);
}

/* ---- close ---- */

typedef int fd_fn(int);

PIOSCOPE_WRAPPER(close, int, close, (int fd))
{
    fd_fn *real = pioscope_target_real(&target_close);
    if (!real) return missing();
    uint32_t id = pioscope_fd_file(fd);
    pioscope_fd_close(fd);  /* before: once closed, another thread may reuse the number */
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fd);
    int err = errno;
    pioscope_record(&call, target_close.func, id, 0, 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

/* ---- transfers through the file offset ---- */

typedef ssize_t read_fn(int, void *, size_t);
typedef ssize_t write_fn(int, const void *, size_t);
typedef ssize_t readv_fn(int, const struct iovec *, int);
typedef ssize_t read_chk_fn(int, void *, size_t, size_t);

/* read and write: the buffer came non-const from a read's caller, so one helper takes it const
 * and calls through the prototype of its direction. */
PIOSCOPE_ALWAYS_INLINE
static inline ssize_t do_transfer(pioscope_target *target, int fd, const void *buf, size_t count,
                                  int is_write)
{
    pioscope_call call;
    void *real = pioscope_begin(&call, target);
    if (!real) return missing();
    ssize_t r = !is_write                ? ((read_fn *)real)(fd, (void *)buf, count)
                : pioscope_fd_null(fd) ? pioscope_null_write(fd, count, -1)
                                       : ((write_fn *)real)(fd, buf, count);
    through_offset_done(&call, target, fd, count, r, is_write);
    return r;
}

/* readv and writev share one prototype. */
PIOSCOPE_ALWAYS_INLINE
static inline ssize_t do_vector(pioscope_target *target, int fd, const struct iovec *iov,
                                int iovcnt, int is_write)
{
    pioscope_call call;
    readv_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    ssize_t r = is_write && pioscope_fd_null(fd)
                    ? pioscope_null_write(fd, iov_bytes(iov, iovcnt), -1)
                    : real(fd, iov, iovcnt);
    through_offset_done(&call, target, fd, iov_bytes(iov, iovcnt), r, is_write);
    return r;
}

PIOSCOPE_WRAPPER(read, ssize_t, read, (int fd, void *buf, size_t count))
{
    return do_transfer(&target_read, fd, buf, count, 0);
}

ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);
PIOSCOPE_WRAPPER(read, ssize_t, __read_chk, (int fd, void *buf, size_t count, size_t buflen))
{
    pioscope_call call;
    read_chk_fn *real = pioscope_begin(&call, &target___read_chk);
    if (!real) return missing();
    ssize_t r = real(fd, buf, count, buflen);
    through_offset_done(&call, &target___read_chk, fd, count, r, 0);
    return r;
}

PIOSCOPE_WRAPPER(write, ssize_t, write, (int fd, const void *buf, size_t count))
{
    return do_transfer(&target_write, fd, buf, count, 1);
}

PIOSCOPE_WRAPPER(readv, ssize_t, readv, (int fd, const struct iovec *iov, int iovcnt))
{
    return do_vector(&target_readv, fd, iov, iovcnt, 0);
}

PIOSCOPE_WRAPPER(writev, ssize_t, writev, (int fd, const struct iovec *iov, int iovcnt))
{
    return do_vector(&target_writev, fd, iov, iovcnt, 1);
}

/* ---- positioned transfers ---- */

typedef ssize_t pread_fn(int, void *, size_t, off_t);
typedef ssize_t pwrite_fn(int, const void *, size_t, off_t);
typedef ssize_t pread_chk_fn(int, void *, size_t, off_t, size_t);
typedef ssize_t preadv_fn(int, const struct iovec *, int, off_t);

PIOSCOPE_ALWAYS_INLINE
static inline ssize_t do_pread(pioscope_target *target, int fd, void *buf, size_t count,
                               off_t offset)
{
    pioscope_call call;
    pread_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    ssize_t r = real(fd, buf, count, offset);
    positioned_done(&call, target, fd, count, (uint64_t)offset, r);
    return r;
}

PIOSCOPE_ALWAYS_INLINE
static inline ssize_t do_pwrite(pioscope_target *target, int fd, const void *buf, size_t count,
                                off_t offset)
{
    pioscope_call call;
    pwrite_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    ssize_t r = pioscope_fd_null(fd) ? pioscope_null_write(fd, count, offset)
                                     : real(fd, buf, count, offset);
    positioned_done(&call, target, fd, count, (uint64_t)offset, r);
    return r;
}

PIOSCOPE_WRAPPER(pread, ssize_t, pread, (int fd, void *buf, size_t count, off_t offset))
{
    return do_pread(&target_pread, fd, buf, count, offset);
}

PIOSCOPE_WRAPPER(pread64, ssize_t, pread64, (int fd, void *buf, size_t count, off64_t offset))
{
    return do_pread(&target_pread64, fd, buf, count, offset);
}

PIOSCOPE_WRAPPER(pwrite, ssize_t, pwrite, (int fd, const void *buf, size_t count, off_t offset))
{
    return do_pwrite(&target_pwrite, fd, buf, count, offset);
}

PIOSCOPE_WRAPPER(pwrite64, ssize_t, pwrite64, (int fd, const void *buf, size_t count,
                                               off64_t offset))
{
    return do_pwrite(&target_pwrite64, fd, buf, count, offset);
}

PIOSCOPE_ALWAYS_INLINE
static inline ssize_t do_pread_chk(pioscope_target *target, int fd, void *buf, size_t count,
                                   off_t offset, size_t buflen)
{
    pioscope_call call;
    pread_chk_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    ssize_t r = real(fd, buf, count, offset, buflen);
    positioned_done(&call, target, fd, count, (uint64_t)offset, r);
    return r;
}

ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset, size_t buflen);

PIOSCOPE_WRAPPER(pread, ssize_t, __pread_chk, (int fd, void *buf, size_t count, off_t offset,
                                               size_t buflen))
{
    return do_pread_chk(&target___pread_chk, fd, buf, count, offset, buflen);
}

PIOSCOPE_WRAPPER(pread64, ssize_t, __pread64_chk, (int fd, void *buf, size_t count, off64_t offset,
                                                   size_t buflen))
{
    return do_pread_chk(&target___pread64_chk, fd, buf, count, offset, buflen);
}

PIOSCOPE_ALWAYS_INLINE
static inline ssize_t do_positioned_vector(pioscope_target *target, int fd,
                                           const struct iovec *iov, int iovcnt, off_t offset,
                                           int is_write)
{
    pioscope_call call;
    preadv_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    ssize_t r = is_write && pioscope_fd_null(fd)
                    ? pioscope_null_write(fd, iov_bytes(iov, iovcnt), offset)
                    : real(fd, iov, iovcnt, offset);
    positioned_done(&call, target, fd, iov_bytes(iov, iovcnt), (uint64_t)offset, r);
    return r;
}

PIOSCOPE_WRAPPER(preadv, ssize_t, preadv, (int fd, const struct iovec *iov, int iovcnt,
                                           off_t offset))
{
    return do_positioned_vector(&target_preadv, fd, iov, iovcnt, offset, 0);
}

PIOSCOPE_WRAPPER(preadv64, ssize_t, preadv64, (int fd, const struct iovec *iov, int iovcnt,
                                               off64_t offset))
{
    return do_positioned_vector(&target_preadv64, fd, iov, iovcnt, offset, 0);
}

PIOSCOPE_WRAPPER(pwritev, ssize_t, pwritev, (int fd, const struct iovec *iov, int iovcnt,
                                             off_t offset))
{
    return do_positioned_vector(&target_pwritev, fd, iov, iovcnt, offset, 1);
}

PIOSCOPE_WRAPPER(pwritev64, ssize_t, pwritev64, (int fd, const struct iovec *iov, int iovcnt,
                                                 off64_t offset))
{
    return do_positioned_vector(&target_pwritev64, fd, iov, iovcnt, offset, 1);
}

/* ---- lseek, sync, truncate ---- */

typedef off_t lseek_fn(int, off_t, int);
typedef int ftruncate_fn(int, off_t);

PIOSCOPE_ALWAYS_INLINE
static inline off_t do_lseek(pioscope_target *target, int fd, off_t offset, int whence)
{
    pioscope_call call;
    lseek_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    off_t r = real(fd, offset, whence);
    int err = errno;
    if (r >= 0) pioscope_fd_seek(fd, (uint64_t)r);
    pioscope_record(&call, target->func, pioscope_fd_file(fd), r >= 0 ? (uint64_t)r : 0, 0, r,
                    r < 0, err, r < 0 ? PIOSCOPE_F_OFFSET_UNKNOWN : 0);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(lseek, off_t, lseek, (int fd, off_t offset, int whence))
{
    return do_lseek(&target_lseek, fd, offset, whence);
}

PIOSCOPE_WRAPPER(lseek64, off64_t, lseek64, (int fd, off64_t offset, int whence))
{
    return do_lseek(&target_lseek64, fd, offset, whence);
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_fd_call(pioscope_target *target, int fd)
{
    pioscope_call call;
    fd_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(fd);
    fd_meta_done(&call, target, fd, 0, r);
    return r;
}

PIOSCOPE_WRAPPER(fsync, int, fsync, (int fd))
{
    return do_fd_call(&target_fsync, fd);
}

PIOSCOPE_WRAPPER(fdatasync, int, fdatasync, (int fd))
{
    return do_fd_call(&target_fdatasync, fd);
}

/* offset = the new length. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_ftruncate(pioscope_target *target, int fd, off_t length)
{
    pioscope_call call;
    ftruncate_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(fd, length);
    fd_meta_done(&call, target, fd, (uint64_t)length, r);
    return r;
}

PIOSCOPE_WRAPPER(ftruncate, int, ftruncate, (int fd, off_t length))
{
    return do_ftruncate(&target_ftruncate, fd, length);
}

PIOSCOPE_WRAPPER(ftruncate64, int, ftruncate64, (int fd, off64_t length))
{
    return do_ftruncate(&target_ftruncate64, fd, length);
}

/* ---- stat family ---- */

typedef int stat_fn(const char *, void *);
typedef int fstat_fn(int, void *);
typedef int fstatat_fn(int, const char *, void *, int);
typedef int xstat_fn(int, const char *, void *);
typedef int fxstat_fn(int, int, void *);
typedef int fxstatat_fn(int, int, const char *, void *, int);

PIOSCOPE_ALWAYS_INLINE
static inline int do_stat(pioscope_target *target, const char *path, void *buf)
{
    pioscope_call call;
    stat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(path, buf);
    path_meta_done(&call, target, AT_FDCWD, path, r);
    return r;
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_fstat(pioscope_target *target, int fd, void *buf)
{
    pioscope_call call;
    fstat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(fd, buf);
    fd_meta_done(&call, target, fd, 0, r);
    return r;
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_fstatat(pioscope_target *target, int dirfd, const char *path, void *buf,
                             int flags)
{
    pioscope_call call;
    fstatat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(dirfd, path, buf, flags);
    path_meta_done(&call, target, dirfd, path, r);
    return r;
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
/* Since glibc 2.33 the stat family are real symbols (before, inline calls to __xstat). */

PIOSCOPE_WRAPPER(stat, int, stat, (const char *path, struct stat *buf))
{
    return do_stat(&target_stat, path, buf);
}

PIOSCOPE_WRAPPER(stat64, int, stat64, (const char *path, struct stat64 *buf))
{
    return do_stat(&target_stat64, path, buf);
}

PIOSCOPE_WRAPPER(lstat, int, lstat, (const char *path, struct stat *buf))
{
    return do_stat(&target_lstat, path, buf);
}

PIOSCOPE_WRAPPER(lstat64, int, lstat64, (const char *path, struct stat64 *buf))
{
    return do_stat(&target_lstat64, path, buf);
}

PIOSCOPE_WRAPPER(fstat, int, fstat, (int fd, struct stat *buf))
{
    return do_fstat(&target_fstat, fd, buf);
}

PIOSCOPE_WRAPPER(fstat64, int, fstat64, (int fd, struct stat64 *buf))
{
    return do_fstat(&target_fstat64, fd, buf);
}

PIOSCOPE_WRAPPER(fstatat, int, fstatat, (int dirfd, const char *path, struct stat *buf, int flags))
{
    return do_fstatat(&target_fstatat, dirfd, path, buf, flags);
}

PIOSCOPE_WRAPPER(fstatat64, int, fstatat64, (int dirfd, const char *path, struct stat64 *buf,
                                             int flags))
{
    return do_fstatat(&target_fstatat64, dirfd, path, buf, flags);
}
#endif

#ifdef PIOSCOPE_HAVE_XSTAT
/* The versioned stat entry points of glibc (what programs built before glibc 2.33 call). The
 * Makefile defines PIOSCOPE_HAVE_XSTAT when this libc exports them. */
int __xstat(int ver, const char *path, struct stat *buf);
int __xstat64(int ver, const char *path, struct stat64 *buf);
int __lxstat(int ver, const char *path, struct stat *buf);
int __lxstat64(int ver, const char *path, struct stat64 *buf);
int __fxstat(int ver, int fd, struct stat *buf);
int __fxstat64(int ver, int fd, struct stat64 *buf);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *buf, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *buf, int flags);

PIOSCOPE_ALWAYS_INLINE
static inline int do_xstat(pioscope_target *target, int ver, const char *path, void *buf)
{
    pioscope_call call;
    xstat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(ver, path, buf);
    path_meta_done(&call, target, AT_FDCWD, path, r);
    return r;
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_fxstat(pioscope_target *target, int ver, int fd, void *buf)
{
    pioscope_call call;
    fxstat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(ver, fd, buf);
    fd_meta_done(&call, target, fd, 0, r);
    return r;
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_fxstatat(pioscope_target *target, int ver, int dirfd, const char *path,
                              void *buf, int flags)
{
    pioscope_call call;
    fxstatat_fn *real = pioscope_begin(&call, target);
    if (!real) return missing();
    int r = real(ver, dirfd, path, buf, flags);
    path_meta_done(&call, target, dirfd, path, r);
    return r;
}

PIOSCOPE_WRAPPER(__xstat, int, __xstat, (int ver, const char *path, struct stat *buf))
{
    return do_xstat(&target___xstat, ver, path, buf);
}

PIOSCOPE_WRAPPER(__xstat64, int, __xstat64, (int ver, const char *path, struct stat64 *buf))
{
    return do_xstat(&target___xstat64, ver, path, buf);
}

PIOSCOPE_WRAPPER(__lxstat, int, __lxstat, (int ver, const char *path, struct stat *buf))
{
    return do_xstat(&target___lxstat, ver, path, buf);
}

PIOSCOPE_WRAPPER(__lxstat64, int, __lxstat64, (int ver, const char *path, struct stat64 *buf))
{
    return do_xstat(&target___lxstat64, ver, path, buf);
}

PIOSCOPE_WRAPPER(__fxstat, int, __fxstat, (int ver, int fd, struct stat *buf))
{
    return do_fxstat(&target___fxstat, ver, fd, buf);
}

PIOSCOPE_WRAPPER(__fxstat64, int, __fxstat64, (int ver, int fd, struct stat64 *buf))
{
    return do_fxstat(&target___fxstat64, ver, fd, buf);
}

PIOSCOPE_WRAPPER(__fxstatat, int, __fxstatat, (int ver, int dirfd, const char *path,
                                               struct stat *buf, int flags))
{
    return do_fxstatat(&target___fxstatat, ver, dirfd, path, buf, flags);
}

PIOSCOPE_WRAPPER(__fxstatat64, int, __fxstatat64, (int ver, int dirfd, const char *path,
                                                   struct stat64 *buf, int flags))
{
    return do_fxstatat(&target___fxstatat64, ver, dirfd, path, buf, flags);
}
#endif

/* ---- namespace calls ---- */

typedef int path_fn(const char *);
typedef int mkdir_fn(const char *, mode_t);
typedef int rename_fn(const char *, const char *);

/* unlink, rmdir, rename: the path is interned before the call, while it still exists (so its
 * file system can be asked), and outside the call's time. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_remove(pioscope_target *target, const char *path)
{
    path_fn *real = pioscope_target_real(target);
    if (!real) return missing();
    uint32_t id = tracing_now() ? pioscope_intern_path(path, -1) : 0;
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(path);
    int err = errno;
    pioscope_record(&call, target->func, id, 0, 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

PIOSCOPE_WRAPPER(unlink, int, unlink, (const char *path))
{
    return do_remove(&target_unlink, path);
}

PIOSCOPE_WRAPPER(rmdir, int, rmdir, (const char *path))
{
    return do_remove(&target_rmdir, path);
}

PIOSCOPE_WRAPPER(mkdir, int, mkdir, (const char *path, mode_t mode))
{
    pioscope_call call;
    mkdir_fn *real = pioscope_begin(&call, &target_mkdir);
    if (!real) return missing();
    int r = real(path, mode);
    path_meta_done(&call, &target_mkdir, AT_FDCWD, path, r);
    return r;
}

/* object = the source path. */
PIOSCOPE_WRAPPER(rename, int, rename, (const char *from, const char *to))
{
    rename_fn *real = pioscope_target_real(&target_rename);
    if (!real) return missing();
    uint32_t id = tracing_now() ? pioscope_intern_path(from, -1) : 0;
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(from, to);
    int err = errno;
    pioscope_record(&call, target_rename.func, id, 0, 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

/* ---- bulk close: lifecycle guards, not recorded ---- */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
/* Descriptors closed in bulk leave the fd table (the tracer holds none of its own). */
typedef int close_range_fn(unsigned int, unsigned int, int);
typedef void closefrom_fn(int);
/* Not recorded (not in functions.def): plain cached pointers instead of targets. */
static void *real_close_range, *real_closefrom;

static void forget_fds(unsigned int first, unsigned int last)
{
    for (unsigned int fd = first; fd <= last && fd < PIOSCOPE_FD_MAX; fd++) {
        pioscope_fd_entry *e = pioscope_fd_get((int)fd);
        if (!e) return;  /* no table: the tracer is off */
        if (__atomic_load_n(&e->state, __ATOMIC_RELAXED)) pioscope_fd_close((int)fd);
    }
}

PIOSCOPE_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    close_range_fn *real = pioscope_resolve(&real_close_range, "close_range");
    if (!real) return missing();
#ifdef CLOSE_RANGE_CLOEXEC
    if (!(flags & CLOSE_RANGE_CLOEXEC))
#endif
        forget_fds(first, last);
    return real(first, last, flags);
}

PIOSCOPE_EXPORT void closefrom(int lowfd)
{
    closefrom_fn *real = pioscope_resolve(&real_closefrom, "closefrom");
    if (lowfd >= 0) forget_fds((unsigned int)lowfd, ~0u);
    if (real) real(lowfd);
}
#endif
