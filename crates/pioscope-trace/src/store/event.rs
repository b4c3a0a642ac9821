//! One row of `events.parquet`, as the merge writes it and the reader hands it back.

use crate::functions::Layer;

/// One traced call. Times are ns since the job's start on the reference (rank 0) clock.
///
/// Field meanings are documented column by column in docs/FORMAT.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<'a> {
    /// Row number in events.parquet (0-based); `parent` refers to it.
    pub id: i64,
    /// MPI rank, -1 for processes without MPI.
    pub rank: i32,
    /// Index into meta.json `processes`.
    pub process: i32,
    /// Tracer thread number inside the process (0 = first thread).
    pub thread: i32,
    /// Start, ns since job start.
    pub start_ns: i64,
    /// Duration in ns.
    pub duration_ns: i64,
    /// Layer.
    pub layer: Layer,
    /// Function name as in functions.def.
    pub func: &'a str,
    /// functions.def id of `func`, 0 when the name is not in this build's table.
    pub func_id: u16,
    /// Traced calls enclosing this one on its thread.
    pub depth: u8,
    /// `id` of the enclosing record, if it was recorded.
    pub parent: Option<i64>,
    /// File (files.parquet `file_id`) for POSIX, STDIO and MPI-IO records.
    pub file_id: Option<i32>,
    /// File offset in bytes (file layers; None when the tracer did not know it).
    pub offset: Option<i64>,
    /// Bytes requested (file layers) or message bytes (MPI).
    pub size: i64,
    /// Return value: bytes transferred, new offset, or -1.
    pub result: i64,
    /// errno (POSIX/STDIO) or MPI error class; 0 = success.
    pub error: i32,
    /// Raw `PIOSCOPE_F_*` flags (EXT cleared).
    pub flags: u8,
    /// A collective call.
    pub collective: bool,
    /// Dense collective instance (MPI-IO collectives), same on every rank for one call.
    pub instance: Option<i32>,
    /// The columns only MPI calls fill: `request`, `peer`, `tag`, `root`, `comm_size`.
    pub mpi: MpiRef<'a>,
    /// MPI communicator description.
    pub comm: Option<&'a str>,
    /// User region: its name for region records, the innermost enclosing region otherwise.
    pub region: Option<&'a str>,
}

impl<'a> Event<'a> {
    /// A call of `func` (`layer`) from `start_ns` lasting `duration_ns` on thread 0 of rank 0
    /// (process 0), row 0, with `func_id` looked up and every other column empty (0, false,
    /// None). Hand-built events (tests, synthetic traces) start from it and set what they
    /// know with struct update syntax, so a new column is added in one place.
    pub fn call(layer: Layer, func: &'a str, start_ns: i64, duration_ns: i64) -> Self {
        let func_id = crate::functions::by_name(func).map_or(0, |f| f.id);
        Event {
            start_ns,
            duration_ns,
            ..Event::row(layer, func, func_id)
        }
    }

    /// A row of `func` (`layer`, functions.def id `func_id`) with every other column empty:
    /// what a reader starts each row from before it sets the other columns.
    #[inline]
    pub fn row(layer: Layer, func: &'a str, func_id: u16) -> Self {
        Event {
            id: 0,
            rank: 0,
            process: 0,
            thread: 0,
            start_ns: 0,
            duration_ns: 0,
            layer,
            func,
            func_id,
            depth: 0,
            parent: None,
            file_id: None,
            offset: None,
            size: 0,
            result: 0,
            error: 0,
            flags: 0,
            collective: false,
            instance: None,
            mpi: MpiRef::NONE,
            comm: None,
            region: None,
        }
    }
}

impl Event<'_> {
    /// End time in ns since job start.
    pub fn end_ns(&self) -> i64 {
        self.start_ns + self.duration_ns
    }
}

/// The columns of a record that only MPI calls fill, kept out of [`Event`] (which points to
/// them): most records have none, and a row 40 bytes smaller costs less to build and to read
/// for every record (the report's pass reads none of these; 64 more bytes in a row cost it
/// 5.6 % more CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpiArgs {
    /// Request id of a nonblocking start or completion (unique within a process).
    pub request: Option<i64>,
    /// MPI point-to-point peer rank.
    pub peer: Option<i32>,
    /// MPI point-to-point tag.
    pub tag: Option<i32>,
    /// MPI collective root.
    pub root: Option<i32>,
    /// MPI collective communicator size.
    pub comm_size: Option<i32>,
}

impl MpiArgs {
    /// Every column empty.
    pub const NONE: MpiArgs = MpiArgs {
        request: None,
        peer: None,
        tag: None,
        root: None,
        comm_size: None,
    };
}

/// An event's [`MpiArgs`]: a reference to them, or none when every column is empty. Two are
/// equal when their columns are, wherever they live.
#[derive(Clone, Copy)]
pub struct MpiRef<'a>(Option<&'a MpiArgs>);

impl<'a> MpiRef<'a> {
    /// Every column empty.
    pub const NONE: MpiRef<'static> = MpiRef(None);

    /// The columns `args`.
    #[inline]
    pub fn to(args: &'a MpiArgs) -> MpiRef<'a> {
        MpiRef((*args != MpiArgs::NONE).then_some(args))
    }

    /// The columns, empty ones as None.
    #[inline]
    pub fn get(self) -> MpiArgs {
        self.0.copied().unwrap_or(MpiArgs::NONE)
    }
}

impl PartialEq for MpiRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for MpiRef<'_> {}

impl std::fmt::Debug for MpiRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows compare by their MPI columns, not by where these live: empty ones are none.
    #[test]
    fn mpi_columns_compare_by_value() {
        let (a, b) = (
            MpiArgs {
                peer: Some(3),
                ..MpiArgs::NONE
            },
            MpiArgs {
                peer: Some(3),
                ..MpiArgs::NONE
            },
        );
        assert_eq!(MpiRef::to(&a), MpiRef::to(&b));
        assert_eq!(MpiRef::to(&MpiArgs::NONE), MpiRef::NONE);
        assert_ne!(MpiRef::to(&a), MpiRef::NONE);
        assert_eq!(MpiRef::to(&a).get().peer, Some(3));
        assert_eq!(MpiRef::NONE.get(), MpiArgs::NONE);
    }
}
