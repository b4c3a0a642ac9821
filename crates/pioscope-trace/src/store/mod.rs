//! The trace store: a directory with meta.json, events.parquet, files.parquet,
//! settings.parquet, messages.parquet, counters.parquet and the level-of-detail index (lod.parquet,
//! lod_spans.parquet). `StoreWriter` is the only way one is written (its tables encoded by
//! `writer`, messages paired by `matching`, the index built by `lod`); `reader` streams them
//! back by row group.

mod chunk_bytes;
pub mod columns;
pub mod containers;
pub mod counters;
pub mod darshan_counters;
pub mod darshan_heatmap;
pub mod event;
pub mod lod;
mod lod_groups;
pub mod matching;
pub mod messages;
pub mod meta;
pub mod reader;
pub mod scan;
pub mod schema;
pub mod store_writer;
pub mod writer;

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

pub use columns::{Columns, IntCol, StrCol};
pub use containers::{Container, ContainerRow, Containers, RowMap};
pub use counters::{CounterRow, COUNTERS_FILE};
pub use darshan_counters::{DarshanCounterRow, DARSHAN_FILE};
pub use darshan_heatmap::{DarshanHeatmapRow, DARSHAN_HEATMAP_FILE};
pub use event::{Event, MpiArgs, MpiRef};
pub use meta::Meta;
pub use reader::{EventBatch, EventBatches, EventFilter, Trace};
pub use scan::{Pred, Selected, Table, TableBatches};
pub use store_writer::{FinishedStore, StoreWriter};
pub use writer::{FileRow, SettingRow};

/// File names inside a trace directory.
pub const META_FILE: &str = "meta.json";
/// Events table.
pub const EVENTS_FILE: &str = "events.parquet";
/// Files table.
pub const FILES_FILE: &str = "files.parquet";
/// Hints and views table.
pub const SETTINGS_FILE: &str = "settings.parquet";

/// Errors reading or writing a store.
#[derive(Debug, Error)]
pub enum StoreError {
    /// File system error.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The output of a writer exists already.
    #[error("{} already exists", .0.display())]
    Exists(PathBuf),
    /// The directory has no meta.json.
    #[error("{} is not a pioscope trace (no {META_FILE} in it)", .0.display())]
    NotATrace(PathBuf),
    /// meta.json does not parse.
    #[error("{}: not a valid trace {META_FILE}: {source}", path.display())]
    BadMeta {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// meta.json parses but contradicts itself (a damaged store).
    #[error("{}: {what}", path.display())]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the field and value.
        what: String,
    },
    /// A trace of another format or a newer version.
    #[error("{}: trace format {format:?} version {version} is not supported (this reader knows {:?} version {})", path.display(), meta::FORMAT_NAME, meta::FORMAT_VERSION)]
    Unsupported {
        /// The meta.json.
        path: PathBuf,
        /// Its format.
        format: String,
        /// Its version.
        version: u32,
    },
    /// A table lacks a column or has it with the wrong type.
    #[error("{}: column {column}: {what}", path.display())]
    Schema {
        /// The table.
        path: PathBuf,
        /// The column.
        column: String,
        /// What is wrong.
        what: String,
    },
    /// A table the Parquet decoder failed on without an error of its own (it panicked).
    #[error("{}: damaged table: {detail}", path.display())]
    Damaged {
        /// The table.
        path: PathBuf,
        /// The decoder's message.
        detail: String,
    },
    /// Parquet error.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// Arrow error.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// JSON error writing meta.json.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

impl StoreError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Names a file system from its statfs magic.
pub fn fs_type_name(magic: u64) -> &'static str {
    match magic {
        0 => "unknown",
        0x0BD0_0BD0 => "lustre",
        0x4750_4653 => "gpfs",
        0x1983_0326 => "beegfs",
        0x2011_BAB0 => "exfat",
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x6969 => "nfs",
        0x0102_1994 => "tmpfs",
        0x2FC1_2FC1 => "zfs",
        0x00C3_6400 => "cephfs",
        0x794C_7630 => "overlayfs",
        0x6573_5546 => "fuse",
        0x6462_6720 => "debugfs",
        0x9FA0 => "proc",
        0x6265_6572 => "sysfs",
        0x5346_544E => "ntfs",
        0x4D44 => "vfat",
        0x5346_414F => "afs",
        0xFE53_4D42 | 0xFF53_4D42 => "smb",
        _ => "other",
    }
}
