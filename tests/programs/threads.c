/* threads: 4 threads each write 1000 one-byte records to a file of their own.
 * usage: threads DIR */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define THREADS 4
#define WRITES 1000

static const char *dir;

static void *writer(void *arg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/thread-%ld.bin", dir, (long)arg);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < WRITES; i++) pwrite(fd, "t", 1, i);
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    dir = argv[1];
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, writer, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    return 0;
}
