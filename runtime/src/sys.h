/* sys.h: raw system calls for the tracer's own I/O. They never go through an intercepted
 * symbol and never touch errno: they return the result or -errno. */
#ifndef PIOSCOPE_SYS_H
#define PIOSCOPE_SYS_H

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
static inline long pio_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#else
/* Elsewhere: libc's syscall(), with errno saved and restored around it. */
static inline long pio_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
    int saved = errno;
    long ret = syscall(n, a, b, c, d, e, f);
    if (ret == -1) ret = -errno;
    errno = saved;
    return ret;
}
#endif

static inline long pio_sys3(long n, long a, long b, long c)
{
    return pio_syscall6(n, a, b, c, 0, 0, 0);
}

static inline long pio_write(int fd, const void *buf, size_t n)
{
    return pio_sys3(SYS_write, fd, (long)buf, (long)n);
}
static inline long pio_writev(int fd, const struct iovec *iov, int cnt)
{
    return pio_sys3(SYS_writev, fd, (long)iov, cnt);
}
static inline long pio_pwrite(int fd, const void *buf, size_t n, long offset)
{
    return pio_syscall6(SYS_pwrite64, fd, (long)buf, (long)n, offset, 0, 0);
}
static inline long pio_lseek(int fd, long offset, int whence)
{
    return pio_sys3(SYS_lseek, fd, offset, whence);
}
static inline long pio_unlinkat(int dirfd, const char *path, int flags)
{
    return pio_sys3(SYS_unlinkat, dirfd, (long)path, flags);
}
static inline long pio_ftruncate(int fd, long length)
{
    return pio_sys3(SYS_ftruncate, fd, length, 0);
}
static inline long pio_read(int fd, void *buf, size_t n)
{
    return pio_sys3(SYS_read, fd, (long)buf, (long)n);
}
static inline long pio_openat(int dirfd, const char *path, int flags, int mode)
{
    return pio_syscall6(SYS_openat, dirfd, (long)path, flags, mode, 0, 0);
}
static inline long pio_close(int fd)
{
    return pio_sys3(SYS_close, fd, 0, 0);
}
static inline long pio_mkdirat(int dirfd, const char *path, int mode)
{
    return pio_sys3(SYS_mkdirat, dirfd, (long)path, mode);
}
static inline void *pio_mmap_anon(size_t bytes)
{
    long r = pio_syscall6(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return (r < 0 && r > -4096) ? NULL : (void *)r;
}
static inline long pio_getpid(void)
{
    return pio_sys3(SYS_getpid, 0, 0, 0);
}
static inline long pio_getppid(void)
{
    return pio_sys3(SYS_getppid, 0, 0, 0);
}
static inline long pio_getcwd(char *buf, size_t n)
{
    return pio_sys3(SYS_getcwd, (long)buf, (long)n, 0);
}
static inline long pio_readlinkat(int dirfd, const char *path, char *buf, size_t n)
{
    return pio_syscall6(SYS_readlinkat, dirfd, (long)path, (long)buf, (long)n, 0, 0);
}
static inline long pio_statfs(const char *path, void *st)
{
    return pio_sys3(SYS_statfs, (long)path, (long)st, 0);
}
static inline long pio_fstatfs(int fd, void *st)
{
    return pio_sys3(SYS_fstatfs, fd, (long)st, 0);
}
static inline long pio_fstat(int fd, void *st)
{
    return pio_sys3(SYS_fstat, fd, (long)st, 0);
}

static inline long pio_uname(void *uts)
{
    return pio_sys3(SYS_uname, (long)uts, 0, 0);
}

static inline long pio_fcntl(int fd, int cmd, long arg)
{
    return pio_sys3(SYS_fcntl, fd, cmd, arg);
}

static inline void pio_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

#endif
