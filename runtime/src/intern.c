/* intern.c: owns the process-wide string table (file paths, region names, communicators): ids,
 * absolute paths, the file system type of each path, and the STRING chunk of each new string.
 * Reached from open/fopen and region begins, never from read/write: a mutex is fine here.
 *
 * New STRING chunks wait in one process-wide batch, written before any EVENTS chunk
 * (pioscope_intern_flush), when full, and at the end: a string still precedes every record
 * that uses it in the file, and a program that creates many files pays one raw-file write (an
 * open and a close, rawfile.c) per batch, not per path. */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/statfs.h>

#include "core.h"
#include "fd_table.h"
#include "sys.h"

#define BUCKETS (1u << 16)
#define MAX_IDS (1u << 22)
#define ARENA_BYTES (1u << 20)

struct entry {
    struct entry *next;   /* same bucket */
    uint64_t hash;
    uint64_t fs_magic;
    uint32_t id;
    uint16_t kind;
    uint16_t length;
    char text[];          /* NUL-terminated */
};

static struct entry **buckets;  /* mmap'd */
static struct entry **by_id;    /* mmap'd, MAX_IDS slots; atomic stores */
static char *arena;
static size_t arena_left;
static uint32_t next_id = 1;    /* atomic loads outside the lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t lock_holder;   /* valid while lock_held */
static int lock_held;           /* atomic */

/* STRING chunks not yet written (under the lock). */
static char batch[65536] __attribute__((aligned(8)));
static size_t batch_len;        /* atomic loads outside the lock */

static void lock_table(void)
{
    pthread_mutex_lock(&lock);
    lock_holder = pthread_self();
    __atomic_store_n(&lock_held, 1, __ATOMIC_RELEASE);
}

static void unlock_table(void)
{
    __atomic_store_n(&lock_held, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

int pioscope_intern_init(void)
{
    if (buckets) return 0;
    by_id = pio_mmap_anon(sizeof *by_id * MAX_IDS);
    buckets = pio_mmap_anon(sizeof *buckets * BUCKETS);
    return buckets && by_id ? 0 : -1;
}

static uint64_t hash_text(uint16_t kind, const char *text, size_t n)
{
    uint64_t h = 1469598103934665603ull ^ kind;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
    return h;
}

static struct entry *find(uint64_t h, uint16_t kind, const char *text, size_t n)
{
    for (struct entry *e = buckets[h % BUCKETS]; e; e = e->next)
        if (e->hash == h && e->kind == kind && e->length == n && !memcmp(e->text, text, n))
            return e;
    return NULL;
}

static long write_string(int fd, const struct entry *e)
{
    pioscope_raw_string s = {e->id, e->kind, e->length, e->fs_magic};
    struct iovec parts[2] = {{&s, sizeof s}, {(void *)e->text, e->length}};
    if (fd >= 0) return pioscope_raw_chunk_to(fd, PIOSCOPE_CHUNK_STRING, 0, parts, 2);
    return pioscope_raw_chunk(PIOSCOPE_CHUNK_STRING, pioscope_thread_number(), parts, 2);
}

/* Writes the batch out (caller holds the lock). A batch the file could not be opened for
 * stays, for the end (the records using it stay in their buffers too, buffer.c). */
static void write_batch(void)
{
    if (!batch_len) return;
    struct iovec all = {batch, batch_len};
    if (pioscope_raw_put(&all, 1) == 0 || !pioscope_raw_writable())
        __atomic_store_n(&batch_len, 0, __ATOMIC_RELEASE);
}

/* Adds the STRING chunk of `e` to the batch (caller holds the lock); one that does not fit
 * even after the batch went out is written at once. */
static void queue_string(const struct entry *e)
{
    pioscope_raw_string s = {e->id, e->kind, e->length, e->fs_magic};
    size_t payload = (sizeof s + e->length + 7) & ~(size_t)7;
    size_t chunk = sizeof(pioscope_raw_chunk_header) + payload;
    if (batch_len + chunk > sizeof batch) write_batch();
    if (batch_len + chunk > sizeof batch) {
        write_string(-1, e);
        return;
    }
    char *p = batch + batch_len;
    pioscope_raw_fill_header((pioscope_raw_chunk_header *)p, PIOSCOPE_CHUNK_STRING,
                             pioscope_thread_number(), (uint32_t)payload);
    p += sizeof(pioscope_raw_chunk_header);
    memcpy(p, &s, sizeof s);
    memcpy(p + sizeof s, e->text, e->length);
    memset(p + sizeof s + e->length, 0, payload - sizeof s - e->length);
    __atomic_store_n(&batch_len, batch_len + chunk, __ATOMIC_RELEASE);
}

void pioscope_intern_flush(void)
{
    if (!__atomic_load_n(&batch_len, __ATOMIC_ACQUIRE)) return;
    /* A signal handler that interrupted this thread's own insert: the batch goes out later. */
    if (__atomic_load_n(&lock_held, __ATOMIC_ACQUIRE) && pthread_equal(lock_holder, pthread_self()))
        return;
    lock_table();
    write_batch();
    unlock_table();
}

/* Caller holds the lock. */
static struct entry *insert(uint64_t h, uint16_t kind, const char *text, size_t n,
                            uint64_t fs_magic)
{
    if (next_id >= MAX_IDS) return NULL;
    size_t need = (sizeof(struct entry) + n + 1 + 7) & ~(size_t)7;
    if (need > arena_left) {
        size_t bytes = need > ARENA_BYTES ? need : ARENA_BYTES;
        char *a = pio_mmap_anon(bytes);
        if (!a) return NULL;
        arena = a;
        arena_left = bytes;
    }
    struct entry *e = (struct entry *)arena;
    arena += need;
    arena_left -= need;
    e->hash = h;
    e->fs_magic = fs_magic;
    e->kind = kind;
    e->length = (uint16_t)n;
    memcpy(e->text, text, n);
    e->text[n] = 0;
    e->id = next_id;
    e->next = buckets[h % BUCKETS];
    buckets[h % BUCKETS] = e;
    __atomic_store_n(&by_id[e->id], e, __ATOMIC_RELEASE);
    __atomic_store_n(&next_id, next_id + 1, __ATOMIC_RELEASE);
    /* Queued before the id is returned, so the string precedes every record using it. */
    queue_string(e);
    return e;
}

/* The file system type (statfs f_type) of an absolute path: from fstatfs(fd) when the file is
 * open, else statfs of the path, else of its directory (a file that does not exist yet). The
 * path is cut at its last slash for that, then restored. */
static uint64_t fs_magic_of(char *path, size_t n, int fd)
{
    struct statfs sf;
    if (fd >= 0 && pio_fstatfs(fd, &sf) == 0) return (uint64_t)(unsigned long)sf.f_type;
    if (pio_statfs(path, &sf) == 0) return (uint64_t)(unsigned long)sf.f_type;
    size_t cut = n;
    while (cut > 1 && path[cut - 1] != '/') cut--;
    if (cut > 1) cut--;  /* keep "/" itself */
    char saved = path[cut];
    path[cut] = 0;
    long r = pio_statfs(path, &sf);
    path[cut] = saved;
    return r == 0 ? (uint64_t)(unsigned long)sf.f_type : 0;
}

/* The id of a string already interned, 0 if none. */
static uint32_t lookup(uint64_t h, uint16_t kind, const char *text, size_t n)
{
    lock_table();
    struct entry *e = find(h, kind, text, n);
    unlock_table();
    return e ? e->id : 0;
}

/* Interns a string whose file system magic is known (0 for texts that are not FILEs). */
static uint32_t intern_with_magic(uint64_t h, uint16_t kind, const char *text, size_t n,
                                  uint64_t magic)
{
    lock_table();
    struct entry *e = find(h, kind, text, n);
    if (!e) e = insert(h, kind, text, n, magic);
    unlock_table();
    return e ? e->id : 0;
}

/* `text` is NUL-terminated at n; FILE texts are writable (fs_magic_of cuts them briefly).
 * fd: the open file (-1: none); -2: a FILE string that names no path (no file system type). */
static uint32_t intern(uint16_t kind, char *text, size_t n, int fd)
{
    if (!buckets || !text) return 0;
    if (n > UINT16_MAX) n = UINT16_MAX;
    uint64_t h = hash_text(kind, text, n);
    uint32_t id = lookup(h, kind, text, n);
    if (id) return id;
    uint64_t magic = kind == PIOSCOPE_STRING_FILE && fd != -2 ? fs_magic_of(text, n, fd) : 0;
    return intern_with_magic(h, kind, text, n, magic);
}

/* "<file path>:<member>", a FILE string on the file's file system: what an HDF5 dataset or a
 * PnetCDF variable is recorded as (Darshan names its H5D records the same way). */
uint32_t pioscope_intern_member(uint32_t file, const char *member)
{
    const char *path = pioscope_intern_text(file);
    if (!path || !member || !buckets) return 0;
    char text[PATH_MAX];
    pioscope_text t = {text, sizeof text, 0};
    pioscope_text_str(&t, path);
    pioscope_text_put(&t, ":", 1);
    pioscope_text_str(&t, member);
    if (t.len >= sizeof text || t.len > UINT16_MAX) return 0;
    uint64_t h = hash_text(PIOSCOPE_STRING_FILE, text, t.len);
    uint32_t id = lookup(h, PIOSCOPE_STRING_FILE, text, t.len);
    if (id) return id;
    struct entry *f = __atomic_load_n(&by_id[file], __ATOMIC_ACQUIRE);
    return intern_with_magic(h, PIOSCOPE_STRING_FILE, text, t.len, f->fs_magic);
}

uint32_t pioscope_intern_string(uint16_t kind, const char *text)
{
    if (!text) return 0;
    if (kind == PIOSCOPE_STRING_FILE) return pioscope_intern_path(text, -1);
    return intern(kind, (char *)text, strlen(text), -1);  /* not written to: not a FILE */
}

uint32_t pioscope_intern_pseudo_file(const char *text)
{
    return text ? intern(PIOSCOPE_STRING_FILE, (char *)text, strlen(text), -2) : 0;
}

/* Appends `path` to the absolute directory `out` (length n, no trailing slash except "/"),
 * resolving "." and ".." and repeated slashes lexically. Returns the new length, or 0 if it
 * does not fit. */
static size_t join_path(char *out, size_t n, size_t cap, const char *path)
{
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        const char *s = p;
        while (*p && *p != '/') p++;
        size_t len = (size_t)(p - s);
        if (len == 0 || (len == 1 && s[0] == '.')) continue;
        if (len == 2 && s[0] == '.' && s[1] == '.') {
            while (n > 1 && out[n - 1] != '/') n--;
            if (n > 1) n--;  /* the slash before the removed component */
            out[n] = 0;
            continue;
        }
        if (n + 1 + len + 1 > cap) return 0;
        if (n > 1) out[n++] = '/';
        memcpy(out + n, s, len);
        n += len;
        out[n] = 0;
    }
    return n;
}

/* `abs` holds an absolute directory (NUL-terminated, room for PATH_MAX): `path` is joined to
 * it in place and the result interned. */
static uint32_t intern_joined(char *abs, const char *path, int fd)
{
    size_t n = strlen(abs);
    if (n == 0 || abs[0] != '/') return 0;
    while (n > 1 && abs[n - 1] == '/') abs[--n] = 0;
    n = join_path(abs, n, PATH_MAX, path);
    if (n == 0) return 0;
    return intern(PIOSCOPE_STRING_FILE, abs, n, fd);
}

uint32_t pioscope_intern_path(const char *path, int fd)
{
    if (!path || !buckets) return 0;
    char abs[PATH_MAX];
    if (path[0] == '/') {
        abs[0] = '/';
        abs[1] = 0;
    } else if (pio_getcwd(abs, sizeof abs) < 0) {
        return 0;
    }
    return intern_joined(abs, path, fd);
}

uint32_t pioscope_intern_path_at(int dirfd, const char *path, int fd)
{
    if (!path || !buckets) return 0;
    if (path[0] == '/' || dirfd == AT_FDCWD) return pioscope_intern_path(path, fd);
    if (path[0] == 0) return pioscope_fd_file(dirfd);  /* AT_EMPTY_PATH: the fd itself */
    char abs[PATH_MAX];
    const char *dir = pioscope_intern_text(pioscope_fd_file(dirfd));
    if (dir) {
        size_t n = strlen(dir);
        if (n >= sizeof abs) return 0;
        memcpy(abs, dir, n + 1);
    } else {
        char proc[64];
        pioscope_text t = {proc, sizeof proc, 0};
        pioscope_text_str(&t, "/proc/self/fd/");
        pioscope_text_i64(&t, dirfd);
        long n = pio_readlinkat(AT_FDCWD, proc, abs, sizeof abs - 1);
        if (n <= 0) return 0;
        abs[n] = 0;
    }
    return intern_joined(abs, path, fd);
}

const char *pioscope_intern_text(uint32_t id)
{
    if (!by_id || id == 0 || id >= MAX_IDS) return NULL;
    struct entry *e = __atomic_load_n(&by_id[id], __ATOMIC_ACQUIRE);
    return e ? e->text : NULL;
}

/* Lock-free: entries are immutable once published. A string being inserted meanwhile is
 * written by its inserter after the new file exists, at worst twice (same id and text). */
uint32_t pioscope_intern_replay(int fd, uint32_t from)
{
    uint32_t end = __atomic_load_n(&next_id, __ATOMIC_ACQUIRE);
    for (uint32_t id = from ? from : 1; id < end; id++) {
        struct entry *e = __atomic_load_n(&by_id[id], __ATOMIC_ACQUIRE);
        if (e) write_string(fd, e);
    }
    return end;
}

void pioscope_intern_lock_for_fork(void)
{
    lock_table();
}

/* The child's new file replays every string (its batch would repeat them). */
void pioscope_intern_unlock_after_fork(int child)
{
    if (child) {
        batch_len = 0;
        lock_held = 0;
        pthread_mutex_init(&lock, NULL);
    } else {
        unlock_table();
    }
}
