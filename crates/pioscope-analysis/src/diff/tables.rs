//! The statistics tables of two profiles lined up row by row: the same group (layer, function,
//! file path, rank) and layer on both sides is one row; a row of one side only keeps the other
//! side empty.

use std::collections::BTreeMap;

use pioscope_trace::functions::Layer;
use serde::Serialize;

use super::Change;
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
    /// The group: layer name, function name, file path or rank number.
    pub group: String,
    /// Its layer.
    pub layer: Layer,
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
fn join(a: &[StatsRow], b: &[StatsRow]) -> Vec<RowDiff> {
    type Pair = (Option<Measure>, Option<Measure>);
    let mut rows: BTreeMap<(&str, Layer), Pair> = BTreeMap::new();
    for r in a {
        rows.entry((r.group.as_str(), r.layer)).or_default().0 = Some(measure(r));
    }
    for r in b {
        rows.entry((r.group.as_str(), r.layer)).or_default().1 = Some(measure(r));
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

/// The rows lined up, largest change (either way) first, then by group and layer.
pub(super) fn line_up(a: &[StatsRow], b: &[StatsRow]) -> Vec<RowDiff> {
    let mut rows = join(a, b);
    // Stable: equal changes keep the (group, layer) order of the join.
    rows.sort_by_key(|r| std::cmp::Reverse(r.change.delta_ns.unsigned_abs()));
    rows
}

/// The layer rows lined up, in layer order (the report's order).
pub(super) fn line_up_layers(a: &[StatsRow], b: &[StatsRow]) -> Vec<RowDiff> {
    let mut rows = join(a, b);
    rows.sort_by_key(|r| r.layer);
    rows
}
