/* prog_fortify: built with -O2 -D_FORTIFY_SOURCE=2, so its calls go to glibc's checking entry
 * points (__open_2, __read_chk, __pread_chk, __fread_chk); they are recorded under the plain
 * functions' ids. check_raw scenario "fortify".  usage: prog_fortify DIR N (N = 8) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    size_t n = (size_t)atoi(argv[2]);  /* not a constant: the checking calls are kept */
    int flags = O_RDWR | (n > 1000 ? O_APPEND : 0);  /* not a constant either */
    char path[4096], buf[64];
    snprintf(path, sizeof path, "%s/fortify.bin", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f || fwrite("0123456789abcdef", 1, 16, f) != 16 || fclose(f) != 0) return 1;
    int fd = open(path, flags);                     /* __open_2 */
    if (fd < 0 || read(fd, buf, n) != (ssize_t)n) return 1;     /* __read_chk at 0 */
    if (pread(fd, buf, n, 4) != (ssize_t)n) return 1;          /* __pread_chk at 4 */
    close(fd);
    f = fopen(path, "r");
    if (!f || fread(buf, 1, n, f) != n) return 1;               /* __fread_chk at 0 */
    fclose(f);
    return 0;
}
