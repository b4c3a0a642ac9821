//! The MPI calls a program makes that the tracer does not record, read from the functions the
//! executable imports (before it runs), so `run` can say so instead of showing a trace that
//! silently lacks them. Only calls that move data or wait for other ranks count: file I/O,
//! messages, collectives, one-sided communication, persistent and matched-probe requests. The
//! many local calls (MPI_Comm_rank, MPI_Type_*, ...) carry no I/O or communication time.
//!
//! Only the executable's own imports are read: calls made from a shared library it links
//! (HDF5's MPI-IO, for instance) are not seen.

use std::path::Path;

use pioscope_trace::functions;

use crate::elf;

/// Word stems of the MPI communication calls (compared with the lower-case name).
const COMMUNICATION: &[&str] = &[
    "send",
    "recv",
    "bcast",
    "reduce",
    "gather",
    "scatter",
    "alltoall",
    "scan",
    "barrier",
    "neighbor_",
];

/// One-sided communication and request starts, named in full.
const WHOLE_NAMES: &[&str] = &[
    "mpi_put",
    "mpi_rput",
    "mpi_get",
    "mpi_rget",
    "mpi_accumulate",
    "mpi_raccumulate",
    "mpi_get_accumulate",
    "mpi_rget_accumulate",
    "mpi_fetch_and_op",
    "mpi_compare_and_swap",
    "mpi_start",
    "mpi_startall",
];

/// The C name of an imported MPI symbol: `MPI_File_write_c` as is, a Fortran binding
/// (`mpi_file_write_`, `MPI_FILE_WRITE`, `mpi_file_write__`) lower-cased without its trailing
/// underscores; None for anything else (PMPI_ names are the library's own).
fn mpi_name(symbol: &str) -> Option<String> {
    let lower = symbol.to_ascii_lowercase();
    lower
        .starts_with("mpi_")
        .then(|| lower.trim_end_matches('_').to_string())
}

/// True for an MPI function (lower-case name) that does I/O or communicates.
fn moves_data(lower: &str) -> bool {
    lower.starts_with("mpi_file_")
        || WHOLE_NAMES.contains(&lower)
        || COMMUNICATION
            .iter()
            .any(|stem| lower["mpi_".len()..].contains(stem))
}

/// The MPI calls among `imports` that do I/O or communicate and that functions.def does not
/// have, as the program spells them, sorted and without repeats.
pub fn untraced(imports: &[String]) -> Vec<String> {
    let traced: std::collections::HashSet<String> = functions::all()
        .iter()
        .map(|f| f.name.to_ascii_lowercase())
        .collect();
    let mut names: Vec<String> = imports
        .iter()
        .filter(|symbol| {
            mpi_name(symbol).is_some_and(|lower| moves_data(&lower) && !traced.contains(&lower))
        })
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The warning `run` prints before starting `program`, when it imports MPI calls the tracer
/// does not record; None when it imports none (or is not a readable ELF file).
pub fn warning(program: &Path) -> Option<String> {
    let names = untraced(&elf::undefined_symbols(program)?);
    (!names.is_empty()).then(|| {
        format!(
            "{} calls MPI functions pioscope does not trace: {} (their time shows as the \
             calling code's, their bytes are not counted)",
            program.display(),
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_untraced_communication_and_io_only() {
        let imports = names(&[
            "MPI_Comm_rank",
            "MPI_File_write_at_all_c",
            "MPI_Ibcast",
            "MPI_Send",
            "MPI_Send_c",
            "MPI_Put",
            "MPI_Get_count",
            "MPI_Type_commit",
            "mpi_sendrecv_replace_",
            "mpi_file_write_",
            "MPI_Neighbor_alltoall",
            "PMPI_Ibcast",
            "printf",
            "MPI_Ibcast",
        ]);
        assert_eq!(
            untraced(&imports),
            names(&[
                "MPI_Ibcast",
                "MPI_Neighbor_alltoall",
                "MPI_Put",
                "mpi_sendrecv_replace_"
            ])
        );
    }

    #[test]
    fn a_program_without_mpi_gets_no_warning() {
        assert_eq!(warning(Path::new("/bin/sh")), None);
    }
}
