//! functions.def ids of the calls the simulated trace shows, and small builders of the
//! `Begin(Call)` values (ids are stable, never reused; a test checks them against the table).

use crate::program::{Call, FileId, Op, Rank};

/// `open`.
pub const POSIX_OPEN: u16 = 1;
/// `close`.
pub const POSIX_CLOSE: u16 = 7;
/// `pread`.
pub const POSIX_PREAD: u16 = 12;
/// `pwrite`.
pub const POSIX_PWRITE: u16 = 14;
/// `fsync`.
pub const POSIX_FSYNC: u16 = 32;
/// `stat`.
pub const POSIX_STAT: u16 = 40;
/// `unlink`.
pub const POSIX_UNLINK: u16 = 60;
/// `MPI_File_open`.
pub const MPI_FILE_OPEN: u16 = 300;
/// `MPI_File_close`.
pub const MPI_FILE_CLOSE: u16 = 301;
/// `MPI_File_sync`.
pub const MPI_FILE_SYNC: u16 = 302;
/// `MPI_File_set_view`.
pub const MPI_FILE_SET_VIEW: u16 = 303;
/// `MPI_File_delete`.
pub const MPI_FILE_DELETE: u16 = 308;
/// `MPI_File_read`.
pub const MPI_FILE_READ: u16 = 310;
/// `MPI_File_read_at`.
pub const MPI_FILE_READ_AT: u16 = 311;
/// `MPI_File_read_all`.
pub const MPI_FILE_READ_ALL: u16 = 312;
/// `MPI_File_read_at_all`.
pub const MPI_FILE_READ_AT_ALL: u16 = 313;
/// `MPI_File_write`.
pub const MPI_FILE_WRITE: u16 = 316;
/// `MPI_File_write_at`.
pub const MPI_FILE_WRITE_AT: u16 = 317;
/// `MPI_File_write_all`.
pub const MPI_FILE_WRITE_ALL: u16 = 318;
/// `MPI_File_write_at_all`.
pub const MPI_FILE_WRITE_AT_ALL: u16 = 319;
/// `MPI_Isend`.
pub const MPI_ISEND: u16 = 416;
/// `MPI_Irecv`.
pub const MPI_IRECV: u16 = 418;
/// `MPI_Waitall`.
pub const MPI_WAITALL: u16 = 421;
/// `MPI_Barrier`.
pub const MPI_BARRIER: u16 = 430;
/// `MPI_Bcast`.
pub const MPI_BCAST: u16 = 431;
/// `MPI_Allreduce`.
pub const MPI_ALLREDUCE: u16 = 433;
/// `MPI_Allgather`.
pub const MPI_ALLGATHER: u16 = 438;
/// `MPI_Alltoall`.
pub const MPI_ALLTOALL: u16 = 440;
/// The call an aggregated exchange (`Op::Exchange`) shows as.
pub const MPI_ALLTOALLV: u16 = 441;

/// A call with nothing but its function set.
pub fn call(func: u16) -> Call {
    Call {
        func,
        file: None,
        offset: None,
        size: 0,
        collective: false,
        instance: None,
        peer: None,
        observed_id: None,
    }
}

/// A file call (POSIX child or MPI-IO).
pub fn file_call(func: u16, file: FileId, offset: Option<u64>, size: u64) -> Call {
    Call {
        file: Some(file),
        offset,
        size,
        ..call(func)
    }
}

/// An MPI collective communication call of `size` bytes per rank.
pub fn mpi_collective(func: u16, size: u64) -> Call {
    Call {
        size,
        collective: true,
        ..call(func)
    }
}

/// Pushes `Begin(c)`, the ops, `End`.
pub fn wrap(prog: &mut Vec<Op>, c: Call, ops: impl IntoIterator<Item = Op>) {
    prog.push(Op::Begin(Box::new(c)));
    prog.extend(ops);
    prog.push(Op::End);
}

/// A point-to-point start wrapped in its call.
pub fn isend(prog: &mut Vec<Op>, to: Rank, bytes: u64, slot: u32) {
    let c = Call {
        size: bytes,
        peer: Some(to),
        ..call(MPI_ISEND)
    };
    wrap(prog, c, [Op::Isend { to, bytes, slot }]);
}

/// A receive start wrapped in its call.
pub fn irecv(prog: &mut Vec<Op>, from: Rank, bytes: u64, slot: u32) {
    let c = Call {
        size: bytes,
        peer: Some(from),
        ..call(MPI_IRECV)
    };
    wrap(prog, c, [Op::Irecv { from, bytes, slot }]);
}

/// MPI_Waitall on slots 0..n (nothing when n = 0).
pub fn waitall(prog: &mut Vec<Op>, slots: Vec<u32>) {
    if slots.is_empty() {
        return;
    }
    wrap(prog, call(MPI_WAITALL), [Op::WaitAll { slots }]);
}

/// A small MPI collective modelled as a barrier (the engine's log-depth tree of small
/// messages): Allgather of offsets, Alltoall of counts, Allreduce of cycle counts.
pub fn small_collective(prog: &mut Vec<Op>, func: u16, size: u64) {
    wrap(prog, mpi_collective(func, size), [Op::Barrier]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_trace::functions::by_name;

    #[test]
    fn ids_match_functions_def() {
        for (id, name) in [
            (POSIX_OPEN, "open"),
            (POSIX_CLOSE, "close"),
            (POSIX_PREAD, "pread"),
            (POSIX_PWRITE, "pwrite"),
            (POSIX_FSYNC, "fsync"),
            (POSIX_STAT, "stat"),
            (POSIX_UNLINK, "unlink"),
            (MPI_FILE_OPEN, "MPI_File_open"),
            (MPI_FILE_CLOSE, "MPI_File_close"),
            (MPI_FILE_SYNC, "MPI_File_sync"),
            (MPI_FILE_SET_VIEW, "MPI_File_set_view"),
            (MPI_FILE_DELETE, "MPI_File_delete"),
            (MPI_FILE_READ, "MPI_File_read"),
            (MPI_FILE_READ_AT, "MPI_File_read_at"),
            (MPI_FILE_READ_ALL, "MPI_File_read_all"),
            (MPI_FILE_READ_AT_ALL, "MPI_File_read_at_all"),
            (MPI_FILE_WRITE, "MPI_File_write"),
            (MPI_FILE_WRITE_AT, "MPI_File_write_at"),
            (MPI_FILE_WRITE_ALL, "MPI_File_write_all"),
            (MPI_FILE_WRITE_AT_ALL, "MPI_File_write_at_all"),
            (MPI_ISEND, "MPI_Isend"),
            (MPI_IRECV, "MPI_Irecv"),
            (MPI_WAITALL, "MPI_Waitall"),
            (MPI_BARRIER, "MPI_Barrier"),
            (MPI_BCAST, "MPI_Bcast"),
            (MPI_ALLREDUCE, "MPI_Allreduce"),
            (MPI_ALLGATHER, "MPI_Allgather"),
            (MPI_ALLTOALL, "MPI_Alltoall"),
        ] {
            assert_eq!(by_name(name).map(|f| f.id), Some(id), "{name}");
        }
    }
}
