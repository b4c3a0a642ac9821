/* posix_wrappers.c: owns the interception of the POSIX layer of functions.def (open family,
 * read/write and their positioned and vector forms, lseek, sync, truncate, stat family,
 * unlink, mkdir, rmdir, rename), plus the glibc fortify (_chk, _2) entry points, recorded under
 * the plain function's id.
 *
 * Every wrapper has the same shape: resolve the real function once, enter, call it, save errno,
 * record (leave), restore errno, return the real result. Fields: object = file id, offset =
 * where the transfer started (lseek, ftruncate: the resulting offset or length), size = bytes
 * requested (0 for metadata calls), result = return value, error = errno when it failed. */
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

static inline void record(const pioscope_call *call, uint16_t func, uint32_t object,
                          uint64_t offset, uint64_t size, int64_t result, int failed, int err,
                          uint8_t flags)
{
    pioscope_event ev = {func, flags, object, offset, size, result, failed ? err : 0, 0};
    pioscope_leave(call, &ev);
}

/* read/write/readv/writev: through the file offset the fd table tracks. */
static inline void through_offset_done(const pioscope_call *call, uint16_t func, int fd,
                                       uint64_t size, ssize_t r, int err, int is_write)
{
    uint8_t flags = 0;
    uint64_t offset = pioscope_fd_advance(fd, r, is_write, &flags);
    record(call, func, pioscope_fd_file(fd), offset, size, r, r < 0, err, flags);
}

/* pread/pwrite/preadv/pwritev: at the offset given. */
static inline void positioned_done(const pioscope_call *call, uint16_t func, int fd,
                                   uint64_t size, uint64_t offset, ssize_t r, int err)
{
    record(call, func, pioscope_fd_file(fd), offset, size, r, r < 0, err, 0);
}

/* Metadata calls on an fd. */
static inline void fd_meta_done(const pioscope_call *call, uint16_t func, int fd,
                                uint64_t offset, int r, int err)
{
    record(call, func, pioscope_fd_file(fd), offset, 0, r, r < 0, err, 0);
}

/* Metadata calls on a path (dirfd: AT_FDCWD or the *at directory). The path is interned after
 * the call's end time is taken. */
static inline void path_meta_done(pioscope_call *call, uint16_t func, int dirfd,
                                  const char *path, int r, int err)
{
    pioscope_stop(call);
    uint32_t id = call->recording ? pioscope_intern_path_at(dirfd, path, -1) : 0;
    record(call, func, id, 0, 0, r, r < 0, err, 0);
}

/* The open family: the new fd enters the fd table at offset 0. */
static inline void open_done(pioscope_call *call, uint16_t func, int dirfd, const char *path,
                             int flags, int fd, int err)
{
    pioscope_stop(call);
    uint32_t id = call->recording ? pioscope_intern_path_at(dirfd, path, fd) : 0;
    if (fd >= 0) pioscope_fd_open(fd, id, flags & O_APPEND);
    record(call, func, id, 0, 0, fd, fd < 0, err, 0);
}

static inline int open_takes_mode(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static inline uint64_t iov_bytes(const struct iovec *iov, int n)
{
    uint64_t total = 0;
    for (int i = 0; iov && i < n; i++) total += iov[i].iov_len;
    return total;
}

/* Declares the cached pointer to the real `name`. */
#define REAL(name) static void *real_##name

/* ---- open family ---- */

typedef int open_fn(const char *, int, ...);
typedef int openat_fn(int, const char *, int, ...);
typedef int creat_fn(const char *, mode_t);
typedef int open2_fn(const char *, int);
typedef int openat2_fn(int, const char *, int);
REAL(open); REAL(open64); REAL(openat); REAL(openat64); REAL(creat); REAL(creat64);
REAL(__open_2); REAL(__open64_2); REAL(__openat_2); REAL(__openat64_2);

static inline int do_open(void **slot, const char *name, uint16_t func, const char *path,
                          int flags, mode_t mode)
{
    open_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int fd = real(path, flags, mode);
    int err = errno;
    open_done(&call, func, AT_FDCWD, path, flags, fd, err);
    errno = err;
    return fd;
}

static inline int do_openat(void **slot, const char *name, uint16_t func, int dirfd,
                            const char *path, int flags, mode_t mode)
{
    openat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int fd = real(dirfd, path, flags, mode);
    int err = errno;
    open_done(&call, func, dirfd, path, flags, fd, err);
    errno = err;
    return fd;
}

PIOSCOPE_EXPORT int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (open_takes_mode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return do_open(&real_open, "open", PIOSCOPE_FN_open, path, flags, mode);
}

PIOSCOPE_EXPORT int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (open_takes_mode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return do_open(&real_open64, "open64", PIOSCOPE_FN_open64, path, flags, mode);
}

PIOSCOPE_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (open_takes_mode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return do_openat(&real_openat, "openat", PIOSCOPE_FN_openat, dirfd, path, flags, mode);
}

PIOSCOPE_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (open_takes_mode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return do_openat(&real_openat64, "openat64", PIOSCOPE_FN_openat64, dirfd, path, flags,
                     mode);
}

static inline int do_creat(void **slot, const char *name, uint16_t func, const char *path,
                           mode_t mode)
{
    creat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int fd = real(path, mode);
    int err = errno;
    open_done(&call, func, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, fd, err);
    errno = err;
    return fd;
}

PIOSCOPE_EXPORT int creat(const char *path, mode_t mode)
{
    return do_creat(&real_creat, "creat", PIOSCOPE_FN_creat, path, mode);
}

PIOSCOPE_EXPORT int creat64(const char *path, mode_t mode)
{
    return do_creat(&real_creat64, "creat64", PIOSCOPE_FN_creat64, path, mode);
}

/* _FORTIFY_SOURCE builds call these instead of open/openat when the flags are not constant. */
static inline int do_open_2(void **slot, const char *name, uint16_t func, const char *path,
                            int flags)
{
    open2_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int fd = real(path, flags);
    int err = errno;
    open_done(&call, func, AT_FDCWD, path, flags, fd, err);
    errno = err;
    return fd;
}

static inline int do_openat_2(void **slot, const char *name, uint16_t func, int dirfd,
                              const char *path, int flags)
{
    openat2_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int fd = real(dirfd, path, flags);
    int err = errno;
    open_done(&call, func, dirfd, path, flags, fd, err);
    errno = err;
    return fd;
}

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

PIOSCOPE_EXPORT int __open_2(const char *path, int flags)
{
    return do_open_2(&real___open_2, "__open_2", PIOSCOPE_FN_open, path, flags);
}

PIOSCOPE_EXPORT int __open64_2(const char *path, int flags)
{
    return do_open_2(&real___open64_2, "__open64_2", PIOSCOPE_FN_open64, path, flags);
}

PIOSCOPE_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    return do_openat_2(&real___openat_2, "__openat_2", PIOSCOPE_FN_openat, dirfd, path, flags);
}

PIOSCOPE_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    return do_openat_2(&real___openat64_2, "__openat64_2", PIOSCOPE_FN_openat64, dirfd, path,
                       flags);
}

/* ---- close ---- */

typedef int fd_fn(int);
REAL(close); REAL(fsync); REAL(fdatasync);

PIOSCOPE_EXPORT int close(int fd)
{
    fd_fn *real = pioscope_resolve(&real_close, "close");
    if (!real) return missing();
    /* The tracer's descriptor is invisible to the program: closing it "fails" as it would
     * without the tracer. */
    if (fd >= 0 && fd == pioscope_raw_fd()) {
        errno = EBADF;
        return -1;
    }
    uint32_t id = pioscope_fd_file(fd);
    pioscope_fd_close(fd);  /* before: once closed, another thread may reuse the number */
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fd);
    int err = errno;
    record(&call, PIOSCOPE_FN_close, id, 0, 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

/* ---- transfers through the file offset ---- */

typedef ssize_t read_fn(int, void *, size_t);
typedef ssize_t write_fn(int, const void *, size_t);
typedef ssize_t readv_fn(int, const struct iovec *, int);
typedef ssize_t read_chk_fn(int, void *, size_t, size_t);
REAL(read); REAL(write); REAL(readv); REAL(writev); REAL(__read_chk);

/* read and write: the buffer came non-const from a read's caller, so one helper takes it const
 * and calls through the prototype of its direction. */
static inline ssize_t do_transfer(void **slot, const char *name, uint16_t func, int fd,
                                  const void *buf, size_t count, int is_write)
{
    void *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    ssize_t r = is_write ? ((write_fn *)real)(fd, buf, count)
                         : ((read_fn *)real)(fd, (void *)buf, count);
    int err = errno;
    through_offset_done(&call, func, fd, count, r, err, is_write);
    errno = err;
    return r;
}

/* readv and writev share one prototype. */
static inline ssize_t do_vector(void **slot, const char *name, uint16_t func, int fd,
                                const struct iovec *iov, int iovcnt, int is_write)
{
    readv_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    ssize_t r = real(fd, iov, iovcnt);
    int err = errno;
    through_offset_done(&call, func, fd, iov_bytes(iov, iovcnt), r, err, is_write);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
    return do_transfer(&real_read, "read", PIOSCOPE_FN_read, fd, buf, count, 0);
}

ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);
PIOSCOPE_EXPORT ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
    read_chk_fn *real = pioscope_resolve(&real___read_chk, "__read_chk");
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    ssize_t r = real(fd, buf, count, buflen);
    int err = errno;
    through_offset_done(&call, PIOSCOPE_FN_read, fd, count, r, err, 0);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
    return do_transfer(&real_write, "write", PIOSCOPE_FN_write, fd, buf, count, 1);
}

PIOSCOPE_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    return do_vector(&real_readv, "readv", PIOSCOPE_FN_readv, fd, iov, iovcnt, 0);
}

PIOSCOPE_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    return do_vector(&real_writev, "writev", PIOSCOPE_FN_writev, fd, iov, iovcnt, 1);
}

/* ---- positioned transfers ---- */

typedef ssize_t pread_fn(int, void *, size_t, off_t);
typedef ssize_t pwrite_fn(int, const void *, size_t, off_t);
typedef ssize_t pread_chk_fn(int, void *, size_t, off_t, size_t);
typedef ssize_t preadv_fn(int, const struct iovec *, int, off_t);
REAL(pread); REAL(pread64); REAL(pwrite); REAL(pwrite64); REAL(__pread_chk);
REAL(__pread64_chk); REAL(preadv); REAL(preadv64); REAL(pwritev); REAL(pwritev64);

static inline ssize_t do_pread(void **slot, const char *name, uint16_t func, int fd, void *buf,
                               size_t count, off_t offset)
{
    pread_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    ssize_t r = real(fd, buf, count, offset);
    int err = errno;
    positioned_done(&call, func, fd, count, (uint64_t)offset, r, err);
    errno = err;
    return r;
}

static inline ssize_t do_pwrite(void **slot, const char *name, uint16_t func, int fd,
                                const void *buf, size_t count, off_t offset)
{
    pwrite_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    ssize_t r = real(fd, buf, count, offset);
    int err = errno;
    positioned_done(&call, func, fd, count, (uint64_t)offset, r, err);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
    return do_pread(&real_pread, "pread", PIOSCOPE_FN_pread, fd, buf, count, offset);
}

PIOSCOPE_EXPORT ssize_t pread64(int fd, void *buf, size_t count, off64_t offset)
{
    return do_pread(&real_pread64, "pread64", PIOSCOPE_FN_pread64, fd, buf, count, offset);
}

PIOSCOPE_EXPORT ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    return do_pwrite(&real_pwrite, "pwrite", PIOSCOPE_FN_pwrite, fd, buf, count, offset);
}

PIOSCOPE_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset)
{
    return do_pwrite(&real_pwrite64, "pwrite64", PIOSCOPE_FN_pwrite64, fd, buf, count, offset);
}

static inline ssize_t do_pread_chk(void **slot, const char *name, uint16_t func, int fd,
                                   void *buf, size_t count, off_t offset, size_t buflen)
{
    pread_chk_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    ssize_t r = real(fd, buf, count, offset, buflen);
    int err = errno;
    positioned_done(&call, func, fd, count, (uint64_t)offset, r, err);
    errno = err;
    return r;
}

ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset, size_t buflen);

PIOSCOPE_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset,
                                    size_t buflen)
{
    return do_pread_chk(&real___pread_chk, "__pread_chk", PIOSCOPE_FN_pread, fd, buf, count,
                        offset, buflen);
}

PIOSCOPE_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset,
                                      size_t buflen)
{
    return do_pread_chk(&real___pread64_chk, "__pread64_chk", PIOSCOPE_FN_pread64, fd, buf,
                        count, offset, buflen);
}

static inline ssize_t do_preadv(void **slot, const char *name, uint16_t func, int fd,
                                const struct iovec *iov, int iovcnt, off_t offset)
{
    preadv_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    ssize_t r = real(fd, iov, iovcnt, offset);
    int err = errno;
    positioned_done(&call, func, fd, iov_bytes(iov, iovcnt), (uint64_t)offset, r, err);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    return do_preadv(&real_preadv, "preadv", PIOSCOPE_FN_preadv, fd, iov, iovcnt, offset);
}

PIOSCOPE_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int iovcnt, off64_t offset)
{
    return do_preadv(&real_preadv64, "preadv64", PIOSCOPE_FN_preadv64, fd, iov, iovcnt,
                     offset);
}

PIOSCOPE_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    return do_preadv(&real_pwritev, "pwritev", PIOSCOPE_FN_pwritev, fd, iov, iovcnt, offset);
}

PIOSCOPE_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off64_t offset)
{
    return do_preadv(&real_pwritev64, "pwritev64", PIOSCOPE_FN_pwritev64, fd, iov, iovcnt,
                     offset);
}

/* ---- lseek, sync, truncate ---- */

typedef off_t lseek_fn(int, off_t, int);
typedef int ftruncate_fn(int, off_t);
REAL(lseek); REAL(lseek64); REAL(ftruncate); REAL(ftruncate64);

static inline off_t do_lseek(void **slot, const char *name, uint16_t func, int fd,
                             off_t offset, int whence)
{
    lseek_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    off_t r = real(fd, offset, whence);
    int err = errno;
    if (r >= 0) pioscope_fd_seek(fd, (uint64_t)r);
    record(&call, func, pioscope_fd_file(fd), r >= 0 ? (uint64_t)r : 0, 0, r, r < 0, err,
           r < 0 ? PIOSCOPE_F_OFFSET_UNKNOWN : 0);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT off_t lseek(int fd, off_t offset, int whence)
{
    return do_lseek(&real_lseek, "lseek", PIOSCOPE_FN_lseek, fd, offset, whence);
}

PIOSCOPE_EXPORT off64_t lseek64(int fd, off64_t offset, int whence)
{
    return do_lseek(&real_lseek64, "lseek64", PIOSCOPE_FN_lseek64, fd, offset, whence);
}

static inline int do_fd_call(void **slot, const char *name, uint16_t func, int fd)
{
    fd_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fd);
    int err = errno;
    fd_meta_done(&call, func, fd, 0, r, err);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT int fsync(int fd)
{
    return do_fd_call(&real_fsync, "fsync", PIOSCOPE_FN_fsync, fd);
}

PIOSCOPE_EXPORT int fdatasync(int fd)
{
    return do_fd_call(&real_fdatasync, "fdatasync", PIOSCOPE_FN_fdatasync, fd);
}

/* offset = the new length. */
static inline int do_ftruncate(void **slot, const char *name, uint16_t func, int fd,
                               off_t length)
{
    ftruncate_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fd, length);
    int err = errno;
    fd_meta_done(&call, func, fd, (uint64_t)length, r, err);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT int ftruncate(int fd, off_t length)
{
    return do_ftruncate(&real_ftruncate, "ftruncate", PIOSCOPE_FN_ftruncate, fd, length);
}

PIOSCOPE_EXPORT int ftruncate64(int fd, off64_t length)
{
    return do_ftruncate(&real_ftruncate64, "ftruncate64", PIOSCOPE_FN_ftruncate64, fd, length);
}

/* ---- stat family ---- */

typedef int stat_fn(const char *, void *);
typedef int fstat_fn(int, void *);
typedef int fstatat_fn(int, const char *, void *, int);
typedef int xstat_fn(int, const char *, void *);
typedef int fxstat_fn(int, int, void *);
typedef int fxstatat_fn(int, int, const char *, void *, int);

static inline int do_stat(void **slot, const char *name, uint16_t func, const char *path,
                          void *buf)
{
    stat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(path, buf);
    int err = errno;
    path_meta_done(&call, func, AT_FDCWD, path, r, err);
    errno = err;
    return r;
}

static inline int do_fstat(void **slot, const char *name, uint16_t func, int fd, void *buf)
{
    fstat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fd, buf);
    int err = errno;
    fd_meta_done(&call, func, fd, 0, r, err);
    errno = err;
    return r;
}

static inline int do_fstatat(void **slot, const char *name, uint16_t func, int dirfd,
                             const char *path, void *buf, int flags)
{
    fstatat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(dirfd, path, buf, flags);
    int err = errno;
    path_meta_done(&call, func, dirfd, path, r, err);
    errno = err;
    return r;
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
/* Since glibc 2.33 the stat family are real symbols (before, inline calls to __xstat). */
REAL(stat); REAL(stat64); REAL(lstat); REAL(lstat64); REAL(fstat); REAL(fstat64);
REAL(fstatat); REAL(fstatat64);

PIOSCOPE_EXPORT int stat(const char *path, struct stat *buf)
{
    return do_stat(&real_stat, "stat", PIOSCOPE_FN_stat, path, buf);
}

PIOSCOPE_EXPORT int stat64(const char *path, struct stat64 *buf)
{
    return do_stat(&real_stat64, "stat64", PIOSCOPE_FN_stat64, path, buf);
}

PIOSCOPE_EXPORT int lstat(const char *path, struct stat *buf)
{
    return do_stat(&real_lstat, "lstat", PIOSCOPE_FN_lstat, path, buf);
}

PIOSCOPE_EXPORT int lstat64(const char *path, struct stat64 *buf)
{
    return do_stat(&real_lstat64, "lstat64", PIOSCOPE_FN_lstat64, path, buf);
}

PIOSCOPE_EXPORT int fstat(int fd, struct stat *buf)
{
    return do_fstat(&real_fstat, "fstat", PIOSCOPE_FN_fstat, fd, buf);
}

PIOSCOPE_EXPORT int fstat64(int fd, struct stat64 *buf)
{
    return do_fstat(&real_fstat64, "fstat64", PIOSCOPE_FN_fstat64, fd, buf);
}

PIOSCOPE_EXPORT int fstatat(int dirfd, const char *path, struct stat *buf, int flags)
{
    return do_fstatat(&real_fstatat, "fstatat", PIOSCOPE_FN_fstatat, dirfd, path, buf, flags);
}

PIOSCOPE_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags)
{
    return do_fstatat(&real_fstatat64, "fstatat64", PIOSCOPE_FN_fstatat64, dirfd, path, buf,
                      flags);
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
REAL(__xstat); REAL(__xstat64); REAL(__lxstat); REAL(__lxstat64); REAL(__fxstat);
REAL(__fxstat64); REAL(__fxstatat); REAL(__fxstatat64);

static inline int do_xstat(void **slot, const char *name, uint16_t func, int ver,
                           const char *path, void *buf)
{
    xstat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(ver, path, buf);
    int err = errno;
    path_meta_done(&call, func, AT_FDCWD, path, r, err);
    errno = err;
    return r;
}

static inline int do_fxstat(void **slot, const char *name, uint16_t func, int ver, int fd,
                            void *buf)
{
    fxstat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(ver, fd, buf);
    int err = errno;
    fd_meta_done(&call, func, fd, 0, r, err);
    errno = err;
    return r;
}

static inline int do_fxstatat(void **slot, const char *name, uint16_t func, int ver,
                              int dirfd, const char *path, void *buf, int flags)
{
    fxstatat_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(ver, dirfd, path, buf, flags);
    int err = errno;
    path_meta_done(&call, func, dirfd, path, r, err);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT int __xstat(int ver, const char *path, struct stat *buf)
{
    return do_xstat(&real___xstat, "__xstat", PIOSCOPE_FN___xstat, ver, path, buf);
}

PIOSCOPE_EXPORT int __xstat64(int ver, const char *path, struct stat64 *buf)
{
    return do_xstat(&real___xstat64, "__xstat64", PIOSCOPE_FN___xstat64, ver, path, buf);
}

PIOSCOPE_EXPORT int __lxstat(int ver, const char *path, struct stat *buf)
{
    return do_xstat(&real___lxstat, "__lxstat", PIOSCOPE_FN___lxstat, ver, path, buf);
}

PIOSCOPE_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *buf)
{
    return do_xstat(&real___lxstat64, "__lxstat64", PIOSCOPE_FN___lxstat64, ver, path, buf);
}

PIOSCOPE_EXPORT int __fxstat(int ver, int fd, struct stat *buf)
{
    return do_fxstat(&real___fxstat, "__fxstat", PIOSCOPE_FN___fxstat, ver, fd, buf);
}

PIOSCOPE_EXPORT int __fxstat64(int ver, int fd, struct stat64 *buf)
{
    return do_fxstat(&real___fxstat64, "__fxstat64", PIOSCOPE_FN___fxstat64, ver, fd, buf);
}

PIOSCOPE_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *buf,
                               int flags)
{
    return do_fxstatat(&real___fxstatat, "__fxstatat", PIOSCOPE_FN___fxstatat, ver, dirfd,
                       path, buf, flags);
}

PIOSCOPE_EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *buf,
                                 int flags)
{
    return do_fxstatat(&real___fxstatat64, "__fxstatat64", PIOSCOPE_FN___fxstatat64, ver,
                       dirfd, path, buf, flags);
}
#endif

/* ---- namespace calls ---- */

typedef int path_fn(const char *);
typedef int mkdir_fn(const char *, mode_t);
typedef int rename_fn(const char *, const char *);
REAL(unlink); REAL(mkdir); REAL(rmdir); REAL(rename);

/* unlink, rmdir, rename: the path is interned before the call, while it still exists (so its
 * file system can be asked), and outside the call's time. */
static inline int do_remove(void **slot, const char *name, uint16_t func, const char *path)
{
    path_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing();
    uint32_t id = tracing_now() ? pioscope_intern_path(path, -1) : 0;
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(path);
    int err = errno;
    record(&call, func, id, 0, 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT int unlink(const char *path)
{
    return do_remove(&real_unlink, "unlink", PIOSCOPE_FN_unlink, path);
}

PIOSCOPE_EXPORT int rmdir(const char *path)
{
    return do_remove(&real_rmdir, "rmdir", PIOSCOPE_FN_rmdir, path);
}

PIOSCOPE_EXPORT int mkdir(const char *path, mode_t mode)
{
    mkdir_fn *real = pioscope_resolve(&real_mkdir, "mkdir");
    if (!real) return missing();
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(path, mode);
    int err = errno;
    path_meta_done(&call, PIOSCOPE_FN_mkdir, AT_FDCWD, path, r, err);
    errno = err;
    return r;
}

/* object = the source path. */
PIOSCOPE_EXPORT int rename(const char *from, const char *to)
{
    rename_fn *real = pioscope_resolve(&real_rename, "rename");
    if (!real) return missing();
    uint32_t id = tracing_now() ? pioscope_intern_path(from, -1) : 0;
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(from, to);
    int err = errno;
    record(&call, PIOSCOPE_FN_rename, id, 0, 0, r, r < 0, err, 0);
    errno = err;
    return r;
}

/* ---- bulk close: lifecycle guards, not recorded ---- */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
/* Descriptors closed in bulk leave the fd table, and the tracer's own descriptor survives, as
 * if it were not there (close_range on it alone would have had nothing to do). */
typedef int close_range_fn(unsigned int, unsigned int, int);
typedef void closefrom_fn(int);
REAL(close_range); REAL(closefrom);

static void forget_fds(unsigned int first, unsigned int last)
{
    for (unsigned int fd = first; fd <= last && fd < PIOSCOPE_FD_MAX; fd++) {
        pioscope_fd_entry *e = pioscope_fd_get((int)fd);
        if (!e) return;  /* no table: the tracer is off */
        if (__atomic_load_n(&e->state, __ATOMIC_RELAXED)) pioscope_fd_close((int)fd);
    }
}

static int close_range_around_tracer(close_range_fn *real, unsigned int first,
                                     unsigned int last, int flags)
{
    int raw = pioscope_raw_fd();
#ifdef CLOSE_RANGE_CLOEXEC
    if (!(flags & CLOSE_RANGE_CLOEXEC))
#endif
        forget_fds(first, last);
    if (raw < 0 || (unsigned int)raw < first || (unsigned int)raw > last)
        return real(first, last, flags);
    int r = 0;
    if ((unsigned int)raw > first) r = real(first, (unsigned int)raw - 1, flags);
    if (r == 0 && (unsigned int)raw < last) r = real((unsigned int)raw + 1, last, flags);
    return r;
}

PIOSCOPE_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    close_range_fn *real = pioscope_resolve(&real_close_range, "close_range");
    if (!real) return missing();
    return close_range_around_tracer(real, first, last, flags);
}

PIOSCOPE_EXPORT void closefrom(int lowfd)
{
    close_range_fn *range = pioscope_resolve(&real_close_range, "close_range");
    closefrom_fn *real = pioscope_resolve(&real_closefrom, "closefrom");
    int saved = errno;
    if (range && lowfd >= 0 && close_range_around_tracer(range, (unsigned int)lowfd, ~0u, 0) == 0) {
        errno = saved;
        return;
    }
    errno = saved;
    if (real) real(lowfd);  /* close_range refused (old kernel): glibc's own fallback */
}
#endif
