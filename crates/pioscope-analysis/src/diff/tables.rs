//! The statistics tables of two profiles lined up row by row: the same group (layer, function,
//! file path, rank) and layer on both sides is one row; a row of one side only keeps the other
//! side empty. Imported Darshan logs also line up their counters per module (the only times a
//! log without DXT segments has).

use std::collections::BTreeMap;

use pioscope_trace::functions::Layer;
use serde::Serialize;

use super::Change;
use crate::darshan::{DarshanSummary, ModuleTotals};
use crate::stats::StatsRow;

/// What one side of a row counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Measure {
    /// Records.
    pub operations: u64,
    /// Bytes moved by data operations.
    pub bytes: u64,
    /// Sum of durations, ns.
    pub time_ns: i64,
}

/// One group on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RowDiff {
    /// The group: layer name, function name, file path, rank number or Darshan module.
    pub group: String,
    /// Its layer (null for a Darshan module).
    pub layer: Option<Layer>,
    /// A's row (null when A has none).
    pub a: Option<Measure>,
    /// B's row (null when B has none).
    pub b: Option<Measure>,
    /// The time, side by side.
    pub change: Change,
}

fn measure(r: &StatsRow) -> Measure {
    Measure {
        operations: r.operations,
        bytes: r.bytes,
        time_ns: r.total_time_ns,
    }
}

/// The rows of both sides by (group, layer).
fn join<'r>(
    a: impl Iterator<Item = (&'r str, Option<Layer>, Measure)>,
    b: impl Iterator<Item = (&'r str, Option<Layer>, Measure)>,
) -> Vec<RowDiff> {
    type Pair = (Option<Measure>, Option<Measure>);
    let mut rows: BTreeMap<(&str, Option<Layer>), Pair> = BTreeMap::new();
    for (group, layer, m) in a {
        rows.entry((group, layer)).or_default().0 = Some(m);
    }
    for (group, layer, m) in b {
        rows.entry((group, layer)).or_default().1 = Some(m);
    }
    rows.into_iter()
        .map(|((group, layer), (a, b))| RowDiff {
            group: group.to_string(),
            layer,
            a,
            b,
            change: Change::new(a.map_or(0, |m| m.time_ns), b.map_or(0, |m| m.time_ns)),
        })
        .collect()
}

fn stats_rows(rows: &[StatsRow]) -> impl Iterator<Item = (&str, Option<Layer>, Measure)> {
    rows.iter()
        .map(|r| (r.group.as_str(), Some(r.layer), measure(r)))
}

/// A module's counters as a row: its reads and writes, bytes, and time in reads, writes and
/// metadata.
fn module_rows(d: Option<&DarshanSummary>) -> impl Iterator<Item = (&str, Option<Layer>, Measure)> {
    let m = |t: &ModuleTotals| Measure {
        operations: t.reads + t.writes,
        bytes: t.bytes_read + t.bytes_written,
        time_ns: t.read_time_ns + t.write_time_ns + t.meta_time_ns,
    };
    d.into_iter()
        .flat_map(|d| d.modules.iter())
        .map(move |t| (t.module.as_str(), None, m(t)))
}

/// The rows lined up, largest change (either way) first, then by group and layer.
pub(super) fn line_up(a: &[StatsRow], b: &[StatsRow]) -> Vec<RowDiff> {
    let mut rows = join(stats_rows(a), stats_rows(b));
    // Stable: equal changes keep the (group, layer) order of the join.
    rows.sort_by_key(|r| std::cmp::Reverse(r.change.delta_ns.unsigned_abs()));
    rows
}

/// The layer rows lined up, in layer order (the report's order).
pub(super) fn line_up_layers(a: &[StatsRow], b: &[StatsRow]) -> Vec<RowDiff> {
    let mut rows = join(stats_rows(a), stats_rows(b));
    rows.sort_by_key(|r| r.layer);
    rows
}

/// The Darshan counters of two imported logs lined up per module, by module name (empty when
/// neither run is an imported log).
pub(super) fn line_up_darshan(
    a: Option<&DarshanSummary>,
    b: Option<&DarshanSummary>,
) -> Vec<RowDiff> {
    join(module_rows(a), module_rows(b))
}
