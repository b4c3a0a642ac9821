/* prog_posix: a fixed sequence of POSIX and STDIO calls whose records check_raw knows exactly
 * (check_raw.c, scenario "posix"). Exits non-zero if a call misbehaves under the tracer.
 * usage: prog_posix DIR */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "prog_posix: %s (errno %d)\n", what, errno);
        failures++;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    const char *d = argv[1];
    char data[4096], text[4096], app[4096], sub[4096], moved[4096], cpath[4096], buf[4096];
    snprintf(data, sizeof data, "%s/data.bin", d);
    snprintf(text, sizeof text, "%s/text.txt", d);
    snprintf(app, sizeof app, "%s/app.log", d);
    snprintf(sub, sizeof sub, "%s/sub", d);
    snprintf(moved, sizeof moved, "%s/sub/moved.bin", d);
    snprintf(cpath, sizeof cpath, "%s/c.bin", d);
    memset(buf, 'x', sizeof buf);

    int fd = open(data, O_CREAT | O_RDWR | O_TRUNC, 0644);           /* 1 */
    expect(fd >= 0, "open data");
    errno = 4321;
    expect(pwrite(fd, buf, 100, 0) == 100, "pwrite 1");               /* 2 */
    expect(errno == 4321, "errno kept across a successful call");
    expect(pwrite(fd, buf, 200, 100) == 200, "pwrite 2");             /* 3 */
    expect(pwrite(fd, buf, 300, 300) == 300, "pwrite 3");             /* 4 */
    expect(lseek(fd, 50, SEEK_SET) == 50, "lseek");                    /* 5 */
    expect(read(fd, buf, 100) == 100, "read");                         /* 6: at 50 */
    expect(write(fd, buf, 10) == 10, "write");                         /* 7: at 150 */
    struct iovec two[2] = {{buf, 10}, {buf + 10, 20}};
    expect(readv(fd, two, 2) == 30, "readv");                          /* 8: at 160 */
    struct iovec five[2] = {{buf, 5}, {buf + 5, 5}};
    expect(writev(fd, five, 2) == 10, "writev");                       /* 9: at 190 */
    struct iovec four[2] = {{buf, 4}, {buf + 4, 4}};
    expect(preadv(fd, four, 2, 8) == 8, "preadv");                     /* 10 */
    struct iovec three[1] = {{buf, 3}};
    expect(pwritev(fd, three, 1, 1000) == 3, "pwritev");              /* 11 */
    expect(fsync(fd) == 0, "fsync");                                   /* 12 */
    expect(fdatasync(fd) == 0, "fdatasync");                           /* 13 */
    expect(ftruncate(fd, 2000) == 0, "ftruncate");                     /* 14 */
    struct stat st;
    expect(fstat(fd, &st) == 0 && st.st_size == 2000, "fstat");        /* 15 */
    expect(close(fd) == 0, "close");                                   /* 16 */
    expect(stat(data, &st) == 0, "stat");                              /* 17 */
    expect(lstat(data, &st) == 0, "lstat");                            /* 18 */
    errno = 0;
    expect(open("/nonexistent-pioscope/file", O_RDONLY) == -1 && errno == ENOENT,
           "failing open keeps ENOENT");                               /* 19 */

    FILE *f = fopen(text, "w");                                        /* 20 */
    expect(f != NULL, "fopen w");
    for (int i = 0; i < 3; i++) expect(fwrite(buf, 1, 10, f) == 10, "fwrite");  /* 21-23 */
    expect(fflush(f) == 0, "fflush");                                  /* 24 */
    expect(fclose(f) == 0, "fclose");                                  /* 25 */
    f = fopen(text, "r");                                              /* 26 */
    expect(f != NULL, "fopen r");
    expect(fread(buf, 1, 8, f) == 8, "fread 1");                       /* 27: at 0 */
    expect(fread(buf, 4, 2, f) == 2, "fread 2");                       /* 28: at 8 */
    expect(fseek(f, 4, SEEK_SET) == 0, "fseek");                       /* 29 */
    expect(ftell(f) == 4, "ftell");                                    /* 30 */
    expect(fread(buf, 1, 100, f) == 26, "fread short");                /* 31: at 4 */
    expect(fclose(f) == 0, "fclose r");                                /* 32 */

    fd = open(app, O_CREAT | O_WRONLY | O_APPEND, 0644);               /* 33 */
    expect(write(fd, buf, 5) == 5, "append write");                    /* 34 */
    close(fd);                                                         /* 35 */

    expect(chdir(d) == 0, "chdir");
    fd = open("rel.bin", O_CREAT | O_WRONLY, 0644);                    /* 36: absolute path */
    close(fd);                                                         /* 37 */
    int dfd = open(d, O_RDONLY | O_DIRECTORY);                         /* 38 */
    fd = openat(dfd, "at.bin", O_CREAT | O_WRONLY, 0644);              /* 39 */
    expect(fd >= 0, "openat");
    close(fd);                                                         /* 40 */
    close(dfd);                                                        /* 41 */
    expect(mkdir(sub, 0755) == 0, "mkdir");                            /* 42 */
    expect(rename("rel.bin", moved) == 0, "rename");                   /* 43 */
    expect(unlink(moved) == 0, "unlink");                              /* 44 */
    expect(rmdir(sub) == 0, "rmdir");                                  /* 45 */
    fd = creat(cpath, 0644);                                           /* 46 */
    expect(fd >= 0, "creat");
    close(fd);                                                         /* 47 */
    expect(unlink(text) == 0, "unlink text");                          /* 48 */
    errno = 0;
    expect(unlink(text) == -1 && errno == ENOENT, "second unlink fails"); /* 49 */
    return failures ? 1 : 0;
}
