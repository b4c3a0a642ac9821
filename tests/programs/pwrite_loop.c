/* pwrite_loop: open, N one-byte pwrites, close: exactly N + 2 records.
 * usage: pwrite_loop FILE N */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FILE N\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    long n = atol(argv[2]);
    for (long i = 0; i < n; i++)
        if (pwrite(fd, "x", 1, i) != 1) return 1;
    return close(fd) == 0 ? 0 : 1;
}
