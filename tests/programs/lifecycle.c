/* lifecycle: writes N one-byte records, then ends the way argv[2] says, so the tests can check
 * that every ending leaves a readable trace.
 * usage: lifecycle DIR exit|_exit|sigterm|abort|fork|segv [STATUS] */
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
    if (!strcmp(how, "sigterm")) raise(SIGTERM);
    if (!strcmp(how, "abort")) abort();
    if (!strcmp(how, "segv")) raise(SIGSEGV);
    if (!strcmp(how, "fork")) {
        pid_t child = fork();
        if (child == 0) {
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
