//! Which records an analysis counts. By default the application's own I/O: an MPI program's
//! start-up reads hundreds of system files (hwloc walks /sys, the MPI library and libc read
//! /proc and /etc) and talks through sockets and pipes, which would bury the application's
//! files. `Scope::All` counts everything. Only POSIX and STDIO records are left out; MPI-IO,
//! MPI, regions and tracer records always count.

use std::collections::HashSet;

use pioscope_trace::functions::Layer;
use pioscope_trace::store::{Event, Trace};
use serde::Serialize;

/// Path prefixes of system files; `/dev/shm/` is application data and stays.
pub const SYSTEM_PREFIXES: &[&str] = &[
    "/proc/", "/sys/", "/dev/", "/etc/", "/usr/", "/lib/", "/lib64/", "/run/", "/var/run/",
];

/// What an analysis counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Everything except POSIX/STDIO records on system files or on descriptors without a file.
    #[default]
    Application,
    /// Every record.
    All,
}

/// True for a path under one of `SYSTEM_PREFIXES` (but not `/dev/shm/`).
pub fn is_system_path(path: &str) -> bool {
    !path.starts_with("/dev/shm/") && SYSTEM_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// Decides record by record, with the system files of one trace looked up once.
pub struct ScopeFilter {
    scope: Scope,
    system_files: HashSet<i32>,
}

impl ScopeFilter {
    /// The filter of `scope` for `trace`.
    pub fn new(trace: &Trace, scope: Scope) -> ScopeFilter {
        let system_files = trace
            .files
            .iter()
            .filter(|f| is_system_path(&f.path))
            .map(|f| f.file_id)
            .collect();
        ScopeFilter {
            scope,
            system_files,
        }
    }

    /// Whether `e` counts.
    pub fn keeps(&self, e: &Event<'_>) -> bool {
        if self.scope == Scope::All || !matches!(e.layer, Layer::Posix | Layer::Stdio) {
            return true;
        }
        e.file_id.is_some_and(|f| !self.system_files.contains(&f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_paths() {
        for p in ["/proc/self/maps", "/sys/devices/system/cpu", "/etc/hosts", "/dev/null",
                  "/usr/lib/x86_64-linux-gnu/libc.so.6", "/run/user/0/x"] {
            assert!(is_system_path(p), "{p}");
        }
        for p in ["/dev/shm/data.bin", "/home/u/out.dat", "/scratch/run/ckpt", "/tmp/a"] {
            assert!(!is_system_path(p), "{p}");
        }
    }
}
