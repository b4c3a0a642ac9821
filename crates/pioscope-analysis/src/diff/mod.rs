//! `pioscope diff`: run against run. Two profiles (what `pioscope report` computes, reused as
//! they are) are lined up table by table: time per layer, function, file and rank side by side
//! with the change, and an imported Darshan log's counters per module (`tables`), the findings that appeared, disappeared, got worse or better
//! (`findings`); one more pass reads both stores side by side and pairs their calls as
//! `compare` does, to name the calls whose time changed most (`calls`). With a threshold the
//! diff also lists the regressions above it (`gate`), which `--fail-above` turns into an exit
//! status for CI.
//!
//! A is the baseline, B the run judged: every change is B - A, every percentage relative to
//! A. Rows, findings and calls present on one side only are kept, with the other side empty.

mod calls;
mod findings;
mod gate;
mod tables;

use pioscope_trace::store::Trace;
use serde::Serialize;
use thiserror::Error;

pub use calls::{CallChange, Calls, Unpaired};
pub use findings::{FindingDiff, Status};
pub use gate::Regression;
pub use tables::{Measure, RowDiff};

use crate::compare::CompareError;
use crate::profile::Profile;
use crate::scope::Scope;

/// Changed calls kept by default (the largest changes).
pub const DEFAULT_TOP: usize = 20;

/// What to diff.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Which records count when pairing calls (the profiles were made with the same).
    pub scope: Scope,
    /// How many of the calls whose time changed most to keep.
    pub top: usize,
    /// Regressions are listed above this growth, in percent of A (none without it).
    pub fail_above: Option<f64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scope: Scope::Application,
            top: DEFAULT_TOP,
            fail_above: None,
        }
    }
}

/// Why a diff could not be made.
#[derive(Debug, Error)]
pub enum DiffError {
    /// Reading the calls of one of the traces failed.
    #[error(transparent)]
    Calls(#[from] CompareError),
    /// A threshold that is not a number of 0 or more.
    #[error("the regression threshold must be a percentage of 0 or more, not {0}")]
    Threshold(f64),
}

/// One side of the diff: the run as its profile heads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    /// The trace directory.
    pub path: String,
    /// Command line of the lowest rank.
    pub command: Option<String>,
    /// MPI ranks.
    pub ranks: u32,
    /// Job duration, ns.
    pub duration_ns: i64,
    /// Records read.
    pub events: u64,
}

/// A time on both sides and how it changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Change {
    /// A's time, ns (0 when A has none).
    pub a_ns: i64,
    /// B's time, ns (0 when B has none).
    pub b_ns: i64,
    /// B - A, ns.
    pub delta_ns: i64,
    /// (B - A) / A in percent (null when A is 0).
    pub percent: Option<f64>,
}

impl Change {
    /// The change from `a` to `b`.
    pub fn new(a_ns: i64, b_ns: i64) -> Self {
        Change {
            a_ns,
            b_ns,
            delta_ns: b_ns - a_ns,
            percent: (a_ns > 0).then(|| (b_ns - a_ns) as f64 * 100.0 / a_ns as f64),
        }
    }
}

/// The whole diff (what `pioscope diff --json` prints).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    /// The baseline.
    pub a: Side,
    /// The run judged against it.
    pub b: Side,
    /// The ranks' time in I/O calls, summed over ranks (the report's "I/O" share: data,
    /// metadata, sync, close and waiting inside I/O calls).
    pub io_time: Change,
    /// The job's duration.
    pub duration: Change,
    /// Per layer, in layer order.
    pub layers: Vec<RowDiff>,
    /// Per function, largest change first.
    pub functions: Vec<RowDiff>,
    /// Per file and layer, largest change first.
    pub files: Vec<RowDiff>,
    /// Per rank and layer, largest change first.
    pub ranks: Vec<RowDiff>,
    /// Imported Darshan logs: the counters per module (operations = reads + writes, time =
    /// read + write + metadata time summed over ranks), by module; empty for other stores.
    pub darshan: Vec<RowDiff>,
    /// The findings of both runs lined up: appeared, worse, disappeared, better, unchanged.
    pub findings: Vec<FindingDiff>,
    /// The top-level calls paired, and those whose time changed most.
    pub calls: Calls,
    /// The threshold applied, in percent (null without `--fail-above`).
    pub fail_above: Option<f64>,
    /// What grew by more than the threshold (`gate` says which measures count).
    pub regressions: Vec<Regression>,
}

/// Diffs run `b` against run `a`: their profiles, and their calls read once more, side by side.
pub fn diff(
    a: (&Trace, &Profile),
    b: (&Trace, &Profile),
    opts: &Options,
) -> Result<Diff, DiffError> {
    if let Some(t) = opts.fail_above {
        if !(t >= 0.0 && t.is_finite()) {
            return Err(DiffError::Threshold(t));
        }
    }
    let calls = calls::changed(a.0, b.0, opts.scope, opts.top)?;
    let mut d = from_profiles(a.1, b.1, calls, opts.fail_above);
    d.a.path = a.0.dir.display().to_string();
    d.b.path = b.0.dir.display().to_string();
    Ok(d)
}

/// Everything the profiles say, with the calls already paired (sides without paths yet).
fn from_profiles(a: &Profile, b: &Profile, calls: Calls, fail_above: Option<f64>) -> Diff {
    let head = |p: &Profile| Side {
        path: String::new(),
        command: p.job.command.clone(),
        ranks: p.job.ranks,
        duration_ns: p.job.duration_ns,
        events: p.job.events,
    };
    let io_time = Change::new(a.breakdown.total.io_ns, b.breakdown.total.io_ns);
    let layers = tables::line_up_layers(&a.tables.layer, &b.tables.layer);
    let darshan = tables::line_up_darshan(a.darshan.as_ref(), b.darshan.as_ref());
    let regressions = fail_above.map_or_else(Vec::new, |t| {
        gate::regressions(&io_time, &layers, &darshan, t)
    });
    Diff {
        a: head(a),
        b: head(b),
        io_time,
        duration: Change::new(a.job.duration_ns, b.job.duration_ns),
        functions: tables::line_up(&a.tables.func, &b.tables.func),
        files: tables::line_up(&a.tables.file, &b.tables.file),
        ranks: tables::line_up(&a.tables.rank, &b.tables.rank),
        layers,
        darshan,
        findings: findings::line_up(&a.findings, &b.findings),
        calls,
        fail_above,
        regressions,
    }
}

#[cfg(test)]
mod tests;
