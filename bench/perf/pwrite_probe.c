/* pwrite_probe: the tracer's cost per POSIX call. N one-byte pwrite calls to one file, made in
 * alternating blocks through the program's own `pwrite` (traced when libpioscope is preloaded)
 * and through libc's pwrite found with dlsym (never traced), so machine noise hits both
 * alike. Then times the two clocks the tracer can read: rdtsc (its record clock, read twice a
 * call) and CLOCK_MONOTONIC. Prints "<ns per call through pwrite> <ns per call through libc>
 * <ns per rdtsc> <ns per clock_gettime>" (overhead.py).
 * usage: pwrite_probe N FILE */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t pwrite_fn(int, const void *, size_t, off_t);

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static long long median(long long *v, long n)
{
    qsort(v, n, sizeof *v, by_value);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    long n = atol(argv[1]);
    int fd = open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    pwrite_fn *plain = libc ? (pwrite_fn *)dlsym(libc, "pwrite") : NULL;
    if (fd < 0 || !plain) return 1;
    enum { BLOCK = 4096 };
    /* Per block of calls its time; the median block of each kind is the figure, so a block in
     * which the process was preempted (a loaded machine) does not count. */
    long blocks = (n + BLOCK - 1) / BLOCK;
    long long *traced_ns = calloc(blocks, sizeof *traced_ns);
    long long *plain_ns = calloc(blocks, sizeof *plain_ns);
    if (!traced_ns || !plain_ns) return 1;
    for (long b = 0; b < blocks; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < BLOCK; i++)
            if (pwrite(fd, "p", 1, i) != 1) return 1;
        long long t1 = now_ns();
        for (long i = 0; i < BLOCK; i++)
            if (plain(fd, "p", 1, i) != 1) return 1;
        long long t2 = now_ns();
        traced_ns[b] = t1 - t0;
        plain_ns[b] = t2 - t1;
    }
    close(fd);
    double traced = (double)median(traced_ns, blocks) / BLOCK;
    double untraced = (double)median(plain_ns, blocks) / BLOCK;
    /* The clocks, timed the same way; the reads are summed and the sum used, so none is
     * optimised away. */
    unsigned long long sink = 0;
    for (long b = 0; b < blocks; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < BLOCK; i++) sink += __builtin_ia32_rdtsc();
        long long t1 = now_ns();
        for (long i = 0; i < BLOCK; i++) sink += (unsigned long long)now_ns();
        long long t2 = now_ns();
        traced_ns[b] = t1 - t0;
        plain_ns[b] = t2 - t1;
    }
    if (sink == 1) fputs("", stderr);
    printf("%.2f %.2f %.2f %.2f\n", traced, untraced, (double)median(traced_ns, blocks) / BLOCK,
           (double)median(plain_ns, blocks) / BLOCK);
    return 0;
}
