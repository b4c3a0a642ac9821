//! What counts as a regression for `--fail-above PCT`: the ranks' I/O time (the headline
//! measure), the time of each I/O library layer, and for imported Darshan logs the time of
//! each module's counters (a log without DXT segments has no other), each when it grew by more
//! than PCT percent of A's. Functions, files and ranks are not gated: single rows of a run are noisy, and
//! their growth shows in their layer. MPI communication is not I/O (its waits inside
//! collective I/O count in the I/O time already); regions and tracer records are no layer of
//! their own.

use pioscope_trace::functions::Layer;
use serde::Serialize;

use super::{Change, RowDiff};

/// A measure that grew by more than the threshold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Regression {
    /// `io time`, `layer NAME` or `darshan MODULE`.
    pub measure: String,
    /// The change.
    #[serde(flatten)]
    pub change: Change,
}

/// The layers whose time is gated: the libraries that do I/O.
fn gated(layer: Layer) -> bool {
    matches!(
        layer,
        Layer::Posix | Layer::Stdio | Layer::MpiIo | Layer::Hdf5 | Layer::Pnetcdf
    )
}

/// Whether `c` grew by more than `pct` percent; a time A did not have at all (a layer only B
/// uses) is a growth above any threshold.
fn regressed(c: &Change, pct: f64) -> bool {
    match c.percent {
        Some(p) => p > pct,
        None => c.b_ns > 0,
    }
}

/// The regressions above `pct` percent: the I/O time first, then the layers in layer order,
/// then the Darshan modules by name.
pub(super) fn regressions(
    io_time: &Change,
    layers: &[RowDiff],
    darshan: &[RowDiff],
    pct: f64,
) -> Vec<Regression> {
    let mut out = Vec::new();
    if regressed(io_time, pct) {
        out.push(Regression {
            measure: "io time".to_string(),
            change: *io_time,
        });
    }
    for row in layers {
        if let Some(layer) = row.layer.filter(|&l| gated(l)) {
            if regressed(&row.change, pct) {
                out.push(Regression {
                    measure: format!("layer {}", layer.name()),
                    change: row.change,
                });
            }
        }
    }
    for row in darshan.iter().filter(|r| regressed(&r.change, pct)) {
        out.push(Regression {
            measure: format!("darshan {}", row.group),
            change: row.change,
        });
    }
    out
}
