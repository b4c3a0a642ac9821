//! Finding things, starting programs and stopping them: PATH lookup, the runtime library and
//! benchmark binaries next to the pioscope executable, default trace names, exit statuses, and
//! the supervision of a traced job (stop signals passed on, a bounded wait, no orphans left).

use std::collections::HashMap;
use std::env;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The runtime library for MPI programs.
pub const MPI_RUNTIME: &str = "libpioscope.so";
/// The runtime library for programs without MPI.
pub const POSIX_RUNTIME: &str = "libpioscope-posix.so";

fn is_executable(p: &Path) -> bool {
    p.is_file()
        && p.metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Resolves a program name like a shell: a name with a '/' is a path, otherwise PATH is
/// searched. None when nothing executable is found.
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.is_empty() {
        return None;
    }
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    let path =
        env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// The directory of the running pioscope executable.
pub fn exe_dir() -> Result<PathBuf> {
    let exe = env::current_exe().context("locating the pioscope executable")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    Ok(exe
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".")))
}

/// Where runtime libraries live: $PIOSCOPE_LIB_DIR, or <dir of pioscope>/../lib.
pub fn lib_dir() -> Result<PathBuf> {
    match env::var_os("PIOSCOPE_LIB_DIR") {
        Some(d) if !d.is_empty() => Ok(PathBuf::from(d)),
        _ => Ok(exe_dir()?.join("../lib")),
    }
}

/// Where benchmark binaries live: $PIOSCOPE_BIN_DIR, or the directory of pioscope.
pub fn bin_dir() -> Result<PathBuf> {
    match env::var_os("PIOSCOPE_BIN_DIR") {
        Some(d) if !d.is_empty() => Ok(PathBuf::from(d)),
        _ => exe_dir(),
    }
}

/// The runtime library `name`, which must exist.
pub fn runtime_library(name: &str) -> Result<PathBuf> {
    let dir = lib_dir()?;
    let lib = dir.join(name);
    if !lib.is_file() {
        bail!(
            "runtime library {} not found (set PIOSCOPE_LIB_DIR to the directory that holds {name})",
            lib.display()
        );
    }
    Ok(lib.canonicalize().unwrap_or(lib))
}

/// The exit code pioscope passes on for a finished program: its status, or 128+signal.
pub fn exit_code(status: ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return (code & 0xFF) as u8;
    }
    match status.signal() {
        Some(sig) => (128 + sig).min(255) as u8,
        None => 1,
    }
}

/// Local time as YYYYmmdd-HHMMSS.
pub fn timestamp() -> String {
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    // SAFETY: localtime_r writes into the zeroed struct we own; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&now, &mut tm).is_null() };
    if !ok {
        return format!("{now}");
    }
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// pioscope-trace-<program>-<timestamp> in the current directory, with -2, -3, ... added if
/// that name is taken (a default name never needs --force).
pub fn default_trace_name(program: &str) -> PathBuf {
    let base = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    let stem = format!("pioscope-trace-{base}-{}", timestamp());
    let mut candidate = PathBuf::from(&stem);
    let mut n = 2;
    while candidate.exists() || raw_dir_for(&candidate).exists() {
        candidate = PathBuf::from(format!("{stem}-{n}"));
        n += 1;
    }
    candidate
}

/// The raw directory used while tracing into `trace`: TRACE.raw beside it.
pub fn raw_dir_for(trace: &Path) -> PathBuf {
    let mut s = trace.as_os_str().to_os_string();
    s.push(".raw");
    PathBuf::from(s)
}

/// Ignores SIGINT and SIGQUIT in pioscope while a traced program runs: Ctrl-C reaches the
/// program (same process group) and pioscope lives on to merge what it wrote.
pub struct IgnoreInterrupts {
    old_int: libc::sighandler_t,
    old_quit: libc::sighandler_t,
}

impl IgnoreInterrupts {
    /// Starts ignoring. Call only after the child is spawned, so it keeps default handlers.
    pub fn new() -> Self {
        // SAFETY: installing SIG_IGN is async-signal-safe and the previous handlers are restored.
        unsafe {
            IgnoreInterrupts {
                old_int: libc::signal(libc::SIGINT, libc::SIG_IGN),
                old_quit: libc::signal(libc::SIGQUIT, libc::SIG_IGN),
            }
        }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        // SAFETY: restores the handlers saved in new().
        unsafe {
            libc::signal(libc::SIGINT, self.old_int);
            libc::signal(libc::SIGQUIT, self.old_quit);
        }
    }
}

/// The signals that stop a traced job from outside: a batch scheduler's SIGTERM at the time
/// limit, a closed terminal's SIGHUP, SIGQUIT. `pioscope run` catches them, passes them on to
/// the job, and merges what it wrote.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// How long a stopped job may take to end after its signal before it is killed (SIGKILL).
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// How often the supervisor looks at the job.
const POLL: Duration = Duration::from_millis(20);

/// The first stop signal received (0: none). Set by the signal handler, read by `supervise`.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn note_stop_signal(sig: libc::c_int) {
    // Only the first signal counts: a second SIGTERM while the job stops changes nothing.
    let _ = STOP_SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// Makes pioscope the reaper of its orphaned descendants (Linux), so a rank whose launcher
/// died is still pioscope's to find and stop. Call before starting the job.
pub fn adopt_orphans() {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes one integer argument and touches no memory.
    // Failure (an old kernel) only means orphans are not found; supervision still works.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// While a traced job runs: SIGINT is ignored (Ctrl-C reaches the job through the terminal's
/// process group, and pioscope lives on to merge), and the `STOP_SIGNALS` are noted for
/// `supervise` instead of killing pioscope. The old dispositions come back on drop.
pub struct StopSignals {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl StopSignals {
    /// Starts catching. Call only after the job is spawned, so it keeps default handlers.
    pub fn catch() -> Self {
        Self::catch_with(false)
    }

    /// Catches SIGINT like the stop signals too (a foreground `pioscope sample` stops on
    /// Ctrl-C): `stopped` then returns it.
    pub fn catch_interrupt() -> Self {
        Self::catch_with(true)
    }

    fn catch_with(interrupt_stops: bool) -> Self {
        STOP_SIGNAL.store(0, Ordering::SeqCst);
        let mut old = Vec::with_capacity(STOP_SIGNALS.len() + 1);
        for sig in std::iter::once(libc::SIGINT).chain(STOP_SIGNALS) {
            // SAFETY: both sigaction structs are zeroed values we own; the handler only does
            // an atomic compare-exchange, which is async-signal-safe.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = if sig == libc::SIGINT && !interrupt_stops {
                    libc::SIG_IGN
                } else {
                    note_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t
                };
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut previous) == 0 {
                    old.push((sig, previous));
                }
            }
        }
        StopSignals { old }
    }
}

impl StopSignals {
    /// Waits up to `timeout` for a stop signal; true if one arrived (checked every `POLL`).
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if STOP_SIGNAL.load(Ordering::SeqCst) != 0 {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            std::thread::sleep(POLL.min(deadline - now));
        }
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        for (sig, previous) in &self.old {
            // SAFETY: restores a disposition saved by catch().
            unsafe {
                libc::sigaction(*sig, previous, std::ptr::null_mut());
            }
        }
    }
}

/// How a supervised job ended.
#[derive(Debug)]
pub enum JobEnd {
    /// The job ended by itself with this status.
    Finished(ExitStatus),
    /// pioscope received `signal`, passed it on, and the job is gone: every process of it
    /// ended within `STOP_GRACE`, or the rest were killed (`killed`).
    Stopped {
        /// The stop signal pioscope received.
        signal: libc::c_int,
        /// Whether processes outlived the grace time and were killed with SIGKILL.
        killed: bool,
    },
}

/// Waits for `child` (started after `adopt_orphans`, under a live `StopSignals`). When a stop
/// signal arrives, passes it on to every process of the job and waits up to `grace` for them to
/// end, then kills what is left and reaps every process it adopted: no rank outlives the call.
///
/// The traced processes (those whose environment holds `traced_env`, `NAME=VALUE`) get the
/// signal first while the launcher and its daemons are held stopped (SIGSTOP): a launcher that
/// sees one rank die kills the others at once (MPICH's hydra does, with SIGKILL), which would
/// cut a rank short while it finishes its raw file. Once the traced processes are gone the
/// launcher is resumed and gets the signal too.
pub fn supervise(child: &mut Child, grace: Duration, traced_env: &[u8]) -> Result<JobEnd> {
    let signal = loop {
        let signal = STOP_SIGNAL.load(Ordering::SeqCst);
        if signal != 0 {
            break signal;
        }
        if let Some(status) = child.try_wait().context("waiting for the program")? {
            // The job may have ended because of the signal pioscope got too (a scheduler
            // signals every process): its ranks may still be running.
            match STOP_SIGNAL.load(Ordering::SeqCst) {
                0 => return Ok(JobEnd::Finished(status)),
                s => break s,
            }
        }
        thread::sleep(POLL);
    };
    let deadline = Instant::now() + grace;
    let (traced, helpers): (Vec<_>, Vec<_>) = job_processes()
        .into_iter()
        .partition(|&pid| has_env(pid, traced_env));
    if !traced.is_empty() {
        send(&helpers, libc::SIGSTOP);
        send(&traced, signal);
        while Instant::now() < deadline && traced.iter().any(|&pid| alive(pid)) {
            thread::sleep(POLL);
        }
        send(&helpers, libc::SIGCONT);
    }
    send(&helpers, signal);
    let mut killed = false;
    loop {
        let _ = child.try_wait();
        reap_adopted(child.id());
        let left = job_processes();
        if left.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            send(&left, libc::SIGKILL);
            killed = true;
        }
        thread::sleep(POLL);
    }
    child.wait().context("waiting for the program")?;
    Ok(JobEnd::Stopped { signal, killed })
}

/// Sends `signal` to each of `pids`.
fn send(pids: &[libc::pid_t], signal: libc::c_int) {
    for &pid in pids {
        // SAFETY: kill takes plain integers; a pid that ended meanwhile gives ESRCH.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: libc::pid_t) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_whitespace().next().map(|state| state != "Z")
        })
        .unwrap_or(false)
}

/// Whether the environment of `pid` holds the entry `entry` (`NAME=VALUE`).
fn has_env(pid: libc::pid_t, entry: &[u8]) -> bool {
    fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry))
}

/// The live (not zombie) processes of the job: every descendant of pioscope, whose only
/// children are the job's, including ranks adopted after their launcher died.
fn job_processes() -> Vec<libc::pid_t> {
    let table = process_table();
    let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
    for (&pid, &(ppid, _)) in &table {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut todo = vec![std::process::id() as libc::pid_t];
    while let Some(parent) = todo.pop() {
        for &pid in children.get(&parent).into_iter().flatten() {
            todo.push(pid);
            if table.get(&pid).is_some_and(|&(_, zombie)| !zombie) {
                found.push(pid);
            }
        }
    }
    found
}

/// Every process in /proc: pid -> (parent pid, is a zombie).
fn process_table() -> HashMap<libc::pid_t, (libc::pid_t, bool)> {
    let mut table = HashMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return table;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after
        // the last ')'.
        let mut fields = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace())
            .into_iter()
            .flatten();
        let state = fields.next();
        if let Some(ppid) = fields.next().and_then(|p| p.parse().ok()) {
            table.insert(pid, (ppid, state == Some("Z")));
        }
    }
    table
}

/// Reaps ended processes pioscope adopted as subreaper (not `child`, which `Child` reaps).
fn reap_adopted(child: u32) {
    let me = std::process::id() as libc::pid_t;
    for (pid, (ppid, zombie)) in process_table() {
        if ppid == me && zombie && pid != child as libc::pid_t {
            let mut status = 0;
            // SAFETY: waitpid on our own zombie child with a status int we own.
            unsafe {
                libc::waitpid(pid, &mut status, libc::WNOHANG);
            }
        }
    }
}

/// The name of a stop signal, for messages.
pub fn signal_name(signal: libc::c_int) -> String {
    match signal {
        libc::SIGTERM => "SIGTERM".to_string(),
        libc::SIGHUP => "SIGHUP".to_string(),
        libc::SIGQUIT => "SIGQUIT".to_string(),
        libc::SIGINT => "SIGINT".to_string(),
        s => format!("signal {s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_programs_like_a_shell() {
        assert!(find_program("sh").is_some());
        assert!(find_program("/bin/sh").is_some());
        assert_eq!(find_program("no-such-program-pioscope"), None);
        assert_eq!(find_program("./no/such"), None);
        assert_eq!(find_program(""), None);
    }

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 137);
    }

    #[test]
    fn names() {
        assert_eq!(raw_dir_for(Path::new("out/t")), PathBuf::from("out/t.raw"));
        let ts = timestamp();
        assert_eq!(ts.len(), 15, "{ts}");
        let name = default_trace_name("./bin/app");
        assert!(
            name.to_string_lossy().starts_with("pioscope-trace-app-"),
            "{}",
            name.display()
        );
    }
}
