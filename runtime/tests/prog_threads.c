/* prog_threads: 4 threads each write 1000 one-byte records to a file of their own, then end
 * (their buffers are flushed by the thread-exit hook). check_raw scenario "threads".
 * With "running", the threads write without end and main calls exit() meanwhile: the trace
 * must still be well formed (check_raw scenario "running").
 * usage: prog_threads DIR [running] */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define THREADS 4
#define WRITES 1000

static const char *dir;
static int running;

static void *writer(void *arg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/thread-%ld.bin", dir, (long)arg);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; running || i < WRITES; i++)
        if (pwrite(fd, "t", 1, i % WRITES) != 1) return (void *)1;
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    dir = argv[1];
    running = argc > 2;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, writer, (void *)i);
    if (running) {
        usleep(200000);
        exit(0);
    }
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= r != NULL;
    }
    return bad;
}
