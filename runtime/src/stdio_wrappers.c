/* stdio_wrappers.c: owns the interception of the STDIO layer of functions.def (fopen, fdopen,
 * fclose, fread, fwrite, fflush, fseek, ftell and their o/64 forms).
 *
 * A stream's position is tracked in the fd table entry of its descriptor (fread/fwrite advance
 * it, fseek/ftell set it from the real ftello), so no ftell call is added to fread/fwrite.
 * Fields: object = file id, offset = stream position where the transfer started (fseek: the
 * new position), size = size * nmemb bytes, result = bytes transferred (items * size; fopen,
 * fdopen: the stream's fd or -1), error = errno when it failed. The write() that stdio issues
 * inside libc does not go through the PLT, so it is not seen (expected). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "fd_table.h"

static inline int stream_fd(FILE *fp)
{
#ifdef __GLIBC__
    return fp ? fp->_fileno : -1;  /* what fileno() returns, without its checks */
#else
    return fp ? fileno(fp) : -1;
#endif
}

static inline void *missing_ptr(void)
{
    errno = ENOSYS;
    return NULL;
}

typedef FILE *fopen_fn(const char *, const char *);
typedef FILE *fdopen_fn(int, const char *);
typedef int fclose_fn(FILE *);
typedef size_t fread_fn(void *, size_t, size_t, FILE *);
typedef size_t fwrite_fn(const void *, size_t, size_t, FILE *);
typedef size_t fread_chk_fn(void *, size_t, size_t, size_t, FILE *);
typedef int fseek_fn(FILE *, long, int);
typedef int fseeko_fn(FILE *, off_t, int);
typedef long ftell_fn(FILE *);
typedef off_t ftello_fn(FILE *);

/* ---- open and close ---- */

PIOSCOPE_ALWAYS_INLINE
static inline FILE *do_fopen(pioscope_target *target, const char *path, const char *mode)
{
    pioscope_call call;
    fopen_fn *real = pioscope_begin(&call, target);
    if (!real) return missing_ptr();
    FILE *fp = real(path, mode);
    int err = errno;
    pioscope_stop(&call);
    int fd = stream_fd(fp);
    uint32_t id = call.recording ? pioscope_intern_path(path, fd) : 0;
    if (fd >= 0) pioscope_fd_open(fd, id, mode && strchr(mode, 'a'));
    pioscope_record(&call, target->func, id, 0, 0, fd, fp == NULL, err, 0);
    errno = err;
    return fp;
}

PIOSCOPE_WRAPPER(fopen, FILE *, fopen, (const char *path, const char *mode))
{
    return do_fopen(&target_fopen, path, mode);
}

PIOSCOPE_WRAPPER(fopen64, FILE *, fopen64, (const char *path, const char *mode))
{
    return do_fopen(&target_fopen64, path, mode);
}

PIOSCOPE_WRAPPER(fdopen, FILE *, fdopen, (int fd, const char *mode))
{
    pioscope_call call;
    fdopen_fn *real = pioscope_begin(&call, &target_fdopen);
    if (!real) return missing_ptr();
    FILE *fp = real(fd, mode);
    int err = errno;
    pioscope_record(&call, target_fdopen.func, pioscope_fd_file(fd), 0, 0, fp ? fd : -1, fp == NULL,
                    err, 0);
    errno = err;
    return fp;
}

PIOSCOPE_WRAPPER(fclose, int, fclose, (FILE *fp))
{
    fclose_fn *real = pioscope_target_real(&target_fclose);
    if (!real) return EOF;
    int fd = stream_fd(fp);
    uint32_t id = pioscope_fd_file(fd);
    pioscope_fd_close(fd);  /* glibc closes the fd internally, out of the close wrapper's sight */
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fp);
    int err = errno;
    pioscope_record(&call, target_fclose.func, id, 0, 0, r, r != 0, err, 0);
    errno = err;
    return r;
}

/* ---- transfers ---- */

/* Right after the real call: saves errno, records, restores errno. */
PIOSCOPE_ALWAYS_INLINE
static inline void transfer_done(const pioscope_call *call, const pioscope_target *target, FILE *fp,
                                 size_t size, size_t nmemb, size_t items, int is_write)
{
    int err = errno;
    int fd = stream_fd(fp);
    uint64_t done = (uint64_t)items * size;
    uint8_t flags = 0;
    uint64_t offset = pioscope_fd_advance(fd, (int64_t)done, is_write, &flags);
    int failed = items < nmemb && size != 0 && ferror(fp);
    pioscope_record(call, target->func, pioscope_fd_file(fd), offset, (uint64_t)size * nmemb,
                    (int64_t)done, failed, err, flags);
    errno = err;
}

/* fread, __fread_chk (recorded as fread) and fwrite: one call each, picked by `kind`. A read's
 * buffer came in non-const from the program. */
enum stream_transfer { STREAM_FREAD, STREAM_FREAD_CHK, STREAM_FWRITE };

PIOSCOPE_ALWAYS_INLINE
static inline size_t do_transfer(pioscope_target *target, int kind, const void *ptr, size_t ptrlen,
                                 size_t size, size_t nmemb, FILE *fp)
{
    pioscope_call call;
    void *real = pioscope_begin(&call, target);
    if (!real) return 0;
    size_t items;
    if (kind == STREAM_FWRITE)
        items = ((fwrite_fn *)real)(ptr, size, nmemb, fp);
    else if (kind == STREAM_FREAD_CHK)
        items = ((fread_chk_fn *)real)((void *)ptr, ptrlen, size, nmemb, fp);
    else
        items = ((fread_fn *)real)((void *)ptr, size, nmemb, fp);
    transfer_done(&call, target, fp, size, nmemb, items, kind == STREAM_FWRITE);
    return items;
}

PIOSCOPE_WRAPPER(fread, size_t, fread, (void *ptr, size_t size, size_t nmemb, FILE *fp))
{
    return do_transfer(&target_fread, STREAM_FREAD, ptr, 0, size, nmemb, fp);
}

size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t nmemb, FILE *fp);
PIOSCOPE_WRAPPER(fread, size_t, __fread_chk, (void *ptr, size_t ptrlen, size_t size,
                                              size_t nmemb, FILE *fp))
{
    return do_transfer(&target___fread_chk, STREAM_FREAD_CHK, ptr, ptrlen, size, nmemb, fp);
}

PIOSCOPE_WRAPPER(fwrite, size_t, fwrite, (const void *ptr, size_t size, size_t nmemb, FILE *fp))
{
    return do_transfer(&target_fwrite, STREAM_FWRITE, ptr, 0, size, nmemb, fp);
}

PIOSCOPE_WRAPPER(fflush, int, fflush, (FILE *fp))
{
    pioscope_call call;
    fclose_fn *real = pioscope_begin(&call, &target_fflush);
    if (!real) return EOF;
    int r = real(fp);
    int err = errno;
    pioscope_record(&call, target_fflush.func, fp ? pioscope_fd_file(stream_fd(fp)) : 0, 0, 0, r,
                    r != 0, err, 0);
    errno = err;
    return r;
}

/* ---- positioning ---- */

/* ftell: result and offset = the position, which also corrects the tracked one. Right after
 * the real call: saves errno, records, restores errno. */
PIOSCOPE_ALWAYS_INLINE
static inline void tell_done(const pioscope_call *call, const pioscope_target *target, FILE *fp,
                             int64_t pos)
{
    int err = errno;
    int fd = stream_fd(fp);
    if (pos >= 0) pioscope_fd_seek(fd, (uint64_t)pos);
    pioscope_record(call, target->func, pioscope_fd_file(fd), pos >= 0 ? (uint64_t)pos : 0, 0, pos,
                    pos < 0, err, pos >= 0 ? 0 : PIOSCOPE_F_OFFSET_UNKNOWN);
    errno = err;
}

PIOSCOPE_WRAPPER(ftell, long, ftell, (FILE *fp))
{
    pioscope_call call;
    ftell_fn *real = pioscope_begin(&call, &target_ftell);
    if (!real) return -1;
    long pos = real(fp);
    tell_done(&call, &target_ftell, fp, pos);
    return pos;
}

PIOSCOPE_ALWAYS_INLINE
static inline off_t do_ftello(pioscope_target *target, FILE *fp)
{
    pioscope_call call;
    ftello_fn *real = pioscope_begin(&call, target);
    if (!real) return -1;
    off_t pos = real(fp);
    tell_done(&call, target, fp, pos);
    return pos;
}

PIOSCOPE_WRAPPER(ftello, off_t, ftello, (FILE *fp))
{
    return do_ftello(&target_ftello, fp);
}

PIOSCOPE_WRAPPER(ftello64, off64_t, ftello64, (FILE *fp))
{
    return do_ftello(&target_ftello64, fp);
}

/* After a seek: saves errno, takes the end time, reads the stream's position from the real
 * ftello (not traced) after a successful one, records, restores errno. */
PIOSCOPE_ALWAYS_INLINE
static inline void seek_done(pioscope_call *call, const pioscope_target *target, FILE *fp, int r)
{
    int err = errno;
    pioscope_stop(call);
    ftello_fn *tell = pioscope_target_real(&target_ftello);
    int fd = stream_fd(fp);
    off_t pos = r == 0 && tell ? tell(fp) : -1;
    if (pos >= 0) pioscope_fd_seek(fd, (uint64_t)pos);
    pioscope_record(call, target->func, pioscope_fd_file(fd), pos >= 0 ? (uint64_t)pos : 0, 0, r,
                    r != 0, err, pos >= 0 ? 0 : PIOSCOPE_F_OFFSET_UNKNOWN);
    errno = err;
}

PIOSCOPE_WRAPPER(fseek, int, fseek, (FILE *fp, long offset, int whence))
{
    pioscope_call call;
    fseek_fn *real = pioscope_begin(&call, &target_fseek);
    if (!real) return -1;
    int r = real(fp, offset, whence);
    seek_done(&call, &target_fseek, fp, r);
    return r;
}

PIOSCOPE_ALWAYS_INLINE
static inline int do_fseeko(pioscope_target *target, FILE *fp, off_t offset, int whence)
{
    pioscope_call call;
    fseeko_fn *real = pioscope_begin(&call, target);
    if (!real) return -1;
    int r = real(fp, offset, whence);
    seek_done(&call, target, fp, r);
    return r;
}

PIOSCOPE_WRAPPER(fseeko, int, fseeko, (FILE *fp, off_t offset, int whence))
{
    return do_fseeko(&target_fseeko, fp, offset, whence);
}

PIOSCOPE_WRAPPER(fseeko64, int, fseeko64, (FILE *fp, off64_t offset, int whence))
{
    return do_fseeko(&target_fseeko64, fp, offset, whence);
}
