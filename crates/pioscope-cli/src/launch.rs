//! Finding things and starting programs: PATH lookup, the runtime library and benchmark
//! binaries next to the pioscope executable, default trace names, exit statuses.

use std::env;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

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
fn exe_dir() -> Result<PathBuf> {
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
