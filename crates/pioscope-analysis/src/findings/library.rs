//! The HDF5 or PnetCDF call a record runs beneath, for the rules of those layers: the MPI-IO
//! and POSIX calls a library makes nest beneath its own call (`H5Dwrite` → `MPI_File_write_at`
//! → `pwrite`). The libraries are not I/O layers (`crate::class::is_io_layer`): their MPI-IO
//! calls stay the top-level requests every other rule counts, so these rules place records
//! themselves, with one frame per thread at the most.

use pioscope_trace::raw::format::flags;
use pioscope_trace::store::Event;
use pioscope_trace::Layer;

use crate::nesting::{Frame, Nesting};
use crate::pass::Context;

/// An HDF5 or PnetCDF call no other one encloses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LibraryCall {
    /// Its id.
    pub id: i64,
    /// Its function name (static: from functions.def).
    pub func: &'static str,
    /// Its object: the file, dataset or variable.
    pub file: Option<i32>,
    /// Its collective flag (HDF5 transfers: the transfer property list asked for it).
    pub collective: bool,
    /// Its nonblocking flag (PnetCDF's iput/iget: the access is only queued).
    pub nonblocking: bool,
}

/// Per thread, the library call enclosing the current record.
#[derive(Debug, Default)]
pub(crate) struct Beneath {
    nest: Nesting<LibraryCall>,
    /// Frames on the stacks of `nest`: while none is, no record is beneath a library call
    /// and only a library call needs the nesting (most traces have none).
    open: usize,
}

impl Beneath {
    /// The library call enclosing `e` (None for a library call itself and for records outside
    /// one). Call once per record, in store order.
    pub(crate) fn enter(&mut self, e: &Event<'_>) -> Option<LibraryCall> {
        let library = matches!(e.layer, Layer::Hdf5 | Layer::Pnetcdf);
        if self.open == 0 && !library {
            return None;
        }
        let open = &mut self.open;
        let stack = self.nest.enter(e, |_| *open -= 1);
        if let Some(f) = stack.first() {
            return Some(f.data);
        }
        if library {
            if let Some(f) = pioscope_trace::functions::by_id(e.func_id) {
                let call = LibraryCall {
                    id: e.id,
                    func: f.name,
                    file: e.file_id,
                    collective: e.collective,
                    nonblocking: e.flags & flags::NONBLOCKING != 0,
                };
                stack.push(Frame::of(e, call));
                self.open += 1;
            }
        }
        None
    }
}

/// The HDF5 file (its `file_id`) of an HDF5 object named `<file path>:<path in the file>`.
pub(crate) fn h5_file_of(ctx: &Context<'_>, object: i32) -> Option<i32> {
    let path = ctx.trace.file_path(object)?;
    let file = path.find(":/").map_or(path, |i| &path[..i]);
    ctx.trace
        .files
        .iter()
        .find(|f| f.path == file)
        .map(|f| f.file_id)
}
