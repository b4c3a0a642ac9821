//! A job as rows of the fleet tables (`pioscope fleet`): the figures of its profile that
//! compare across jobs (size, time, I/O share, bytes, findings with their cost). `table.rs`
//! owns the tables' columns and their streaming Parquet writer; `ranking.rs` ranks jobs and
//! findings across the fleet with SQL run by DuckDB over the written tables.
//!
//! Design note: a job's `Profile` is dropped as soon as its rows are made, so a fleet of any
//! size holds one profile per worker; the ranking reads the tables once they are written.

pub mod ranking;
pub mod table;

use pioscope_trace::store::Trace;

use crate::profile::Profile;

/// The Darshan modules whose counters give a log without DXT events its bytes and I/O time:
/// the layers that reach the file system (MPI-IO sits above POSIX, so adding it would count
/// its bytes twice).
const DARSHAN_FILE_MODULES: [&str; 2] = ["POSIX", "STDIO"];

/// The fact an imported Darshan log carries its batch job id in (`import/darshan.rs`).
const DARSHAN_JOBID_FACT: &str = "darshan_jobid";

/// What an input of the fleet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A pioscope trace store (a directory with meta.json).
    Trace,
    /// A Darshan log, imported on the way.
    Darshan,
    /// Neither: named on the command line, or found unreadable.
    Unknown,
}

impl InputKind {
    /// `trace`, `darshan` or `unknown`, as the `kind` column has it.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Trace => "trace",
            InputKind::Darshan => "darshan",
            InputKind::Unknown => "unknown",
        }
    }
}

/// One row of jobs.parquet (columns in docs/FORMAT.md "fleet tables").
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// The input's path as found.
    pub input: String,
    /// What the input is.
    pub kind: InputKind,
    /// A short name: the store's directory name, the log's file name without `.darshan`.
    pub job: String,
    /// Why the input could not be profiled; `figures` is then None.
    pub error: Option<String>,
    /// The job's figures.
    pub figures: Option<JobFigures>,
}

/// The figures of a job that was profiled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobFigures {
    /// The batch system's job id, when the input records one (Darshan's jobid).
    pub job_id: Option<i64>,
    /// Command line of the lowest rank.
    pub command: Option<String>,
    /// MPI ranks (0 without MPI).
    pub ranks: u32,
    /// Processes.
    pub processes: u64,
    /// Distinct hosts.
    pub hosts: u64,
    /// Job start, ns since the Unix epoch.
    pub start_unix_ns: i64,
    /// Job duration, ns.
    pub duration_ns: i64,
    /// Records read.
    pub events: u64,
    /// Something was lost (the trace's or Darshan's partial flag).
    pub partial: bool,
    /// The ranks' wall time, ns summed over ranks.
    pub wall_ns: i64,
    /// Time in I/O, ns summed over ranks.
    pub io_ns: i64,
    /// `io_ns / wall_ns` (0 without wall time).
    pub io_share: f64,
    /// Application-level bytes read (data calls not inside another data call).
    pub bytes_read: u64,
    /// Application-level bytes written.
    pub bytes_written: u64,
    /// Whether the findings were judged (a Darshan log without DXT has no calls to judge).
    pub findings_judged: bool,
    /// Number of findings.
    pub findings: u32,
    /// The costliest finding's rule id.
    pub top_finding: Option<String>,
    /// Its cost, ns.
    pub top_finding_cost_ns: Option<i64>,
}

/// One row of findings.parquet: one finding of one job.
#[derive(Clone, Debug, PartialEq)]
pub struct FindingRow {
    /// The job's input (jobs.parquet `input`).
    pub input: String,
    /// The job's short name.
    pub job: String,
    /// 1 for the job's costliest finding, 2 for the next, ...
    pub position: u32,
    /// Rule id (docs/FINDINGS.md).
    pub finding: String,
    /// `high`, `medium` or `low`.
    pub severity: &'static str,
    /// The finding's one line.
    pub title: String,
    /// Estimated elapsed time it costs the job, ns.
    pub cost_ns: i64,
    /// `cost_ns` as a share of the job's duration (None for a job of no duration).
    pub cost_share: Option<f64>,
}

/// The row of an input that could not be profiled.
pub fn failed(input: &str, kind: InputKind, job: &str, error: String) -> JobRow {
    JobRow {
        input: input.to_string(),
        kind,
        job: job.to_string(),
        error: Some(error),
        figures: None,
    }
}

/// The rows of a profiled job: its jobs.parquet row and one findings.parquet row per finding.
pub fn rows(
    input: &str,
    kind: InputKind,
    job: &str,
    trace: &Trace,
    p: &Profile,
) -> (JobRow, Vec<FindingRow>) {
    let total = &p.breakdown.total;
    let (mut bytes_read, mut bytes_written) = p
        .patterns
        .files
        .iter()
        .fold((0, 0), |(r, w), f| (r + f.read_bytes, w + f.written_bytes));
    let (mut wall_ns, mut io_ns, mut io_share) = (total.wall_ns, total.io_ns, total.shares.io);
    let mut findings_judged = true;
    if let Some(d) = p.darshan.as_ref().filter(|d| !d.has_dxt_events) {
        // No calls: Darshan's counters say what the job moved and how long it took.
        findings_judged = false;
        let modules = d
            .modules
            .iter()
            .filter(|m| DARSHAN_FILE_MODULES.contains(&m.module.as_str()));
        for m in modules {
            bytes_read += m.bytes_read;
            bytes_written += m.bytes_written;
            io_ns += m.read_time_ns + m.write_time_ns + m.meta_time_ns;
        }
        wall_ns = p
            .job
            .duration_ns
            .saturating_mul(i64::from(p.job.ranks.max(1)));
        io_share = if wall_ns > 0 {
            io_ns as f64 / wall_ns as f64
        } else {
            0.0
        };
    }
    let job_id = trace
        .meta
        .processes
        .first()
        .and_then(|proc| proc.facts.get(DARSHAN_JOBID_FACT))
        .and_then(|v| v.parse().ok());
    let duration = p.job.duration_ns;
    let findings: Vec<FindingRow> = p
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| FindingRow {
            input: input.to_string(),
            job: job.to_string(),
            position: i as u32 + 1,
            finding: f.id.clone(),
            severity: f.severity.name(),
            title: f.title.clone(),
            cost_ns: f.cost_ns,
            cost_share: (duration > 0).then(|| f.cost_ns as f64 / duration as f64),
        })
        .collect();
    let top = p.findings.first();
    let figures = JobFigures {
        job_id,
        command: p.job.command.clone(),
        ranks: p.job.ranks,
        processes: p.job.processes,
        hosts: p.job.hosts.len() as u64,
        start_unix_ns: p.job.start_unix_ns,
        duration_ns: duration,
        events: p.job.events,
        partial: p.job.partial,
        wall_ns,
        io_ns,
        io_share,
        bytes_read,
        bytes_written,
        findings_judged,
        findings: p.findings.len() as u32,
        top_finding: top.map(|f| f.id.clone()),
        top_finding_cost_ns: top.map(|f| f.cost_ns),
    };
    let row = JobRow {
        input: input.to_string(),
        kind,
        job: job.to_string(),
        error: None,
        figures: Some(figures),
    };
    (row, findings)
}
