//! Which records are the application's own I/O. An MPI program's start-up reads hundreds of
//! system files (hwloc walks /sys, the MPI library and libc read /proc and /etc) and talks
//! through sockets and pipes; counted with the application's files they bury them. The store
//! keeps every record; summaries and statistics count the application's by default.

use crate::functions::Layer;

/// Path prefixes of system files; `/dev/shm/` is application data and is not one of them.
pub const SYSTEM_PREFIXES: &[&str] = &[
    "/proc/",
    "/sys/",
    "/dev/",
    "/etc/",
    "/usr/",
    "/lib/",
    "/lib64/",
    "/run/",
    "/var/run/",
];

/// True for a path under one of `SYSTEM_PREFIXES` (but not under `/dev/shm/`).
pub fn is_system_path(path: &str) -> bool {
    !path.starts_with("/dev/shm/") && SYSTEM_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// True for ROMIO's hidden helper files: the shared file pointer of `MPI_File_*_shared` and
/// `*_ordered` lives in `.<name>.shfp.<number>` beside the file. Its POSIX calls belong to the
/// MPI-IO call that makes them (they nest under it), not to the application's requests.
pub fn is_romio_helper_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with('.') && name.contains(".shfp.")
}

/// True for a file that is not the application's data: a system file or a ROMIO helper.
pub fn is_hidden_path(path: &str) -> bool {
    is_system_path(path) || is_romio_helper_path(path)
}

/// Whether a record is the application's: POSIX and STDIO records only on a file that is not
/// a hidden file (`is_hidden_path`; `system_file`: `None` when the record has no file, as on a
/// socket or pipe); records of every other layer always.
pub fn is_application_record(layer: Layer, system_file: Option<bool>) -> bool {
    match layer {
        Layer::Posix | Layer::Stdio => system_file == Some(false),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_paths() {
        for p in [
            "/proc/self/maps",
            "/sys/devices/system/cpu",
            "/etc/hosts",
            "/dev/null",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/run/user/0/x",
        ] {
            assert!(is_system_path(p), "{p}");
        }
        for p in [
            "/dev/shm/data.bin",
            "/home/u/out.dat",
            "/scratch/run/ckpt",
            "/tmp/a",
        ] {
            assert!(!is_system_path(p), "{p}");
        }
    }

    #[test]
    fn romio_helper_paths() {
        assert!(is_hidden_path("/scratch/.out.dat.shfp.812043"));
        assert!(is_romio_helper_path(".out.shfp.1"));
        assert!(!is_hidden_path("/scratch/out.dat"));
        assert!(!is_romio_helper_path("/scratch/.hidden/out.shfp.dat"));
    }

    #[test]
    fn application_records() {
        assert!(is_application_record(Layer::Posix, Some(false)));
        assert!(!is_application_record(Layer::Posix, Some(true)));
        assert!(!is_application_record(Layer::Stdio, None));
        assert!(is_application_record(Layer::MpiIo, Some(true)));
        assert!(is_application_record(Layer::Mpi, None));
    }
}
