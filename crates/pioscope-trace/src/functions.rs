//! The traced functions and their layers, generated from runtime/src/functions.def.
//!
//! Ids are stable and never reused, so a raw record's `func` resolves through this table. An id
//! the table does not know (a newer runtime) still gets a layer from its id range and a
//! synthetic name, so old readers keep working on new traces.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The layer a traced function belongs to. `name()` is the spelling used in the store (and
/// in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// POSIX I/O (open, read, pwrite, stat, ...).
    Posix,
    /// C standard I/O (fopen, fwrite, ...).
    Stdio,
    /// MPI-IO (`MPI_File_*`).
    MpiIo,
    /// MPI communication (point-to-point, collectives, init/finalize).
    Mpi,
    /// User regions (`pioscope_region_begin/end`).
    Region,
    /// Pseudo-calls recorded by the tracer itself (request completions).
    Tracer,
    /// Requests served by a storage server (server traces, simulated traces).
    Server,
    /// Accesses served by a disk beneath a storage server.
    Disk,
    /// HDF5 (`H5Fcreate`, `H5Dwrite`, ...): files, datasets, groups, attributes.
    Hdf5,
    /// PnetCDF (`ncmpi_*`): files and variables.
    Pnetcdf,
}

impl Layer {
    /// Every layer, in the order of the functions.def id ranges.
    pub const ALL: [Layer; 10] = [
        Layer::Posix,
        Layer::Stdio,
        Layer::MpiIo,
        Layer::Mpi,
        Layer::Region,
        Layer::Tracer,
        Layer::Server,
        Layer::Disk,
        Layer::Hdf5,
        Layer::Pnetcdf,
    ];

    /// The name stored in the `layer` column.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Posix => "posix",
            Layer::Stdio => "stdio",
            Layer::MpiIo => "mpiio",
            Layer::Mpi => "mpi",
            Layer::Region => "region",
            Layer::Tracer => "tracer",
            Layer::Server => "server",
            Layer::Disk => "disk",
            Layer::Hdf5 => "hdf5",
            Layer::Pnetcdf => "pnetcdf",
        }
    }

    /// Parses a store layer name (case-insensitive; "mpi-io" is accepted for "mpiio").
    pub fn from_name(name: &str) -> Option<Layer> {
        let lower = name.to_ascii_lowercase();
        let lower = if lower == "mpi-io" {
            "mpiio".to_string()
        } else {
            lower
        };
        Layer::ALL.into_iter().find(|l| l.name() == lower)
    }

    /// Layers whose records name a file (`object` is a FILE string: a path, or for HDF5 and
    /// PnetCDF a `<path>:<dataset or variable>`) and carry an offset in it.
    pub fn is_file_layer(self) -> bool {
        matches!(
            self,
            Layer::Posix | Layer::Stdio | Layer::MpiIo | Layer::Hdf5 | Layer::Pnetcdf
        )
    }

    /// The layer of an id by the ranges of functions.def, for ids not in the table.
    pub fn from_id_range(id: u16) -> Layer {
        match id {
            0..=199 => Layer::Posix,
            200..=299 => Layer::Stdio,
            300..=399 => Layer::MpiIo,
            400..=499 => Layer::Mpi,
            500..=599 => Layer::Region,
            700..=799 => Layer::Server,
            800..=899 => Layer::Disk,
            900..=949 => Layer::Hdf5,
            950..=999 => Layer::Pnetcdf,
            _ => Layer::Tracer,
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One line of functions.def.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuncInfo {
    /// Stable id stored in raw records.
    pub id: u16,
    /// The layer.
    pub layer: Layer,
    /// The C name, e.g. `pwrite64` or `MPI_File_write_all`.
    pub name: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/functions_table.rs"));

/// What a call does, as far as statistics care: whether it moves bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Reads file data; `size` is bytes requested.
    Read,
    /// Writes file data; `size` is bytes requested.
    Write,
    /// Moves message data (MPI point-to-point and collectives but MPI_Barrier); `size` is
    /// message bytes.
    Message,
    /// Everything else: open/close/stat/seek/sync, views and hints, waits, completions, split
    /// collective `_end` calls (their bytes are counted at `_begin`), MPI_Barrier, regions.
    Other,
}

impl OpKind {
    /// True for kinds whose `size` counts as bytes in statistics.
    pub fn moves_data(self) -> bool {
        !matches!(self, OpKind::Other)
    }
}

/// Bytes a finished data operation moved: 0 if it failed, its result when that is a byte count
/// below the request (a short read), else the requested size.
pub fn bytes_moved(size: u64, result: i64, error: i32) -> u64 {
    if error != 0 {
        0
    } else if result >= 0 && (result as u64) < size {
        result as u64
    } else {
        size
    }
}

impl FuncInfo {
    /// Classifies the call by its name (see [`OpKind`]).
    pub fn kind(&self) -> OpKind {
        classify(self.layer, self.name)
    }
}

fn classify(layer: Layer, name: &str) -> OpKind {
    match layer {
        Layer::Posix => match name {
            "read" | "pread" | "pread64" | "readv" | "preadv" | "preadv64" | "aio_read"
            | "aio_read64" => OpKind::Read,
            "write" | "pwrite" | "pwrite64" | "writev" | "pwritev" | "pwritev64" | "aio_write"
            | "aio_write64" => OpKind::Write,
            _ => OpKind::Other,
        },
        Layer::Stdio => match name {
            "fread" | "fscanf" | "vfscanf" | "fgets" | "getline" | "getdelim" | "fgetc"
            | "getc" => OpKind::Read,
            "fwrite" | "fprintf" | "vfprintf" | "printf" | "vprintf" | "fputs" | "puts"
            | "fputc" | "putc" => OpKind::Write,
            _ => OpKind::Other,
        },
        Layer::MpiIo => {
            if name.ends_with("_end") {
                OpKind::Other
            } else if name.starts_with("MPI_File_read") || name.starts_with("MPI_File_iread") {
                OpKind::Read
            } else if name.starts_with("MPI_File_write") || name.starts_with("MPI_File_iwrite") {
                OpKind::Write
            } else {
                OpKind::Other
            }
        }
        Layer::Mpi => {
            if is_point_to_point(name) || (is_mpi_collective(name) && name != "MPI_Barrier") {
                OpKind::Message
            } else {
                OpKind::Other
            }
        }
        Layer::Server => match name {
            "server_read" => OpKind::Read,
            "server_write" => OpKind::Write,
            _ => OpKind::Other,
        },
        Layer::Disk => match name {
            "disk_read" => OpKind::Read,
            "disk_write" => OpKind::Write,
            _ => OpKind::Other,
        },
        Layer::Hdf5 => match name {
            "H5Dread" => OpKind::Read,
            "H5Dwrite" => OpKind::Write,
            _ => OpKind::Other,
        },
        Layer::Pnetcdf => {
            if name.starts_with("ncmpi_get_") || name.starts_with("ncmpi_iget_") {
                OpKind::Read
            } else if name.starts_with("ncmpi_put_") || name.starts_with("ncmpi_iput_") {
                OpKind::Write
            } else {
                OpKind::Other
            }
        }
        Layer::Region | Layer::Tracer => OpKind::Other,
    }
}

/// The int-count form of an MPI function: `MPI_Send` for the MPI-4 large-count `MPI_Send_c`
/// (same arguments but MPI_Count counts, recorded with the same fields), else `name` itself.
pub fn int_count_form(name: &str) -> &str {
    name.strip_suffix("_c")
        .filter(|base| base.starts_with("MPI_"))
        .unwrap_or(name)
}

/// MPI point-to-point calls (and their `_c` forms): their raw `offset` holds
/// `peer << 32 | tag`.
pub fn is_point_to_point(name: &str) -> bool {
    is_send(name) || matches!(int_count_form(name), "MPI_Recv" | "MPI_Irecv")
}

/// The point-to-point calls that send a message (blocking, nonblocking, and MPI_Sendrecv's
/// send half, and their `_c` forms): what message matching pairs with receives and what the
/// rules count as sends.
pub fn is_send(name: &str) -> bool {
    matches!(
        int_count_form(name),
        "MPI_Send"
            | "MPI_Ssend"
            | "MPI_Bsend"
            | "MPI_Rsend"
            | "MPI_Isend"
            | "MPI_Issend"
            | "MPI_Sendrecv"
    )
}

/// MPI collective communication calls (and their `_c` forms): their raw `offset` holds
/// `root << 32 | comm size`.
pub fn is_mpi_collective(name: &str) -> bool {
    matches!(
        int_count_form(name),
        "MPI_Barrier"
            | "MPI_Bcast"
            | "MPI_Reduce"
            | "MPI_Allreduce"
            | "MPI_Gather"
            | "MPI_Gatherv"
            | "MPI_Scatter"
            | "MPI_Scatterv"
            | "MPI_Allgather"
            | "MPI_Allgatherv"
            | "MPI_Alltoall"
            | "MPI_Alltoallv"
            | "MPI_Alltoallw"
            | "MPI_Reduce_scatter"
            | "MPI_Reduce_scatter_block"
            | "MPI_Scan"
            | "MPI_Exscan"
    )
}

/// Every function of functions.def, sorted by id.
pub fn all() -> &'static [FuncInfo] {
    FUNCTIONS
}

/// The function with this id, if functions.def has it.
pub fn by_id(id: u16) -> Option<&'static FuncInfo> {
    // Asked for most records of a pass: a table indexed by id (built once; ids are small),
    // each entry the function's place in FUNCTIONS plus one, 0 for none.
    static INDEX: OnceLock<Vec<u16>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut index = vec![
            0;
            FUNCTIONS
                .iter()
                .map(|f| f.id as usize + 1)
                .max()
                .unwrap_or(0)
        ];
        for (i, f) in FUNCTIONS.iter().enumerate() {
            index[f.id as usize] = i as u16 + 1;
        }
        index
    });
    match index.get(id as usize) {
        Some(&place) if place > 0 => FUNCTIONS.get(place as usize - 1),
        _ => None,
    }
}

/// The function with this name, if functions.def has it.
pub fn by_name(name: &str) -> Option<&'static FuncInfo> {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        FUNCTIONS
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name, i))
            .collect()
    });
    index.get(name).map(|&i| &FUNCTIONS[i])
}

/// Layer and name for any id: the table's entry, or the id range's layer and `func_<id>`.
pub fn describe(id: u16) -> (Layer, String) {
    match by_id(id) {
        Some(f) => (f.layer, f.name.to_string()),
        None => (Layer::from_id_range(id), format!("func_{id}")),
    }
}

/// The kind of a function given by store name and layer (unknown names are `Other`).
pub fn kind_of(layer: Layer, name: &str) -> OpKind {
    classify(layer, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_generated_and_sorted() {
        assert!(all().len() > 100);
        assert!(all().windows(2).all(|w| w[0].id < w[1].id));
        let f = by_id(14).expect("pwrite");
        assert_eq!((f.layer, f.name), (Layer::Posix, "pwrite"));
        assert_eq!(by_name("MPI_File_write_all").map(|f| f.id), Some(318));
        assert_eq!(by_id(600).map(|f| f.layer), Some(Layer::Tracer));
        assert_eq!(by_id(500).map(|f| f.layer), Some(Layer::Region));
    }

    #[test]
    fn bytes_moved_follows_the_result() {
        assert_eq!(bytes_moved(4096, 812, 0), 812, "short read");
        assert_eq!(bytes_moved(4096, 4096, 0), 4096);
        assert_eq!(bytes_moved(4096, -1, 5), 0, "failed");
        assert_eq!(bytes_moved(4096, 0, 0), 0, "end of file");
        assert_eq!(bytes_moved(64, 1 << 40, 0), 64, "never more than requested");
    }

    #[test]
    fn unknown_ids_fall_back_to_ranges() {
        assert_eq!(describe(299), (Layer::Stdio, "func_299".to_string()));
        assert_eq!(describe(8).1, "func_8");
        assert_eq!(describe(949), (Layer::Hdf5, "func_949".to_string()));
        assert_eq!(describe(999).0, Layer::Pnetcdf);
    }

    #[test]
    fn kinds() {
        assert_eq!(by_name("pwrite64").map(|f| f.kind()), Some(OpKind::Write));
        // Issue 13: the formatted, line and character STDIO calls move data.
        for w in [
            "fprintf", "vfprintf", "printf", "fputs", "puts", "fputc", "putc",
        ] {
            assert_eq!(by_name(w).map(|f| f.kind()), Some(OpKind::Write), "{w}");
        }
        for r in ["fscanf", "fgets", "getline", "getdelim", "fgetc", "getc"] {
            assert_eq!(by_name(r).map(|f| f.kind()), Some(OpKind::Read), "{r}");
        }
        assert_eq!(
            by_name("MPI_File_iread_at").map(|f| f.kind()),
            Some(OpKind::Read)
        );
        assert_eq!(
            by_name("MPI_File_write_all_end").map(|f| f.kind()),
            Some(OpKind::Other)
        );
        assert_eq!(
            by_name("MPI_File_write_all_begin").map(|f| f.kind()),
            Some(OpKind::Write)
        );
        assert_eq!(
            by_name("MPI_Allreduce").map(|f| f.kind()),
            Some(OpKind::Message)
        );
        assert_eq!(by_name("MPI_Wait").map(|f| f.kind()), Some(OpKind::Other));
        assert_eq!(by_name("open").map(|f| f.kind()), Some(OpKind::Other));
        assert_eq!(Layer::from_name("MPI-IO"), Some(Layer::MpiIo));
        assert_eq!(by_name("H5Dwrite").map(|f| f.kind()), Some(OpKind::Write));
        assert_eq!(by_name("H5Dread").map(|f| f.layer), Some(Layer::Hdf5));
        assert_eq!(by_name("H5Awrite").map(|f| f.kind()), Some(OpKind::Other));
        assert_eq!(Layer::from_name("HDF5"), Some(Layer::Hdf5));
        assert_eq!(
            by_name("ncmpi_iput_vara").map(|f| f.kind()),
            Some(OpKind::Write)
        );
        assert_eq!(
            by_name("ncmpi_get_vara_all").map(|f| (f.layer, f.kind())),
            Some((Layer::Pnetcdf, OpKind::Read))
        );
        assert_eq!(
            by_name("ncmpi_wait_all").map(|f| f.kind()),
            Some(OpKind::Other)
        );
        // Every point-to-point and collective name exists in functions.def.
        for f in all().iter().filter(|f| f.layer == Layer::Mpi) {
            let _ = f.kind();
        }
        for n in ["MPI_Send", "MPI_Irecv", "MPI_Barrier", "MPI_Exscan"] {
            assert!(by_name(n).is_some(), "{n}");
        }
    }
}
