/* pwrite_probe: the tracer's cost per POSIX call. N one-byte pwrite calls to one file, made in
 * alternating blocks through the program's own `pwrite` (traced when libpioscope is preloaded)
 * and through libc's pwrite found with dlsym (never traced), so machine noise hits both
 * alike. Prints "<ns per call through pwrite> <ns per call through libc>" (overhead.py).
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

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    long n = atol(argv[1]);
    int fd = open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    pwrite_fn *plain = libc ? (pwrite_fn *)dlsym(libc, "pwrite") : NULL;
    if (fd < 0 || !plain) return 1;
    enum { BLOCK = 4096 };
    long long traced_ns = 0, plain_ns = 0;
    for (long done = 0; done < n; done += BLOCK) {
        long long t0 = now_ns();
        for (long i = 0; i < BLOCK; i++)
            if (pwrite(fd, "p", 1, i) != 1) return 1;
        long long t1 = now_ns();
        for (long i = 0; i < BLOCK; i++)
            if (plain(fd, "p", 1, i) != 1) return 1;
        long long t2 = now_ns();
        traced_ns += t1 - t0;
        plain_ns += t2 - t1;
    }
    close(fd);
    long calls = (n + BLOCK - 1) / BLOCK * BLOCK;
    printf("%.2f %.2f\n", (double)traced_ns / calls, (double)plain_ns / calls);
    return 0;
}
