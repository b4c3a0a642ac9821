/* lifecycle.c: owns the tracer's life in a process: configuration from the environment, init
 * (constructor), the end (destructor, _exit, exec), fatal signals, fork, and the MPI rank.
 *
 * Environment (read once, at init):
 *   PIOSCOPE_RAW_DIR       where raw files go (default ./pioscope-raw, created if missing)
 *   PIOSCOPE_BUFFER_BYTES  per-thread buffer, bytes with optional K/M/G (default 8M, min 4K)
 *   PIOSCOPE_CLOCK         tsc | monotonic (default: tsc when constant_tsc and nonstop_tsc)
 *   PIOSCOPE_DISABLE       1: do not trace this process
 *   PIOSCOPE_EXCLUDE       comma-separated executable names not traced (default: MPI
 *                          launchers, DEFAULT_EXCLUDE below); checked against the executable
 *                          and argv[0]
 *   PIOSCOPE_DEBUG         1: say on stderr where the trace goes, or why there is none
 *   PIOSCOPE_SERVER        1: server mode, inside a storage server daemon (server_mode.c) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"
#include "fd_table.h"
#include "server_mode.h"
#include "sys.h"

#define DEFAULT_EXCLUDE "mpiexec,mpiexec.hydra,mpirun,hydra_pmi_proxy,orterun,orted,prterun,prted"

uint32_t pioscope_pid PIOSCOPE_HIDDEN;
static int initialized;
static int active;       /* init succeeded: this process is traced */
static int finishing;    /* atomic: the final chunk is being written */
static int debug;
static int mpi_rank = -1;

/* ---- small helpers ---- */

static void debug_say(const char *what, const char *detail, int err)
{
    if (!debug) return;
    char line[PATH_MAX + 256];
    pioscope_text t = {line, sizeof line, 0};
    pioscope_text_str(&t, "pioscope: ");
    pioscope_text_str(&t, what);
    if (detail) {
        pioscope_text_str(&t, " ");
        pioscope_text_str(&t, detail);
    }
    if (err) {
        const char *name = pioscope_errno_name(err);
        pioscope_text_str(&t, ": ");
        if (name)
            pioscope_text_str(&t, name);
        else
            pioscope_text_i64(&t, err);
    }
    pioscope_text_str(&t, "\n");
    pio_write(2, line, pioscope_text_used(&t));
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* True when `name` is one of the comma-separated words of `list`. */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    if (n == 0) return 0;
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !memcmp(p, name, n)) return 1;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

/* Launchers get LD_PRELOAD too; they are not traced. Checks the executable and argv[0]. */
static int excluded(void)
{
    const char *list = getenv("PIOSCOPE_EXCLUDE");
    if (!list) list = DEFAULT_EXCLUDE;
    char exe[PATH_MAX];
    long n = pio_readlinkat(AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    if (in_list(list, base_name(exe))) return 1;
    char argv0[PATH_MAX];
    long fd = pio_openat(AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return 0;
    n = pio_read((int)fd, argv0, sizeof argv0 - 1);
    pio_close((int)fd);
    argv0[n > 0 ? n : 0] = 0;
    return in_list(list, base_name(argv0));
}

/* "8388608", "64K", "8M", "1G" (powers of 1024). 0 when unparsable. */
size_t pioscope_parse_bytes(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return 0;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    return *end ? 0 : (size_t)v;
}

/* ---- the end ---- */

void pioscope_finish(const char *partial_reason)
{
    if (!active || __atomic_exchange_n(&finishing, 1, __ATOMIC_ACQ_REL)) return;
    __atomic_store_n(&pioscope_recording, 0, __ATOMIC_RELAXED);
    pioscope_flush_all();
    pioscope_raw_final(partial_reason);
}

/* The process is ending in this image (not in a vfork child sharing our memory). */
static int ours(void)
{
    return active && (uint32_t)pio_getpid() == pioscope_pid;
}

__attribute__((destructor)) static void pioscope_fini(void)
{
    if (ours()) pioscope_finish(NULL);
}

typedef void exit_fn(int);
static void *real__exit, *real__Exit;

PIOSCOPE_EXPORT void _exit(int status)
{
    if (ours()) pioscope_finish(NULL);
    exit_fn *real = pioscope_resolve(&real__exit, "_exit");
    if (real) real(status);
    for (;;) pio_sys3(SYS_exit_group, status, 0, 0);
}

PIOSCOPE_EXPORT void _Exit(int status)
{
    if (ours()) pioscope_finish(NULL);
    exit_fn *real = pioscope_resolve(&real__Exit, "_Exit");
    if (real) real(status);
    for (;;) pio_sys3(SYS_exit_group, status, 0, 0);
}

/* ---- fatal signals ---- */

/* The five of the design, plus the other signals whose default action ends the process and
 * that a batch system or a crash sends (not SIGPIPE, SIGALRM, SIGUSR*: programs use those). */
static const int fatal_signals[] = {SIGTERM, SIGINT, SIGABRT, SIGSEGV, SIGBUS,
                                    SIGHUP, SIGQUIT, SIGILL, SIGFPE, SIGXCPU};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction old_actions[NFATAL];

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGABRT: return "SIGABRT";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGXCPU: return "SIGXCPU";
    default: return "unknown";
    }
}

/* Flush, say why the trace ends here, then let the signal do what it would have done. */
static void on_fatal_signal(int sig)
{
    int saved = errno;
    if (ours()) {
        char reason[64];
        pioscope_text t = {reason, sizeof reason, 0};
        pioscope_text_str(&t, "killed by signal ");
        pioscope_text_str(&t, signal_name(sig));
        pioscope_finish(reason);
    }
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i] == sig) sigaction(sig, &old_actions[i], NULL);
    raise(sig);  /* blocked until this handler returns, then delivered with the old action */
    errno = saved;
}

/* Only over the default action: a signal the program (or its launcher) ignores or handles
 * keeps doing so. A handler the program installs later replaces ours. */
static void install_signal_handlers(void)
{
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction now;
        if (sigaction(fatal_signals[i], NULL, &now) != 0) continue;
        if ((now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL) continue;
        struct sigaction ours_sa;
        memset(&ours_sa, 0, sizeof ours_sa);
        ours_sa.sa_handler = on_fatal_signal;
        sigemptyset(&ours_sa.sa_mask);
        ours_sa.sa_flags = SA_ONSTACK;
        sigaction(fatal_signals[i], &ours_sa, &old_actions[i]);
    }
}

/* ---- fork ---- */

static void fork_prepare(void)
{
    pioscope_intern_lock_for_fork();
    pioscope_raw_lock_for_fork();
}

static void fork_parent(void)
{
    pioscope_raw_unlock_after_fork(0);
    pioscope_intern_unlock_after_fork(0);
}

/* The child writes its own file (created on its first chunk), without the parent's unflushed
 * records that fork copied into its buffers. */
static void fork_child(void)
{
    pioscope_raw_unlock_after_fork(1);
    pioscope_intern_unlock_after_fork(1);
    uint32_t parent = pioscope_pid;
    pioscope_pid = (uint32_t)pio_getpid();
    pioscope_buffers_after_fork();
    if (__atomic_load_n(&finishing, __ATOMIC_ACQUIRE)) return;  /* the parent was ending */
    if (!pioscope_raw_writable()) return;                      /* or had stopped */
    pioscope_raw_reopen(parent);
    __atomic_store_n(&finishing, 0, __ATOMIC_RELEASE);
    pioscope_server_after_fork();
}

/* ---- exec: this image's trace ends; the new image starts its own file ---- */

/* Returns 1 when the trace was ended, so after_failed_exec can start a new file. */
static int before_exec(const char *path)
{
    if (!ours() || !__atomic_load_n(&pioscope_recording, __ATOMIC_RELAXED)) return 0;
    pioscope_flush_all();
    /* A forked child that recorded nothing still has no file: it gets none. */
    if (pioscope_raw_started()) pioscope_write_job_fact("exec", path);
    pioscope_finish(NULL);
    return 1;
}

/* The exec failed and this image goes on: its trace goes on in a new file (same pid, next n). */
static int after_failed_exec(int ended, int result)
{
    if (!ended) return result;
    int saved = errno;
    pioscope_raw_reopen(0);
    __atomic_store_n(&finishing, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pioscope_recording, 1, __ATOMIC_RELEASE);
    errno = saved;
    return result;
}

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execv_fn(const char *, char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
static void *real_execve, *real_execv, *real_execvp, *real_execvpe, *real_fexecve;

static int exec_missing(void)
{
    errno = ENOSYS;
    return -1;
}

PIOSCOPE_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn *real = pioscope_resolve(&real_execve, "execve");
    if (!real) return exec_missing();
    int ended = before_exec(path);
    return after_failed_exec(ended, real(path, argv, envp));
}

PIOSCOPE_EXPORT int execv(const char *path, char *const argv[])
{
    execv_fn *real = pioscope_resolve(&real_execv, "execv");
    if (!real) return exec_missing();
    int ended = before_exec(path);
    return after_failed_exec(ended, real(path, argv));
}

PIOSCOPE_EXPORT int execvp(const char *file, char *const argv[])
{
    execv_fn *real = pioscope_resolve(&real_execvp, "execvp");
    if (!real) return exec_missing();
    int ended = before_exec(file);
    return after_failed_exec(ended, real(file, argv));
}

PIOSCOPE_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    execve_fn *real = pioscope_resolve(&real_execvpe, "execvpe");
    if (!real) return exec_missing();
    int ended = before_exec(file);
    return after_failed_exec(ended, real(file, argv, envp));
}

PIOSCOPE_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    fexecve_fn *real = pioscope_resolve(&real_fexecve, "fexecve");
    if (!real) return exec_missing();
    int ended = before_exec("(fexecve)");
    return after_failed_exec(ended, real(fd, argv, envp));
}

/* The execl family: glibc's own calls execve internally, out of our reach, so they are
 * rebuilt here on the vector forms (the way glibc builds them, on the stack). */
static size_t count_args(const char *arg, va_list ap)
{
    size_t n = 1;
    if (!arg) return 1;
    while (va_arg(ap, const char *)) n++;
    return n + 1;
}

enum exec_form { EXEC_V, EXEC_VP, EXEC_VE };

/* argv from arg and the rest of the list (execle: then envp), passed to the vector form. */
static inline int exec_list(int form, const char *path, const char *arg, va_list ap)
{
    va_list counting;
    va_copy(counting, ap);
    size_t n = count_args(arg, counting);
    va_end(counting);
    char *argv[n];
    argv[0] = (char *)arg;
    for (size_t i = 1; i < n; i++) argv[i] = va_arg(ap, char *);
    if (form == EXEC_VE) return execve(path, argv, va_arg(ap, char *const *));
    return form == EXEC_VP ? execvp(path, argv) : execv(path, argv);
}

PIOSCOPE_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int r = exec_list(EXEC_V, path, arg, ap);
    va_end(ap);
    return r;
}

PIOSCOPE_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int r = exec_list(EXEC_VP, file, arg, ap);
    va_end(ap);
    return r;
}

PIOSCOPE_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int r = exec_list(EXEC_VE, path, arg, ap);
    va_end(ap);
    return r;
}

/* ---- MPI rank ---- */

void pioscope_set_rank(int rank, int size)
{
    char v[24];
    mpi_rank = rank;
    pioscope_text t = {v, sizeof v, 0};
    pioscope_text_i64(&t, rank);
    pioscope_write_job_fact("rank", v);
    t.len = 0;
    pioscope_text_i64(&t, size);
    pioscope_write_job_fact("size", v);
}

int pioscope_rank(void)
{
    return mpi_rank;
}

/* ---- init ---- */

__attribute__((constructor)) static void pioscope_init(void)
{
    if (initialized) return;
    initialized = 1;
    const char *s = getenv("PIOSCOPE_DEBUG");
    debug = s && *s && strcmp(s, "0") != 0;
    s = getenv("PIOSCOPE_DISABLE");
    if (s && *s && strcmp(s, "0") != 0) return;
    if (excluded()) return;

    pioscope_pid = (uint32_t)pio_getpid();
    pioscope_clock_init(getenv("PIOSCOPE_CLOCK"));
    s = getenv("PIOSCOPE_TEST_CLOCK_SKEW");
    if (pioscope_clock_test_skew(s) < 0) debug_say("ignoring PIOSCOPE_TEST_CLOCK_SKEW", s, 0);
    size_t bytes = PIOSCOPE_DEFAULT_BUFFER_BYTES;
    s = getenv("PIOSCOPE_BUFFER_BYTES");
    if (s && *s) {
        size_t v = pioscope_parse_bytes(s);
        if (v)
            bytes = v;
        else
            debug_say("ignoring PIOSCOPE_BUFFER_BYTES", s, 0);
    }
    if (pioscope_buffers_init(bytes) != 0 || pioscope_fd_table_init() != 0 ||
        pioscope_intern_init() != 0) {
        debug_say("out of memory at start, not tracing", NULL, 0);
        return;
    }

    char dir[PATH_MAX];
    s = getenv("PIOSCOPE_RAW_DIR");
    if (!s || !*s) s = "pioscope-raw";
    pioscope_text t = {dir, sizeof dir, 0};
    if (s[0] != '/') {
        char cwd[PATH_MAX];
        if (pio_getcwd(cwd, sizeof cwd) < 0) return;
        pioscope_text_str(&t, cwd);
        pioscope_text_str(&t, "/");
    }
    pioscope_text_str(&t, s);
    if (t.len >= t.cap || pioscope_raw_create(dir) != 0) {
        debug_say("cannot create a raw file in", dir, 0);
        return;
    }
    active = 1;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    install_signal_handlers();
    pioscope_thread_buffer();  /* the main thread is tracer thread 0 */
    __atomic_store_n(&pioscope_recording, 1, __ATOMIC_RELEASE);
    if (pioscope_server_start()) debug_say("server mode", NULL, 0);
    debug_say("tracing into", pioscope_raw_path(), 0);
}
