/* prog_aio: a fixed sequence of POSIX aio calls whose records check_raw knows exactly
 * (check_raw.c, scenario "aio"): aio_write, lio_listio of a write and a read, aio_fsync, each
 * waited for with aio_suspend and collected with aio_return; aio_cancel of nothing.
 * Exits non-zero if a call misbehaves under the tracer.
 * usage: prog_aio DIR */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "prog_aio: %s (errno %d)\n", what, errno);
        failures++;
    }
}

static void request(struct aiocb *cb, int fd, void *buf, size_t bytes, off_t offset, int opcode)
{
    memset(cb, 0, sizeof *cb);
    cb->aio_fildes = fd;
    cb->aio_buf = buf;
    cb->aio_nbytes = bytes;
    cb->aio_offset = offset;
    cb->aio_lio_opcode = opcode;
}

/* aio_suspend until cb is done, then aio_error (0) and aio_return (its bytes). */
static void collect(struct aiocb *cb, ssize_t bytes, const char *what)
{
    const struct aiocb *list[1] = {cb};
    expect(aio_suspend(list, 1, NULL) == 0 || errno == EINTR, what);
    while (aio_error(cb) == EINPROGRESS) /* not recorded */
        aio_suspend(list, 1, NULL);
    expect(aio_error(cb) == 0, what);
    expect(aio_return(cb) == bytes, what);
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    char path[4096], out[128], in[32];
    snprintf(path, sizeof path, "%s/aio.bin", argv[1]);
    memset(out, 'x', sizeof out);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    expect(fd >= 0, "open");

    struct aiocb one, w, r, nop, sync;
    request(&one, fd, out, 100, 0, LIO_NOP);
    expect(aio_write(&one) == 0, "aio_write");
    collect(&one, 100, "aio_write done");

    request(&w, fd, out, 50, 100, LIO_WRITE);
    request(&r, fd, in, 20, 0, LIO_READ);
    request(&nop, fd, NULL, 0, 0, LIO_NOP);
    struct aiocb *list[3] = {&w, &r, &nop};
    expect(lio_listio(LIO_WAIT, list, 3, NULL) == 0, "lio_listio");
    expect(aio_return(&w) == 50, "lio write done");
    expect(aio_return(&r) == 20, "lio read done");

    request(&sync, fd, NULL, 0, 0, LIO_NOP);
    expect(aio_fsync(O_SYNC, &sync) == 0, "aio_fsync");
    collect(&sync, 0, "aio_fsync done");
    expect(aio_cancel(fd, NULL) == AIO_ALLDONE, "aio_cancel");
    expect(close(fd) == 0, "close");
    return failures ? 1 : 0;
}
