/* stdio_wrappers.c: owns the interception of the STDIO layer of functions.def (fopen, fdopen,
 * fclose, fread, fwrite, fflush, fseek, ftell and their o/64 forms; the formatted, line and
 * character transfers: fprintf, vfprintf, printf, vprintf, fputs, puts, fputc, putc, fscanf,
 * vfscanf, fgets, getline, getdelim, fgetc, getc, and glibc's _chk and __isoc99_ entry points,
 * recorded under the plain names).
 *
 * A stream's position is tracked in the fd table entry of its descriptor (fread/fwrite advance
 * it, fseek/ftell set it from the real ftello), so no ftell call is added to fread/fwrite.
 * Fields: object = file id, offset = stream position where the transfer started (fseek: the
 * new position), size = size * nmemb bytes, result = bytes transferred (items * size; fopen,
 * fdopen: the stream's fd or -1), error = errno when it failed. The write() that stdio issues
 * inside libc does not go through the PLT, so it is not seen (expected). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

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

/* ---- formatted, line and character transfers ----
 * Fields as for fread/fwrite: offset = the stream position where the transfer started, size =
 * bytes asked for (what a printf produced, a string's length, fgets' room, 1 for a character),
 * result = bytes transferred, -1 when the call failed. Reading to the end of the file is no
 * failure: result 0. fscanf's bytes are the stream's position after minus before (the real
 * ftello, not traced); 0 on a stream that cannot tell. */

/* Right after the real call: saves errno, advances the tracked position by `done` bytes,
 * records, restores errno. */
PIOSCOPE_ALWAYS_INLINE
static inline void text_done(const pioscope_call *call, const pioscope_target *target, FILE *fp,
                             uint64_t requested, uint64_t done, int failed, int is_write)
{
    int err = errno;
    int fd = stream_fd(fp);
    uint8_t flags = 0;
    uint64_t offset = pioscope_fd_advance(fd, (int64_t)done, is_write, &flags);
    pioscope_record(call, target->func, pioscope_fd_file(fd), offset, requested,
                    failed ? -1 : (int64_t)done, failed, err, flags);
    errno = err;
}

/* Begins a call recorded under `target` whose work is done by the real function of `work` (a
 * variadic function calls its va_list form). NULL: `work` is missing, nothing was begun. */
PIOSCOPE_ALWAYS_INLINE
static inline void *begin_as(pioscope_call *call, pioscope_target *work)
{
    void *real = pioscope_target_real(work);
    if (real) pioscope_enter(call);
    return real;
}

typedef int vfprintf_fn(FILE *, const char *, va_list);
typedef int vfprintf_chk_fn(FILE *, int, const char *, va_list);
typedef int vfscanf_fn(FILE *, const char *, va_list);
typedef int fputs_fn(const char *, FILE *);
typedef int puts_fn(const char *);
typedef int fputc_fn(int, FILE *);
typedef int fgetc_fn(FILE *);
typedef char *fgets_fn(char *, int, FILE *);
typedef char *fgets_chk_fn(char *, size_t, int, FILE *);
typedef ssize_t getdelim_fn(char **, size_t *, int, FILE *);
typedef ssize_t getline_fn(char **, size_t *, FILE *);

/* The printf family, recorded under `target`, done by `work` (vfprintf, or __vfprintf_chk with
 * `flag` >= 0). */
PIOSCOPE_ALWAYS_INLINE
static inline int do_vfprintf(pioscope_target *target, pioscope_target *work, FILE *fp, int flag,
                              const char *format, va_list ap)
{
    pioscope_call call;
    void *real = begin_as(&call, work);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int r = flag < 0 ? ((vfprintf_fn *)real)(fp, format, ap)
                     : ((vfprintf_chk_fn *)real)(fp, flag, format, ap);
    uint64_t done = r > 0 ? (uint64_t)r : 0;
    text_done(&call, target, fp, done, done, r < 0, 1);
    return r;
}

PIOSCOPE_WRAPPER(vfprintf, int, vfprintf, (FILE *fp, const char *format, va_list ap))
{
    return do_vfprintf(&target_vfprintf, &target_vfprintf, fp, -1, format, ap);
}

int __vfprintf_chk(FILE *fp, int flag, const char *format, va_list ap);
PIOSCOPE_WRAPPER(vfprintf, int, __vfprintf_chk, (FILE *fp, int flag, const char *format,
                                                 va_list ap))
{
    return do_vfprintf(&target___vfprintf_chk, &target___vfprintf_chk, fp, flag, format, ap);
}

PIOSCOPE_WRAPPER(fprintf, int, fprintf, (FILE *fp, const char *format, ...))
{
    va_list ap;
    va_start(ap, format);
    int r = do_vfprintf(&target_fprintf, &target_vfprintf, fp, -1, format, ap);
    va_end(ap);
    return r;
}

int __fprintf_chk(FILE *fp, int flag, const char *format, ...);
PIOSCOPE_WRAPPER(fprintf, int, __fprintf_chk, (FILE *fp, int flag, const char *format, ...))
{
    va_list ap;
    va_start(ap, format);
    int r = do_vfprintf(&target___fprintf_chk, &target___vfprintf_chk, fp, flag, format, ap);
    va_end(ap);
    return r;
}

PIOSCOPE_WRAPPER(vprintf, int, vprintf, (const char *format, va_list ap))
{
    return do_vfprintf(&target_vprintf, &target_vfprintf, stdout, -1, format, ap);
}

int __vprintf_chk(int flag, const char *format, va_list ap);
PIOSCOPE_WRAPPER(vprintf, int, __vprintf_chk, (int flag, const char *format, va_list ap))
{
    return do_vfprintf(&target___vprintf_chk, &target___vfprintf_chk, stdout, flag, format, ap);
}

PIOSCOPE_WRAPPER(printf, int, printf, (const char *format, ...))
{
    va_list ap;
    va_start(ap, format);
    int r = do_vfprintf(&target_printf, &target_vfprintf, stdout, -1, format, ap);
    va_end(ap);
    return r;
}

int __printf_chk(int flag, const char *format, ...);
PIOSCOPE_WRAPPER(printf, int, __printf_chk, (int flag, const char *format, ...))
{
    va_list ap;
    va_start(ap, format);
    int r = do_vfprintf(&target___printf_chk, &target___vfprintf_chk, stdout, flag, format, ap);
    va_end(ap);
    return r;
}

PIOSCOPE_WRAPPER(fputs, int, fputs, (const char *str, FILE *fp))
{
    pioscope_call call;
    fputs_fn *real = pioscope_begin(&call, &target_fputs);
    if (!real) return EOF;
    int r = real(str, fp);
    uint64_t len = strlen(str);
    text_done(&call, &target_fputs, fp, len, r == EOF ? 0 : len, r == EOF, 1);
    return r;
}

PIOSCOPE_WRAPPER(puts, int, puts, (const char *str))
{
    pioscope_call call;
    puts_fn *real = pioscope_begin(&call, &target_puts);
    if (!real) return EOF;
    int r = real(str);
    uint64_t len = strlen(str) + 1; /* and the newline */
    text_done(&call, &target_puts, stdout, len, r == EOF ? 0 : len, r == EOF, 1);
    return r;
}

/* fputc and putc. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_fputc(pioscope_target *target, int c, FILE *fp)
{
    pioscope_call call;
    fputc_fn *real = pioscope_begin(&call, target);
    if (!real) return EOF;
    int r = real(c, fp);
    text_done(&call, target, fp, 1, r == EOF ? 0 : 1, r == EOF, 1);
    return r;
}

PIOSCOPE_WRAPPER(fputc, int, fputc, (int c, FILE *fp))
{
    return do_fputc(&target_fputc, c, fp);
}

PIOSCOPE_WRAPPER(putc, int, putc, (int c, FILE *fp))
{
    return do_fputc(&target_putc, c, fp);
}

/* fgetc and getc: end of file is no failure, an error on the stream is. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_fgetc(pioscope_target *target, FILE *fp)
{
    pioscope_call call;
    fgetc_fn *real = pioscope_begin(&call, target);
    if (!real) return EOF;
    int r = real(fp);
    text_done(&call, target, fp, 1, r == EOF ? 0 : 1, r == EOF && ferror(fp), 0);
    return r;
}

PIOSCOPE_WRAPPER(fgetc, int, fgetc, (FILE *fp))
{
    return do_fgetc(&target_fgetc, fp);
}

PIOSCOPE_WRAPPER(getc, int, getc, (FILE *fp))
{
    return do_fgetc(&target_getc, fp);
}

/* fgets and __fgets_chk (`room` is the buffer's size for the latter, ignored otherwise). */
PIOSCOPE_ALWAYS_INLINE
static inline char *do_fgets(pioscope_target *target, int chk, char *s, size_t room, int n,
                             FILE *fp)
{
    pioscope_call call;
    void *real = pioscope_begin(&call, target);
    if (!real) return missing_ptr();
    char *r = chk ? ((fgets_chk_fn *)real)(s, room, n, fp) : ((fgets_fn *)real)(s, n, fp);
    uint64_t done = r ? strlen(r) : 0;
    text_done(&call, target, fp, n > 0 ? (uint64_t)n - 1 : 0, done, !r && ferror(fp), 0);
    return r;
}

PIOSCOPE_WRAPPER(fgets, char *, fgets, (char *s, int n, FILE *fp))
{
    return do_fgets(&target_fgets, 0, s, 0, n, fp);
}

char *__fgets_chk(char *s, size_t room, int n, FILE *fp);
PIOSCOPE_WRAPPER(fgets, char *, __fgets_chk, (char *s, size_t room, int n, FILE *fp))
{
    return do_fgets(&target___fgets_chk, 1, s, room, n, fp);
}

/* getline and getdelim: the bytes read are the result. */
PIOSCOPE_ALWAYS_INLINE
static inline void line_done(const pioscope_call *call, const pioscope_target *target, FILE *fp,
                             ssize_t r)
{
    uint64_t done = r > 0 ? (uint64_t)r : 0;
    text_done(call, target, fp, done, done, r < 0 && ferror(fp), 0);
}

PIOSCOPE_WRAPPER(getline, ssize_t, getline, (char **line, size_t *n, FILE *fp))
{
    pioscope_call call;
    getline_fn *real = pioscope_begin(&call, &target_getline);
    if (!real) return -1;
    ssize_t r = real(line, n, fp);
    line_done(&call, &target_getline, fp, r);
    return r;
}

PIOSCOPE_WRAPPER(getdelim, ssize_t, getdelim, (char **line, size_t *n, int delim, FILE *fp))
{
    pioscope_call call;
    getdelim_fn *real = pioscope_begin(&call, &target_getdelim);
    if (!real) return -1;
    ssize_t r = real(line, n, delim, fp);
    line_done(&call, &target_getdelim, fp, r);
    return r;
}

/* The scanf family, recorded under `target`, done by `work` (__isoc99_vfscanf). Programs
 * compiled since C99 call the __isoc99_ entry points; stdio.h maps fscanf and vfscanf to them
 * (here too), so the plain symbols, used only by pre-C99 builds, are not wrapped. */
PIOSCOPE_ALWAYS_INLINE
static inline int do_vfscanf(pioscope_target *target, pioscope_target *work, FILE *fp,
                             const char *format, va_list ap)
{
    ftello_fn *tell = pioscope_target_real(&target_ftello);
    off_t before = tell ? tell(fp) : -1;
    pioscope_call call;
    void *real = begin_as(&call, work);
    if (!real) {
        errno = ENOSYS;
        return EOF;
    }
    int r = ((vfscanf_fn *)real)(fp, format, ap);
    int err = errno;
    pioscope_stop(&call);
    off_t after = before >= 0 ? tell(fp) : -1;
    uint64_t done = after > before ? (uint64_t)(after - before) : 0;
    errno = err;
    text_done(&call, target, fp, done, done, r == EOF && ferror(fp), 0);
    return r;
}

int __isoc99_vfscanf(FILE *fp, const char *format, va_list ap);
PIOSCOPE_WRAPPER(vfscanf, int, __isoc99_vfscanf, (FILE *fp, const char *format, va_list ap))
{
    return do_vfscanf(&target___isoc99_vfscanf, &target___isoc99_vfscanf, fp, format, ap);
}

int __isoc99_fscanf(FILE *fp, const char *format, ...);
PIOSCOPE_WRAPPER(fscanf, int, __isoc99_fscanf, (FILE *fp, const char *format, ...))
{
    va_list ap;
    va_start(ap, format);
    int r = do_vfscanf(&target___isoc99_fscanf, &target___isoc99_vfscanf, fp, format, ap);
    va_end(ap);
    return r;
}
