/* posix_basic: a fixed sequence of POSIX and STDIO calls whose records the tests know exactly.
 * usage: posix_basic DIR */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char data[4096], text[4096], buf[4096];
    snprintf(data, sizeof data, "%s/data.bin", argv[1]);
    snprintf(text, sizeof text, "%s/text.txt", argv[1]);
    memset(buf, 'x', sizeof buf);

    int fd = open(data, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    pwrite(fd, buf, 100, 0);
    pwrite(fd, buf, 200, 100);
    pwrite(fd, buf, 300, 300);
    write(fd, buf, 50);            /* at offset 0: pwrite does not move the file pointer */
    lseek(fd, 1000, SEEK_SET);
    write(fd, buf, 24);            /* at offset 1000: the file is now 1024 bytes */
    close(fd);

    fd = open(data, O_RDONLY);
    read(fd, buf, 4096);           /* short read: 1024 bytes */
    read(fd, buf, 4096);           /* end of file: 0 bytes */
    close(fd);

    if (open("/nonexistent-pioscope-dir/file", O_RDONLY) != -1 || errno != ENOENT) return 1;

    FILE *f = fopen(text, "w");
    if (!f) return 1;
    for (int i = 0; i < 3; i++) fwrite(buf, 1, 10, f);
    fclose(f);

    struct stat st;
    stat(data, &st);
    unlink(text);
    return 0;
}
