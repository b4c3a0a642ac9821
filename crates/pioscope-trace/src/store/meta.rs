//! meta.json: what a trace is about (job, processes, clocks, what was lost). Every field is
//! documented in docs/FORMAT.md.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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

/// JOB fact: the MPI-IO implementation in force (`ROMIO`, `OMPIO`), written by the runtime after
/// MPI_Init (docs/RUNTIME.md, "MPI flavours").
pub const FACT_MPI_IO: &str = "mpi_io";
/// JOB fact: the environment settings that chose or tuned the MPI-IO implementation
/// (`OMPI_MCA_io=romio321 OMPI_MCA_fcoll=vulcan`, `ROMIO_HINTS=/path`), space-separated; empty
/// when there are none.
pub const FACT_MPI_IO_PARAMS: &str = "mpi_io_params";

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

/// Rows per table and other counts. Every field but `unusable_raw_files` is filled by
/// `StoreWriter::finish` from what it wrote.
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
    /// Rows of messages.parquet (0 in traces written before that table).
    #[serde(default)]
    pub messages: u64,
    /// Sends no receive was found for.
    #[serde(default)]
    pub unmatched_sends: u64,
    /// Receives no send was found for.
    #[serde(default)]
    pub unmatched_receives: u64,
    /// Rows of counters.parquet (0 without sampled counters, or before that table).
    #[serde(default)]
    pub counters: u64,
    /// Rows of darshan.parquet (imported stores only; absent from meta.json when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub darshan_counters: u64,
    /// Rows of darshan_heatmap.parquet (stores imported from a log with a HEATMAP module only;
    /// absent from meta.json when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub darshan_heatmap: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Meta {
    /// The meta.json of a new store: `produced_by` names the program that wrote it (e.g.
    /// "pioscope-trace 0.1.0"); nothing partial, no raw files, counts left for
    /// `StoreWriter::finish`.
    pub fn new(produced_by: String, job: JobMeta, processes: Vec<ProcessMeta>) -> Meta {
        Meta {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            tracer_version: None,
            merged_by: produced_by,
            time_unit: "ns".to_string(),
            job,
            processes,
            partial: false,
            partial_reasons: Vec::new(),
            counts: Counts::default(),
            raw_files: Vec::new(),
        }
    }
}

impl ProcessMeta {
    /// A container that was generated (simulated or synthetic), not traced: no raw file, no
    /// parent, one thread, and a clock that needed no conversion (`ClockMeta::exact`).
    pub fn generated(
        process: u32,
        kind: ContainerKind,
        rank: i32,
        host: String,
        clock: ClockMeta,
    ) -> ProcessMeta {
        ProcessMeta {
            process,
            kind,
            rank,
            pid: process,
            ppid: 0,
            host,
            exe: None,
            cmdline: None,
            forked_from: None,
            threads: 1,
            events: 0,
            raw_file: String::new(),
            clock,
            partial: None,
            facts: BTreeMap::new(),
        }
    }
}

impl ClockMeta {
    /// The clock of a generated store: times are nanoseconds from the start already (`kind`
    /// says where they came from, e.g. "simulated"), `span_ns` the time the store covers.
    pub fn exact(kind: &str, span_ns: u64, start_ns: i64) -> ClockMeta {
        ClockMeta {
            kind: kind.to_string(),
            fit: FitMethod::Monotonic,
            pairs: 0,
            span_ns,
            ns_per_tick: 1.0,
            max_residual_ns: 0.0,
            offset_source: OffsetSource::None,
            init: None,
            finalize: None,
            start_ns,
        }
    }
}

/// How a process's ticks-to-ns line was obtained (the rules are in `merge::clock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FitMethod {
    /// Least squares over the process's own pairs.
    LeastSquares,
    /// MONOTONIC clock, rate 1.
    Monotonic,
    /// Rate from the `tsc_hz` job fact.
    TscHz,
    /// Median rate of other processes on the same host.
    SameHost,
    /// Median rate of processes on other hosts.
    OtherHosts,
    /// No information: 1 ns per tick assumed.
    Assumed,
}

/// Where a process's offset to the reference clock came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OffsetSource {
    /// INIT and FINALIZE measurements: linear drift between them.
    InitFinalize,
    /// Only INIT: constant offset.
    Init,
    /// Only FINALIZE: constant offset.
    Finalize,
    /// No measurement of its own: the parent process's model (a fork shares its clock).
    Parent,
    /// On the reference rank's host: the very same CLOCK_MONOTONIC, so offset 0 whatever
    /// the ping-pong measured (on an oversubscribed node its error reaches milliseconds).
    SharedClock,
    /// A server on another host than the reference rank's, with no measurement of its own:
    /// its CLOCK_REALTIME and the reference's at their tracer starts line the clocks up (as
    /// good as the hosts' time synchronisation, NTP or PTP).
    Realtime,
    /// No measurement: offset 0.
    None,
}

/// One measurement used: (our CLOCK_MONOTONIC ns, reference minus ours, round trip).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetPoint {
    /// Our CLOCK_MONOTONIC at the measurement.
    pub local_mono_ns: u64,
    /// Reference CLOCK_MONOTONIC minus ours.
    pub offset_ns: i64,
    /// Round trip of the measurement (the error bound).
    pub rtt_ns: u64,
}
