//! meta.json: what a trace is about (job, processes, clocks, what was lost). Every field is
//! documented in docs/FORMAT.md.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::merge::clock::{FitMethod, OffsetPoint, OffsetSource};

/// The `format` value of every trace.
pub const FORMAT_NAME: &str = "pioscope-trace";
/// The store version this crate writes (and the newest it reads).
pub const FORMAT_VERSION: u32 = 1;

/// The whole of meta.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// Always "pioscope-trace".
    pub format: String,
    /// Store version.
    pub version: u32,
    /// Version of the runtime that traced (JOB fact `tracer_version`), if known.
    pub tracer_version: Option<String>,
    /// The program that merged, e.g. "pioscope-trace 0.1.0".
    pub merged_by: String,
    /// Unit of every time in the store: "ns".
    pub time_unit: String,
    /// The job.
    pub job: JobMeta,
    /// Every traced process, indexed by the events' `process` column.
    pub processes: Vec<ProcessMeta>,
    /// True when anything was lost.
    pub partial: bool,
    /// Why, one sentence per cause, naming the raw file.
    pub partial_reasons: Vec<String>,
    /// Rows per table and other counts.
    pub counts: Counts,
    /// Names of the raw files merged (including unusable ones).
    pub raw_files: Vec<String>,
}

/// The job as a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobMeta {
    /// Command line of the lowest rank's first process.
    pub command: Option<String>,
    /// CLOCK_REALTIME of time 0 (the job start), ns since the Unix epoch.
    pub start_unix_ns: i64,
    /// Time from job start to the end of the last record, ns.
    pub duration_ns: i64,
    /// Number of MPI ranks (0 for a program without MPI).
    pub ranks: u32,
    /// Host of each rank, indexed by rank ("" if unknown).
    pub hosts: Vec<String>,
    /// MPI library (JOB fact `mpi_library`), if known.
    pub mpi_library: Option<String>,
}

/// What a container of events (one `process` value) stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContainerKind {
    /// A traced (or simulated) application process; MPI ranks are processes.
    #[default]
    Process,
    /// A storage server (from a server trace or a simulation); its events are on the `server`
    /// layer, `rank` is -1 and `host` is the server's name.
    Server,
    /// A disk (storage target) beneath a server, named in `facts["server"]`; events on the
    /// `disk` layer.
    Disk,
}

/// One traced process, or one storage server or disk (`kind`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessMeta {
    /// Index used by the events' `process` column.
    pub process: u32,
    /// What this container is; absent in older traces, which hold processes only.
    #[serde(default)]
    pub kind: ContainerKind,
    /// MPI rank, -1 without MPI; a forked child has its parent's rank.
    pub rank: i32,
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Host name.
    pub host: String,
    /// Executable path.
    pub exe: Option<String>,
    /// Command line.
    pub cmdline: Option<String>,
    /// JOB fact `forked_from` of a forked child (as the runtime wrote it).
    pub forked_from: Option<String>,
    /// Threads that recorded events.
    pub threads: u32,
    /// Events in the store from this process.
    pub events: u64,
    /// The raw file it came from.
    pub raw_file: String,
    /// How its clock was converted.
    pub clock: ClockMeta,
    /// Why its trace is incomplete, if it is.
    pub partial: Option<String>,
    /// Every JOB fact of the process.
    pub facts: BTreeMap<String, String>,
}

/// The clock conversion of one process: ticks → CLOCK_MONOTONIC → reference clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockMeta {
    /// "tsc" or "monotonic".
    pub kind: String,
    /// How the ticks → ns line was obtained.
    pub fit: FitMethod,
    /// (ticks, ns) pairs available.
    pub pairs: usize,
    /// CLOCK_MONOTONIC time the pairs cover, ns (the longer, the better the rate).
    pub span_ns: u64,
    /// Nanoseconds per tick.
    pub ns_per_tick: f64,
    /// Largest distance of a pair from the line, ns.
    pub max_residual_ns: f64,
    /// Where the offset to rank 0 came from.
    pub offset_source: OffsetSource,
    /// The INIT measurement used.
    pub init: Option<OffsetPoint>,
    /// The FINALIZE measurement used.
    pub finalize: Option<OffsetPoint>,
    /// When the process started tracing, ns since job start.
    pub start_ns: i64,
}

/// Counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Rows of events.parquet.
    pub events: u64,
    /// Rows of files.parquet.
    pub files: u64,
    /// Rows of settings.parquet.
    pub settings: u64,
    /// Processes.
    pub processes: u64,
    /// Raw files that could not be used at all.
    pub unusable_raw_files: u64,
}
