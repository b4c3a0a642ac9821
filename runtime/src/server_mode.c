/* server_mode.c: owns server mode, the runtime inside a storage server daemon that lives for
 * days (docs/SERVERS.md). Set by the environment, read once at init:
 *   PIOSCOPE_SERVER        1: server mode
 *   PIOSCOPE_FLUSH_MS      how often every thread's records go to the raw file (default 1000)
 *   PIOSCOPE_SERVER_FILE_BYTES  size at which a raw file segment is closed and the next one
 *                          started (default 64M)
 *   PIOSCOPE_SERVER_MAX_BYTES   cap on the bytes of the daemon's segments on disk (default 1G);
 *                          the oldest segments are deleted, what they held is counted
 *   PIOSCOPE_NULL_PREFIX   null storage (the TAS experiment): writes to files whose path starts
 *                          with it succeed without touching the disk
 * A daemon's records must reach the disk while it runs (it is merged with a job that ended,
 * not with the daemon's end): a thread of the tracer flushes every buffer periodically. It
 * blocks every signal and makes no traced call, so the daemon sees no change.
 * Network records: a descriptor the daemon did not open by a traced call (accept, socket) is
 * asked its peer once; a connected socket's records get the file `socket:<address>:<port>`
 * (`socket:unix:<path>` for a Unix socket), docs/FORMAT.md.
 * Null storage: the data written to a file under the prefix is discarded; the file's size
 * grows as the writes would have grown it (a sparse file: reads return zeros), so sizes and
 * metadata stay consistent and the file system on top keeps working. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "core.h"
#include "fd_table.h"
#include "server_mode.h"
#include "sys.h"

int pioscope_server_mode PIOSCOPE_HIDDEN;
static long flush_ms = 1000;
static char null_prefix[4096];
static size_t null_prefix_len;

static void *flusher(void *unused)
{
    (void)unused;
    pioscope_internal_begin();  /* nothing this thread does is the daemon's */
    struct timespec period = {flush_ms / 1000, (flush_ms % 1000) * 1000000L};
    for (;;) {
        struct timespec left = period;
        while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
        if (!pioscope_raw_writable()) return NULL;
        pioscope_flush_all();
    }
}

static void start_flusher(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);  /* the new thread inherits: it takes no signal */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    pthread_create(&t, &attr, flusher, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int pioscope_server_start(void)
{
    const char *s = getenv("PIOSCOPE_SERVER");
    if (!s || !*s || strcmp(s, "0") == 0) return 0;
    s = getenv("PIOSCOPE_FLUSH_MS");
    if (s && *s) {
        long v = strtol(s, NULL, 10);
        if (v > 0) flush_ms = v;
    }
    uint64_t file_bytes = 64ull << 20, max_bytes = 1ull << 30;
    s = getenv("PIOSCOPE_SERVER_FILE_BYTES");
    if (s && *s && pioscope_parse_bytes(s)) file_bytes = pioscope_parse_bytes(s);
    s = getenv("PIOSCOPE_SERVER_MAX_BYTES");
    if (s && *s && pioscope_parse_bytes(s)) max_bytes = pioscope_parse_bytes(s);
    pioscope_raw_rotate_at(file_bytes, max_bytes);
    s = getenv("PIOSCOPE_NULL_PREFIX");
    if (s && *s && strlen(s) < sizeof null_prefix) {
        null_prefix_len = strlen(s);
        memcpy(null_prefix, s, null_prefix_len + 1);
        pioscope_write_job_fact("null_prefix", null_prefix);
    }
    pioscope_server_mode = 1;
    pioscope_write_job_fact("server_mode", "1");
    start_flusher();
    return 1;
}

void pioscope_server_after_fork(void)
{
    if (pioscope_server_mode) start_flusher();
}

int pioscope_null_file(uint32_t file)
{
    if (!null_prefix_len || !file) return 0;
    const char *path = pioscope_intern_text(file);
    return path && strncmp(path, null_prefix, null_prefix_len) == 0;
}

long pioscope_null_write(int fd, uint64_t bytes, int64_t offset)
{
    long at = offset;
    if (offset < 0) {
        at = pio_lseek(fd, 0, SEEK_CUR);
        if (at < 0) return errno = (int)-at, -1;
    }
    struct stat st;
    long r = pio_fstat(fd, &st);
    if (r < 0) return errno = (int)-r, -1;
    if (pio_fcntl(fd, F_GETFL, 0) & O_APPEND) at = st.st_size;
    long end = at + (long)bytes;
    if (end > st.st_size && (r = pio_ftruncate(fd, end)) < 0) return errno = (int)-r, -1;
    if (offset < 0 && (r = pio_lseek(fd, end, SEEK_SET)) < 0) return errno = (int)-r, -1;
    return (long)bytes;
}

/* "socket:<peer>" of a connected socket into out; 0 when fd is no connected socket. */
static int peer_name(int fd, char *out, size_t cap)
{
    struct sockaddr_storage a;
    socklen_t n = sizeof a;
    if (getpeername(fd, (struct sockaddr *)&a, &n) != 0) return 0;
    pioscope_text t = {out, cap, 0};
    pioscope_text_str(&t, "socket:");
    char ip[INET6_ADDRSTRLEN];
    if (a.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&a;
        if (!inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip)) return 0;
        pioscope_text_str(&t, ip);
        pioscope_text_str(&t, ":");
        pioscope_text_u64(&t, ntohs(in->sin_port));
    } else if (a.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a;
        if (!inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip)) return 0;
        pioscope_text_str(&t, "[");
        pioscope_text_str(&t, ip);
        pioscope_text_str(&t, "]:");
        pioscope_text_u64(&t, ntohs(in6->sin6_port));
    } else if (a.ss_family == AF_UNIX) {
        /* The peer of an accepted Unix socket is usually unnamed: then our own name. */
        const struct sockaddr_un *un = (const struct sockaddr_un *)&a;
        if (n <= offsetof(struct sockaddr_un, sun_path) || !un->sun_path[0]) {
            n = sizeof a;
            if (getsockname(fd, (struct sockaddr *)&a, &n) != 0) return 0;
        }
        pioscope_text_str(&t, "unix:");
        if (n > offsetof(struct sockaddr_un, sun_path) && un->sun_path[0])
            pioscope_text_put(&t, un->sun_path, strnlen(un->sun_path, sizeof un->sun_path));
    } else {
        return 0;
    }
    return t.len < t.cap;
}

uint32_t pioscope_socket_file(int fd)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    if (!e || (__atomic_load_n(&e->state, __ATOMIC_RELAXED) & PIOSCOPE_FD_PROBED)) return 0;
    int saved = errno;
    char name[160];
    uint32_t id = peer_name(fd, name, sizeof name) ? pioscope_intern_pseudo_file(name) : 0;
    errno = saved;
    pioscope_fd_probed(fd, id);
    return id;
}
