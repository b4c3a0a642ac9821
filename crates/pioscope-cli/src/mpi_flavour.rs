//! Which MPI library a traced program runs on, so `run` preloads the runtime built against that
//! library (docs/RUNTIME.md, "MPI flavours"). MPICH and Open MPI share no ABI (MPICH's handles
//! are integers, Open MPI's pointers): a runtime built for one cannot wrap the other. The
//! program's DT_NEEDED entries tell first, then the launcher's file name.

use std::path::Path;

use crate::elf;

/// An MPI library family the runtime is built for, one `libpioscope-<name>.so` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpiFlavour {
    /// MPICH and the libraries of its ABI (libmpich.so.12, libmpi.so.12: Intel MPI, MVAPICH).
    Mpich,
    /// Open MPI (libmpi.so.40, 4.x and 5.x).
    OpenMpi,
}

impl MpiFlavour {
    /// The name in the runtime's file name and in `--runtime`.
    pub fn name(self) -> &'static str {
        match self {
            MpiFlavour::Mpich => "mpich",
            MpiFlavour::OpenMpi => "openmpi",
        }
    }

    /// The library's own name, for messages.
    pub fn title(self) -> &'static str {
        match self {
            MpiFlavour::Mpich => "MPICH",
            MpiFlavour::OpenMpi => "Open MPI",
        }
    }

    /// The runtime library built against this flavour.
    pub fn runtime_library(self) -> String {
        format!("libpioscope-{}.so", self.name())
    }
}

/// The flavour a shared library's file name (a DT_NEEDED entry) stands for: MPICH's C and
/// Fortran libraries (libmpich*, libmpichfort) and the MPICH ABI's libmpi.so.12; Open MPI's
/// libmpi.so.40 and its Fortran bindings (libmpi_mpifh, libmpi_usempif08, ...). None for
/// anything else, and for a libmpi.so without a version that says which.
pub fn of_library(file_name: &str) -> Option<MpiFlavour> {
    if file_name.starts_with("libmpich") {
        return Some(MpiFlavour::Mpich);
    }
    let version = file_name.strip_prefix("libmpi")?;
    if version.starts_with('_') {
        // libmpi_mpifh.so.40, libmpi_usempif08.so.40: Open MPI's Fortran bindings.
        return Some(MpiFlavour::OpenMpi);
    }
    match version.strip_prefix(".so.")?.split('.').next()? {
        "12" => Some(MpiFlavour::Mpich),
        "40" => Some(MpiFlavour::OpenMpi),
        _ => None,
    }
}

/// The flavour the executable links, with the library that tells; None for a program that
/// links no MPI library directly (a script, a program whose MPI comes through another library).
pub fn of_program(program: &Path) -> Option<(MpiFlavour, String)> {
    elf::needed_libraries(program)?
        .into_iter()
        .find_map(|lib| of_library(&lib).map(|f| (f, lib)))
}

/// The flavour of a launcher, from the file it resolves to: MPICH's Hydra (mpiexec.hydra,
/// mpiexec.mpich), Open MPI's orterun or prterun (mpiexec.openmpi). Debian's `mpiexec` is a
/// chain of links to one of them. None for others (srun, a wrapper script).
pub fn of_launcher(launcher: &Path) -> Option<MpiFlavour> {
    let real = launcher.canonicalize().ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    if name.contains("hydra") || name.ends_with(".mpich") {
        Some(MpiFlavour::Mpich)
    } else if name.contains("orterun") || name.contains("prterun") || name.ends_with(".openmpi") {
        Some(MpiFlavour::OpenMpi)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_name_their_flavour() {
        assert_eq!(of_library("libmpich.so.12"), Some(MpiFlavour::Mpich));
        assert_eq!(of_library("libmpichfort.so.12"), Some(MpiFlavour::Mpich));
        assert_eq!(of_library("libmpi.so.12"), Some(MpiFlavour::Mpich));
        assert_eq!(of_library("libmpi.so.40"), Some(MpiFlavour::OpenMpi));
        assert_eq!(of_library("libmpi.so.40.30.4"), Some(MpiFlavour::OpenMpi));
        assert_eq!(of_library("libmpi_mpifh.so.40"), Some(MpiFlavour::OpenMpi));
        assert_eq!(of_library("libmpi.so"), None);
        assert_eq!(of_library("libmpi.so.7"), None);
        assert_eq!(of_library("libc.so.6"), None);
    }

    #[test]
    fn launchers_name_their_flavour_through_links() {
        let dir = tempfile::tempdir().expect("tmp");
        let hydra = dir.path().join("mpiexec.hydra");
        let orterun = dir.path().join("orterun");
        std::fs::write(&hydra, "").expect("write");
        std::fs::write(&orterun, "").expect("write");
        let mpiexec = dir.path().join("mpiexec");
        std::os::unix::fs::symlink(&hydra, &mpiexec).expect("link");
        assert_eq!(of_launcher(&mpiexec), Some(MpiFlavour::Mpich));
        assert_eq!(of_launcher(&orterun), Some(MpiFlavour::OpenMpi));
        let srun = dir.path().join("srun");
        std::fs::write(&srun, "").expect("write");
        assert_eq!(of_launcher(&srun), None);
        assert_eq!(of_launcher(&dir.path().join("missing")), None);
    }
}
