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

static inline void record(const pioscope_call *call, uint16_t func, uint32_t object,
                          uint64_t offset, uint64_t size, int64_t result, int failed, int err,
                          uint8_t flags)
{
    pioscope_event ev = {func, flags, object, offset, size, result, failed ? err : 0, 0};
    pioscope_leave(call, &ev);
}

static inline void *missing_ptr(void)
{
    errno = ENOSYS;
    return NULL;
}

#define REAL(name) static void *real_##name

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
REAL(fopen); REAL(fopen64); REAL(fdopen); REAL(fclose); REAL(fread); REAL(__fread_chk);
REAL(fwrite); REAL(fflush); REAL(fseek); REAL(fseeko); REAL(fseeko64); REAL(ftell);
REAL(ftello); REAL(ftello64);

/* ---- open and close ---- */

static inline FILE *do_fopen(void **slot, const char *name, uint16_t func, const char *path,
                             const char *mode)
{
    fopen_fn *real = pioscope_resolve(slot, name);
    if (!real) return missing_ptr();
    pioscope_call call;
    pioscope_enter(&call);
    FILE *fp = real(path, mode);
    int err = errno;
    pioscope_stop(&call);
    int fd = stream_fd(fp);
    uint32_t id = call.recording ? pioscope_intern_path(path, fd) : 0;
    if (fd >= 0) pioscope_fd_open(fd, id, mode && strchr(mode, 'a'));
    record(&call, func, id, 0, 0, fd, fp == NULL, err, 0);
    errno = err;
    return fp;
}

PIOSCOPE_EXPORT FILE *fopen(const char *path, const char *mode)
{
    return do_fopen(&real_fopen, "fopen", PIOSCOPE_FN_fopen, path, mode);
}

PIOSCOPE_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    return do_fopen(&real_fopen64, "fopen64", PIOSCOPE_FN_fopen64, path, mode);
}

PIOSCOPE_EXPORT FILE *fdopen(int fd, const char *mode)
{
    fdopen_fn *real = pioscope_resolve(&real_fdopen, "fdopen");
    if (!real) return missing_ptr();
    pioscope_call call;
    pioscope_enter(&call);
    FILE *fp = real(fd, mode);
    int err = errno;
    record(&call, PIOSCOPE_FN_fdopen, pioscope_fd_file(fd), 0, 0, fp ? fd : -1, fp == NULL,
           err, 0);
    errno = err;
    return fp;
}

PIOSCOPE_EXPORT int fclose(FILE *fp)
{
    fclose_fn *real = pioscope_resolve(&real_fclose, "fclose");
    if (!real) return EOF;
    int fd = stream_fd(fp);
    uint32_t id = pioscope_fd_file(fd);
    pioscope_fd_close(fd);  /* glibc closes the fd internally, out of the close wrapper's sight */
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fp);
    int err = errno;
    record(&call, PIOSCOPE_FN_fclose, id, 0, 0, r, r != 0, err, 0);
    errno = err;
    return r;
}

/* ---- transfers ---- */

static inline void transfer_done(const pioscope_call *call, uint16_t func, FILE *fp,
                                 size_t size, size_t nmemb, size_t items, int err,
                                 int is_write)
{
    int fd = stream_fd(fp);
    uint64_t done = (uint64_t)items * size;
    uint8_t flags = 0;
    uint64_t offset = pioscope_fd_advance(fd, (int64_t)done, is_write, &flags);
    int failed = items < nmemb && size != 0 && ferror(fp);
    record(call, func, pioscope_fd_file(fd), offset, (uint64_t)size * nmemb, (int64_t)done,
           failed, err, flags);
}

/* fread, __fread_chk (recorded as fread) and fwrite: one call each, picked by `kind`. A read's
 * buffer came in non-const from the program. */
enum stream_transfer { STREAM_FREAD, STREAM_FREAD_CHK, STREAM_FWRITE };

static inline size_t do_transfer(void **slot, const char *name, uint16_t func, int kind,
                                 const void *ptr, size_t ptrlen, size_t size, size_t nmemb,
                                 FILE *fp)
{
    void *real = pioscope_resolve(slot, name);
    if (!real) return 0;
    pioscope_call call;
    pioscope_enter(&call);
    size_t items;
    if (kind == STREAM_FWRITE)
        items = ((fwrite_fn *)real)(ptr, size, nmemb, fp);
    else if (kind == STREAM_FREAD_CHK)
        items = ((fread_chk_fn *)real)((void *)ptr, ptrlen, size, nmemb, fp);
    else
        items = ((fread_fn *)real)((void *)ptr, size, nmemb, fp);
    int err = errno;
    transfer_done(&call, func, fp, size, nmemb, items, err, kind == STREAM_FWRITE);
    errno = err;
    return items;
}

PIOSCOPE_EXPORT size_t fread(void *ptr, size_t size, size_t nmemb, FILE *fp)
{
    return do_transfer(&real_fread, "fread", PIOSCOPE_FN_fread, STREAM_FREAD, ptr, 0, size, nmemb,
                       fp);
}

size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t nmemb, FILE *fp);
PIOSCOPE_EXPORT size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t nmemb,
                                   FILE *fp)
{
    return do_transfer(&real___fread_chk, "__fread_chk", PIOSCOPE_FN_fread, STREAM_FREAD_CHK, ptr,
                       ptrlen, size, nmemb, fp);
}

PIOSCOPE_EXPORT size_t fwrite(const void *ptr, size_t size, size_t nmemb, FILE *fp)
{
    return do_transfer(&real_fwrite, "fwrite", PIOSCOPE_FN_fwrite, STREAM_FWRITE, ptr, 0, size,
                       nmemb, fp);
}

PIOSCOPE_EXPORT int fflush(FILE *fp)
{
    fclose_fn *real = pioscope_resolve(&real_fflush, "fflush");
    if (!real) return EOF;
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fp);
    int err = errno;
    record(&call, PIOSCOPE_FN_fflush, fp ? pioscope_fd_file(stream_fd(fp)) : 0, 0, 0, r,
           r != 0, err, 0);
    errno = err;
    return r;
}

/* ---- positioning ---- */

/* After a successful seek: the stream's position from the real ftello (not traced). */
static inline void resync_position(const pioscope_call *call, uint16_t func, FILE *fp, int r,
                                   int err)
{
    ftello_fn *tell = pioscope_resolve(&real_ftello, "ftello");
    int fd = stream_fd(fp);
    off_t pos = r == 0 && tell ? tell(fp) : -1;
    if (pos >= 0) pioscope_fd_seek(fd, (uint64_t)pos);
    record(call, func, pioscope_fd_file(fd), pos >= 0 ? (uint64_t)pos : 0, 0, r, r != 0, err,
           pos >= 0 ? 0 : PIOSCOPE_F_OFFSET_UNKNOWN);
}

PIOSCOPE_EXPORT int fseek(FILE *fp, long offset, int whence)
{
    fseek_fn *real = pioscope_resolve(&real_fseek, "fseek");
    if (!real) return -1;
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fp, offset, whence);
    int err = errno;
    pioscope_stop(&call);
    resync_position(&call, PIOSCOPE_FN_fseek, fp, r, err);
    errno = err;
    return r;
}

static inline int do_fseeko(void **slot, const char *name, uint16_t func, FILE *fp,
                            off_t offset, int whence)
{
    fseeko_fn *real = pioscope_resolve(slot, name);
    if (!real) return -1;
    pioscope_call call;
    pioscope_enter(&call);
    int r = real(fp, offset, whence);
    int err = errno;
    pioscope_stop(&call);
    resync_position(&call, func, fp, r, err);
    errno = err;
    return r;
}

PIOSCOPE_EXPORT int fseeko(FILE *fp, off_t offset, int whence)
{
    return do_fseeko(&real_fseeko, "fseeko", PIOSCOPE_FN_fseeko, fp, offset, whence);
}

PIOSCOPE_EXPORT int fseeko64(FILE *fp, off64_t offset, int whence)
{
    return do_fseeko(&real_fseeko64, "fseeko64", PIOSCOPE_FN_fseeko64, fp, offset, whence);
}

/* ftell: result and offset = the position, which also corrects the tracked one. */
static inline void tell_done(const pioscope_call *call, uint16_t func, FILE *fp, int64_t pos,
                             int err)
{
    int fd = stream_fd(fp);
    if (pos >= 0) pioscope_fd_seek(fd, (uint64_t)pos);
    record(call, func, pioscope_fd_file(fd), pos >= 0 ? (uint64_t)pos : 0, 0, pos, pos < 0,
           err, pos >= 0 ? 0 : PIOSCOPE_F_OFFSET_UNKNOWN);
}

PIOSCOPE_EXPORT long ftell(FILE *fp)
{
    ftell_fn *real = pioscope_resolve(&real_ftell, "ftell");
    if (!real) return -1;
    pioscope_call call;
    pioscope_enter(&call);
    long pos = real(fp);
    int err = errno;
    tell_done(&call, PIOSCOPE_FN_ftell, fp, pos, err);
    errno = err;
    return pos;
}

static inline off_t do_ftello(void **slot, const char *name, uint16_t func, FILE *fp)
{
    ftello_fn *real = pioscope_resolve(slot, name);
    if (!real) return -1;
    pioscope_call call;
    pioscope_enter(&call);
    off_t pos = real(fp);
    int err = errno;
    tell_done(&call, func, fp, pos, err);
    errno = err;
    return pos;
}

PIOSCOPE_EXPORT off_t ftello(FILE *fp)
{
    return do_ftello(&real_ftello, "ftello", PIOSCOPE_FN_ftello, fp);
}

PIOSCOPE_EXPORT off64_t ftello64(FILE *fp)
{
    return do_ftello(&real_ftello64, "ftello64", PIOSCOPE_FN_ftello64, fp);
}
