/* pwrite_loop: the POSIX cost probe: N one-byte pwrite calls to one file; prints the loop's
 * elapsed nanoseconds (start-up excluded) so traced and untraced runs compare call for call.
 * usage: pwrite_loop N FILE */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s N FILE\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    int fd = open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[2]);
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        if (pwrite(fd, "p", 1, i & 4095) != 1) {
            perror("pwrite");
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(fd);
    printf("%lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
    return 0;
}
