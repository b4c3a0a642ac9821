//! Exports of a trace store to the formats of existing viewers: Pajé (ViTE, pajeng), Chrome
//! trace JSON (Perfetto), OTF2 (Vampir) and CSV. One module per format; docs/EXPORTS.md says
//! what each part of a trace becomes in each format.
//!
//! Every export streams the events (`Trace::events()` row group by row group, or per-rank
//! cursors merged by time for Pajé, which wants one global time order); no export holds the
//! whole trace in memory. Messages (messages.parquet) are held, being far fewer than events.
#![warn(missing_docs)]

pub mod chrome;
pub mod csv;
pub mod model;
pub mod otf2;
mod otf2_sys;
pub mod paje;

use std::fmt;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use pioscope_trace::store::messages::MessageRow;
use pioscope_trace::store::{Event, StoreError, Trace};
use thiserror::Error;

/// Errors of an export.
#[derive(Debug, Error)]
pub enum ExportError {
    /// Reading the trace failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the output failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The output.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The CSV writer failed.
    #[error("csv: {0}")]
    Csv(#[from] ::csv::Error),
    /// JSON encoding failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// libotf2 reported an error.
    #[error("otf2: {what} failed: {message}")]
    Otf2 {
        /// The call.
        what: &'static str,
        /// libotf2's description of the error code.
        message: String,
    },
    /// An event names a `process` that meta.json does not list (a damaged store): a format
    /// that declares containers before their events cannot place it.
    #[error("events.parquet: event {id} has process {process}, which meta.json does not list")]
    UnknownProcess {
        /// The event's id.
        id: i64,
        /// Its `process` value.
        process: i32,
    },
    /// The output exists (and is not to be replaced).
    #[error("{} already exists (use --force to replace it)", .0.display())]
    OutputExists(PathBuf),
}

impl ExportError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
        move |source| ExportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Lets `?` take I/O errors inside an export; `name_output` puts the output's path on them.
impl From<std::io::Error> for ExportError {
    fn from(source: std::io::Error) -> Self {
        ExportError::Io {
            path: PathBuf::new(),
            source,
        }
    }
}

/// Creates the output file `out` behind a 1 MiB buffer: what the single-file formats write to.
pub(crate) fn create_output(out: &Path) -> Result<BufWriter<File>, ExportError> {
    let file = File::create(out).map_err(ExportError::io(out))?;
    Ok(BufWriter::with_capacity(1 << 20, file))
}

/// Names `out` in I/O errors that were raised without a path (and in JSON write errors).
pub(crate) fn name_output<T>(r: Result<T, ExportError>, out: &Path) -> Result<T, ExportError> {
    r.map_err(|e| match e {
        ExportError::Io { path, source } if path.as_os_str().is_empty() => ExportError::Io {
            path: out.to_path_buf(),
            source,
        },
        ExportError::Json(j) if j.is_io() => ExportError::Io {
            path: out.to_path_buf(),
            source: j.into(),
        },
        other => other,
    })
}

/// The formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Pajé trace file (`.paje`, `.trace`): ViTE, pajeng.
    Paje,
    /// Chrome trace event JSON: Perfetto, chrome://tracing.
    Chrome,
    /// OTF2 archive (a directory with `traces.otf2`): Vampir, otf2-print.
    Otf2,
    /// CSV of the events.
    Csv,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [Format; 4] = [Format::Paje, Format::Chrome, Format::Otf2, Format::Csv];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Paje => "paje",
            Format::Chrome => "chrome",
            Format::Otf2 => "otf2",
            Format::Csv => "csv",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown format {s:?} (paje, chrome, otf2 or csv)"))
    }
}

/// What part of the trace to export.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Only these ranks (empty: every container, servers and disks included).
    pub ranks: Vec<i32>,
    /// Only calls that end at or after this time (ns since job start).
    pub from_ns: Option<i64>,
    /// Only calls that start at or before this time.
    pub to_ns: Option<i64>,
}

impl Options {
    /// True when the rank is exported.
    pub fn keeps_rank(&self, rank: i32) -> bool {
        self.ranks.is_empty() || self.ranks.contains(&rank)
    }

    /// True when the event is exported: its rank is selected and it overlaps the window.
    /// Overlap (not containment) keeps nesting whole: a call's parent overlaps every window
    /// the call does.
    pub fn keeps(&self, e: &Event<'_>) -> bool {
        self.keeps_rank(e.rank) && self.overlaps(e.start_ns, e.end_ns())
    }

    /// True when [start, end] overlaps the window.
    pub fn overlaps(&self, start: i64, end: i64) -> bool {
        self.from_ns.is_none_or(|f| end >= f) && self.to_ns.is_none_or(|t| start <= t)
    }

    /// True when the message is exported: both ranks kept, and it overlaps the window.
    pub fn keeps_message(&self, m: &MessageRow) -> bool {
        self.keeps_rank(m.from_rank) && self.keeps_rank(m.to_rank) && {
            let (a, b) = (m.send_ns.min(m.recv_ns), m.send_ns.max(m.recv_ns));
            self.overlaps(a, b)
        }
    }
}

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events written (CSV rows, Pajé states, Chrome complete events, OTF2 Enter records).
    pub events: u64,
    /// Messages written (Pajé links, Chrome flows, OTF2 send/receive pairs).
    pub messages: u64,
    /// Counter samples written (Pajé variable changes, Chrome counter events, OTF2 metrics).
    pub counters: u64,
}

/// Progress of an export: events read so far (of `meta.counts.events`).
pub type Progress<'a> = &'a mut dyn FnMut(u64);

/// Writes `trace` as `format` to `out` (a file, or a directory for OTF2).
pub fn export(
    trace: &Trace,
    format: Format,
    out: &Path,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Summary, ExportError> {
    match format {
        Format::Paje => paje::export(trace, out, opts, progress),
        Format::Chrome => chrome::export(trace, out, opts, progress),
        Format::Otf2 => otf2::export(trace, out, opts, progress),
        Format::Csv => csv::export(trace, out, opts, progress),
    }
}

/// Calls `f` on every exported event in store order (rank, then time), reporting progress
/// once per batch.
pub(crate) fn for_each_event(
    trace: &Trace,
    opts: &Options,
    progress: Progress<'_>,
    mut f: impl FnMut(&Event<'_>) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    let filter = pioscope_trace::store::EventFilter {
        rank: match opts.ranks.as_slice() {
            [r] => Some(*r),
            _ => None,
        },
    };
    let mut read = 0u64;
    for batch in trace.events_where(filter)? {
        let batch = batch?;
        for e in batch.iter() {
            if opts.keeps(&e) {
                f(&e)?;
            }
        }
        read += batch.len() as u64;
        progress(read);
    }
    Ok(())
}

/// Bytes a data call moved (0 for other calls), as statistics count them.
pub(crate) fn data_bytes(e: &Event<'_>) -> u64 {
    let kind = pioscope_trace::functions::kind_of(e.layer, e.func);
    match kind {
        pioscope_trace::OpKind::Read | pioscope_trace::OpKind::Write => {
            pioscope_trace::functions::bytes_moved(e.size.max(0) as u64, e.result, e.error)
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_by_name() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
        }
        assert!("vampir".parse::<Format>().is_err());
    }

    #[test]
    fn window_keeps_overlapping_calls() {
        let o = Options {
            ranks: vec![1],
            from_ns: Some(100),
            to_ns: Some(200),
        };
        assert!(o.keeps_rank(1) && !o.keeps_rank(0));
        assert!(o.overlaps(50, 100));
        assert!(o.overlaps(150, 160));
        assert!(o.overlaps(0, 1000));
        assert!(!o.overlaps(0, 99));
        assert!(!o.overlaps(201, 300));
    }
}
