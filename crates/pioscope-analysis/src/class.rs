//! What kind of call each function is, decided in one place: whether its layer is file I/O,
//! its I/O class in the time breakdowns (data, metadata, sync, close), and the sets the finding
//! rules ask about (namespace calls, closes, syncs, MPI sends and collectives) as bits.
//!
//! "Metadata" has two meanings here, on purpose: `IoClass::Metadata` is every I/O call that is
//! not data, sync or close (seeks and set_view included), the time a breakdown adds up; the
//! `METADATA` bit is the namespace and attribute calls (open, close, stat, unlink, ...), each a
//! round trip to a metadata server, what metadata-storm and file-per-process count.

use pioscope_trace::functions::{self, is_mpi_collective, is_send};
use pioscope_trace::{FuncInfo, Layer, OpKind};
use serde::Serialize;

/// True for the file layers (POSIX, STDIO, MPI-IO).
pub fn is_io_layer(layer: Layer) -> bool {
    matches!(layer, Layer::Posix | Layer::Stdio | Layer::MpiIo)
}

/// What an I/O call spends its time on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoClass {
    /// Moving file data: reads and writes of every I/O layer (`OpKind::Read`/`Write`:
    /// read/pread/readv/write/pwrite/writev and their 64-bit forms, fread/fwrite,
    /// MPI_File_read*/write*/iread*/iwrite*, aio_read/aio_write) and the calls that complete
    /// them: split-collective `_end`s, POSIX aio's waits (`is_aio_completion`).
    Data,
    /// Everything else on files: open/creat/openat, stat family, lseek, ftruncate, unlink,
    /// mkdir/rmdir, rename, fopen/fdopen, fseek/ftell, MPI_File_open/set_view/set_info/
    /// set_size/preallocate/seek/delete.
    Metadata,
    /// Forcing data to storage: fsync, fdatasync, fflush, MPI_File_sync.
    Sync,
    /// Closing: close, fclose, MPI_File_close (which flush what is cached: the OLAM case).
    Close,
    /// Waiting for the other ranks: the MPI communication directly inside an MPI-IO call that
    /// moves no data (the barrier of a collective `MPI_File_close`, the agreement of
    /// `MPI_File_open`, `MPI_File_sync`, `MPI_File_set_view`). No function has this class: the
    /// time is taken out of the enclosing call's (`is_wait`). The communication inside a
    /// collective read or write is its two-phase exchange and stays data.
    Wait,
}

impl IoClass {
    /// Every class, in display order.
    pub const ALL: [IoClass; 5] = [
        IoClass::Data,
        IoClass::Metadata,
        IoClass::Sync,
        IoClass::Close,
        IoClass::Wait,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            IoClass::Data => "data",
            IoClass::Metadata => "metadata",
            IoClass::Sync => "sync",
            IoClass::Close => "close",
            IoClass::Wait => "wait",
        }
    }
}

/// The class of an I/O call; None outside the file layers.
pub fn io_class(layer: Layer, func: &str) -> Option<IoClass> {
    if !is_io_layer(layer) {
        return None;
    }
    Some(match functions::kind_of(layer, func) {
        OpKind::Read | OpKind::Write => IoClass::Data,
        _ if is_sync(func) => IoClass::Sync,
        _ if is_close(func) => IoClass::Close,
        _ if layer == Layer::MpiIo && func.ends_with("_end") => IoClass::Data,
        _ if is_aio_completion(func) => IoClass::Data,
        _ => IoClass::Metadata,
    })
}

/// Whether an MPI call (`layer`, `depth`) is ranks waiting for each other inside an I/O call:
/// it sits directly beneath (`depth` one more than `io_depth`) an MPI-IO call of class
/// `io_class` that moves no data.
pub fn is_wait(layer: Layer, depth: u8, io_layer: Layer, io_depth: u8, io_class: IoClass) -> bool {
    layer == Layer::Mpi
        && io_layer == Layer::MpiIo
        && depth == io_depth.saturating_add(1)
        && io_class != IoClass::Data
}

/// Calls that open or create a file.
pub fn is_open(func: &str) -> bool {
    matches!(
        func,
        "open"
            | "open64"
            | "openat"
            | "openat64"
            | "creat"
            | "creat64"
            | "fopen"
            | "fopen64"
            | "fdopen"
            | "MPI_File_open"
    )
}

/// close, fclose, MPI_File_close.
pub fn is_close(func: &str) -> bool {
    matches!(func, "close" | "fclose" | "MPI_File_close")
}

/// fsync, fdatasync, fflush, MPI_File_sync, aio_fsync.
pub fn is_sync(func: &str) -> bool {
    matches!(
        func,
        "fsync" | "fdatasync" | "fflush" | "MPI_File_sync" | "aio_fsync" | "aio_fsync64"
    )
}

/// POSIX aio calls that wait for, poll or collect queued reads and writes (aio_suspend,
/// aio_error, aio_return) or queue and, with LIO_WAIT, wait for a list of them (lio_listio):
/// their time is the data's.
pub fn is_aio_completion(func: &str) -> bool {
    matches!(
        func,
        "aio_suspend"
            | "aio_suspend64"
            | "aio_error"
            | "aio_error64"
            | "aio_return"
            | "aio_return64"
            | "lio_listio"
            | "lio_listio64"
    )
}

/// The stat family (stat, lstat, fstat and glibc's __xstat forms).
pub fn is_stat(func: &str) -> bool {
    let f = func.trim_start_matches('_');
    ["stat", "lstat", "fstat", "xstat", "lxstat", "fxstat"]
        .iter()
        .any(|p| f.starts_with(p))
}

/// Namespace and attribute calls: opens, closes, the POSIX stat family, unlink, mkdir, rmdir,
/// rename, ftruncate, MPI_File_delete/set_size/preallocate.
pub const METADATA: u16 = 1;
/// `is_close`.
pub const CLOSE: u16 = 1 << 1;
/// `is_sync`.
pub const SYNC: u16 = 1 << 2;
/// MPI point-to-point calls that send.
pub const SEND: u16 = 1 << 3;
/// MPI collective communication.
pub const MPI_COLLECTIVE: u16 = 1 << 4;

/// The bits of function `f`.
pub fn bits(f: &FuncInfo) -> u16 {
    let n = f.name;
    let mut c = 0;
    if is_open(n)
        || is_close(n)
        || (f.layer == Layer::Posix && is_stat(n))
        || matches!(
            n,
            "unlink"
                | "mkdir"
                | "rmdir"
                | "rename"
                | "ftruncate"
                | "ftruncate64"
                | "MPI_File_delete"
                | "MPI_File_set_size"
                | "MPI_File_preallocate"
        )
    {
        c |= METADATA;
    }
    if is_close(n) {
        c |= CLOSE;
    }
    if is_sync(n) {
        c |= SYNC;
    }
    if f.layer == Layer::Mpi && is_send(n) {
        c |= SEND;
    }
    if f.layer == Layer::Mpi && is_mpi_collective(n) {
        c |= MPI_COLLECTIVE;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(io_class(Layer::Posix, "pwrite64"), Some(IoClass::Data));
        assert_eq!(io_class(Layer::Stdio, "fclose"), Some(IoClass::Close));
        assert_eq!(io_class(Layer::Stdio, "fflush"), Some(IoClass::Sync));
        assert_eq!(
            io_class(Layer::MpiIo, "MPI_File_write_all_end"),
            Some(IoClass::Data)
        );
        assert_eq!(
            io_class(Layer::MpiIo, "MPI_File_set_view"),
            Some(IoClass::Metadata)
        );
        assert_eq!(io_class(Layer::Posix, "__xstat64"), Some(IoClass::Metadata));
        assert_eq!(io_class(Layer::Mpi, "MPI_Send"), None);
        assert_eq!(io_class(Layer::Posix, "aio_write"), Some(IoClass::Data));
        assert_eq!(io_class(Layer::Posix, "aio_suspend"), Some(IoClass::Data));
        assert_eq!(io_class(Layer::Posix, "aio_fsync"), Some(IoClass::Sync));
        assert_eq!(
            io_class(Layer::MpiIo, "MPI_File_write_at_all_c"),
            Some(IoClass::Data)
        );
        assert_eq!(
            io_class(Layer::MpiIo, "MPI_File_get_size"),
            Some(IoClass::Metadata)
        );
        let b = |n: &str| bits(functions::by_name(n).expect(n));
        assert_eq!(b("close"), METADATA | CLOSE);
        assert_eq!(b("__xstat64"), METADATA);
        assert_eq!(b("lseek"), 0, "a seek is no metadata server call");
        assert_eq!(b("MPI_File_sync"), SYNC);
        assert_eq!(b("MPI_Isend"), SEND);
        assert_eq!(b("MPI_Allgather"), MPI_COLLECTIVE);
    }
}
