/* rawfile.c: owns the process's raw file: its name and creation (in server mode, its rotating
 * segments under a disk cap, and the count of what rotation deleted), the file header and JOB facts,
 * writing whole chunks (each: open, one writev, close), cutting a chunk the disk could not take
 * back to its whole records, side chunks (settings, clock sync), the final END/PARTIAL chunk,
 * and stopping the tracer when a write fails.
 *
 * RATIONALE: the tracer holds no descriptor between writes. Any number it kept open would be
 * one the program could not have: a program that dup2()s onto it, or runs at its descriptor
 * limit, would see something else than untraced. Opening per chunk costs an open and a close
 * per chunk written (a full buffer, a batch of new strings, a side chunk), never on the record
 * path. */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/utsname.h>

#include "clock.h"
#include "core.h"
#include "sys.h"

static int raw_ready;              /* atomic: raw_file names this process's file */
static int raw_pending;            /* atomic: a forked child creates its file on first chunk */
static int raw_dead;               /* atomic: no more chunks (final written, or a write failed) */
static int raw_failed;             /* atomic: an open or a write failed */
static int raw_fail_said;          /* atomic: the failure's PARTIAL chunk is in the file */
static int raw_final_started;      /* atomic */
static uint32_t forked_from;
static char raw_dir[PATH_MAX];
static char raw_file[PATH_MAX];
static char fail_reason[128];      /* why the tracer stopped (set once, by raw_fail) */
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t create_owner;     /* valid while creating (under create_lock) */
static int creating;               /* atomic */
static int replay_strings;         /* a re-created file repeats the strings interned so far */

/* JOB facts written through pioscope_write_job_fact, kept so a forked child's file has them. */
static pthread_mutex_t facts_lock = PTHREAD_MUTEX_INITIALIZER;
static char facts[16384];
static size_t facts_len;

/* Bytes of a full disk's last EVENTS chunk given up so the PARTIAL chunk saying why fits in
 * the space they took (its header and a reason of up to 96 bytes). */
#define PARTIAL_ROOM 128

static const char zeros[8];

const char *pioscope_errno_name(int err)
{
    switch (err) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EEXIST: return "EEXIST";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EINVAL: return "EINVAL";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case EFBIG: return "EFBIG";
    case ENOSPC: return "ENOSPC";
    case EROFS: return "EROFS";
    case EPIPE: return "EPIPE";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case EDQUOT: return "EDQUOT";
    case ESTALE: return "ESTALE";
    default: return NULL;
    }
}

static void text_errno(pioscope_text *t, int err)
{
    const char *name = pioscope_errno_name(err);
    if (name) {
        pioscope_text_str(t, name);
    } else {
        pioscope_text_str(t, "errno ");
        pioscope_text_i64(t, err);
    }
}

/* ---- writing ---- */

/* Writes all of iov (copied: a short write resumes where it stopped), counting the bytes that
 * reached the file in *written. Returns 0 or -errno. */
static long write_all(int fd, const struct iovec *iov, int n, size_t *written)
{
    struct iovec v[16];
    *written = 0;
    if (n > 16) return -EINVAL;
    memcpy(v, iov, sizeof *v * (size_t)n);
    int i = 0;
    while (i < n) {
        long r = pio_writev(fd, v + i, n - i);
        if (r == -EINTR) continue;
        if (r < 0) return r;
        if (r == 0) return -EIO;
        *written += (size_t)r;
        while (i < n && (size_t)r >= v[i].iov_len) r -= (long)v[i++].iov_len;
        if (i < n) {
            v[i].iov_base = (char *)v[i].iov_base + r;
            v[i].iov_len -= (size_t)r;
        }
    }
    return 0;
}

/* Copies `len` bytes at byte `at` of the iov's concatenation; 0 when it is shorter. */
static int iov_copy(const struct iovec *iov, int n, size_t at, void *out, size_t len)
{
    char *o = out;
    for (int i = 0; i < n && len; i++) {
        if (at >= iov[i].iov_len) {
            at -= iov[i].iov_len;
            continue;
        }
        size_t take = iov[i].iov_len - at < len ? iov[i].iov_len - at : len;
        memcpy(o, (const char *)iov[i].iov_base + at, take);
        o += take;
        len -= take;
        at = 0;
    }
    return len == 0;
}

/* Bytes of whole records (a main record and its ext record stay together) among the first
 * `room` bytes of the EVENTS payload that starts at byte `at` of the iov; *count: how many. */
static size_t whole_records(const struct iovec *iov, int n, size_t at, size_t room,
                            uint64_t *count)
{
    size_t used = 0;
    for (*count = 0;; ++*count) {
        uint8_t flags;
        if (!iov_copy(iov, n, at + used + offsetof(pioscope_raw_event, flags), &flags, 1))
            return used;
        size_t record = sizeof(pioscope_raw_event) +
                        ((flags & PIOSCOPE_F_EXT) ? sizeof(pioscope_raw_event_ext) : 0);
        if (used + record > room) return used;
        used += record;
    }
}

/* The disk filled after `written` bytes of the chunk in `iov` (header first) reached the file
 * through `fd`: cuts them back to a chunk that reads whole. An EVENTS chunk keeps its whole
 * records, less PARTIAL_ROOM; anything else (a batch of strings), or a chunk with no record
 * left, goes. */
static void cut_back(int fd, const struct iovec *iov, int n, size_t written)
{
    long end = pio_lseek(fd, 0, SEEK_CUR);  /* O_APPEND: the end of this descriptor's write */
    if (end < 0 || (size_t)end < written) return;
    long start = end - (long)written;
    pioscope_raw_chunk_header h;
    size_t keep = 0;
    uint64_t records;
    if (written > sizeof h + PARTIAL_ROOM && iov_copy(iov, n, 0, &h, sizeof h) &&
        h.kind == PIOSCOPE_CHUNK_EVENTS)
        keep = whole_records(iov, n, sizeof h, written - sizeof h - PARTIAL_ROOM, &records);
    if (!keep) {
        pio_ftruncate(fd, start);
        return;
    }
    /* The header is rewritten in place: without O_APPEND, which would send pwrite to the end
     * (the description is this write's own: no other writer shares it). */
    h.payload_bytes = (uint32_t)keep;
    if (pio_fcntl(fd, F_SETFL, 0) < 0 || pio_pwrite(fd, &h, sizeof h, start) != sizeof h) {
        pio_ftruncate(fd, start);
        return;
    }
    pio_ftruncate(fd, start + (long)(sizeof h + keep));
}

/* ---- segments (server mode rotation) ----
 * RATIONALE: a daemon lives for days; with PIOSCOPE_SERVER_FILE_BYTES and _MAX_BYTES its raw
 * file is a sequence of segments <host>-<pid>-<n>.praw, n rising. A write that takes the
 * current segment to its size starts the next one (under create_lock; the other threads keep
 * appending to the current one meanwhile) and deletes the oldest segments until the kept ones
 * and a full new one fit under the cap. Each segment reads alone: its own file header, JOB
 * chunk and every string interned so far. What the deleted segments held is counted, and
 * every new segment says the running totals in its JOB chunk (dropped_records, dropped_bytes,
 * dropped_segments), so the newest segment tells the merge what is gone. */
#define SEGMENT_RING 1024          /* segments kept at most (the cap / the segment size) */
static uint64_t segment_bytes;     /* 0: one file, no rotation */
static uint64_t max_bytes;
static char raw_prefix[PATH_MAX];  /* <dir>/<host>-<pid>- */
static uint32_t seg_current;       /* atomic: segment number of the file being appended to */
static uint32_t seg_first;         /* oldest segment still on disk (under create_lock) */
static uint32_t seg_file_n[SEGMENT_RING];   /* <n> of segment k at [k % SEGMENT_RING] */
static uint64_t seg_size[SEGMENT_RING];     /* atomic: bytes of segment k's file */
static uint64_t seg_records[SEGMENT_RING];  /* atomic: records in segment k's EVENTS chunks */
static uint32_t first_file_n;       /* <n> of segment 0 (under create_lock) */
static uint64_t dropped_records, dropped_bytes, dropped_segments;  /* under create_lock */

/* The path of the file whose <n> is `n`. Returns 0 when it does not fit. */
static int segment_path(uint32_t n, char *out, size_t cap)
{
    pioscope_text t = {out, cap, 0};
    pioscope_text_str(&t, raw_prefix);
    pioscope_text_u64(&t, n);
    pioscope_text_str(&t, PIOSCOPE_RAW_SUFFIX);
    return t.len < t.cap;
}

/* Opens the file of segment `k` for one append. Returns the descriptor or -errno. */
static long open_segment(uint32_t k)
{
    char path[PATH_MAX];
    if (!segment_path(seg_file_n[k % SEGMENT_RING], path, sizeof path)) return -ENAMETOOLONG;
    long fd;
    do fd = pio_openat(AT_FDCWD, path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    while (fd == -EINTR);
    return fd;
}

/* Opens the raw file (its current segment) for one append. Returns the descriptor or -errno. */
static long open_raw(void)
{
    return open_segment(__atomic_load_n(&seg_current, __ATOMIC_ACQUIRE));
}

/* Appends one chunk, or a batch of STRING chunks (their bytes in iov, header first), with one
 * writev, cutting it back to what reads whole when the disk fills (cut_back). Returns 0 or
 * -errno. */
static long append_chunk(int fd, const struct iovec *iov, int n)
{
    size_t written;
    long r = write_all(fd, iov, n, &written);
    if (r < 0 && written > 0) cut_back(fd, iov, n, written);
    return r;
}

void pioscope_raw_fill_header(pioscope_raw_chunk_header *h, uint16_t kind, uint32_t thread,
                              uint32_t payload_bytes)
{
    h->magic = PIOSCOPE_CHUNK_MAGIC;
    h->kind = kind;
    h->reserved = 0;
    h->thread = thread;
    h->payload_bytes = payload_bytes;
    h->sync_ticks = pioscope_ticks();
    h->sync_mono_ns = pioscope_host_ns();
}

/* One chunk to `fd`: header, parts, zero padding, in one writev. */
static long chunk_to(int fd, uint16_t kind, uint32_t thread, const struct iovec *parts,
                     int nparts)
{
    struct iovec v[16];
    size_t payload = 0;
    if (nparts > 14) return -EINVAL;
    for (int i = 0; i < nparts; i++) {
        v[1 + i] = parts[i];
        payload += parts[i].iov_len;
    }
    size_t pad = (8 - payload % 8) % 8;
    pioscope_raw_chunk_header h;
    pioscope_raw_fill_header(&h, kind, thread, (uint32_t)(payload + pad));
    v[0].iov_base = &h;
    v[0].iov_len = sizeof h;
    int n = 1 + nparts;
    if (pad) {
        v[n].iov_base = (void *)zeros;
        v[n++].iov_len = pad;
    }
    return append_chunk(fd, v, n);
}

/* Opens the raw file, writes one PARTIAL chunk saying `reason`, closes. Returns 0 or -errno. */
static long write_partial(const char *reason)
{
    long fd = open_raw();
    if (fd < 0) return fd;
    struct iovec part = {(void *)reason, strlen(reason)};
    long r = chunk_to((int)fd, PIOSCOPE_CHUNK_PARTIAL, pioscope_thread_number(), &part, 1);
    pio_close((int)fd);
    return r;
}

/* Opening or writing the raw file failed (`opening` says which) with -err: the tracer stops
 * recording and says why in a PARTIAL chunk, now if the file takes it, else at the end. A
 * file that could not be opened (the program holds every descriptor the limit allows) still
 * takes the records already made at the end, when descriptors may be free again; a file that
 * could not be written takes nothing more. */
static void raw_fail(long err, int opening)
{
    if (__atomic_exchange_n(&raw_failed, 1, __ATOMIC_ACQ_REL)) return;
    __atomic_store_n(&pioscope_recording, 0, __ATOMIC_RELAXED);
    if (!opening) __atomic_store_n(&raw_dead, 1, __ATOMIC_RELEASE);
    pioscope_text t = {fail_reason, sizeof fail_reason, 0};
    pioscope_text_str(&t, opening ? "tracer stopped: cannot open its raw file: "
                                  : "tracer stopped: write error ");
    text_errno(&t, (int)-err);
    if (write_partial(fail_reason) == 0) __atomic_store_n(&raw_fail_said, 1, __ATOMIC_RELEASE);
}

int pioscope_raw_chunk_to(int fd, uint16_t kind, uint32_t thread, const struct iovec *parts,
                          int nparts)
{
    return (int)chunk_to(fd, kind, thread, parts, nparts);
}

static int create_file(void);

/* True when the file exists, creating a forked child's file on its first chunk. */
static int ensure_file(void)
{
    if (__atomic_load_n(&raw_ready, __ATOMIC_ACQUIRE)) return 1;
    if (!__atomic_load_n(&raw_pending, __ATOMIC_ACQUIRE)) return 0;
    /* A fatal signal handler running on the thread that is creating the file: no deadlock. */
    if (__atomic_load_n(&creating, __ATOMIC_ACQUIRE) && pthread_equal(create_owner, pthread_self()))
        return 0;
    pthread_mutex_lock(&create_lock);
    if (!raw_ready && raw_pending) {
        create_owner = pthread_self();
        __atomic_store_n(&creating, 1, __ATOMIC_RELEASE);
        if (create_file() != 0) __atomic_store_n(&pioscope_recording, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&raw_pending, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&creating, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&create_lock);
    return __atomic_load_n(&raw_ready, __ATOMIC_ACQUIRE);
}

int pioscope_raw_writable(void)
{
    return !__atomic_load_n(&raw_dead, __ATOMIC_ACQUIRE) &&
           (__atomic_load_n(&raw_ready, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&raw_pending, __ATOMIC_ACQUIRE));
}

/* Writers in flight, so the final chunk waits for them and stays last. A thread's own write
 * interrupted by a fatal signal is not waited for (its handler writes the final chunk). */
static int writers;                                            /* atomic */
static __thread int writing __attribute__((tls_model("initial-exec")));

static int writer_enter(void)
{
    __atomic_add_fetch(&writers, 1, __ATOMIC_ACQ_REL);
    if (__atomic_load_n(&raw_dead, __ATOMIC_ACQUIRE)) {
        __atomic_sub_fetch(&writers, 1, __ATOMIC_RELEASE);
        return 0;
    }
    writing++;
    return 1;
}

static void writer_leave(void)
{
    writing--;
    __atomic_sub_fetch(&writers, 1, __ATOMIC_RELEASE);
}

static void rotate(uint32_t k);

/* After a chunk went whole into segment `k` through `fd`: counts its bytes and records for
 * the segment. True when the segment has reached its size. */
static int account(uint32_t k, int fd, uint16_t kind, const struct iovec *iov, int n)
{
    uint32_t slot = k % SEGMENT_RING;
    long end = pio_lseek(fd, 0, SEEK_CUR);  /* O_APPEND: the file's end after this write */
    uint64_t seen = __atomic_load_n(&seg_size[slot], __ATOMIC_RELAXED);
    while (end > 0 && (uint64_t)end > seen &&
           !__atomic_compare_exchange_n(&seg_size[slot], &seen, (uint64_t)end, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    pioscope_raw_chunk_header h;
    if (!kind && iov_copy(iov, n, 0, &h, sizeof h) && h.kind == PIOSCOPE_CHUNK_EVENTS) {
        uint64_t records;
        whole_records(iov, n, sizeof h, h.payload_bytes, &records);
        __atomic_add_fetch(&seg_records[slot], records, __ATOMIC_RELAXED);
    }
    return end > 0 && (uint64_t)end >= segment_bytes;
}

/* Writes one chunk: either its bytes as they are (`kind` 0: iov holds the header) or a header
 * of `kind` before the parts. The failure handling runs while still counted as a writer, so
 * the final chunk comes after the PARTIAL chunk it writes; so does a rotation. */
static int write_chunk(uint16_t kind, uint32_t thread, const struct iovec *iov, int n)
{
    if (!writer_enter()) return -EIO;
    long r = -EBADF;
    if (ensure_file()) {
        uint32_t k = __atomic_load_n(&seg_current, __ATOMIC_ACQUIRE);
        long fd = open_segment(k);
        if (fd < 0) {
            r = fd;
            raw_fail(r, 1);
        } else {
            r = kind ? chunk_to((int)fd, kind, thread, iov, n) : append_chunk((int)fd, iov, n);
            int full = r == 0 && segment_bytes && account(k, (int)fd, kind, iov, n);
            pio_close((int)fd);
            if (r < 0) raw_fail(r, 0);
            if (full) rotate(k);
        }
    }
    writer_leave();
    return (int)r;
}

int pioscope_raw_put(const struct iovec *iov, int n)
{
    return write_chunk(0, 0, iov, n);
}

int pioscope_raw_chunk(uint16_t kind, uint32_t thread, const struct iovec *parts, int nparts)
{
    return write_chunk(kind, thread, parts, nparts);
}

void pioscope_raw_final(const char *partial_reason)
{
    if (__atomic_exchange_n(&raw_final_started, 1, __ATOMIC_ACQ_REL)) return;
    int dead = __atomic_exchange_n(&raw_dead, 1, __ATOMIC_ACQ_REL);
    for (long spins = 0; spins < 50000000; spins++) {  /* bounded: a stuck writer can't hang us */
        if (__atomic_load_n(&writers, __ATOMIC_ACQUIRE) <= writing) break;
        pio_cpu_relax();
    }
    if (!__atomic_load_n(&raw_ready, __ATOMIC_ACQUIRE)) return;  /* a forked child that never
                                                                     wrote anything has no file */
    int failed = __atomic_load_n(&raw_failed, __ATOMIC_ACQUIRE);
    /* The failure's reason, if it could not be written then (the descriptor limit). */
    if (failed && !__atomic_exchange_n(&raw_fail_said, 1, __ATOMIC_ACQ_REL))
        write_partial(fail_reason);
    if (dead) return;  /* a write failed: the file takes nothing more */
    if (partial_reason) {
        write_partial(partial_reason);
    } else if (!failed) {
        long fd = open_raw();
        if (fd < 0) return;
        chunk_to((int)fd, PIOSCOPE_CHUNK_END, pioscope_thread_number(), NULL, 0);
        pio_close((int)fd);
    }
}

/* ---- JOB facts ---- */

/* Appends `arg` quoted the way a POSIX shell would read it back. */
static void shell_quote(pioscope_text *t, const char *arg, size_t n)
{
    int plain = n > 0, control = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)arg[i];
        if (c < 0x20 || c == 0x7f) control = 1;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("_./=:,+@%^-", c)))
            plain = 0;
    }
    if (plain) {
        pioscope_text_put(t, arg, n);
    } else if (!control) {
        pioscope_text_put(t, "'", 1);
        for (size_t i = 0; i < n; i++) {
            if (arg[i] == '\'')
                pioscope_text_str(t, "'\\''");
            else
                pioscope_text_put(t, arg + i, 1);
        }
        pioscope_text_put(t, "'", 1);
    } else {
        static const char hex[] = "0123456789abcdef";
        pioscope_text_str(t, "$'");
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)arg[i];
            if (c == '\n') {
                pioscope_text_str(t, "\\n");
            } else if (c == '\t') {
                pioscope_text_str(t, "\\t");
            } else if (c == '\'' || c == '\\') {
                pioscope_text_put(t, "\\", 1);
                pioscope_text_put(t, arg + i, 1);
            } else if (c < 0x20 || c == 0x7f) {
                char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
                pioscope_text_put(t, e, 4);
            } else {
                pioscope_text_put(t, arg + i, 1);
            }
        }
        pioscope_text_put(t, "'", 1);
    }
}

/* Reads a small /proc file into buf (NUL-terminated); returns its length or -1. */
static long read_proc(const char *path, char *buf, size_t cap)
{
    long fd = pio_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return -1;
    size_t used = 0;
    while (used + 1 < cap) {
        long n = pio_read((int)fd, buf + used, cap - 1 - used);
        if (n == -EINTR) continue;
        if (n <= 0) break;
        used += (size_t)n;
    }
    pio_close((int)fd);
    buf[used] = 0;
    return (long)used;
}

static void fact_str(pioscope_text *t, const char *key, const char *value)
{
    pioscope_text_str(t, key);
    pioscope_text_put(t, "=", 1);
    for (const char *v = value; *v; v++) pioscope_text_put(t, *v == '\n' ? " " : v, 1);
    pioscope_text_put(t, "\n", 1);
}

static void fact_u64(pioscope_text *t, const char *key, uint64_t value)
{
    pioscope_text_str(t, key);
    pioscope_text_put(t, "=", 1);
    pioscope_text_u64(t, value);
    pioscope_text_put(t, "\n", 1);
}

static void host_name(char *out, size_t cap)
{
    struct utsname u;
    const char *name = pio_uname(&u) == 0 && u.nodename[0] ? u.nodename : "unknown";
    size_t i = 0;
    for (; name[i] && i + 1 < cap; i++) out[i] = name[i];
    out[i] = 0;
}

/* The JOB facts this process knows by itself (text written to `t`). */
static void base_facts(pioscope_text *t, const char *host, uint64_t start_unix_ns)
{
    static char buf[32768], quoted[65536];
    fact_str(t, "host", host);
    fact_u64(t, "pid", pioscope_pid);
    fact_u64(t, "ppid", (uint64_t)pio_getppid());
    long n = pio_readlinkat(AT_FDCWD, "/proc/self/exe", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    fact_str(t, "exe", buf);
    long len = read_proc("/proc/self/cmdline", buf, sizeof buf);
    pioscope_text q = {quoted, sizeof quoted, 0};
    for (long i = 0; i < len;) {
        size_t arg = strlen(buf + i);
        if (i) pioscope_text_put(&q, " ", 1);
        shell_quote(&q, buf + i, arg);
        i += (long)arg + 1;
    }
    fact_str(t, "cmdline", quoted);
    n = pio_getcwd(buf, sizeof buf);
    if (n < 0) buf[0] = 0;
    fact_str(t, "cwd", buf);
    fact_u64(t, "start_unix_ns", start_unix_ns);
    fact_str(t, "clock_kind", pioscope_clock_name());
    fact_u64(t, "buffer_bytes", pioscope_buffer_bytes());
    fact_str(t, "tracer_version", PIOSCOPE_TRACER_VERSION);
    if (forked_from) fact_u64(t, "forked_from", forked_from);
}

/* ---- creation ---- */

static int mkdir_p(const char *dir)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);
    if (n >= sizeof path) return -ENAMETOOLONG;
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        char saved = path[i];
        path[i] = 0;
        long r = pio_mkdirat(AT_FDCWD, path, 0777);
        path[i] = saved;
        if (r < 0 && r != -EEXIST) return (int)r;
    }
    return 0;
}

/* The JOB facts of segment `k` (file <n> `n`) of a rotating raw file: which process's
 * segments it is one of (the name of its segment 0), its number, and what rotation has
 * deleted so far. */
static void segment_facts(pioscope_text *t, uint32_t k, uint32_t n)
{
    char first[PATH_MAX];
    if (!segment_path(k ? first_file_n : n, first, sizeof first)) return;
    const char *name = strrchr(first, '/');
    fact_str(t, "first_segment", name ? name + 1 : first);
    fact_u64(t, "segment", k);
    fact_u64(t, "dropped_segments", dropped_segments);
    fact_u64(t, "dropped_records", dropped_records);
    fact_u64(t, "dropped_bytes", dropped_bytes);
}

/* Creates the first free <prefix><n>.praw from n = `from` on, with the file header and the
 * JOB chunk (with the facts of segment `k` when rotating). Returns its descriptor, open, or
 * -1; *n_out: its n. Caller serializes. */
static long new_file(uint32_t from, uint32_t k, uint32_t *n_out)
{
    char host[256], path[PATH_MAX];
    host_name(host, sizeof host);
    long fd = -1;
    for (uint32_t n = from; n < from + 100000; n++) {
        if (!segment_path(n, path, sizeof path)) return -1;
        fd = pio_openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
                        0644);
        *n_out = n;
        if (fd != -EEXIST) break;
    }
    if (fd < 0) return -1;

    pioscope_raw_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, PIOSCOPE_RAW_MAGIC, 8);
    h.version = PIOSCOPE_RAW_VERSION;
    h.header_bytes = sizeof h;
    h.record_bytes = sizeof(pioscope_raw_event);
    h.clock_kind = (uint16_t)pioscope_clock_kind();
    h.pid = pioscope_pid;
    h.ppid = (uint32_t)pio_getppid();
    h.start_ticks = pioscope_ticks();
    h.start_mono_ns = pioscope_host_ns();
    h.start_unix_ns = pioscope_unix_ns();
    h.endian_check = PIOSCOPE_RAW_ENDIAN_CHECK;

    static char job[65536];
    pioscope_text t = {job, sizeof job, 0};
    base_facts(&t, host, h.start_unix_ns);
    pthread_mutex_lock(&facts_lock);
    pioscope_text_put(&t, facts, facts_len);
    pthread_mutex_unlock(&facts_lock);
    if (segment_bytes) segment_facts(&t, k, *n_out);

    struct iovec head = {&h, sizeof h};
    struct iovec part = {job, pioscope_text_used(&t)};
    size_t written;
    if (write_all((int)fd, &head, 1, &written) < 0 ||
        chunk_to((int)fd, PIOSCOPE_CHUNK_JOB, pioscope_thread_number(), &part, 1) < 0) {
        pio_close((int)fd);
        return -1;
    }
    return fd;
}

/* Creates the process's raw file <dir>/<host>-<pid>-<n>.praw (smallest free n), its first
 * segment when rotating; in a forked child, with the strings interned so far. Caller
 * serializes. */
static int create_file(void)
{
    char host[256];
    host_name(host, sizeof host);
    char safe_host[256];
    size_t i = 0;
    for (; host[i]; i++) safe_host[i] = (host[i] == '/' || host[i] <= ' ') ? '_' : host[i];
    safe_host[i] = 0;
    if (mkdir_p(raw_dir) != 0) return -1;
    pioscope_text p = {raw_prefix, sizeof raw_prefix, 0};
    pioscope_text_str(&p, raw_dir);
    pioscope_text_put(&p, "/", 1);
    pioscope_text_str(&p, safe_host);
    pioscope_text_put(&p, "-", 1);
    pioscope_text_u64(&p, pioscope_pid);
    pioscope_text_put(&p, "-", 1);
    if (p.len >= p.cap) return -1;

    seg_first = 0;
    dropped_records = dropped_bytes = dropped_segments = 0;
    seg_size[0] = seg_records[0] = 0;
    __atomic_store_n(&seg_current, 0, __ATOMIC_RELEASE);
    uint32_t n;
    long fd = new_file(0, 0, &n);
    if (fd < 0) {
        raw_file[0] = 0;
        return -1;
    }
    seg_file_n[0] = first_file_n = n;
    segment_path(n, raw_file, sizeof raw_file);
    if (replay_strings) pioscope_intern_replay((int)fd, 1);
    long end = pio_lseek((int)fd, 0, SEEK_CUR);
    seg_size[0] = end > 0 ? (uint64_t)end : 0;
    pio_close((int)fd);
    __atomic_store_n(&raw_ready, 1, __ATOMIC_RELEASE);
    return 0;
}

/* Segment `k` is full: starts segment k + 1, after deleting the oldest segments until the
 * kept ones and a full new one fit under the cap. Nothing when another thread did it first;
 * a new file that cannot be created leaves the writes on segment k (the next write tries
 * again). */
static void rotate(uint32_t k)
{
    pthread_mutex_lock(&create_lock);
    if (__atomic_load_n(&seg_current, __ATOMIC_ACQUIRE) != k) {
        pthread_mutex_unlock(&create_lock);
        return;
    }
    uint64_t kept = 0;
    for (uint32_t j = seg_first; j <= k; j++)
        kept += __atomic_load_n(&seg_size[j % SEGMENT_RING], __ATOMIC_RELAXED);
    while (seg_first < k && kept + segment_bytes > max_bytes) {
        uint32_t slot = seg_first % SEGMENT_RING;
        char path[PATH_MAX];
        if (segment_path(seg_file_n[slot], path, sizeof path))
            pio_unlinkat(AT_FDCWD, path, 0);
        uint64_t size = __atomic_load_n(&seg_size[slot], __ATOMIC_RELAXED);
        dropped_records += __atomic_load_n(&seg_records[slot], __ATOMIC_RELAXED);
        dropped_bytes += size;
        dropped_segments++;
        kept -= size;
        seg_first++;
    }
    uint32_t next = k + 1, slot = next % SEGMENT_RING, n;
    long fd = new_file(seg_file_n[k % SEGMENT_RING] + 1, next, &n);
    if (fd < 0) {
        pthread_mutex_unlock(&create_lock);
        return;
    }
    seg_file_n[slot] = n;
    seg_records[slot] = 0;
    uint32_t strings_end = pioscope_intern_replay((int)fd, 1);
    long end = pio_lseek((int)fd, 0, SEEK_CUR);
    __atomic_store_n(&seg_size[slot], end > 0 ? (uint64_t)end : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&seg_current, next, __ATOMIC_RELEASE);
    /* Strings interned during the replay may have gone to segment k: repeated here. */
    if (pioscope_intern_replay((int)fd, strings_end) != strings_end) {
        end = pio_lseek((int)fd, 0, SEEK_CUR);
        uint64_t seen = __atomic_load_n(&seg_size[slot], __ATOMIC_RELAXED);
        while (end > 0 && (uint64_t)end > seen &&
               !__atomic_compare_exchange_n(&seg_size[slot], &seen, (uint64_t)end, 0,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    }
    pio_close((int)fd);
    segment_path(n, raw_file, sizeof raw_file);
    pthread_mutex_unlock(&create_lock);
}

/* Writes the JOB fact `key` = `value`. */
static void job_fact_u64(const char *key, uint64_t value)
{
    char number[24];
    pioscope_text v = {number, sizeof number, 0};
    pioscope_text_u64(&v, value);
    pioscope_write_job_fact(key, number);
}

void pioscope_raw_rotate_at(uint64_t file_bytes, uint64_t cap)
{
    if (!file_bytes || !cap) return;
    /* Two segments at least: the one rotation deletes is never the one just left. */
    if (file_bytes > cap / 2) file_bytes = cap / 2;
    if (file_bytes < cap / (SEGMENT_RING - 2)) file_bytes = cap / (SEGMENT_RING - 2);
    pthread_mutex_lock(&create_lock);
    max_bytes = cap;
    segment_bytes = file_bytes;
    /* Segment 0 exists already: its facts follow in a JOB chunk of their own. */
    char text[PATH_MAX + 256];
    pioscope_text t = {text, sizeof text, 0};
    segment_facts(&t, 0, first_file_n);
    pthread_mutex_unlock(&create_lock);
    struct iovec part = {text, pioscope_text_used(&t)};
    pioscope_raw_chunk(PIOSCOPE_CHUNK_JOB, pioscope_thread_number(), &part, 1);
    job_fact_u64("server_file_bytes", file_bytes);
    job_fact_u64("server_max_bytes", cap);
}

int pioscope_raw_create(const char *dir)
{
    size_t n = strlen(dir);
    if (n >= sizeof raw_dir) return -1;
    memcpy(raw_dir, dir, n + 1);
    while (n > 1 && raw_dir[n - 1] == '/') raw_dir[--n] = 0;
    pthread_mutex_lock(&create_lock);
    int r = create_file();
    pthread_mutex_unlock(&create_lock);
    return r;
}

const char *pioscope_raw_path(void)
{
    return raw_file;
}

int pioscope_raw_started(void)
{
    return __atomic_load_n(&raw_ready, __ATOMIC_ACQUIRE);
}

/* ---- fork ---- */

void pioscope_raw_lock_for_fork(void)
{
    pthread_mutex_lock(&create_lock);
    pthread_mutex_lock(&facts_lock);
}

void pioscope_raw_unlock_after_fork(int child)
{
    if (child) {
        pthread_mutex_init(&create_lock, NULL);
        pthread_mutex_init(&facts_lock, NULL);
    } else {
        pthread_mutex_unlock(&facts_lock);
        pthread_mutex_unlock(&create_lock);
    }
}

void pioscope_raw_reopen(uint32_t parent_pid)
{
    __atomic_store_n(&raw_ready, 0, __ATOMIC_RELEASE);
    raw_file[0] = 0;
    if (parent_pid) {
        forked_from = parent_pid;
        writers = 0;  /* other threads' writes in flight at fork are not in this process */
    }
    /* (a failed exec keeps forked_from: the process is still what it was) */
    replay_strings = 1;
    creating = 0;
    raw_failed = raw_fail_said = raw_final_started = 0;
    __atomic_store_n(&raw_pending, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&raw_dead, 0, __ATOMIC_RELEASE);
}

/* ---- side chunks ---- */

void pioscope_write_job_fact(const char *key, const char *value)
{
    char line[4096];
    pioscope_text t = {line, sizeof line, 0};
    fact_str(&t, key, value ? value : "");
    size_t n = pioscope_text_used(&t);
    if (n && line[n - 1] != '\n') line[n - 1] = '\n';  /* truncated: keep the line ending */
    struct iovec part = {line, n};
    pioscope_raw_chunk(PIOSCOPE_CHUNK_JOB, pioscope_thread_number(), &part, 1);
    pthread_mutex_lock(&facts_lock);
    if (facts_len + n <= sizeof facts) {
        memcpy(facts + facts_len, line, n);
        facts_len += n;
    }
    pthread_mutex_unlock(&facts_lock);
}

void pioscope_write_settings(uint32_t object, uint16_t func, uint64_t ticks, const char *text,
                             size_t length)
{
    pioscope_raw_settings s = {object, func, 0, ticks};
    struct iovec parts[2] = {{&s, sizeof s}, {(void *)text, text ? length : 0}};
    pioscope_raw_chunk(PIOSCOPE_CHUNK_SETTINGS, pioscope_thread_number(), parts, 2);
}

void pioscope_write_clock_sync(uint32_t phase, int64_t offset_ns, uint64_t rtt_ns,
                               uint64_t local_mono_ns)
{
    pioscope_raw_clock_sync c = {phase, 0, offset_ns, rtt_ns, local_mono_ns};
    struct iovec part = {&c, sizeof c};
    pioscope_raw_chunk(PIOSCOPE_CHUNK_CLOCK_SYNC, pioscope_thread_number(), &part, 1);
}
