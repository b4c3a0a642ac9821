/* prog_lifecycle: writes 100 one-byte records to DIR/main.bin, then ends the way MODE says,
 * so check_raw can verify every ending leaves a decodable trace.
 * usage: prog_lifecycle DIR exit|_exit|_Exit|sigterm|sigint|abort|segv|fault|fork|exec|forkexec|
 *                         execfail|closerange|fd768|fdlimit|bulk [STATUS] */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_records(const char *dir, const char *name, int count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < count; i++) pwrite(fd, "l", 1, i);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    const char *dir = argv[1], *how = argv[2];
    int status = argc > 3 ? atoi(argv[3]) : 0;
    write_records(dir, "main", 100);
    if (!strcmp(how, "exit")) exit(status);
    if (!strcmp(how, "_exit")) _exit(status);
    if (!strcmp(how, "_Exit")) _Exit(status);
    if (!strcmp(how, "sigterm")) raise(SIGTERM);
    if (!strcmp(how, "sigint")) kill(getpid(), SIGINT);
    if (!strcmp(how, "abort")) abort();
    if (!strcmp(how, "segv")) raise(SIGSEGV);
    if (!strcmp(how, "fault")) {
        volatile int *nowhere = (volatile int *)(argc > 100 ? (void *)argv : NULL);
        *nowhere = 1;
    }
    if (!strcmp(how, "exec")) {
        execl("/bin/true", "true", (char *)NULL);
        return 3;
    }
    if (!strcmp(how, "execfail")) {  /* the exec fails: tracing goes on in a new file */
        execl("/nonexistent-pioscope/prog", "prog", (char *)NULL);
        write_records(dir, "after", 10);
        return 0;
    }
    if (!strcmp(how, "closerange")) {  /* the trace goes on after a bulk close */
        if (close_range(3, ~0u, 0) != 0) return 4;
        write_records(dir, "after", 10);
        return 0;
    }
    if (!strcmp(how, "fd768")) {  /* issue 12: the number the tracer once held is the program's */
        char path[4096];
        snprintf(path, sizeof path, "%s/out768.txt", dir);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 768) != 768 || close(fd) != 0) return 4;
        write_records(dir, "after", 10);
        if (write(768, "hi\n", 3) != 3 || close(768) != 0) return 5;
        return 0;
    }
    if (!strcmp(how, "fdlimit")) {  /* issue 12: new files until the descriptor limit */
        int fds[64], opened = 0, err = 0;
        while (opened < 64) {
            char path[4096];
            snprintf(path, sizeof path, "%s/limit-%d.bin", dir, opened);
            int fd = open(path, O_CREAT | O_WRONLY, 0644);
            if (fd < 0) {
                err = errno;
                break;
            }
            fds[opened++] = fd;
            printf("%d ", fd);
        }
        printf("then %s\n", strerror(err));
        for (int i = 0; opened && i < 200; i++) pwrite(fds[0], "l", 1, i);  /* a spill, here */
        for (int i = 0; i < opened; i++) close(fds[i]);
        write_records(dir, "after", 10);
        return 0;
    }
    if (!strcmp(how, "bulk")) {  /* records enough to fill a small disk */
        write_records(dir, "bulk", status ? status : 20000);
        return 0;
    }
    if (!strcmp(how, "fork") || !strcmp(how, "forkexec")) {
        pid_t child = fork();
        if (child == 0) {
            if (!strcmp(how, "forkexec")) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(3);
            }
            write_records(dir, "child", 20);
            exit(0);
        }
        int st;
        waitpid(child, &st, 0);
        write_records(dir, "parent", 10);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    return 2;
}
